"""numba kernels of the Hamming index: block sorting and the all-pairs scan.

Same results as :mod:`neardup._kernels.hamming.reference` (the pair set, and a valid sort).
Compiled lazily on first call (``cache=True``); importing this module compiles nothing.
"""

from __future__ import annotations

import numpy as np

from neardup._kernels.cache import njit
from neardup._kernels.hamming.reference import HammingTable, block_values
from neardup._kernels.lsh import NO_ROOM
from neardup._kernels.lsh.fast import _file, _room, _slot, _sort_small
from neardup._kernels.minhash.fast import _MIX, _fmix64

__all__ = [
    "HammingTable",
    "add_code",
    "add_query_code",
    "all_pairs",
    "block_order",
    "block_values",
    "query_code",
    "table_add",
    "table_query",
]

_M1 = np.uint64(0x5555555555555555)
_M2 = np.uint64(0x3333333333333333)
_M4 = np.uint64(0x0F0F0F0F0F0F0F0F)
_H01 = np.uint64(0x0101010101010101)


@njit(inline="always")
def _popcount(x):  # type: ignore[no-untyped-def]
    x = x - ((x >> np.uint64(1)) & _M1)
    x = (x & _M2) + ((x >> np.uint64(2)) & _M2)
    x = (x + (x >> np.uint64(4))) & _M4
    return np.int64((x * _H01) >> np.uint64(56))


@njit()
def _block_values(codes, start, end):  # type: ignore[no-untyped-def]
    n = codes.shape[0]
    k = start // 64
    off = start % 64
    width = end - start
    out = np.empty(n, dtype=np.uint64)
    mask = np.uint64(0xFFFFFFFFFFFFFFFF)
    if width < 64:
        mask = (np.uint64(1) << np.uint64(width)) - np.uint64(1)
    spill = off > 0 and off + width > 64
    for i in range(n):
        v = codes[i, k] >> np.uint64(off)
        if spill:
            v |= codes[i, k + 1] << np.uint64(64 - off)
        out[i] = v & mask
    return out


@njit()
def _radix_sort(values, width):  # type: ignore[no-untyped-def]
    """LSD radix sort of block values (at most 16-bit digits); returns (sorted, order)."""
    n = len(values)
    passes = max(1, (width + 15) // 16)
    digit = (width + passes - 1) // passes
    size = 1 << digit
    dmask = np.uint64(size - 1)
    keys = values.copy()
    order = np.arange(n, dtype=np.int64)
    tkeys = np.empty(n, dtype=np.uint64)
    torder = np.empty(n, dtype=np.int64)
    count = np.empty(size + 1, dtype=np.int64)
    for p in range(passes):
        shift = np.uint64(p * digit)
        count[:] = 0
        for i in range(n):
            count[np.int64((keys[i] >> shift) & dmask) + 1] += 1
        for c in range(size):
            count[c + 1] += count[c]
        for i in range(n):
            d = np.int64((keys[i] >> shift) & dmask)
            pos = count[d]
            count[d] = pos + 1
            tkeys[pos] = keys[i]
            torder[pos] = order[i]
        keys, tkeys = tkeys, keys
        order, torder = torder, order
    return keys, order


@njit()
def block_order(codes, start, end):  # type: ignore[no-untyped-def]
    """Values of block ``[start, end)`` sorted ascending, and the row of each."""
    return _radix_sort(_block_values(codes, start, end), end - start)


@njit()
def _grow(arr, cap):  # type: ignore[no-untyped-def]
    out = np.empty(cap, dtype=arr.dtype)
    out[: len(arr)] = arr
    return out


@njit()
def all_pairs(codes, starts, ends, masks, radius):  # type: ignore[no-untyped-def]
    """Every pair of rows within ``radius``, each once.

    For each block ``j``: sort rows by the block's value, scan runs of equal values, verify
    candidates by popcount, and keep a pair only if ``j`` is the first block it agrees on.

    Args:
        codes: ``(n, words)`` uint64 codes.
        starts, ends: ``(blocks,)`` int64 bit ranges of the blocks.
        masks: ``(blocks, words)`` uint64; block ``b`` covers the bits set in ``masks[b]``.
        radius: Largest Hamming distance reported (must be below the number of blocks).

    Returns:
        ``(a, b, d)`` int64 arrays, ``a < b`` rows and ``d`` their distance, unordered.
    """
    n, words = codes.shape
    cap = 1024
    out_a = np.empty(cap, dtype=np.int64)
    out_b = np.empty(cap, dtype=np.int64)
    out_d = np.empty(cap, dtype=np.int64)
    cnt = 0
    zero = np.uint64(0)
    srt = np.empty((n, words), dtype=np.uint64)
    for j in range(len(starts)):
        keys, order = block_order(codes, starts[j], ends[j])
        for p in range(n):
            for w in range(words):
                srt[p, w] = codes[order[p], w]
        start = 0
        while start < n:
            end = start + 1
            while end < n and keys[end] == keys[start]:
                end += 1
            for p in range(start, end):
                for q in range(p + 1, end):
                    d = np.int64(0)
                    for w in range(words):
                        d += _popcount(srt[p, w] ^ srt[q, w])
                    if d > radius:
                        continue
                    seen = False
                    for jj in range(j):
                        agree = True
                        for w in range(words):
                            if (srt[p, w] ^ srt[q, w]) & masks[jj, w] != zero:
                                agree = False
                                break
                        if agree:
                            seen = True
                            break
                    if seen:
                        continue
                    if cnt == cap:
                        cap *= 2
                        out_a = _grow(out_a, cap)
                        out_b = _grow(out_b, cap)
                        out_d = _grow(out_d, cap)
                    out_a[cnt] = min(order[p], order[q])
                    out_b[cnt] = max(order[p], order[q])
                    out_d[cnt] = d
                    cnt += 1
            start = end
    return out_a[:cnt].copy(), out_b[:cnt].copy(), out_d[:cnt].copy()


# -- the block-key table (the per-call path of HammingIndex; layout in neardup._kernels.lsh,
# with the block bounds in the header: tab[8 + j] the first bit of block j, tab[8 + blocks + j]
# the bit after its last)


@njit(inline="always")
def _block_value(codes, i, start, end):  # type: ignore[no-untyped-def]
    k = start // 64
    off = start % 64
    width = end - start
    v = codes[i, k] >> np.uint64(off)
    if off > 0 and off + width > 64:
        v |= codes[i, k + 1] << np.uint64(64 - off)
    if width < 64:
        v &= (np.uint64(1) << np.uint64(width)) - np.uint64(1)
    return v


@njit(inline="always")
def _block_key(codes, i, tab, j):  # type: ignore[no-untyped-def]
    v = _block_value(codes, i, tab[8 + j], tab[8 + tab[5] + j])
    return np.int64(_fmix64(v ^ (np.uint64(j + 1) * _MIX)))


@njit(inline="always")
def _file_rows(codes, first, count, tab):  # type: ignore[no-untyped-def]
    for r in range(first, first + count):
        for j in range(tab[5]):
            _file(tab, _block_key(codes, r, tab, j), r)


@njit()
def table_add(codes, first, count, tab):  # type: ignore[no-untyped-def]
    """File the block keys of rows ``first .. first + count - 1`` of ``codes``.

    Block ``j``'s key is ``fmix64(value ^ (j + 1) * MIX)``. Returns 0, or -1 (nothing filed)
    when the table lacks room.
    """
    if not _room(tab, count * tab[5]):
        return -1
    _file_rows(codes, first, count, tab)
    return 0


@njit()
def add_code(code, r, codes, alive, tab):  # type: ignore[no-untyped-def]
    """Store the 64-bit ``code`` (its int64 bit pattern) as live row ``r`` of ``codes``
    (``(n, 1)``) and file its block keys. Returns 0, or -1 (nothing stored) when the rows or
    the table lack room."""
    if r >= codes.shape[0] or r >= alive.shape[0] or not _room(tab, tab[5]):
        return -1
    codes[r, 0] = np.uint64(code)
    alive[r] = True
    _file_rows(codes, r, 1, tab)
    return 0


@njit(inline="always")
def _query(q, radius, codes, alive, mark, tab, out_rows, out_d):  # type: ignore[no-untyped-def]
    words = codes.shape[1]
    span = np.int64(codes.shape[0])
    ents = tab[7] + 2 * tab[3]
    tab[2] += 1
    stamp = tab[2]
    found = np.empty(16, dtype=np.int64)  # distance * span + row
    n_out = 0
    for j in range(tab[5]):
        e = tab[_slot(tab, _block_key(q, 0, tab, j)) + 1]
        while e >= 0:
            r = tab[ents + 2 * e]
            e = tab[ents + 2 * e + 1]
            if mark[r] == stamp or not alive[r]:
                continue
            mark[r] = stamp
            d = 0
            for w in range(words):
                d += _popcount(codes[r, w] ^ q[0, w])
            if d > radius:
                continue
            if n_out == found.shape[0]:
                grown = np.empty(2 * n_out, dtype=np.int64)
                grown[:n_out] = found[:n_out]
                found = grown
            found[n_out] = d * span + r
            n_out += 1
    if n_out > out_rows.shape[0]:
        return -n_out
    _sort_small(found, 0, n_out)
    for i in range(n_out):
        out_rows[i] = found[i] % span
        out_d[i] = found[i] // span
    return n_out


@njit()
def table_query(q, radius, codes, alive, mark, tab, out_rows, out_d):  # type: ignore[no-untyped-def]
    """Live rows within ``radius`` of the code ``q`` (``(1, words)``) into ``out_rows`` and
    their distances into ``out_d``, by distance, then row. Returns their number, or ``-n``
    (nothing written) when ``n`` do not fit. Exact when ``radius < blocks`` (pigeonhole: a
    row that close equals ``q`` on some block, so it shares that block's key)."""
    return _query(q, radius, codes, alive, mark, tab, out_rows, out_d)


@njit()
def query_code(code, radius, codes, alive, mark, tab, out_rows, out_d):  # type: ignore[no-untyped-def]
    """:func:`table_query` of one 64-bit ``code`` (its int64 bit pattern, not an array)."""
    q = np.empty((1, 1), dtype=np.uint64)
    q[0, 0] = np.uint64(code)
    return _query(q, radius, codes, alive, mark, tab, out_rows, out_d)


@njit()
def add_query_code(code, r, radius, codes, alive, mark, tab, out_rows, out_d):  # type: ignore[no-untyped-def]
    """:func:`add_code` of ``code`` as row ``r``, then :func:`query_code` of it, in one call
    (``HammingIndex`` files a code at the next query of the same code). Returns
    :data:`neardup._kernels.lsh.NO_ROOM` (nothing done) when the add lacks room, else the
    query's result."""
    if add_code(code, r, codes, alive, tab):
        return NO_ROOM
    return query_code(code, radius, codes, alive, mark, tab, out_rows, out_d)
