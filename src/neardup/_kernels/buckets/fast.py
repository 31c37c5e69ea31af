"""numba kernels: verify the documents that share a bucket key, in one walk over the buckets.

Bit-identical to :mod:`neardup._kernels.buckets.reference`; see :mod:`neardup._kernels.buckets`.
"""

from __future__ import annotations

import numpy as np

from neardup._kernels.cache import njit

#: Cells of a set profile (a power of two): a set's values counted by their low bits.
PROFILE = 64
#: A profile cell holds at most this count; a row with a cell this full is not filtered.
FULL = 255
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@njit()
def set_profiles(values, offsets):  # type: ignore[no-untyped-def]
    """``(n, PROFILE)`` uint8 counts of each row's values by ``value % PROFILE``, and whether a
    row has a cell of ``FULL`` or more (its profile bounds nothing)."""
    n = len(offsets) - 1
    prof = np.zeros((n, PROFILE), dtype=np.uint8)
    big = np.zeros(n, dtype=np.bool_)
    for r in range(n):
        for i in range(offsets[r], offsets[r + 1]):
            k = np.int64(values[i] & (PROFILE - 1))
            c = prof[r, k]
            if c == FULL - 1:
                big[r] = True
            if c < FULL:
                prof[r, k] = c + 1
    return prof, big


@njit()
def _find(parent, x):  # type: ignore[no-untyped-def]
    while parent[x] != x:
        parent[x] = parent[parent[x]]
        x = parent[x]
    return x


@njit()
def _need(na, nb, threshold):  # type: ignore[no-untyped-def]
    """One less than the intersection a Jaccard of ``threshold`` needs (conservative)."""
    # inter / (na + nb - inter) >= t  needs  inter >= t * (na + nb) / (1 + t); one less for
    # rounding, so a stop is conservative and the reported value is the plain quotient
    return np.int64(np.ceil(threshold * (na + nb) / (1.0 + threshold))) - 1


@njit()
def _cannot_reach(prof, big, offsets, u, v, threshold):  # type: ignore[no-untyped-def]
    """Whether rows u and v certainly miss ``threshold``: the smaller set is below
    ``threshold`` times the larger (the size filter), or their intersection is at most the sum
    over profile cells of the smaller count, and that is below what the threshold needs."""
    na = offsets[u + 1] - offsets[u]
    nb = offsets[v + 1] - offsets[v]
    if na + nb == 0:
        return False
    if min(na, nb) < threshold * max(na, nb):
        return True  # the size filter of _jaccard, before the profiles are read
    if big[u] or big[v]:
        return False
    bound = 0
    for k in range(PROFILE):
        bound += min(prof[u, k], prof[v, k])
    return bound < _need(na, nb, threshold)


@njit()
def _jaccard(values, offsets, u, v, threshold):  # type: ignore[no-untyped-def]
    """Exact Jaccard of the sorted sets of rows u and v, or -1.0 once it cannot reach
    ``threshold`` (size filter, then a merge that stops when the rest cannot catch up)."""
    i, ie = offsets[u], offsets[u + 1]
    j, je = offsets[v], offsets[v + 1]
    na, nb = ie - i, je - j
    if na + nb == 0:
        return 0.0
    lo, hi = min(na, nb), max(na, nb)
    if lo / hi < threshold:
        return -1.0
    need = _need(na, nb, threshold)
    inter = 0
    while i < ie and j < je:
        # a branch-free merge step; every 16 steps, stop if the rest cannot catch up
        for _ in range(16):
            if i >= ie or j >= je:
                break
            x = values[i]
            y = values[j]
            inter += x == y
            i += x <= y
            j += y <= x
        if inter + min(ie - i, je - j) < need:
            return -1.0
    return inter / (na + nb - inter)


@njit()
def _estimate(sigs, u, v):  # type: ignore[no-untyped-def]
    same = 0
    num_perm = sigs.shape[1]
    for k in range(num_perm):
        if sigs[u, k] == sigs[v, k]:
            same += 1
    return same / num_perm


@njit()
def _first_band(keys, u, v, band):  # type: ignore[no-untyped-def]
    """Whether rows u and v share no key in a band before ``band``."""
    for k in range(band):  # noqa: SIM110 (numba compiles no generator expressions)
        if keys[u, k] == keys[v, k]:
            return False
    return True


@njit()
def _chain(keys, band, shift, slot_key, slot_head, nxt, head):  # type: ignore[no-untyped-def]
    """Group the rows of one band column by key in a hash table: ``nxt[r]`` is the next row
    (ascending) with the key of row ``r`` (-1: none), ``head[r]`` whether ``r`` is its key's
    first row (``shift``: 64 - log2 of the slots). O(n): no sort."""
    n = keys.shape[0]
    mask = np.uint64(len(slot_head) - 1)
    slot_head[:] = -1
    for r in range(n - 1, -1, -1):  # backwards, so that each chain runs in ascending rows
        key = keys[r, band]
        h = (key * _GOLDEN) >> shift
        while slot_head[h] != -1 and slot_key[h] != key:
            h = (h + np.uint64(1)) & mask
        if slot_head[h] == -1:
            slot_key[h] = key
            nxt[r] = -1
        else:
            nxt[r] = slot_head[h]
            head[slot_head[h]] = False
        slot_head[h] = r
        head[r] = True


@njit()
def bucket_pairs_verified(  # type: ignore[no-untyped-def]
    keys, values, offsets, sigs, prof, big, exact, threshold, join, band_start, band_end
):
    """Walk every bucket of band columns ``band_start .. band_end - 1`` of ``keys``; verify each
    pair of its rows once (in the first band they share) by exact Jaccard (``exact``) or the
    signature estimate.

    Buckets are visited by their first row and their rows in ascending order. With ``exact``
    a pair whose set profiles (:func:`set_profiles`, ``prof`` and ``big``) show that it cannot
    reach the threshold is rejected without a merge; ``prof`` with no columns turns that off.
    With ``join`` a pair whose rows are already in one component is not verified and only
    the accepted pairs that join two components are returned (a spanning forest); without
    it every accepted pair is. Returns ``(a, b, similarity, roots, verified)``, ``verified``
    the pairs whose sets (or signatures) were compared.
    """
    n = keys.shape[0]
    parent = np.arange(n)
    cap = 1024
    oa = np.empty(cap, dtype=np.int64)
    ob = np.empty(cap, dtype=np.int64)
    os_ = np.empty(cap, dtype=np.float64)
    m = 0
    verified = 0
    filtered = exact and prof.shape[1] == PROFILE
    slots = 2
    bits = 1
    while slots < 2 * n:
        slots *= 2
        bits += 1
    shift = np.uint64(64 - bits)
    slot_key = np.empty(slots, dtype=np.uint64)
    slot_head = np.empty(slots, dtype=np.int64)
    nxt = np.empty(n, dtype=np.int64)
    head = np.zeros(n, dtype=np.bool_)
    members = np.empty(n, dtype=np.int64)
    roots = np.empty(n if join else 0, dtype=np.int64)  # of the members, with join
    for band in range(band_start, band_end):
        _chain(keys, band, shift, slot_key, slot_head, nxt, head)
        for first in range(n):
            if not head[first] or nxt[first] == -1:
                continue  # not a bucket's first row, or a bucket of one
            e = 0
            r = first
            while r != -1:
                members[e] = r
                e += 1
                r = nxt[r]
            if join:  # each member's cluster root, kept current below
                one = True
                for x in range(e):
                    roots[x] = _find(parent, members[x])
                    one &= roots[x] == roots[0]
                if one:
                    continue  # every pair of this bucket is in one cluster already
            for x in range(e - 1):
                u = members[x]
                for y in range(x + 1, e):
                    v = members[y]
                    # in join mode the root test is the cheaper one: try it first
                    if join and roots[x] == roots[y]:
                        continue
                    if band > 0 and not _first_band(keys, u, v, band):
                        continue
                    if exact:
                        if filtered and _cannot_reach(prof, big, offsets, u, v, threshold):
                            continue
                        sim = _jaccard(values, offsets, u, v, threshold)
                    else:
                        sim = _estimate(sigs, u, v)
                    verified += 1
                    if sim < threshold:
                        continue
                    if join:  # the smaller root stays; relabel the other's members
                        keep = min(roots[x], roots[y])
                        gone = max(roots[x], roots[y])
                        parent[gone] = keep
                        for z in range(e):
                            if roots[z] == gone:
                                roots[z] = keep
                    if m == cap:
                        cap *= 2
                        na_ = np.empty(cap, dtype=np.int64)
                        nb_ = np.empty(cap, dtype=np.int64)
                        ns_ = np.empty(cap, dtype=np.float64)
                        na_[:m] = oa[:m]
                        nb_[:m] = ob[:m]
                        ns_[:m] = os_[:m]
                        oa, ob, os_ = na_, nb_, ns_
                    oa[m] = min(u, v)
                    ob[m] = max(u, v)
                    os_[m] = sim
                    m += 1
    if not join:
        for k in range(m):
            x = _find(parent, oa[k])
            y = _find(parent, ob[k])
            if x < y:
                parent[y] = x
            elif y < x:
                parent[x] = y
    for i in range(n):
        parent[i] = _find(parent, i)
    return oa[:m].copy(), ob[:m].copy(), os_[:m].copy(), parent, verified
