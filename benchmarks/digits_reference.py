"""Reference draws for ``softmax_digits`` (``results/calibration_multiclass.md``).

NumPyro NUTS on the Laplace-whitened potential ``theta = mode + L z``
(``_references.whitened_nuts``, the reference ``calibration.py`` builds for this problem), on
exactly ``_calib_problems.potential``.  Writes the class-centred quantity draws
``(chains, draws, 650)`` and an info JSON to ``--out``, as ``_references`` caches them.

    python benchmarks/digits_reference.py [--quick] [--out PATH.npz] [--json PATH]

About 3 minutes on one core (``--quick``: a few seconds on 200 rows, short chains).
"""

import json
import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np

from _calib_problems import make_problems, potential, quantities, to_named
from _common import cli, jax_versions, write_json
from _references import whitened_nuts

FULL = {"chains": 4, "warmup": 500, "draws": 1000, "max_tree_depth": 8}
QUICK = {"chains": 2, "warmup": 20, "draws": 20, "max_tree_depth": 4}


def main():
    args = cli(__doc__, out={"default": None, "help": "where the .npz draws go"})
    if jax_versions(("numpyro",), "[digits-reference] jax/numpyro needed ({exc}): pip install "
                    "'skbayes_sg[bench]'") is None:
        write_json(args.json, {"skipped": "jax/numpyro not importable"})
        return
    problem = next(q for q in make_problems() if q.name == "softmax_digits")
    if args.quick:
        problem = replace(problem, X=problem.X[:200], y=problem.y[:200])
    import jax.numpy as jnp

    U, dim = potential(problem, jnp)
    theta, info = whitened_nuts(problem, U, dim, None, seed=0, **(QUICK if args.quick else FULL))
    C, D, dim = theta.shape
    q = quantities(to_named(problem, theta.reshape(-1, dim)), True)[0].reshape(C, D, -1)
    out = Path(args.out or (tempfile.mkdtemp() + "/digits.npz" if args.quick else
                            "~/.cache/skbayes_sg/calibration/softmax_digits_whitened.npz"))
    out = out.expanduser()
    out.parent.mkdir(parents=True, exist_ok=True)
    np.savez(out, draws=q, info=json.dumps(info))
    write_json(args.json, {**info, "out": str(out), "shape": list(q.shape)})
    print(info)


if __name__ == "__main__":
    main()
