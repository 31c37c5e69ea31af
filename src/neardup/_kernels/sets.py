"""Exact set similarity for verification: per-document sorted unique hash sets (CSR) and
intersection counts of many pairs at once.

``unique_per_doc`` turns feature hashes grouped by document into sorted, de-duplicated sets
with one vectorized sort for the whole batch. ``intersections`` counts common elements of many
``(i, j)`` pairs by merging sorted runs: a numba kernel, with a numpy reference that gives the
same counts (and is the fallback when numba is missing).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["intersections", "jaccard_pairs", "sorted_unique", "unique_per_doc"]

U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]


def unique_per_doc(values: U64, doc_offsets: I64) -> tuple[U64, I64]:
    """Sort and de-duplicate each document's values; return ``(values, offsets)`` (CSR).

    Examples:
        >>> v, o = unique_per_doc(np.array([3, 1, 3, 2, 2], np.uint64), np.array([0, 3, 5]))
        >>> v.tolist(), o.tolist()
        ([1, 3, 2], [0, 2, 3])
    """
    from neardup._kernels.engine import backend_name

    if backend_name() == "fast":
        from neardup._kernels.fast_sets import unique_per_doc as fast

        result: tuple[U64, I64] = fast(
            np.ascontiguousarray(values, dtype=np.uint64),
            np.ascontiguousarray(doc_offsets, dtype=np.int64),
        )
        return result
    n_docs = len(doc_offsets) - 1
    doc = np.repeat(np.arange(n_docs, dtype=np.int64), np.diff(doc_offsets))
    order = np.lexsort((values, doc))
    v = values[order]
    d = doc[order]
    keep = np.ones(len(v), dtype=bool)
    if len(v) > 1:
        keep[1:] = (v[1:] != v[:-1]) | (d[1:] != d[:-1])
    v = v[keep]
    counts = np.bincount(d[keep], minlength=n_docs)
    offsets = np.zeros(n_docs + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return v, offsets


def _intersections_reference(values: U64, offsets: I64, a: I64, b: I64) -> I64:
    out = np.empty(len(a), dtype=np.int64)
    for k, (i, j) in enumerate(zip(a.tolist(), b.tolist(), strict=True)):
        x = values[offsets[i] : offsets[i + 1]]
        y = values[offsets[j] : offsets[j + 1]]
        out[k] = len(np.intersect1d(x, y, assume_unique=True))
    return out


def intersections(values: U64, offsets: I64, a: I64, b: I64) -> I64:
    """Number of common values of sets ``a[k]`` and ``b[k]`` for every k.

    Examples:
        >>> v, o = unique_per_doc(np.array([1, 2, 3, 2, 3, 4], np.uint64), np.array([0, 3, 6]))
        >>> intersections(v, o, np.array([0]), np.array([1])).tolist()
        [2]
    """
    from neardup._kernels.engine import backend_name

    a = np.ascontiguousarray(a, dtype=np.int64)
    b = np.ascontiguousarray(b, dtype=np.int64)
    if backend_name() == "fast":
        from neardup._kernels.fast_sets import intersections as fast

        result: I64 = fast(values, offsets, a, b)
        return result
    return _intersections_reference(values, offsets, a, b)


def jaccard_pairs(values: U64, offsets: I64, a: I64, b: I64) -> npt.NDArray[np.float64]:
    """Exact Jaccard similarity of many pairs of sets (0.0 when both are empty).

    Examples:
        >>> v, o = unique_per_doc(np.array([1, 2, 3, 2, 3, 4], np.uint64), np.array([0, 3, 6]))
        >>> jaccard_pairs(v, o, np.array([0]), np.array([1])).tolist()
        [0.5]
    """
    inter = intersections(values, offsets, a, b).astype(np.float64)
    sizes = np.diff(offsets)
    union = sizes[a] + sizes[b] - inter
    return np.divide(inter, union, out=np.zeros_like(inter), where=union > 0)


def sorted_unique(values: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """``np.unique`` of a 1-D integer array by one sort and a mask.

    numpy 2.4's ``np.unique`` takes a hash-table path for integers that is tens of times
    slower on the tens of millions of candidate-pair codes an LSH index produces.

    Examples:
        >>> sorted_unique(np.array([5, 1, 5, 3, 1])).tolist()
        [1, 3, 5]
    """
    if len(values) == 0:
        return values.copy()
    out = np.sort(values, kind="stable")
    keep = np.empty(len(out), dtype=bool)
    keep[0] = True
    np.not_equal(out[1:], out[:-1], out=keep[1:])
    return out[keep]
