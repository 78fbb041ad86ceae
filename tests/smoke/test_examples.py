"""Every example runs (fast mode) and writes its figures, so the examples never rot.

Each example runs in a subprocess with ``SKBAYES_SG_FAST=1`` and
``SKBAYES_SG_FIGURES`` pointing into a temporary directory (also the working
directory), so the repository is not touched.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("matplotlib")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
FIGURES = {
    "quickstart.py": [],
    "plot_regression_bands.py": ["regression_bands.png"],
    "plot_classification_uncertainty.py": ["classification_uncertainty.png"],
    "plot_mlp_digits.py": ["mlp_digits.png"],
    "plot_model_selection.py": ["model_selection.png"],
    "plot_large_data.py": ["large_data.png"],
    "plot_text_classification.py": ["text_classification.png"],
}


def test_every_example_is_listed():
    assert sorted(p.name for p in EXAMPLES.glob("*.py")) == sorted(FIGURES)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(FIGURES))
def test_example_runs(name, tmp_path):
    env = {**os.environ, "SKBAYES_SG_FAST": "1", "SKBAYES_SG_FIGURES": str(tmp_path / "figures"),
           "MPLBACKEND": "Agg", "PYTHONWARNINGS": "ignore"}
    proc = subprocess.run([sys.executable, str(EXAMPLES / name)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, f"{name} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
    assert proc.stdout.strip(), f"{name} printed no summary"
    for png in FIGURES[name]:
        path = tmp_path / "figures" / png
        assert path.is_file() and path.stat().st_size > 1000, f"{name} did not write {png}"
