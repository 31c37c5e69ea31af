"""Clusters: the numba components kernel equals union-find; representatives are stable."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.cluster import UnionFind, cluster_labels, components, connected_components


@settings(max_examples=80)
@given(st.integers(1, 60), st.lists(st.tuples(st.integers(0, 59), st.integers(0, 59)), max_size=80))
def test_components_backends_equal_union_find(n: int, edges: list[tuple[int, int]]) -> None:
    edges = [(a % n, b % n) for a, b in edges]
    uf = UnionFind(n)
    for a, b in edges:
        uf.union(a, b)
    want = uf.roots()
    arr = np.array(edges, dtype=np.int64).reshape(-1, 2)
    with pytest.MonkeyPatch.context() as mp:
        for backend in ("fast", "reference"):
            mp.setenv("NEARDUP_BACKEND", backend)
            np.testing.assert_array_equal(components(n, arr[:, 0], arr[:, 1]), want)


def test_long_chain_and_labels() -> None:
    n = 5000
    order = np.random.default_rng(1).permutation(n)
    roots = components(n, order[:-1], order[1:])
    assert (roots == 0).all()
    assert connected_components(4, [(3, 1)]).tolist() == [0, 1, 2, 1]
    assert cluster_labels(np.array([0, 1, 0, 1, 4])) == [[0, 2], [1, 3]]
