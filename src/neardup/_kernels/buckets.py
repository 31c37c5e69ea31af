"""numpy reference of the bucket walk, the twin of ``neardup._native.buckets``: every candidate
pair of the band columns at once, in the walk's order, checked and verified all at once; then
the order replayed for what depends on it (in join mode, the forest of accepted pairs and the
count of verified pairs). Slower than the walk, and independent of it.

The walk's order (see :mod:`neardup.index.buckets`): bands in order, a band's buckets by
their first row, a bucket's pairs ``(u, v)`` by ascending rows; a pair is a candidate only
in the first band its rows share.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from neardup._kernels.sets import (
    check_offsets,
    check_sorted_runs,
    components,
    intersections,
)
from neardup.errors import ConfigError

__all__ = ["bucket_pairs_verified", "bucket_roots", "compact_sets", "set_profiles", "shared_rows"]

U64 = npt.NDArray[np.uint64]
U32 = npt.NDArray[np.uint32]
I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]
Sets = U64 | U32

#: Cells of a set profile (a power of two): a set's values counted by their low bits.
PROFILE = 32
#: A profile cell holds at most this count; a row with a cell this full is not filtered.
FULL = 255


def set_profiles(values: Sets, offsets: I64) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.bool_]]:
    """``(n, PROFILE)`` uint8 counts of each row's values by ``value % PROFILE`` (saturating
    at ``FULL``), and whether a row has a cell of ``FULL`` or more (its profile bounds
    nothing)."""
    check_offsets(offsets, len(values))
    n = len(offsets) - 1
    rows = np.repeat(np.arange(n), np.diff(offsets))
    counts = np.zeros((n, PROFILE), dtype=np.int64)
    np.add.at(counts, (rows, values.astype(np.int64) & (PROFILE - 1)), 1)
    big: npt.NDArray[np.bool_] = np.asarray((counts >= FULL).any(axis=1), dtype=np.bool_)
    return np.minimum(counts, FULL).astype(np.uint8), big


def _candidates(keys: U64, band_start: int, band_end: int) -> tuple[I64, I64]:
    """The candidate pairs ``(u, v)``, ``u < v``, of the band columns, in the walk's order."""
    n = keys.shape[0]
    us: list[I64] = [np.empty(0, np.int64)]
    vs: list[I64] = [np.empty(0, np.int64)]
    for band in range(band_start, band_end):
        col = keys[:, band]
        order = np.argsort(col, kind="stable")  # rows by key, ascending within a key
        ordered = col[order]
        starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
        sizes = np.diff(np.r_[starts, n])
        multi = sizes > 1
        starts, sizes = starts[multi], sizes[multi]
        by_first = np.argsort(order[starts], kind="stable")  # buckets by their first row
        starts, sizes = starts[by_first], sizes[by_first]
        # the members of every bucket, one bucket after another
        total = int(sizes.sum())
        before = np.cumsum(sizes) - sizes
        at = np.arange(total) - np.repeat(before, sizes)  # each member's place in its bucket
        members = order[np.repeat(starts, sizes) + at]
        # each member pairs with every later member of its bucket, in turn
        later = np.repeat(sizes, sizes) - 1 - at
        left = np.repeat(np.arange(total), later)
        right = left + 1 + np.arange(len(left)) - np.repeat(np.cumsum(later) - later, later)
        u, v = members[left].astype(np.int64), members[right].astype(np.int64)
        if band:  # the first band the two rows share verifies them
            first = ~np.any(keys[u, :band] == keys[v, :band], axis=1)
            u, v = u[first], v[first]
        us.append(u)
        vs.append(v)
    return np.concatenate(us), np.concatenate(vs)


def _cannot_reach(
    sizes: I64,
    prof: npt.NDArray[np.uint8],
    big: npt.NDArray[np.bool_],
    u: I64,
    v: I64,
    threshold: float,
) -> npt.NDArray[np.bool_]:
    """The pairs that certainly miss ``threshold``: the size filter, then the profile bound
    (the sum over cells of the smaller count) below what the threshold needs."""
    na, nb = sizes[u], sizes[v]
    total = na + nb
    size_fail = np.minimum(na, nb) < threshold * np.maximum(na, nb)
    bound = np.zeros(len(u), dtype=np.int64)
    step = 1 << 16
    for lo in range(0, len(u), step):
        pu, pv = prof[u[lo : lo + step]], prof[v[lo : lo + step]]
        bound[lo : lo + step] = np.minimum(pu, pv).sum(axis=1, dtype=np.int64)
    need = np.ceil(threshold * total / (1.0 + threshold)).astype(np.int64) - 1
    low = ~(big[u] | big[v]) & (bound < need)
    out: npt.NDArray[np.bool_] = (total != 0) & (size_fail | low)
    return out


def _jaccard(values: Sets, offsets: I64, u: I64, v: I64, threshold: float) -> F64:
    """Exact Jaccard of the pairs' sets; -1.0 where the size filter rejects a pair."""
    sizes = np.diff(offsets)
    na, nb = sizes[u], sizes[v]
    total = na + nb
    lo, hi = np.minimum(na, nb), np.maximum(na, nb)
    inter = intersections(values, offsets, u, v)
    out = np.zeros(len(u), dtype=np.float64)
    some = total > 0
    ratio = lo[some] / hi[some]
    out[some] = np.where(
        ratio < threshold, -1.0, inter[some] / (total[some] - inter[some]).astype(np.float64)
    )
    return out


def _check(
    keys: U64,
    values: Sets,
    offsets: I64,
    sigs: U32,
    prof: npt.NDArray[np.uint8],
    big: npt.NDArray[np.bool_],
    exact: bool,
    threshold: float,
    band_start: int,
    band_end: int,
    masks: U64 | None = None,
) -> None:
    n, bands = keys.shape
    if not 0.0 <= threshold <= 1.0:
        raise ConfigError("threshold must be between 0 and 1; pass a similarity")
    if n >= 2**32 - 1:
        raise ConfigError(f"keys has {n} rows; the walk takes fewer than 2**32 - 1")
    if band_start < 0 or band_end < band_start or band_end > bands:
        raise ConfigError(
            f"bands {band_start}..{band_end} are not within the {bands} band columns of keys"
        )
    if exact and len(offsets) != n + 1:
        raise ConfigError("offsets must have one entry more than keys has rows")
    if not exact and sigs.shape[0] != n:
        raise ConfigError("sigs must have one row per row of keys")
    if not exact and sigs.shape[1] == 0 and n > 0:
        raise ConfigError("sigs must have at least one column (slot)")
    if exact and prof.shape[1] == PROFILE and (prof.shape[0] != n or len(big) != n):
        raise ConfigError("prof and big must have one row per row of keys")
    _check_masks(masks, keys)
    if exact:
        check_offsets(offsets, len(values))
        check_sorted_runs(values, offsets)


def bucket_pairs_verified(
    keys: U64,
    values: Sets,
    offsets: I64,
    sigs: U32,
    prof: npt.NDArray[np.uint8],
    big: npt.NDArray[np.bool_],
    exact: bool,
    threshold: float,
    join: bool,
    band_start: int,
    band_end: int,
    masks: U64 | None = None,
) -> tuple[I64, I64, F64, I64, int]:
    """Verify every candidate pair of band columns ``band_start .. band_end - 1`` of ``keys``
    (``(n, bands)``), each once, by exact Jaccard of the sorted sets ``values``/``offsets``
    (``exact``) or the share of equal ``sigs`` slots.

    With ``exact`` and ``prof`` of ``PROFILE`` columns (:func:`set_profiles`, with ``big``),
    a pair that certainly misses the threshold is rejected unverified. With ``join`` a pair
    whose rows are already in one cluster (at its turn in the walk) is skipped unverified
    and only the accepted pairs that join two clusters are returned (a spanning forest).

    Returns:
        ``(a, b, similarity, roots, verified)``: the accepted pairs ``a < b`` in the walk's
        order, each row's cluster root (its smallest member) and how many pairs were
        compared.

    ``masks`` (:func:`shared_rows`'s, or ``None``) only spare the native walk the rows of
    buckets of one; the results do not depend on them.

    Raises:
        ConfigError: the arrays do not fit each other or the threshold is not in [0, 1].
    """
    n = keys.shape[0]
    band_start, band_end, threshold = int(band_start), int(band_end), float(threshold)
    _check(keys, values, offsets, sigs, prof, big, exact, threshold, band_start, band_end, masks)
    u, v = _candidates(keys, band_start, band_end)
    if exact:
        passing = np.ones(len(u), dtype=bool)
        if prof.shape[1] == PROFILE:
            passing = ~_cannot_reach(np.diff(offsets), prof, big, u, v, threshold)
        sim = np.full(len(u), -1.0)
        sim[passing] = _jaccard(values, offsets, u[passing], v[passing], threshold)
    else:
        passing = np.ones(len(u), dtype=bool)
        sim = np.count_nonzero(sigs[u] == sigs[v], axis=1) / max(sigs.shape[1], 1)
    accepted = passing & (sim >= threshold)
    if not join:
        a, b, s = u[accepted], v[accepted], sim[accepted]
        return a, b, s, components(n, a, b), int(np.count_nonzero(passing))
    # join mode: replay the walk, skipping the pairs already in one cluster at their turn
    parent = list(range(n))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    kept: list[int] = []
    verified = 0
    turns = np.flatnonzero(passing)
    for k, x, y, ok in zip(
        turns.tolist(),
        u[turns].tolist(),
        v[turns].tolist(),
        accepted[turns].tolist(),
        strict=True,
    ):
        rx, ry = find(x), find(y)
        if rx == ry:
            continue
        verified += 1
        if ok:
            parent[max(rx, ry)] = min(rx, ry)  # the smaller root stays
            kept.append(k)
    roots = np.array([find(i) for i in range(n)], dtype=np.int64)
    pick = np.array(kept, dtype=np.int64)
    return u[pick], v[pick], sim[pick], roots, verified


def bucket_roots(
    keys: U64,
    values: Sets,
    offsets: I64,
    sigs: U32,
    prof: npt.NDArray[np.uint8],
    big: npt.NDArray[np.bool_],
    exact: bool,
    threshold: float,
    threads: int,
    masks: U64 | None = None,
) -> I64:
    """Each row's cluster root (its smallest member): the roots of
    :func:`bucket_pairs_verified` in join mode over every band column. The native walk
    takes the bands on ``threads`` threads that share one union-find (which pairs it tests
    then depends on the threads' timing, the roots do not); this reference walks them in
    order.

    Raises:
        ConfigError: the arrays do not fit each other, the threshold is not in [0, 1] or
            ``threads`` is below 1.
    """
    n, bands = keys.shape
    threshold = float(threshold)
    if not 0.0 <= threshold <= 1.0:
        raise ConfigError("threshold must be between 0 and 1; pass a similarity")
    if n >= 2**32 - 1:
        raise ConfigError(f"keys has {n} rows; the walk takes fewer than 2**32 - 1")
    if int(threads) < 1:
        raise ConfigError(f"threads must be at least 1, got {int(threads)}")
    found = bucket_pairs_verified(
        keys, values, offsets, sigs, prof, big, exact, threshold, True, 0, bands, masks
    )
    return found[3]


def shared_rows(keys: U64, threads: int) -> tuple[U64, npt.NDArray[np.bool_]]:
    """Which rows share their key of some band column of ``keys`` (``(n, bands)``) with
    another row: each band's rows as ``(bands, ceil(n / 64))`` mask words (bit ``r % 64`` of
    word ``r // 64``), which a walk takes (``masks=``), and each row's "in some band" (the
    only rows whose sets a walk reads: a bucket of one row has no pair). The native kernel
    takes the bands on ``threads`` threads.

    Raises:
        ConfigError: ``keys`` has 2**32 - 1 rows or more, or ``threads`` is below 1.
    """
    n, bands = keys.shape
    if n >= 2**32 - 1:
        raise ConfigError(f"keys has {n} rows; the walk takes fewer than 2**32 - 1")
    if int(threads) < 1:
        raise ConfigError(f"threads must be at least 1, got {int(threads)}")
    words = -(-n // 64)
    bits = np.zeros((bands, words * 64), dtype=np.bool_)
    for band in range(bands):
        _, inverse, counts = np.unique(keys[:, band], return_inverse=True, return_counts=True)
        bits[band, :n] = counts[inverse.reshape(-1)] > 1
    packed = np.packbits(bits.reshape(bands, words, 64)[:, :, ::-1], axis=2)  # bit 0 first
    masks = packed.view(">u8").reshape(bands, words).astype(np.uint64)
    shared: npt.NDArray[np.bool_] = np.asarray(bits[:, :n].any(axis=0), dtype=np.bool_)
    return masks, shared


def _check_masks(masks: U64 | None, keys: U64) -> None:
    n, bands = keys.shape
    if masks is not None and masks.shape != (bands, -(-n // 64)):
        raise ConfigError(
            f"masks must be shared_rows(keys)[0]: ({bands}, {-(-n // 64)}) words, "
            f"got {tuple(masks.shape)}"
        )


def compact_sets(values: U32, offsets: I64, keep: npt.NDArray[np.bool_]) -> int:
    """Move the runs ``values[offsets[r]:offsets[r + 1]]`` of the rows with ``keep[r]`` to the
    front of ``values``, in order (in place), and rewrite ``offsets`` (in place) so that the
    other rows' runs are empty. Returns the number of values kept.

    Raises:
        ConfigError: ``offsets`` is not one entry longer than ``keep``, or not CSR
            boundaries of ``values``.
    """
    if len(offsets) != len(keep) + 1:
        raise ConfigError("offsets must have one entry more than keep")
    check_offsets(offsets, len(values))
    sizes = np.diff(offsets)
    kept = np.repeat(np.asarray(keep, dtype=np.bool_), sizes)
    m = int(kept.sum())
    values[:m] = values[kept]
    offsets[1:] = np.cumsum(np.where(keep, sizes, 0))
    return m
