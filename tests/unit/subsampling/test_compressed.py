"""``compressed`` (methods.md §10): inner minibatches unbiased for the compressed potential.
"""

import numpy as np
import pytest

from skbayes_sg.subsampling import Compressed, Stratified

from support.oracles import within_5se
from support.problems import estimates


MODELS = ["binary", "softmax", "linear_fixed", "linear_inferred", "mlp"]


@pytest.mark.parametrize("inner", ["uniform", Stratified(n_clusters=3, correction="cv")],
                         ids=["uniform", "stratified-cv"])
@pytest.mark.parametrize("name", MODELS)
def test_compressed_inner_minibatches_unbiased_for_compressed_potential(name, inner,
                                                                        blobs_problem):
    pb, lap, rng = blobs_problem(name)
    est = Compressed(radius=0.3, inner=inner).build(pb, lap, batch_size=10, rng=rng)
    small = est.posterior
    assert not est.exact and est.n_data == pb.n_rows and small.n_rows < pb.n_rows
    theta = np.tile(0.5 * rng.normal(size=pb.model.n_params), (128, 1))
    assert within_5se(estimates(est, theta, 30)[0], small.full_grad(theta[:1])[0])
