"""The native forest family returns the rows, in the order, of its numpy reference."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import native_pair

native, reference = native_pair("forest")


def _trees(sig: np.ndarray, trees: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    n = len(sig)
    vals = np.empty((trees, n, k), dtype=np.uint32)
    order = np.empty((trees, n), dtype=np.int64)
    for t in range(trees):
        part = sig[:, t * k : (t + 1) * k]
        order[t] = np.lexsort(part.T[::-1]) if n else np.empty(0, dtype=np.int64)
        vals[t] = part[order[t]]
    return vals, order


@settings(max_examples=150)
@given(
    n=st.integers(0, 80),
    trees=st.integers(1, 5),
    k=st.integers(1, 6),
    values=st.integers(1, 5),
    nq=st.integers(0, 12),
    topk=st.integers(-1, 30),
    seed=st.integers(0, 2**32),
)
def test_query_matches_reference(
    n: int, trees: int, k: int, values: int, nq: int, topk: int, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    sig = rng.integers(0, values, (n, trees * k), dtype=np.uint32)  # many shared prefixes
    vals, order = _trees(sig, trees, k)
    live = (rng.random(n) < 0.8).astype(np.uint8)
    q = rng.integers(0, values, (nq, trees, k), dtype=np.uint32)
    if n and nq:
        q[0] = sig[0].reshape(trees, k)
    got = native.query(vals, order, live, q, topk)
    want = reference.query(vals, order, live, q, topk)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype == np.int64
        assert np.array_equal(g, w)


def test_shapes_that_do_not_fit_are_refused() -> None:
    vals = np.zeros((2, 3, 4), dtype=np.uint32)
    order = np.zeros((2, 3), dtype=np.int64)
    live = np.ones(3, dtype=np.uint8)
    with pytest.raises(ValueError, match="do not fit"):
        native.query(vals, order, live, np.zeros((1, 2, 3), dtype=np.uint32), 1)
    with pytest.raises(ValueError, match="outside"):
        native.query(vals, order + 5, live, np.zeros((1, 2, 4), dtype=np.uint32), 1)


def test_native_names_are_the_reference_names() -> None:
    assert sorted(reference.__all__) == sorted(n for n in dir(native) if not n.startswith("_"))
