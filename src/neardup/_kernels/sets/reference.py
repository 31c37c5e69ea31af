"""numpy reference of the set kernels: the oracle of :mod:`neardup._kernels.sets.fast`.

Same functions, arguments and results as the numba kernels (the front,
:mod:`neardup._kernels.sets`, prepares the arguments once for both).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["bucket_pairs", "intersections", "unique_pairs", "unique_per_doc", "unique_per_doc32"]

U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]


def unique_per_doc(values: U64, doc_offsets: I64) -> tuple[U64, I64]:
    """Reference of :func:`neardup._kernels.sets.fast.unique_per_doc`."""
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


def unique_per_doc32(values: U64, doc_offsets: I64) -> tuple[npt.NDArray[np.uint32], I64]:
    """Reference of :func:`neardup._kernels.sets.fast.unique_per_doc32`."""
    top = (np.asarray(values, dtype=np.uint64) >> np.uint64(32)).astype(np.uint32)
    v, offsets = unique_per_doc(top, doc_offsets)  # type: ignore[arg-type]
    return v.astype(np.uint32), offsets


def intersections(values: U64, offsets: I64, a: I64, b: I64) -> I64:
    """Reference of :func:`neardup._kernels.sets.fast.intersections`."""
    out = np.empty(len(a), dtype=np.int64)
    for k, (i, j) in enumerate(zip(a.tolist(), b.tolist(), strict=True)):
        x = values[offsets[i] : offsets[i + 1]]
        y = values[offsets[j] : offsets[j + 1]]
        out[k] = len(np.intersect1d(x, y, assume_unique=True))
    return out


def unique_pairs(a: I64, b: I64, n: np.int64) -> tuple[I64, I64]:
    """Reference of :func:`neardup._kernels.sets.fast.unique_pairs`."""
    order = np.lexsort((b, a))
    a, b = a[order], b[order]
    keep = np.ones(len(a), dtype=bool)
    if len(a) > 1:
        keep[1:] = (a[1:] != a[:-1]) | (b[1:] != b[:-1])
    return a[keep], b[keep]


def bucket_pairs(
    keys: U64, items: I64, rows: U64, cap: np.int64, radius: np.int64
) -> tuple[I64, I64, int, int]:
    """Reference of :func:`neardup._kernels.sets.fast.bucket_pairs` (keys sorted, items not)."""
    order = np.lexsort((items, keys))
    check = radius >= 0
    return _bucket_pairs(
        keys[order],
        items[order].astype(np.int64),
        rows[order] if check else None,
        int(cap),
        int(radius),
    )


def _bucket_pairs(
    keys: U64, items: I64, codes: U64 | None, cap: int, radius: int
) -> tuple[I64, I64, int, int]:
    n = len(keys)
    if n == 0:
        return np.empty(0, np.int64), np.empty(0, np.int64), 0, 0
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    sizes = np.diff(np.r_[starts, n])
    lefts: list[I64] = [np.empty(0, np.int64)]
    rights: list[I64] = [np.empty(0, np.int64)]
    same = keys[1:] == keys[:-1]
    run = same.copy()
    dist = 1
    while dist < cap and run.any():
        i = np.flatnonzero(run)
        keep = items[i] != items[i + dist]
        if codes is not None:
            d = np.bitwise_count(codes[i] ^ codes[i + dist]).sum(axis=1, dtype=np.int64)
            keep &= d <= radius
        lefts.append(items[i][keep])
        rights.append(items[i + dist][keep])
        dist += 1
        run = run[:-1] & same[dist - 1 :]
    a, b = np.concatenate(lefts), np.concatenate(rights)
    return a, b, int(np.count_nonzero(sizes > cap)), int(sizes.max())
