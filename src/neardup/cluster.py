"""Clusters from accepted pairs: union-find with stable cluster ids and representatives.

The rule, documented once for the local engine and the Spark engine alike: documents are
numbered by their position in the input (0, 1, 2, ...); a cluster's **representative** is its
member with the smallest position, and clusters are numbered 0, 1, 2, ... in the order of their
representatives. Singletons are not clusters. The same input and pairs always give the same
clusters, whatever order the pairs arrive in.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import pairwise

import numpy as np
import numpy.typing as npt

__all__ = ["UnionFind", "cluster_labels", "components", "connected_components"]


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
    ``(a[k], b[k])``: a numba kernel, with :class:`UnionFind` as its reference.

    Examples:
        >>> components(4, np.array([3]), np.array([1])).tolist()
        [0, 1, 2, 1]
    """
    from neardup._kernels.engine import backend_name

    if backend_name() == "fast":
        from neardup._kernels.fast_sets import components as fast

        roots: npt.NDArray[np.int64] = fast(
            n, np.ascontiguousarray(a, dtype=np.int64), np.ascontiguousarray(b, dtype=np.int64)
        )
        return roots
    uf = UnionFind(n)
    for x, y in zip(a.tolist(), b.tolist(), strict=True):
        uf.union(x, y)
    return uf.roots()


def cluster_labels(roots: npt.NDArray[np.int64]) -> list[list[int]]:
    """Group positions by root into clusters of two or more, in representative order.

    Examples:
        >>> cluster_labels(np.array([0, 1, 0, 3, 3]))
        [[0, 2], [3, 4]]
        >>> cluster_labels(np.array([0, 1]))
        []
    """
    if len(roots) == 0:
        return []
    # only members of clusters: a root that is not its own, or a root that others point to
    clustered = np.flatnonzero(roots != np.arange(len(roots)))
    if len(clustered) == 0:  # no clusters (else the bounds below give one empty group)
        return []
    heads = np.unique(roots[clustered])
    members = np.concatenate((clustered, heads))
    order = members[np.argsort(roots[members], kind="stable")]
    keys = roots[order]
    bounds = np.flatnonzero(keys[1:] != keys[:-1]) + 1
    flat = order.tolist()
    edges = [0, *bounds.tolist(), len(flat)]
    return [sorted(flat[a:b]) for a, b in pairwise(edges)]
