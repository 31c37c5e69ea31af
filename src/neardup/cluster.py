"""Clusters from accepted pairs: connected components or centers, with stable ids.

The rule, documented once for the local engine and the Spark engine alike: documents are
numbered by their position in the input (0, 1, 2, ...); a cluster's **representative** is its
member with the smallest position, and clusters are numbered 0, 1, 2, ... in the order of their
representatives. Singletons are not clusters. The same input and pairs always give the same
clusters, whatever order the pairs arrive in.

Two clusterings (``CLUSTERINGS``):

* ``components``: union-find; a cluster is a connected component of the pair graph, so
  documents can chain (A~B, B~C puts A and C together however far apart they are).
* ``center``: a star clustering in input order (the *CENTER* algorithm of Haveliwala, Gionis
  and Indyk, "Scalable techniques for clustering the web", WebDB 2000, with input position as
  the order): the first document not yet in a cluster becomes a center and takes every
  neighbor not yet in a cluster. Every member has an accepted pair with its representative,
  so every member is within the threshold of it; nothing chains.

Both take pairs as arrays ``(i, j, similarity)`` with row numbers as ids.

Which member of a cluster a deduplicated copy keeps, and which record each removed one is
removed *for*, is :func:`kept_roots`: inside each cluster, the CENTER pass again, in the order
of the keep rule, so every removed row has an accepted pair with the row kept for it (it is
within the threshold of it) whatever the clustering; a cluster that chains keeps more than
one row.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from itertools import pairwise
from typing import Literal

import numpy as np
import numpy.typing as npt

from neardup.errors import ConfigError

__all__ = [
    "CLUSTERINGS",
    "ClusterStats",
    "Clustering",
    "UnionFind",
    "center_clusters",
    "cluster_groups",
    "cluster_labels",
    "cluster_roots",
    "cluster_stats",
    "components",
    "connected_components",
    "kept_roots",
]

Clustering = Literal["components", "center"]
#: The clusterings :func:`cluster_roots` knows.
CLUSTERINGS: tuple[Clustering, ...] = ("components", "center")

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]


class UnionFind:
    """Disjoint sets over ``0 .. n-1`` with path halving; the root is always the smallest index.

    Examples:
        >>> uf = UnionFind(5)
        >>> uf.union(3, 1); uf.union(4, 3)
        >>> uf.find(4), uf.find(2)
        (1, 2)
    """

    __slots__ = ("_parent",)

    def __init__(self, n: int) -> None:
        self._parent = np.arange(n, dtype=np.int64)

    def __len__(self) -> int:
        return len(self._parent)

    def grow(self, n: int) -> None:
        """Extend the universe to ``n`` elements (new ones are singletons)."""
        old = len(self._parent)
        if n > old:
            self._parent = np.concatenate((self._parent, np.arange(old, n, dtype=np.int64)))

    def find(self, i: int) -> int:
        """Return the root (the smallest member) of ``i``'s set."""
        parent = self._parent
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = int(parent[i])
        return i

    def union(self, a: int, b: int) -> None:
        """Merge the sets of ``a`` and ``b``; the smaller root wins."""
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            lo, hi = (ra, rb) if ra < rb else (rb, ra)
            self._parent[hi] = lo

    def roots(self) -> npt.NDArray[np.int64]:
        """Return every element's root as an array."""
        return np.array([self.find(i) for i in range(len(self._parent))], dtype=np.int64)


def connected_components(n: int, pairs: Iterable[tuple[int, int]]) -> npt.NDArray[np.int64]:
    """Return, for each of ``n`` elements, the smallest element of its component.

    Examples:
        >>> connected_components(5, [(4, 2), (2, 0)]).tolist()
        [0, 1, 0, 3, 0]
    """
    edges = np.array([(int(a), int(b)) for a, b in pairs], dtype=np.int64).reshape(-1, 2)
    return components(n, edges[:, 0], edges[:, 1])


def components(n: int, a: npt.NDArray[np.int64], b: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """Roots (smallest members) of the components of ``n`` elements joined by edges
    ``(a[k], b[k])``: union-find in the native kernel (a numpy twin without it).

    Examples:
        >>> components(4, np.array([3]), np.array([1])).tolist()
        [0, 1, 2, 1]
    """
    from neardup._kernels import engine

    roots: npt.NDArray[np.int64] = engine.kernels("sets").components(
        int(n), np.ascontiguousarray(a, dtype=np.int64), np.ascontiguousarray(b, dtype=np.int64)
    )
    return roots


def cluster_groups(roots: npt.NDArray[np.int64]) -> tuple[I64, I64]:
    """The clusters of two or more of ``roots`` as two flat arrays, with no list per cluster.

    Returns:
        ``(order, starts)``: the positions of every clustered row, grouped by root (roots
        ascending) and ascending inside each group; and where each group starts in
        ``order``. Group ``g`` is ``order[starts[g]:starts[g + 1]]`` (the last runs to the
        end), the same groups as :func:`cluster_labels`.

    Examples:
        >>> order, starts = cluster_groups(np.array([0, 1, 0, 3, 3]))
        >>> order.tolist(), starts.tolist()
        ([0, 2, 3, 4], [0, 2])
    """
    from neardup._kernels import engine

    order: I64
    starts: I64
    # two counting passes in the native kernel (a numpy twin without it)
    order, starts = engine.kernels("clusterjson").cluster_groups(
        np.ascontiguousarray(roots, dtype=np.int64)
    )
    return order, starts


def cluster_labels(roots: npt.NDArray[np.int64]) -> list[list[int]]:
    """Group positions by root into clusters of two or more, in representative order.

    Examples:
        >>> cluster_labels(np.array([0, 1, 0, 3, 3]))
        [[0, 2], [3, 4]]
        >>> cluster_labels(np.array([0, 1]))
        []
    """
    order, starts = cluster_groups(roots)
    flat = order.tolist()
    edges = [*starts.tolist(), len(flat)]
    return [flat[a:b] for a, b in pairwise(edges)]


def _check_pairs(n: int, i: I64, j: I64, sim: F64) -> tuple[I64, I64, F64]:
    a = np.ascontiguousarray(i, dtype=np.int64)
    b = np.ascontiguousarray(j, dtype=np.int64)
    s = np.ascontiguousarray(sim, dtype=np.float64)
    if not (len(a) == len(b) == len(s)):
        raise ConfigError(
            f"pair arrays differ in length ({len(a)}, {len(b)}, {len(s)}); pass one i, j and "
            "similarity per pair"
        )
    if len(a) and (min(a.min(), b.min()) < 0 or max(a.max(), b.max()) >= n):
        raise ConfigError(f"pair row numbers must lie in 0..{n - 1}; pass rows of the {n} inputs")
    return a, b, s


def center_clusters(n: int, i: I64, j: I64, sim: F64) -> tuple[I64, F64]:
    """CENTER clustering of ``n`` rows joined by pairs ``(i[k], j[k])`` of similarity ``sim[k]``.

    Rows are visited in order; a row not yet in a cluster becomes a center and takes every
    neighbor not yet in a cluster. The center is its cluster's smallest row (a smaller row
    adjacent to it would have taken it), as with :func:`components`, and every member has a
    pair with it. A native kernel (a counting sort builds the adjacency, then one pass), with
    a numpy sort and the same pass run by the interpreter as its twin
    (``NEARDUP_BACKEND=reference``). A pair given twice counts with its highest similarity.

    Args:
        n: Number of rows (documents).
        i: First row of each pair.
        j: Second row of each pair.
        sim: Similarity of each pair.

    Returns:
        ``(roots, to_root)``: each row's center (its own row for centers and singletons) and
        its similarity to it (1.0 for centers and singletons).

    Raises:
        ConfigError: the arrays differ in length or name a row outside ``0 .. n-1``.

    Examples:
        >>> roots, to_root = center_clusters(
        ...     4, np.array([0, 1, 2]), np.array([1, 2, 3]), np.array([0.9, 0.8, 0.95]))
        >>> roots.tolist(), to_root.tolist()
        ([0, 0, 2, 2], [1.0, 0.9, 1.0, 0.95])
    """
    a, b, s = _check_pairs(n, i, j, sim)
    from neardup._kernels import engine

    kern = engine.kernels("sets")
    indptr, nbr, edge = kern.center_adjacency(int(n), a, b)
    out: tuple[I64, F64] = kern.center_pass(indptr, nbr, edge, s)
    return out


def cluster_roots(
    n: int, i: I64, j: I64, sim: F64, *, clustering: str = "components"
) -> tuple[I64, F64 | None]:
    """Each row's representative under ``clustering`` (see :data:`CLUSTERINGS`).

    Returns:
        ``(roots, to_root)``; ``to_root`` (similarity to the representative) is ``None`` for
        ``components``, where a member need not have a pair with its representative.

    Raises:
        ConfigError: unknown ``clustering``, or bad pair arrays.

    Examples:
        >>> pairs = np.array([0, 1]), np.array([1, 2]), np.array([0.9, 0.9])
        >>> cluster_roots(3, *pairs)[0].tolist()
        [0, 0, 0]
        >>> cluster_roots(3, *pairs, clustering="center")[0].tolist()
        [0, 0, 2]
    """
    if clustering == "center":
        return center_clusters(n, i, j, sim)
    if clustering != "components":
        raise ConfigError(f"unknown clustering {clustering!r}; use one of {', '.join(CLUSTERINGS)}")
    a, b, _ = _check_pairs(n, i, j, sim)
    return components(n, a, b), None


def kept_roots(roots: I64, i: I64, j: I64, sim: F64, order: I64 | None = None) -> tuple[I64, F64]:
    """The row each row of a clustering is kept for: CENTER in keep order inside each cluster.

    Rows are visited in ``order`` (the keep rule's preference, best first; default: row
    order); a row not yet taken is kept and takes every row of its own cluster (same
    ``roots``) that it has a pair with and that is not taken yet. So every row that is not
    kept has a pair with its kept row: it is within the threshold of it, and nothing is
    removed through a chain. Where every member of a cluster has a pair with the cluster's
    first row in ``order``, that row alone is kept, as one-per-cluster would.

    Args:
        roots: Each row's cluster representative (:func:`cluster_roots`).
        i: First row of each accepted pair.
        j: Second row of each accepted pair.
        sim: Similarity of each pair.
        order: The rows, best to keep first (a permutation of ``0 .. n-1``).

    Returns:
        ``(kept, to_kept)``: each row's kept row (itself when kept) and its similarity to it
        (1.0 when kept).

    Raises:
        ConfigError: bad pair arrays, or ``order`` is not a permutation of the rows.

    Examples:
        >>> roots = np.array([0, 0, 0])  # a chain 0 ~ 1 ~ 2: one component
        >>> kept, to_kept = kept_roots(roots, np.array([0, 1]), np.array([1, 2]),
        ...                            np.array([0.9, 0.85]))
        >>> kept.tolist(), to_kept.tolist()
        ([0, 0, 2], [1.0, 0.9, 1.0])
    """
    r = np.ascontiguousarray(roots, dtype=np.int64)
    n = len(r)
    a, b, s = _check_pairs(n, i, j, sim)
    same = r[a] == r[b]
    a, b, s = a[same], b[same], s[same]
    if order is None:
        return center_clusters(n, a, b, s)
    perm = np.ascontiguousarray(order, dtype=np.int64)
    rank = np.full(n, -1, dtype=np.int64)
    if len(perm) == n and n and perm.min() >= 0 and perm.max() < n:
        rank[perm] = np.arange(n, dtype=np.int64)
    if len(perm) != n or (n and rank.min() < 0):
        raise ConfigError(f"order must be a permutation of the {n} rows; pass each row once")
    kept_rank, to_kept = center_clusters(n, rank[a], rank[b], s)
    kept = np.empty(n, dtype=np.int64)
    kept[perm] = perm[kept_rank]
    out = np.empty(n, dtype=np.float64)
    out[perm] = to_kept
    return kept, out


@dataclass(frozen=True, slots=True)
class ClusterStats:
    """Per-cluster numbers, one entry per cluster of :func:`cluster_labels`' order.

    Attributes:
        sizes: Members per cluster.
        pairs: Accepted pairs with both rows in the cluster.
        min_similarity: Lowest similarity of those pairs (``nan`` when none).
        max_similarity: Highest similarity of those pairs (``nan`` when none).
        min_to_root: Lowest similarity of a member to its representative, when known
            (``center``), else ``None``.
    """

    sizes: I64
    pairs: I64
    min_similarity: F64
    max_similarity: F64
    min_to_root: F64 | None


def cluster_stats(roots: I64, i: I64, j: I64, sim: F64, to_root: F64 | None = None) -> ClusterStats:
    """Sizes, pair counts and similarity ranges of the clusters of ``roots``, vectorized.

    Examples:
        >>> st = cluster_stats(np.array([0, 0, 0, 3]), np.array([0, 1]), np.array([1, 2]),
        ...                    np.array([0.9, 0.7]))
        >>> st.sizes.tolist(), st.min_similarity.tolist(), st.max_similarity.tolist()
        ([3], [0.7], [0.9])
    """
    roots = np.asarray(roots, dtype=np.int64)
    uniq, inverse, counts = np.unique(roots, return_inverse=True, return_counts=True)
    keep = counts > 1
    cid = np.full(len(uniq), -1, dtype=np.int64)
    cid[keep] = np.arange(int(keep.sum()), dtype=np.int64)
    n_clusters = int(keep.sum())
    row_cluster = cid[inverse]
    a = np.asarray(i, dtype=np.int64)
    b = np.asarray(j, dtype=np.int64)
    s = np.asarray(sim, dtype=np.float64)
    inside = (row_cluster[a] == row_cluster[b]) & (row_cluster[a] >= 0)
    pc = row_cluster[a[inside]]
    ps = s[inside]
    lo = np.full(n_clusters, np.inf)
    hi = np.full(n_clusters, -np.inf)
    np.minimum.at(lo, pc, ps)
    np.maximum.at(hi, pc, ps)
    lo[np.isinf(lo)] = np.nan
    hi[np.isinf(hi)] = np.nan
    low_root: F64 | None = None
    if to_root is not None:
        low_root = np.full(n_clusters, np.inf)
        member = row_cluster >= 0
        np.minimum.at(low_root, row_cluster[member], np.asarray(to_root, dtype=np.float64)[member])
    return ClusterStats(
        sizes=counts[keep].astype(np.int64),
        pairs=np.bincount(pc, minlength=n_clusters).astype(np.int64),
        min_similarity=lo,
        max_similarity=hi,
        min_to_root=low_root,
    )
