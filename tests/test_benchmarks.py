"""Every benchmark script runs in ``--quick`` mode and writes its JSON, so none rots.

The scripts run in a subprocess without ``SKBAYES_SG_DATA``: quick mode must
work on a fresh clone (scikit-learn's bundled data stands in for missing
files).  Full-mode numbers live in ``benchmarks/results/``.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "benchmarks"
SCRIPTS = sorted(p.name for p in BENCH.glob("*.py") if not p.name.startswith("_"))


def test_there_are_benchmarks():
    assert "bench_step.py" in SCRIPTS and "gradient_noise.py" in SCRIPTS


@pytest.mark.parametrize("name", SCRIPTS)
def test_benchmark_quick(name, tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "SKBAYES_SG_DATA"}
    env.update(MPLBACKEND="Agg", PYTHONWARNINGS="ignore",
               SKBAYES_SG_FIGURES=str(tmp_path))
    out = tmp_path / "out.json"
    proc = subprocess.run(
        [sys.executable, str(BENCH / name), "--quick", "--json", str(out)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, f"{name}:\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
    payload = json.loads(out.read_text())
    assert payload, f"{name} wrote an empty JSON"
