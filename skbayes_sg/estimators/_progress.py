"""Plain progress lines for ``verbose=1``: phase, steps, rate and ETA."""

import sys

__all__ = ["make_progress"]


def make_progress(verbose, stream=None):
    """A ``progress(phase, done, total, seconds)`` callback, or None if quiet.

    Called once per block of steps (never per step), it prints at most about
    ten lines per phase.
    """
    if not verbose:
        return None
    out = stream if stream is not None else sys.stdout
    last = {}

    def progress(phase, done, total, seconds):
        decile = (10 * done) // max(total, 1)
        if last.get(phase) == decile and done < total:
            return
        last[phase] = decile
        rate = done / max(seconds, 1e-9)
        eta = (total - done) / rate if rate > 0 else float("nan")
        print(f"[skbayes_sg] {phase}: {done}/{total} steps, "
              f"{rate:,.0f} steps/s, ETA {eta:.1f}s", file=out, flush=True)

    return progress
