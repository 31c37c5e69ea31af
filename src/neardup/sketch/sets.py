"""Exact set similarity for verification: per-document sorted unique hash sets (CSR) and
intersection counts of many pairs at once.

``unique_per_doc`` turns feature hashes grouped by document into sorted, de-duplicated sets
with one vectorized sort for the whole batch. ``intersections`` counts common elements of many
``(i, j)`` pairs by merging sorted runs: a native kernel, with a numpy reference that gives the
same counts (and is the fallback when the compiled core is missing).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from neardup._kernels import engine

__all__ = [
    "bucket_pairs",
    "intersections",
    "jaccard_pairs",
    "rice_decode",
    "rice_encode",
    "rice_sets",
    "rice_sets32",
    "sorted_unique",
    "unique_pairs",
    "unique_per_doc",
    "unique_per_doc32",
]

U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]


def unique_per_doc(values: U64, doc_offsets: I64) -> tuple[U64, I64]:
    """Sort and de-duplicate each document's values; return ``(values, offsets)`` (CSR).

    Examples:
        >>> v, o = unique_per_doc(np.array([3, 1, 3, 2, 2], np.uint64), np.array([0, 3, 5]))
        >>> v.tolist(), o.tolist()
        ([1, 3, 2], [0, 2, 3])
    """
    result: tuple[U64, I64] = engine.kernels("sets").unique_per_doc(
        np.ascontiguousarray(values, dtype=np.uint64),
        np.ascontiguousarray(doc_offsets, dtype=np.int64),
    )
    return result


def unique_per_doc32(values: U64, doc_offsets: I64) -> tuple[npt.NDArray[np.uint32], I64]:
    """:func:`unique_per_doc` of the top 32 bits of each value: the compact sets that exact
    verification keeps for a whole corpus (half the memory of 64-bit hashes).

    Two distinct 64-bit hashes that share their top half become one element. For sets of a
    few hundred shingles that happens about once in 10**5 documents and moves a Jaccard by
    less than one element in the set size (``docs/dedup.md`` has the measurement); the
    store's set codec keeps at most the top 32 bits anyway.

    Examples:
        >>> hashes = np.array([3 << 32, 1 << 32, (3 << 32) + 7, 2 << 32], np.uint64)
        >>> v, o = unique_per_doc32(hashes, np.array([0, 3, 4]))
        >>> v.tolist(), o.tolist()
        ([1, 3, 2], [0, 2, 3])
    """
    result: tuple[npt.NDArray[np.uint32], I64] = engine.kernels("sets").unique_per_doc32(
        np.ascontiguousarray(values, dtype=np.uint64),
        np.ascontiguousarray(doc_offsets, dtype=np.int64),
    )
    return result


Sets = U64 | npt.NDArray[np.uint32]


def intersections(values: Sets, offsets: I64, a: I64, b: I64) -> I64:
    """Number of common values of sets ``a[k]`` and ``b[k]`` for every k.

    Examples:
        >>> v, o = unique_per_doc(np.array([1, 2, 3, 2, 3, 4], np.uint64), np.array([0, 3, 6]))
        >>> intersections(v, o, np.array([0]), np.array([1])).tolist()
        [2]
    """
    a = np.ascontiguousarray(a, dtype=np.int64)
    b = np.ascontiguousarray(b, dtype=np.int64)
    v = np.ascontiguousarray(values)
    if v.dtype not in (np.uint32, np.uint64):
        v = v.astype(np.uint64)
    o = np.ascontiguousarray(offsets, dtype=np.int64)
    result: I64 = engine.kernels("sets").intersections(v, o, a, b)
    return result


def jaccard_pairs(values: Sets, offsets: I64, a: I64, b: I64) -> npt.NDArray[np.float64]:
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
    out = np.sort(values)
    keep = np.empty(len(out), dtype=bool)
    keep[0] = True
    np.not_equal(out[1:], out[:-1], out=keep[1:])
    return out[keep]


def unique_pairs(a: I64, b: I64, n: int) -> tuple[I64, I64]:
    """The distinct ``(a[k], b[k])`` pairs, sorted by ``a`` then ``b``, for ``0 <= a < n``.

    The native kernel counting-sorts by ``a`` and sorts each group's ``b`` (linear in the
    pairs for small groups; ``np.lexsort`` of 10 million pairs takes seconds).

    Examples:
        >>> x, y = unique_pairs(np.array([2, 1, 2]), np.array([5, 9, 5]), 3)
        >>> x.tolist(), y.tolist()
        ([1, 2], [9, 5])
    """
    a = np.ascontiguousarray(a, dtype=np.int64)
    b = np.ascontiguousarray(b, dtype=np.int64)
    x: I64
    y: I64
    x, y = engine.kernels("sets").unique_pairs(a, b, np.int64(n))
    return x, y


def bucket_pairs(
    keys: U64, items: I64, cap: int, *, codes: U64 | None = None, radius: int = -1
) -> tuple[I64, I64, int, int]:
    """Candidate pairs of items that share a key (a bucket), for engines that group keys.

    Within a bucket of ``m`` items sorted ascending, each item is paired with the next
    ``min(m, cap) - 1``: every pair when ``m <= cap``, a sliding window above (linear work;
    a run of equal items stays connected through the chain of windows). With ``codes`` (one
    row of 64-bit words per key) and ``radius >= 0``, only pairs within that Hamming
    distance are kept, without materializing the others.

    Returns:
        ``(a, b, oversized, largest)``: pairs with ``a < b`` (a pair may repeat when it
        shares several keys), the number of buckets larger than ``cap`` and the largest
        bucket size.

    Examples:
        >>> a, b, over, big = bucket_pairs(
        ...     np.array([7, 7, 7, 9], np.uint64), np.array([3, 1, 2, 4]), 2)
        >>> a.tolist(), b.tolist(), over, big
        ([1, 2], [2, 3], 1, 3)
    """
    check = codes is not None and radius >= 0 and len(keys) > 0
    rows = (
        np.ascontiguousarray(codes, dtype=np.uint64).reshape(len(keys), -1)
        if check and codes is not None
        else np.zeros((0, 1), dtype=np.uint64)
    )
    order = np.argsort(keys)  # the kernel sorts the items of each run
    a, b, over, largest = engine.kernels("sets").bucket_pairs(
        np.ascontiguousarray(keys[order], dtype=np.uint64),
        np.ascontiguousarray(items[order], dtype=np.int64),
        np.ascontiguousarray(rows[order]) if check else rows,
        np.int64(cap),
        np.int64(radius if check else -1),
    )
    return a, b, int(over), int(largest)


def rice_encode(deltas: U64, counts: I64, k: I64, nbytes: I64) -> npt.NDArray[np.uint8]:
    """Golomb-Rice bit strings of each document's deltas (``counts[i]`` of them, parameter
    ``k[i]``): the low ``k`` bits of every delta, most significant first, then every
    ``delta >> k`` in unary (zeros, then a one), zero-padded to ``nbytes[i]`` bytes.

    Examples:
        >>> rice_encode(np.array([5, 1], np.uint64), np.array([2]), np.array([1]),
        ...             np.array([1])).tolist()  # lows 1 1, highs 2 -> 001, 0 -> 1: 11001100
        [204]
    """
    result: npt.NDArray[np.uint8] = engine.kernels("sets").rice_encode(
        np.ascontiguousarray(deltas, dtype=np.uint64),
        np.ascontiguousarray(counts, dtype=np.int64),
        np.ascontiguousarray(k, dtype=np.int64),
        np.ascontiguousarray(nbytes, dtype=np.int64),
    )
    return result


def rice_decode(
    body: npt.NDArray[np.uint8], starts: I64, counts: I64, k: I64
) -> tuple[U64, npt.NDArray[np.uint8]]:
    """Decode :func:`rice_encode` bit strings (blob ``i`` is ``body[starts[i]:starts[i+1]]``):
    the deltas, and per blob 1 if it decoded cleanly, 0 if it is damaged (too short, a
    missing unary one, more than padding left over).

    Examples:
        >>> d, ok = rice_decode(np.array([204], np.uint8), np.array([0, 1]), np.array([2]),
        ...                     np.array([1]))
        >>> d.tolist(), ok.tolist()
        ([5, 1], [1])
    """
    result: tuple[U64, npt.NDArray[np.uint8]] = engine.kernels("sets").rice_decode(
        np.ascontiguousarray(body, dtype=np.uint8),
        np.ascontiguousarray(starts, dtype=np.int64),
        np.ascontiguousarray(counts, dtype=np.int64),
        np.ascontiguousarray(k, dtype=np.int64),
    )
    return result


def rice_sets(
    values: U64, offsets: I64, margin: int, max_width: int
) -> tuple[npt.NDArray[np.uint8], I64]:
    """Format-2 blobs of :mod:`neardup.sketch.setcodec` for every document (sorted unique
    64-bit hashes, CSR) in one buffer; blob ``i`` is ``buffer[starts[i]:starts[i + 1]]``.

    Examples:
        >>> buf, starts = rice_sets(np.array([1 << 63], np.uint64), np.array([0, 1]), 10, 32)
        >>> buf.tobytes(), starts.tolist()  # width 10, k 8: 512 = low 0, high 2 (unary 001)
        (b'S\\x02\\n\\x08\\x01\\x00 ', [0, 7])
    """
    result: tuple[npt.NDArray[np.uint8], I64] = engine.kernels("sets").rice_sets(
        np.ascontiguousarray(values, dtype=np.uint64),
        np.ascontiguousarray(offsets, dtype=np.int64),
        int(margin),
        int(max_width),
    )
    return result


def rice_sets32(
    values: npt.NDArray[np.uint32], offsets: I64, margin: int, max_width: int
) -> tuple[npt.NDArray[np.uint8], I64]:
    """:func:`rice_sets` of 32-bit values taken as the top halves of 64-bit ones
    (``values << 32``), without the widened copy.

    Examples:
        >>> a = rice_sets32(np.array([1 << 31], np.uint32), np.array([0, 1]), 10, 32)
        >>> b = rice_sets(np.array([1 << 63], np.uint64), np.array([0, 1]), 10, 32)
        >>> a[0].tobytes() == b[0].tobytes()
        True
    """
    result: tuple[npt.NDArray[np.uint8], I64] = engine.kernels("sets").rice_sets32(
        np.ascontiguousarray(values, dtype=np.uint32),
        np.ascontiguousarray(offsets, dtype=np.int64),
        int(margin),
        int(max_width),
    )
    return result
