"""numba kernels of the Hamming index: block sorting and the all-pairs scan.

Same results as :mod:`neardup._kernels.hamming.reference` (the pair set, and a valid sort).
Compiled lazily on first call (``cache=True``); importing this module compiles nothing.
"""

from __future__ import annotations

import numpy as np

from neardup._kernels.cache import njit
from neardup._kernels.lsh.fast import _file
from neardup._kernels.minhash.fast import _MIX, _fmix64

__all__ = ["all_pairs", "block_order", "table_add", "table_query"]

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


# -- the block-key table (the per-call path of HammingIndex; layout in neardup._kernels.lsh)


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
def _block_key(v, j):  # type: ignore[no-untyped-def]
    return _fmix64(v ^ (np.uint64(j + 1) * _MIX))


@njit()
def table_add(codes, first, count, starts, ends, tkeys, thead, erow, enext, meta):  # type: ignore[no-untyped-def]
    """File the block keys of rows ``first .. first + count - 1`` of ``codes``.

    The caller leaves room (entries for ``count * len(starts)`` more keys, a table at most
    half full afterwards). Block ``j``'s key is ``fmix64(value ^ (j + 1) * MIX)``.
    """
    for r in range(first, first + count):
        for j in range(starts.shape[0]):
            key = _block_key(_block_value(codes, r, starts[j], ends[j]), j)
            _file(key, r, tkeys, thead, erow, enext, meta)


@njit()
def table_query(q, radius, starts, ends, tkeys, thead, erow, enext, alive, codes, mark, meta):  # type: ignore[no-untyped-def]
    """Live rows within ``radius`` of the code ``q`` (``(1, words)``): ``(rows, distances)``,
    by distance, then row. Exact when ``radius < len(starts)`` (pigeonhole: a row that close
    equals ``q`` on some block, so it shares that block's key)."""
    mask = tkeys.shape[0] - 1
    words = codes.shape[1]
    span = np.int64(codes.shape[0])
    meta[2] += 1
    stamp = meta[2]
    cap = 16
    found = np.empty(cap, dtype=np.int64)  # distance * span + row
    n_out = 0
    for j in range(starts.shape[0]):
        key = _block_key(_block_value(q, 0, starts[j], ends[j]), j)
        s = np.int64(key & np.uint64(mask))
        while thead[s] >= 0 and tkeys[s] != key:
            s = (s + 1) & mask
        e = thead[s]
        while e >= 0:
            r = erow[e]
            e = enext[e]
            if mark[r] == stamp or not alive[r]:
                continue
            mark[r] = stamp
            d = 0
            for w in range(words):
                d += _popcount(codes[r, w] ^ q[0, w])
            if d > radius:
                continue
            if n_out == cap:
                cap *= 2
                grown = np.empty(cap, dtype=np.int64)
                grown[:n_out] = found[:n_out]
                found = grown
            found[n_out] = d * span + r
            n_out += 1
    found = np.sort(found[:n_out])
    return found % span, found // span
