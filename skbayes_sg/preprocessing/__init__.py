"""Everything done once in ``fit`` before sampling: mode, Laplace, pilots."""

from ._config import DEFAULT_MODE_CONFIG, ModeConfig
from ._anchor import Anchor, anchor_at, anchor_terms
from ._laplace import (DENSE_MAX_PARAMS, full_hessian, laplace_at, laplace_kind, mode_shift,
                       uses_dense, whitened_curvature)
from ._lowrank import LOWRANK_RANK, lowrank_covariance
from ._mode import ModeResult, adam_mode, find_mode, lbfgs_mode
from ._kronecker import FeatureGram
from ._warm import subsample_hessian
from ._pilot import GradientNoise, gradient_noise, power_curvature
from ._compress import Compression, compress
from ._stratify import RowView, Strata, allocate_batch, group_sums, kmeans_strata, merge_strata
from ._lipschitz import lipschitz_constants
from ._mix import clean_scores, mix_scores, mix_uniform, scores_to_weights
from ._weights import (curvature_weights, curvature_weights_and_anchor, gradient_norm_weights,
                       row_scores, score_evals_per_row)

__all__ = [
    "Compression", "DEFAULT_MODE_CONFIG", "DENSE_MAX_PARAMS", "ModeConfig",
    "LOWRANK_RANK", "RowView", "Strata", "allocate_batch",
    "compress", "group_sums", "kmeans_strata", "merge_strata", "adam_mode", "find_mode",
    "GradientNoise", "gradient_noise", "full_hessian", "laplace_at", "laplace_kind",
    "lowrank_covariance",
    "ModeResult", "uses_dense", "lbfgs_mode", "mode_shift",
    "power_curvature", "whitened_curvature", "curvature_weights", "gradient_norm_weights",
    "lipschitz_constants", "mix_uniform", "subsample_hessian", "Anchor", "anchor_at",
    "anchor_terms", "curvature_weights_and_anchor", "FeatureGram", "row_scores",
    "score_evals_per_row", "clean_scores", "mix_scores", "scores_to_weights",
]
