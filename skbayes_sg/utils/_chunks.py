"""Row chunking: the one helper every full-data pass uses."""

__all__ = ["row_chunks"]

# A 4096 x 50 float32 chunk stays in cache between a pass's predictor and its gradient, so a
# fused pass reads each row from memory once.
ROWS = 4096  # rows per chunk ...
ELEMENTS = 1 << 22  # ... and at most this many floats in a chunk's widest temporary


def row_chunks(n_rows, width=1, *, rows=ROWS, elements=ELEMENTS):
    """Slices that cover ``range(n_rows)`` in order, in chunks of bounded memory.

    A chunk has at most ``rows`` rows and at most ``elements // width`` rows, so a temporary of
    ``width`` floats per row stays below ``elements`` floats (32 MiB in float64).

    Parameters
    ----------
    n_rows : int
    width : int, default=1
        Floats per row of the largest temporary the caller builds.
    rows, elements : int
        The two bounds.

    Yields
    ------
    slice
    """
    size = int(max(1, min(rows, elements // max(int(width), 1))))
    for start in range(0, int(n_rows), size):
        yield slice(start, min(start + size, int(n_rows)))
