"""numba kernel of :mod:`neardup._kernels.sets` (compiled lazily, cached)."""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["components", "intersections", "unique_per_doc"]


@numba.njit(cache=True, nogil=True)
def intersections(values, offsets, a, b):  # type: ignore[no-untyped-def]
    """Merge-count the common values of sorted runs ``a[k]`` and ``b[k]``."""
    out = np.empty(len(a), dtype=np.int64)
    for k in range(len(a)):
        i = np.uint64(offsets[a[k]])
        ie = np.uint64(offsets[a[k] + 1])
        j = np.uint64(offsets[b[k]])
        je = np.uint64(offsets[b[k] + 1])
        n = 0
        while i < ie and j < je:
            x = values[i]
            y = values[j]
            if x == y:
                n += 1
                i += np.uint64(1)
                j += np.uint64(1)
            elif x < y:
                i += np.uint64(1)
            else:
                j += np.uint64(1)
        out[k] = n
    return out


@numba.njit(cache=True, nogil=True)
def unique_per_doc(values, doc_offsets):  # type: ignore[no-untyped-def]
    """Sort and de-duplicate each document's run of values; return (values, offsets)."""
    n_docs = len(doc_offsets) - 1
    out = np.empty(len(values), dtype=np.uint64)
    offsets = np.zeros(n_docs + 1, dtype=np.int64)
    pos = 0
    for d in range(n_docs):
        run = np.sort(values[doc_offsets[d] : doc_offsets[d + 1]])
        for k in range(len(run)):
            if k == 0 or run[k] != run[k - 1]:
                out[pos] = run[k]
                pos += 1
        offsets[d + 1] = pos
    return out[:pos].copy(), offsets


@numba.njit(cache=True, nogil=True)
def components(n, a, b):  # type: ignore[no-untyped-def]
    """Union-find over ``n`` elements and the edges ``(a[k], b[k])``; every element's root is
    the smallest member of its component (the rule of :mod:`neardup.cluster`)."""
    parent = np.arange(n)
    for k in range(len(a)):
        x = a[k]
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        y = b[k]
        while parent[y] != y:
            parent[y] = parent[parent[y]]
            y = parent[y]
        if x < y:
            parent[y] = x
        elif y < x:
            parent[x] = y
    for i in range(n):
        r = i
        while parent[r] != r:
            r = parent[r]
        parent[i] = r
    return parent
