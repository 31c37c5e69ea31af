"""numba kernels of the LSH band-key table, bit-identical to :mod:`.reference`.

See :mod:`neardup._kernels.lsh` for the layout. Every per-document kernel does its whole job
in one call (fold the slots, hash the bands, probe, walk the chains, estimate, sort) with
few arguments, so that ``LSHIndex.add`` and ``query`` cost one short numba call each.
"""

from __future__ import annotations

import numpy as np

from neardup._kernels.cache import njit
from neardup._kernels.lsh import NO_ROOM
from neardup._kernels.minhash.fast import _MIX, _S27, _S37, _fmix64

__all__ = [
    "add_query_one",
    "add_query_same",
    "add_rows",
    "candidate_rows",
    "candidates_one",
    "grow",
    "insert_rows",
    "new_table",
    "query_one",
    "query_rows",
]

_MAX64 = np.uint64(0xFFFFFFFFFFFFFFFF)
_LOW32 = np.uint64(0xFFFFFFFF)
_S32 = np.uint64(32)
HEADER = 8


@njit(inline="always")
def _band_key(sig32, row, j, rows):  # type: ignore[no-untyped-def]
    h = np.uint64(j + 1) * _MIX
    for c in range(j * rows, (j + 1) * rows):
        h = ((h << _S27) | (h >> _S37)) ^ np.uint64(sig32[row, c])
        h *= _MIX
    return np.int64(_fmix64(h))


@njit(inline="always")
def _slot(tab, key):  # type: ignore[no-untyped-def]
    """Index in ``tab`` of ``key``'s slot (its key word; the head follows): where it is, or
    the empty slot where it would go."""
    base = tab[7]
    mask = tab[3] - 1
    s = key & mask
    while tab[base + 2 * s + 1] >= 0 and tab[base + 2 * s] != key:
        s = (s + 1) & mask
    return base + 2 * s


@njit(inline="always")
def _file(tab, key, row):  # type: ignore[no-untyped-def]
    """File ``row`` under ``key``; returns the key's previous head (-1: a new key)."""
    ents = tab[7] + 2 * tab[3]
    at = _slot(tab, key)
    head = tab[at + 1]
    if head < 0:
        tab[at] = key
        tab[0] += 1
    e = tab[1]
    tab[ents + 2 * e] = row
    tab[ents + 2 * e + 1] = head
    tab[at + 1] = e
    tab[1] = e + 1
    return head


@njit(inline="always")
def _room(tab, keys):  # type: ignore[no-untyped-def]
    """Whether ``keys`` more entries fit (and the slots stay at most 3/4 full)."""
    return tab[1] + keys <= tab[4] and 4 * (tab[0] + keys) <= 3 * tab[3]


@njit()
def new_table(slots, capacity, bands, rows, base):  # type: ignore[no-untyped-def]
    """An empty table: ``slots`` (a power of two) slots, room for ``capacity`` entries, a
    header of ``base`` words (``tab[8:base]`` zero, for the caller)."""
    tab = np.zeros(base + 2 * slots + 2 * capacity, dtype=np.int64)
    tab[3] = slots
    tab[4] = capacity
    tab[5] = bands
    tab[6] = rows
    tab[7] = base
    for s in range(slots):
        tab[base + 2 * s + 1] = -1
    return tab


@njit()
def grow(tab, slots, capacity):  # type: ignore[no-untyped-def]
    """The same table with ``slots`` slots and room for ``capacity`` entries (rehashed)."""
    base = tab[7]
    out = new_table(slots, capacity, tab[5], tab[6], base)
    out[:3] = tab[:3]
    out[8:base] = tab[8:base]
    for s in range(tab[3]):
        if tab[base + 2 * s + 1] >= 0:
            at = _slot(out, tab[base + 2 * s])
            out[at] = tab[base + 2 * s]
            out[at + 1] = tab[base + 2 * s + 1]
    used = 2 * tab[1]
    old = base + 2 * tab[3]
    new = base + 2 * slots
    out[new : new + used] = tab[old : old + used]
    return out


@njit()
def insert_rows(rows_in, sig32, tab):  # type: ignore[no-untyped-def]
    """File the band keys of stored rows ``rows_in`` (their ``sig32`` rows are set).

    Returns 0, or -1 (nothing filed) when the table lacks room for them.
    """
    bands = tab[5]
    rows = tab[6]
    if not _room(tab, rows_in.shape[0] * bands):
        return -1
    for i in range(rows_in.shape[0]):
        r = rows_in[i]
        for j in range(bands):
            _file(tab, _band_key(sig32, r, j, rows), r)
    return 0


@njit(inline="always")
def _fold_row(src, i, dst, r):  # type: ignore[no-untyped-def]
    """Fold row ``i`` of ``src`` to 32 bits into row ``r`` of ``dst``; False when it is empty
    (every slot at its maximum: never a hit)."""
    all64 = True
    all32 = True
    for c in range(dst.shape[1]):
        v = src[i, c]
        all64 &= v == _MAX64
        all32 &= v == _LOW32
        dst[r, c] = np.uint32((v ^ (v >> _S32)) & _LOW32)
    return not (all64 or all32)


@njit(inline="always")
def _fits(first, k, sig32, state, tab):  # type: ignore[no-untyped-def]
    """Whether rows ``first..first+k-1`` and their band keys fit."""
    return first + k <= sig32.shape[0] and first + k <= state.shape[0] and _room(tab, k * tab[5])


@njit(inline="always")
def _store(src, i, r, sig32, state, tab, heads):  # type: ignore[no-untyped-def]
    """Fold row ``i`` of ``src`` into row ``r`` of ``sig32``, set ``state[r]`` and file the
    band keys; ``heads[j]`` gets band ``j``'s previous chain head (the rows it already held)."""
    state[r] = 1 if _fold_row(src, i, sig32, r) else 2
    # every key first, then the probes: independent loads, so their cache misses overlap
    rows = tab[6]
    for j in range(heads.shape[0]):
        heads[j] = _band_key(sig32, r, j, rows)
    for j in range(heads.shape[0]):
        heads[j] = _file(tab, heads[j], r)


@njit()
def add_rows(sig64, first, sig32, state, tab):  # type: ignore[no-untyped-def]
    """Store sketches ``sig64`` (``(k, num_perm)``, or one row) as rows ``first..first+k-1``.

    Folds each slot to 32 bits into ``sig32``, marks the row live (1) or live but empty (2:
    every slot at its maximum, never a hit) in ``state``, and files its band keys. Returns 0,
    or -1 (nothing stored) when the rows or the table lack room.
    """
    src = sig64.reshape(-1, sig32.shape[1])
    k = src.shape[0]
    if not _fits(first, k, sig32, state, tab):
        return -1
    heads = np.empty(tab[5], dtype=np.int64)
    for i in range(k):
        _store(src, i, first + i, sig32, state, tab, heads)
    return 0


@njit(inline="always")
def _collect(q32, row, tab, state, sig32, mark, min_est, codes, n_out):  # type: ignore[no-untyped-def]
    """Append the hits of folded query row ``row`` of ``q32`` to ``codes`` as
    ``(num_perm - equal slots) * rows_cap + row``; returns ``(codes, n_out)``."""
    heads = np.empty(tab[5], dtype=np.int64)
    _probe(q32, row, tab, heads)
    tab[2] += 1
    return _walk(heads, q32, row, tab, state, sig32, mark, min_est, codes, n_out)


@njit(inline="always")
def _probe(q32, row, tab, heads):  # type: ignore[no-untyped-def]
    """The chain head of each band key of folded query row ``row`` into ``heads`` (-1: the
    key is not filed)."""
    rows = tab[6]
    for j in range(heads.shape[0]):  # every probe first: independent loads, overlapping misses
        heads[j] = tab[_slot(tab, _band_key(q32, row, j, rows)) + 1]


@njit(inline="always")
def _walk(heads, q32, row, tab, state, sig32, mark, min_est, codes, n_out):  # type: ignore[no-untyped-def]
    """:func:`_collect` from the chain heads of the query's band keys (``tab[2]`` already
    holds this query's stamp; rows marked with it are skipped)."""
    num_perm = sig32.shape[1]
    span = np.int64(sig32.shape[0])
    ents = tab[7] + 2 * tab[3]
    stamp = tab[2]
    for j in range(heads.shape[0]):
        e = heads[j]
        while e >= 0:
            r = tab[ents + 2 * e]
            e = tab[ents + 2 * e + 1]
            if mark[r] == stamp or state[r] != 1:
                continue
            mark[r] = stamp
            same = 0
            for c in range(num_perm):
                if sig32[r, c] == q32[row, c]:
                    same += 1
            if same / num_perm < min_est:
                continue
            if n_out == codes.shape[0]:
                grown = np.empty(2 * n_out, dtype=np.int64)
                grown[:n_out] = codes[:n_out]
                codes = grown
            codes[n_out] = (num_perm - same) * span + r
            n_out += 1
    return codes, n_out


@njit(inline="always")
def _sort_small(a, lo, hi):  # type: ignore[no-untyped-def]
    """Sort ``a[lo:hi]`` in place: insertion sort for the few hits of a typical query (no
    allocation), ``np.sort`` beyond 16."""
    if hi - lo > 16:
        a[lo:hi] = np.sort(a[lo:hi])
        return
    for i in range(lo + 1, hi):
        v = a[i]
        k = i - 1
        while k >= lo and a[k] > v:
            a[k + 1] = a[k]
            k -= 1
        a[k + 1] = v


@njit()
def query_one(sig64, sig32, state, mark, tab, out_rows, out_est, min_est):  # type: ignore[no-untyped-def]
    """Hits of one query sketch ``sig64`` (``(num_perm,)``) into ``out_rows`` / ``out_est``:
    live rows sharing a band key whose estimated Jaccard is ``>= min_est``, best first, ties
    by row. Returns the number of hits, or ``-n`` (nothing written) when ``n`` hits do not
    fit in the output arrays. An empty query (every slot at its maximum) has no hits."""
    num_perm = sig32.shape[1]
    span = np.int64(sig32.shape[0])
    src = sig64.reshape(1, num_perm)
    q32 = np.empty((1, num_perm), dtype=np.uint32)
    if not _fold_row(src, 0, q32, 0):
        return 0
    codes, n = _collect(q32, 0, tab, state, sig32, mark, min_est, np.empty(16, np.int64), 0)
    if n > out_rows.shape[0]:
        return -n
    _sort_small(codes, 0, n)
    for i in range(n):
        out_rows[i] = codes[i] % span
        out_est[i] = (num_perm - codes[i] // span) / num_perm
    return n


@njit()
def add_query_one(add64, first, sig64, sig32, state, mark, tab, out_rows, out_est, min_est):  # type: ignore[no-untyped-def]
    """:func:`add_rows` of ``add64`` at row ``first``, then :func:`query_one` of ``sig64``, in
    one call (``LSHIndex`` files a sketch at the next query: one dispatch per document).
    Returns :data:`NO_ROOM` (nothing done) when the add lacks room, else the query's result."""
    if add_rows(add64, first, sig32, state, tab):
        return NO_ROOM
    return query_one(sig64, sig32, state, mark, tab, out_rows, out_est, min_est)


@njit()
def add_query_same(sig64, first, sig32, state, mark, tab, out, min_est):  # type: ignore[no-untyped-def]
    """:func:`add_rows` of ``sig64`` at row ``first``, then its own query, in one call (the
    query walks the chains the add found: no second fold, hash or probe). Hits go into ``out``
    (int64, even length ``2 * m``): rows in ``out[:m]``, estimates as float64 bit patterns in
    ``out[m:]``. Returns :data:`NO_ROOM` (nothing done) when the add lacks room, ``-n`` (the
    add done, no hit written) when ``n`` hits do not fit, else the number of hits."""
    num_perm = sig32.shape[1]
    if not _fits(first, 1, sig32, state, tab):
        return NO_ROOM
    heads = np.empty(tab[5], dtype=np.int64)
    _store(sig64.reshape(1, num_perm), 0, first, sig32, state, tab, heads)
    if state[first] != 1:
        return 0
    span = np.int64(sig32.shape[0])
    tab[2] += 1
    mark[first] = tab[2]  # the new row heads every chain of its keys: a hit of itself
    codes = np.empty(16, np.int64)
    n = 0
    if not min_est > 1.0:  # as _walk's test
        codes[0] = first
        n = 1
    codes, n = _walk(heads, sig32, first, tab, state, sig32, mark, min_est, codes, n)
    m = out.shape[0] // 2
    if n > m:
        return -n
    _sort_small(codes, 0, n)
    est = out[m:].view(np.float64)
    for i in range(n):
        out[i] = codes[i] % span
        est[i] = (num_perm - codes[i] // span) / num_perm
    return n


@njit()
def query_rows(sig64, sig32, state, mark, tab, min_est):  # type: ignore[no-untyped-def]
    """Hits of each query sketch (``(k, num_perm)``), as :func:`query_one` finds them.

    Returns ``(offsets, hit_rows, estimates)`` (CSR by query).
    """
    num_perm = sig32.shape[1]
    src = sig64.reshape(-1, num_perm)
    nq = src.shape[0]
    span = np.int64(sig32.shape[0])
    q32 = np.empty((1, num_perm), dtype=np.uint32)
    offsets = np.zeros(nq + 1, dtype=np.int64)
    codes = np.empty(16, dtype=np.int64)
    n_out = 0
    for q in range(nq):
        start = n_out
        if _fold_row(src, q, q32, 0):
            codes, n_out = _collect(q32, 0, tab, state, sig32, mark, min_est, codes, n_out)
            _sort_small(codes, start, n_out)
        offsets[q + 1] = n_out
    hit_rows = np.empty(n_out, dtype=np.int64)
    estimates = np.empty(n_out, dtype=np.float64)
    for i in range(n_out):
        hit_rows[i] = codes[i] % span
        estimates[i] = (num_perm - codes[i] // span) / num_perm
    return offsets, hit_rows, estimates


@njit(inline="always")
def _unranked(heads, tab, state, mark, out, n):  # type: ignore[no-untyped-def]
    """Append the live rows of the chains from ``heads`` that this query (stamp ``tab[2]``)
    has not met yet to ``out`` from ``n`` on, in chain order; rows past the end of ``out``
    are counted, not written. Returns the new count. No row's slots are read."""
    ents = tab[7] + 2 * tab[3]
    stamp = tab[2]
    cap = out.shape[0]
    for j in range(heads.shape[0]):
        e = heads[j]
        while e >= 0:
            r = tab[ents + 2 * e]
            e = tab[ents + 2 * e + 1]
            if mark[r] == stamp or state[r] != 1:
                continue
            mark[r] = stamp
            if n < cap:
                out[n] = r
            n += 1
    return n


@njit()
def candidates_one(sig64, state, mark, tab, out):  # type: ignore[no-untyped-def]
    """The candidates of one sketch ``sig64`` (``(num_perm,)``, any unsigned dtype) into
    ``out``: live rows sharing a band key with it, band by band, each chain newest first, no
    estimate (datasketch's ``MinHashLSH.query``). Returns their number, or ``-n`` when ``n``
    do not fit in ``out``. An empty query (every slot at its maximum) has none."""
    num_perm = sig64.shape[0]
    q32 = np.empty((1, num_perm), dtype=np.uint32)
    if not _fold_row(sig64.reshape(1, num_perm), 0, q32, 0):
        return 0
    heads = np.empty(tab[5], dtype=np.int64)
    _probe(q32, 0, tab, heads)
    tab[2] += 1
    n = _unranked(heads, tab, state, mark, out, 0)
    return n if n <= out.shape[0] else -n


_BLOCK = 32  # queries whose band keys candidate_rows hashes side by side


@njit(inline="always")
def _block_keys(sig64, q0, m, rows, keys, live):  # type: ignore[no-untyped-def]
    """The band keys of queries ``q0 .. q0 + m - 1`` of ``sig64`` (as :func:`_band_key` of
    their folded slots) into ``keys[j, i]``, and whether each is not empty into ``live``.
    The queries' hash chains are independent, so the processor runs them side by side."""
    num_perm = sig64.shape[1]
    h = np.empty(m, dtype=np.uint64)
    for i in range(m):
        all64 = True
        all32 = True
        for c in range(num_perm):
            v = sig64[q0 + i, c]
            all64 &= v == _MAX64
            all32 &= v == _LOW32
        live[i] = not (all64 or all32)
    for j in range(keys.shape[0]):
        for i in range(m):
            h[i] = np.uint64(j + 1) * _MIX
        for c in range(j * rows, (j + 1) * rows):
            for i in range(m):
                v = np.uint64(sig64[q0 + i, c])
                x = h[i]
                h[i] = (((x << _S27) | (x >> _S37)) ^ ((v ^ (v >> _S32)) & _LOW32)) * _MIX
        for i in range(m):
            keys[j, i] = np.int64(_fmix64(h[i]))


@njit()
def candidate_rows(sig64, state, mark, tab):  # type: ignore[no-untyped-def]
    """:func:`candidates_one` of each row of ``sig64`` (``(k, num_perm)``): ``(offsets,
    rows)``, CSR by query. The band keys are hashed for :data:`_BLOCK` queries at a time."""
    nq = sig64.shape[0]
    bands = tab[5]
    keys = np.empty((bands, _BLOCK), dtype=np.int64)
    live = np.empty(_BLOCK, dtype=np.bool_)
    heads = np.empty(bands, dtype=np.int64)
    offsets = np.zeros(nq + 1, dtype=np.int64)
    out = np.empty(max(16, 4 * nq), dtype=np.int64)
    n = 0
    for q0 in range(0, nq, _BLOCK):
        m = min(_BLOCK, nq - q0)
        _block_keys(sig64, q0, m, tab[6], keys, live)
        for i in range(m):
            if live[i]:
                for j in range(bands):
                    heads[j] = tab[_slot(tab, keys[j, i]) + 1]
                tab[2] += 1
                while True:
                    got = _unranked(heads, tab, state, mark, out, n)
                    if got <= out.shape[0]:
                        break
                    grown = np.empty(2 * got, dtype=np.int64)  # and walk the chains again
                    grown[:n] = out[:n]
                    out = grown
                    tab[2] += 1
                n = got
            offsets[q0 + i + 1] = n
    return offsets, out[:n]
