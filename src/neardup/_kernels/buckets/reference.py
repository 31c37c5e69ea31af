"""numpy reference of :mod:`neardup._kernels.buckets.fast`: candidates from the buckets of every
band, de-duplicated, verified all at once, then union-find. Slower, independent of the walk."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from neardup._kernels.sets import jaccard_pairs

U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]


def _candidates(keys: U64, band_start: int, band_end: int) -> tuple[I64, I64]:
    n = keys.shape[0]
    codes: list[I64] = []
    for band in range(band_start, band_end):
        col = keys[:, band]
        order = np.argsort(col, kind="stable")
        bounds = np.flatnonzero(np.diff(col[order])) + 1
        for group in np.split(order, bounds):
            if len(group) > 1:
                i, j = np.triu_indices(len(group), 1)
                a, b = np.minimum(group[i], group[j]), np.maximum(group[i], group[j])
                # the first band the two rows share verifies them
                first = ~np.any(keys[a, :band] == keys[b, :band], axis=1)
                codes.append((a * n + b)[first])
    if not codes:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    c = np.unique(np.concatenate(codes))
    return c // n, c % n


#: Cells of a set profile (see :func:`neardup._kernels.buckets.fast.set_profiles`).
PROFILE = 64
FULL = 255


def set_profiles(values: U64, offsets: I64) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.bool_]]:
    """See :func:`neardup._kernels.buckets.fast.set_profiles`."""
    n = len(offsets) - 1
    rows = np.repeat(np.arange(n), np.diff(offsets))
    counts = np.zeros((n, PROFILE), dtype=np.int64)
    np.add.at(counts, (rows, values.astype(np.int64) & (PROFILE - 1)), 1)
    big: npt.NDArray[np.bool_] = np.asarray((counts >= FULL).any(axis=1), dtype=np.bool_)
    return np.minimum(counts, FULL).astype(np.uint8), big


def bucket_pairs_verified(
    keys: U64,
    values: U64,
    offsets: I64,
    sigs: npt.NDArray[np.uint32],
    prof: npt.NDArray[np.uint8],
    big: npt.NDArray[np.bool_],
    exact: bool,
    threshold: float,
    join: bool,
    band_start: int,
    band_end: int,
) -> tuple[I64, I64, F64, I64, int]:
    """See :func:`neardup._kernels.buckets.fast.bucket_pairs_verified`. With ``join`` the
    accepted pairs returned here are all of them (a superset of the fast kernel's forest);
    every candidate is verified (the profiles, which only let the walk skip pairs that
    cannot reach the threshold, are not used)."""
    from neardup.cluster import UnionFind

    n = keys.shape[0]
    a, b = _candidates(keys, band_start, band_end)
    if exact:
        sim = jaccard_pairs(values, offsets, a, b)
    else:
        sim = (
            np.count_nonzero(sigs[a] == sigs[b], axis=1) / sigs.shape[1] if len(a) else np.empty(0)
        )
    ok = sim >= threshold
    a, b, sim = a[ok], b[ok], np.asarray(sim, dtype=np.float64)[ok]
    uf = UnionFind(n)
    for x, y in zip(a.tolist(), b.tolist(), strict=True):
        uf.union(x, y)
    return a, b, sim, uf.roots(), len(ok)
