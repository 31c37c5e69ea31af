"""Weighted MinHash (ICWS): estimates against the exact weighted Jaccard; batch paths."""

from __future__ import annotations

import numpy as np
import pytest

from neardup.errors import EmptyInputError, IncompatibleSketchError, InputError
from neardup.sketch.weighted import WeightedMinHash, WeightedMinHasher, weighted_jaccard


def test_estimate_tracks_exact_weighted_jaccard() -> None:
    rng = np.random.default_rng(0)
    h = WeightedMinHasher(64, sample_size=512, seed=3)
    for _ in range(10):
        u = rng.random(64) * (rng.random(64) < 0.6)
        v = u * rng.uniform(0.5, 1.5, 64) * (rng.random(64) < 0.9)
        if not u.any() or not v.any():
            continue
        # sd of a 512-sample estimate is at most 0.022; 5 sd
        assert abs(h.sketch(u).jaccard(h.sketch(v)) - weighted_jaccard(u, v)) < 0.11


def test_batch_forms_agree_and_self_similarity() -> None:
    sp = pytest.importorskip("scipy.sparse")
    rng = np.random.default_rng(1)
    h = WeightedMinHasher(20, sample_size=32)
    x = rng.random((8, 20)) * (rng.random((8, 20)) < 0.5)
    x[2] = 0
    dense, sparse = h.sketch_many(x), h.sketch_many(sp.csr_matrix(x))
    np.testing.assert_array_equal(dense, sparse)
    assert (dense[2] == -1).all()
    a = h.sketch(x[0])
    assert a.jaccard(a) == 1.0 and a == WeightedMinHash(a.hashvalues, a.seed, a.dim)


def test_errors() -> None:
    h = WeightedMinHasher(4, sample_size=8)
    with pytest.raises(EmptyInputError):
        h.sketch([0, 0, 0, 0])
    with pytest.raises(InputError, match="length"):
        h.sketch([1, 2])
    with pytest.raises(InputError, match="non-negative"):
        h.sketch([1, -1, 0, 0])
    with pytest.raises(IncompatibleSketchError):
        h.sketch([1, 0, 0, 0]).jaccard(
            WeightedMinHasher(4, sample_size=8, seed=2).sketch([1, 0, 0, 0])
        )
