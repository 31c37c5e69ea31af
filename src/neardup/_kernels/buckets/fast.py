"""numba kernels: verify the documents that share a bucket key, in one walk over the buckets.

Bit-identical to :mod:`neardup._kernels.buckets.reference`; see :mod:`neardup._kernels.buckets`.
"""

from __future__ import annotations

import numpy as np

from neardup._kernels.cache import njit


@njit()
def _find(parent, x):  # type: ignore[no-untyped-def]
    while parent[x] != x:
        parent[x] = parent[parent[x]]
        x = parent[x]
    return x


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
    # inter / (na + nb - inter) >= t  needs  inter >= t * (na + nb) / (1 + t); one less for
    # rounding, so the stop is conservative and the reported value is the plain quotient
    need = np.int64(np.ceil(threshold * (na + nb) / (1.0 + threshold))) - 1
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
def _one_root(parent, order, s, e):  # type: ignore[no-untyped-def]
    """Whether rows ``order[s:e]`` are all in one cluster."""
    r = _find(parent, order[s])
    for x in range(s + 1, e):  # noqa: SIM110 (numba compiles no generator expressions)
        if _find(parent, order[x]) != r:
            return False
    return True


@njit()
def bucket_pairs_verified(  # type: ignore[no-untyped-def]
    keys, values, offsets, sigs, exact, threshold, join, band_start, band_end
):
    """Walk every bucket of band columns ``band_start .. band_end - 1`` of ``keys``; verify each
    pair of its rows once (in the first band they share) by exact Jaccard (``exact``) or the
    signature estimate.

    With ``join`` a pair whose rows are already in one component is not verified and only
    the accepted pairs that join two components are returned (a spanning forest); without
    it every accepted pair is. Returns ``(a, b, similarity, roots, verified)``.
    """
    n = keys.shape[0]
    parent = np.arange(n)
    cap = 1024
    oa = np.empty(cap, dtype=np.int64)
    ob = np.empty(cap, dtype=np.int64)
    os_ = np.empty(cap, dtype=np.float64)
    m = 0
    verified = 0
    col = np.empty(n, dtype=np.uint64)
    for band in range(band_start, band_end):
        for r in range(n):
            col[r] = keys[r, band]
        order = np.argsort(col, kind="mergesort")
        s = 0
        while s < n:
            e = s + 1
            key = col[order[s]]
            while e < n and col[order[e]] == key:
                e += 1
            if join and e - s > 2 and _one_root(parent, order, s, e):
                s = e
                continue  # every pair of this bucket is in one cluster already
            for x in range(s, e - 1):
                u = order[x]
                for y in range(x + 1, e):
                    v = order[y]
                    # in join mode the root test is the cheaper one: try it first
                    if join and _find(parent, u) == _find(parent, v):
                        continue
                    if band > 0 and not _first_band(keys, u, v, band):
                        continue
                    if exact:
                        sim = _jaccard(values, offsets, u, v, threshold)
                    else:
                        sim = _estimate(sigs, u, v)
                    verified += 1
                    if sim < threshold:
                        continue
                    if join:
                        ru = _find(parent, u)
                        rv = _find(parent, v)
                        if ru < rv:
                            parent[rv] = ru
                        else:
                            parent[ru] = rv
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
            s = e
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
