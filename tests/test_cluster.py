"""Clusters: the numba components kernel equals union-find; representatives are stable."""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup._kernels import engine
from neardup.cluster import (
    UnionFind,
    center_clusters,
    cluster_groups,
    cluster_labels,
    cluster_roots,
    cluster_stats,
    components,
    connected_components,
)
from neardup.errors import ConfigError


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
            mp.setattr(engine, "_choice", engine.parse_backend(backend))
            np.testing.assert_array_equal(components(n, arr[:, 0], arr[:, 1]), want)


def test_long_chain_and_labels() -> None:
    n = 5000
    order = np.random.default_rng(1).permutation(n)
    roots = components(n, order[:-1], order[1:])
    assert (roots == 0).all()
    assert connected_components(4, [(3, 1)]).tolist() == [0, 1, 2, 1]
    assert cluster_labels(np.array([0, 1, 0, 1, 4])) == [[0, 2], [1, 3]]


def _center_oracle(n: int, edges: list[tuple[int, int, float]]) -> tuple[list[int], list[float]]:
    """CENTER by hand over adjacency lists: visit rows in order, a free row takes its free
    neighbors (a pair given twice counts with its highest similarity)."""
    nbrs: dict[int, list[tuple[int, float]]] = {u: [] for u in range(n)}
    for k, (a, b, s) in enumerate(edges):
        nbrs[a].append((b, s, k))  # type: ignore[arg-type]
        nbrs[b].append((a, s, k))  # type: ignore[arg-type]
    root = [-1] * n
    to_root = [1.0] * n
    for u in range(n):
        if root[u] != -1:
            continue
        root[u] = u
        for v, s, _ in nbrs[u]:  # type: ignore[misc]
            if root[v] == -1:
                root[v], to_root[v] = u, s
            elif root[v] == u and v != u:
                to_root[v] = max(to_root[v], s)
    return root, to_root


@settings(max_examples=60)
@given(
    st.integers(1, 40),
    st.lists(st.tuples(st.integers(0, 39), st.integers(0, 39), st.floats(0.5, 1.0)), max_size=80),
)
def test_center_backends_equal_oracle_and_members_pair_with_center(
    n: int, raw: list[tuple[int, int, float]]
) -> None:
    edges = [(a % n, b % n, s) for a, b, s in raw if a % n != b % n]
    i = np.array([e[0] for e in edges], dtype=np.int64)
    j = np.array([e[1] for e in edges], dtype=np.int64)
    sim = np.array([e[2] for e in edges], dtype=np.float64)
    want_root, want_sim = _center_oracle(n, edges)
    with pytest.MonkeyPatch.context() as mp:
        for backend in ("fast", "reference"):
            mp.setattr(engine, "_choice", engine.parse_backend(backend))
            roots, to_root = center_clusters(n, i, j, sim)
            assert roots.tolist() == want_root
            assert to_root.tolist() == want_sim
    pairs = {(min(a, b), max(a, b)) for a, b, _ in edges}
    comp = components(n, i, j)
    for v in range(n):
        r = int(roots[v])
        assert r <= v  # the representative is the cluster's first row
        assert r == v or (r, v) in pairs  # every member pairs with its center
        assert comp[v] == comp[r]  # centers refine components


def test_center_breaks_a_chain_and_stats() -> None:
    # 0-1-2-3-4 chained; components make one cluster, center makes stars
    i, j = np.arange(4), np.arange(1, 5)
    sim = np.array([0.9, 0.85, 0.8, 0.95])
    roots, to_root = cluster_roots(5, i, j, sim, clustering="center")
    assert roots.tolist() == [0, 0, 2, 2, 4]
    assert cluster_labels(roots) == [[0, 1], [2, 3]]
    stats = cluster_stats(roots, i, j, sim, to_root)
    assert stats.sizes.tolist() == [2, 2]
    assert stats.pairs.tolist() == [1, 1]
    assert stats.min_similarity.tolist() == [0.9, 0.8]
    assert stats.min_to_root is not None and stats.min_to_root.tolist() == [0.9, 0.8]
    comp_roots, none = cluster_roots(5, i, j, sim)
    assert none is None and comp_roots.tolist() == [0] * 5
    comp = cluster_stats(comp_roots, i, j, sim)
    assert comp.min_similarity.tolist() == [0.8] and comp.max_similarity.tolist() == [0.95]


def test_cluster_roots_rejects_bad_input() -> None:
    with pytest.raises(ConfigError, match="unknown clustering"):
        cluster_roots(2, np.array([0]), np.array([1]), np.array([1.0]), clustering="x")
    with pytest.raises(ConfigError, match="row numbers"):
        center_clusters(2, np.array([0]), np.array([2]), np.array([1.0]))
    with pytest.raises(ConfigError, match="length"):
        center_clusters(2, np.array([0]), np.array([1, 0]), np.array([1.0]))


def test_labels_of_singletons_only_are_empty() -> None:
    assert cluster_labels(np.arange(4)) == []
    assert cluster_labels(np.array([], dtype=np.int64)) == []


@settings(max_examples=80)
@given(st.integers(1, 60), st.lists(st.tuples(st.integers(0, 59), st.integers(0, 59)), max_size=80))
def test_groups_and_pipeline_clusters_equal_labels(n: int, edges: list[tuple[int, int]]) -> None:
    """The flat groups and the clusters the pipeline makes from them (one id pick, slices)
    are the per-group lists of ``cluster_labels``, in the same order."""
    from neardup.pipeline import _clusters
    from neardup.report import Cluster

    uf = UnionFind(n)
    for a, b in edges:
        uf.union(a % n, b % n)
    roots = uf.roots()
    labels = cluster_labels(roots)
    order, starts = cluster_groups(roots)
    edges_ = [*starts.tolist(), len(order)]
    assert [order[a:b].tolist() for a, b in pairwise(edges_)] == labels
    ids = [f"d{k}" for k in range(n)]
    clusters, sizes = _clusters(ids, roots)
    want = [Cluster(c, tuple(ids[k] for k in g), ids[g[0]]) for c, g in enumerate(labels)]
    assert clusters == want
    assert sizes.tolist() == [len(g) for g in labels]
