"""numba kernels of the LSH band-key table, bit-identical to :mod:`.reference`.

See :mod:`neardup._kernels.lsh` for the layout. Every per-document kernel does its whole job
in one call (fold the slots, hash the bands, probe, walk the chains, estimate, sort), so that
``LSHIndex.add`` and ``query`` cost one numba call each.
"""

from __future__ import annotations

import numpy as np

from neardup._kernels.cache import njit
from neardup._kernels.minhash.fast import _MIX, _S27, _S37, _fmix64

__all__ = ["add_rows", "insert_rows", "query_rows", "rehash"]

_MAX64 = np.uint64(0xFFFFFFFFFFFFFFFF)
_MAX32 = np.uint32(0xFFFFFFFF)
_LOW32 = np.uint64(0xFFFFFFFF)
_S32 = np.uint64(32)


@njit(inline="always")
def _band_key(sig32, row, j, rows):  # type: ignore[no-untyped-def]
    h = np.uint64(j + 1) * _MIX
    for c in range(j * rows, (j + 1) * rows):
        h = ((h << _S27) | (h >> _S37)) ^ np.uint64(sig32[row, c])
        h *= _MIX
    return _fmix64(h)


@njit(inline="always")
def _file(key, row, tkeys, thead, erow, enext, meta):  # type: ignore[no-untyped-def]
    mask = tkeys.shape[0] - 1
    s = np.int64(key & np.uint64(mask))
    while thead[s] >= 0 and tkeys[s] != key:
        s = (s + 1) & mask
    if thead[s] < 0:
        tkeys[s] = key
        meta[0] += 1
    e = meta[1]
    erow[e] = row
    enext[e] = thead[s]
    thead[s] = e
    meta[1] = e + 1


@njit()
def insert_rows(rows_in, sig32, bands, rows, tkeys, thead, erow, enext, meta):  # type: ignore[no-untyped-def]
    """File the band keys of stored rows ``rows_in`` (their ``sig32`` rows are set).

    The caller leaves room: ``len(erow) >= meta[1] + len(rows_in) * bands`` and at most half
    of the slots used afterwards.
    """
    for i in range(rows_in.shape[0]):
        r = rows_in[i]
        for j in range(bands):
            _file(_band_key(sig32, r, j, rows), r, tkeys, thead, erow, enext, meta)


@njit()
def add_rows(sig64, first, sig32, state, bands, rows, tkeys, thead, erow, enext, meta):  # type: ignore[no-untyped-def]
    """Store sketches ``sig64`` (``(k, num_perm)``, or one row) as rows ``first..first+k-1``.

    Folds each slot to 32 bits into ``sig32``, marks the row live (1) or live but empty (2:
    every slot at its maximum, never a hit) in ``state``, and files its band keys.
    """
    src = sig64.reshape(-1, sig32.shape[1])
    num_perm = sig32.shape[1]
    for i in range(src.shape[0]):
        r = first + i
        all64 = True
        all32 = True
        for c in range(num_perm):
            v = src[i, c]
            all64 &= v == _MAX64
            all32 &= v == _LOW32
            sig32[r, c] = np.uint32((v ^ (v >> _S32)) & _LOW32)
        state[r] = 2 if all64 or all32 else 1
        for j in range(bands):
            _file(_band_key(sig32, r, j, rows), r, tkeys, thead, erow, enext, meta)


@njit()
def rehash(tkeys, thead, cap):  # type: ignore[no-untyped-def]
    """The same table with ``cap`` slots (a power of two); the entries do not move."""
    nkeys = np.empty(cap, dtype=np.uint64)
    nhead = np.full(cap, -1, dtype=np.int64)
    mask = cap - 1
    for s in range(tkeys.shape[0]):
        if thead[s] >= 0:
            t = np.int64(tkeys[s] & np.uint64(mask))
            while nhead[t] >= 0:
                t = (t + 1) & mask
            nkeys[t] = tkeys[s]
            nhead[t] = thead[s]
    return nkeys, nhead


@njit()
def query_rows(sig64, bands, rows, tkeys, thead, erow, enext, state, sig32, mark, meta, min_est):  # type: ignore[no-untyped-def]
    """Hits of each query sketch: live rows sharing a band key, with the estimated Jaccard.

    Returns ``(offsets, hit_rows, estimates)`` (CSR by query): for each query its hits with
    estimate ``>= min_est``, best first, ties by row. An empty query (every slot at its
    maximum) has no hits.
    """
    num_perm = sig32.shape[1]
    src = sig64.reshape(-1, num_perm)
    nq = src.shape[0]
    mask = tkeys.shape[0] - 1
    span = np.int64(sig32.shape[0])
    q32 = np.empty((1, num_perm), dtype=np.uint32)
    offsets = np.zeros(nq + 1, dtype=np.int64)
    cap = 16
    codes = np.empty(cap, dtype=np.int64)  # (num_perm - equal slots) * span + row
    n_out = 0
    for q in range(nq):
        all64 = True
        all32 = True
        for c in range(num_perm):
            v = src[q, c]
            all64 &= v == _MAX64
            all32 &= v == _LOW32
            q32[0, c] = np.uint32((v ^ (v >> _S32)) & _LOW32)
        start = n_out
        if not (all64 or all32):
            meta[2] += 1
            stamp = meta[2]
            for j in range(bands):
                key = _band_key(q32, 0, j, rows)
                s = np.int64(key & np.uint64(mask))
                while thead[s] >= 0 and tkeys[s] != key:
                    s = (s + 1) & mask
                e = thead[s]
                while e >= 0:
                    r = erow[e]
                    e = enext[e]
                    if mark[r] == stamp or state[r] != 1:
                        continue
                    mark[r] = stamp
                    same = 0
                    for c in range(num_perm):
                        if sig32[r, c] == q32[0, c]:
                            same += 1
                    if same / num_perm < min_est:
                        continue
                    if n_out == cap:
                        cap *= 2
                        grown = np.empty(cap, dtype=np.int64)
                        grown[:n_out] = codes[:n_out]
                        codes = grown
                    codes[n_out] = (num_perm - same) * span + r
                    n_out += 1
            if n_out - start > 1:
                codes[start:n_out] = np.sort(codes[start:n_out])
        offsets[q + 1] = n_out
    hit_rows = np.empty(n_out, dtype=np.int64)
    estimates = np.empty(n_out, dtype=np.float64)
    for i in range(n_out):
        hit_rows[i] = codes[i] % span
        estimates[i] = (num_perm - codes[i] // span) / num_perm
    return offsets, hit_rows, estimates
