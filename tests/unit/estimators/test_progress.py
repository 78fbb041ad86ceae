"""verbose: plain progress lines per phase and chain group, quiet by default."""

import pickle
import re
import warnings

import numpy as np

from skbayes_sg import BayesianLogisticRegression
from skbayes_sg.estimators._progress import Progress, chain_label, format_seconds, make_progress


def _fit(X, y, verbose, n_warmup=300, n_draws=300):
    est = BayesianLogisticRegression(n_warmup=n_warmup, n_draws=n_draws, n_chains=2,
                                     random_state=0, verbose=verbose)
    with warnings.catch_warnings():  # short chains may warn; not what is tested here
        warnings.simplefilter("ignore")
        est.fit(X, y)


def test_quiet_by_default(cancer, capsys):
    _fit(*cancer, verbose=0)
    assert capsys.readouterr().out == ""
    assert make_progress(0) is None


def test_verbose_1_prints_warmup_and_sampling_with_rate_and_eta(cancer, capsys):
    _fit(*cancer, verbose=1)
    lines = capsys.readouterr().out.splitlines()
    assert all(line.startswith("[skbayes_sg] ") for line in lines)
    for phase in ("warmup", "sampling"):
        mine = [line for line in lines if f"| {phase}" in line]
        assert mine and all("chains 0-1" in line and "steps/s" in line and "ETA" in line
                            for line in mine)
        assert re.search(rf"{phase}\s+100% (\d+)/\1 steps", mine[-1])
    assert "preprocessing done" in lines[0] and lines[-1].startswith("[skbayes_sg] done:")


def test_verbose_1_is_at_most_about_ten_lines_per_phase(cancer, capsys):
    _fit(*cancer, verbose=1, n_warmup=6000, n_draws=50)  # 24 blocks of warm-up
    warmup = [line for line in capsys.readouterr().out.splitlines() if "| warmup" in line]
    assert 5 <= len(warmup) <= 11


def test_verbose_2_prints_every_block(cancer, capsys):
    _fit(*cancer, verbose=2, n_warmup=6000, n_draws=50)
    out = capsys.readouterr().out
    assert len([line for line in out.splitlines() if "| warmup" in line]) > 11  # every block
    assert "preprocessing details:" in out


def test_progress_callback_alone():
    lines = []

    class Sink:
        def write(self, text):
            lines.append(text)

        def flush(self):
            pass

    progress = Progress(1, stream=Sink())
    for done in range(100, 1001, 100):
        progress("sampling", done, 1000, done / 500.0, [2, 3])
    text = "".join(lines)
    assert text.count("\n") == 10 and "chains 2-3" in text and "500 steps/s" in text
    assert "ETA 1.8s" in text  # 900 steps left at 500 steps/s after the first block
    pickle.loads(pickle.dumps(Progress(2)))  # travels to joblib workers


def test_formatting_helpers():
    assert [format_seconds(s) for s in (0.42, 75, 4000, np.nan)] == ["0.4s", "1m15s", "1h06m", "?"]
    assert chain_label([0, 1, 2, 3]) == "chains 0-3"
    assert chain_label([2]) == "chain 2"
    assert chain_label([0, 2]) == "chains 0,2"
