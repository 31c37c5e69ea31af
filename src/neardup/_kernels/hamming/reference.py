"""numpy reference of the Hamming index kernels (the oracle of :mod:`.fast`)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = [
    "add_code",
    "add_query_code",
    "all_pairs",
    "block_order",
    "block_values",
    "query_code",
    "table_add",
    "table_query",
]

I64 = npt.NDArray[np.int64]
U64 = npt.NDArray[np.uint64]


def block_values(codes: U64, start: int, end: int) -> U64:
    """Value of bits ``[start, end)`` (at most 64) of every ``(n, words)`` code row."""
    k, off = divmod(start, 64)
    v = codes[:, k] >> np.uint64(off)
    if off and off + (end - start) > 64:
        v = v | (codes[:, k + 1] << np.uint64(64 - off))
    if end - start < 64:
        v = v & np.uint64((1 << (end - start)) - 1)
    return v


def block_order(codes: U64, start: int, end: int) -> tuple[U64, I64]:
    """Values of block ``[start, end)`` sorted ascending, and the row of each."""
    values = block_values(codes, start, end)
    order = np.argsort(values, kind="stable").astype(np.int64)
    return values[order], order


def all_pairs(codes: U64, starts: I64, ends: I64, masks: U64, radius: int) -> tuple[I64, I64, I64]:
    """Reference of :func:`neardup._kernels.hamming.fast.all_pairs` (same contract)."""
    out: list[tuple[I64, I64, I64]] = []
    n = len(codes)
    for j in range(len(starts)):
        keys, order = block_order(codes, int(starts[j]), int(ends[j]))
        if n < 2:
            break
        new_run = np.concatenate(([True], keys[1:] != keys[:-1]))
        run_end = np.append(np.flatnonzero(new_run)[1:], n)[np.cumsum(new_run) - 1]
        partners = run_end - np.arange(n) - 1
        total = int(partners.sum())
        if total == 0:
            continue
        p = np.repeat(np.arange(n), partners)
        first = np.zeros(n, dtype=np.int64)
        np.cumsum(partners[:-1], out=first[1:])
        q = p + 1 + (np.arange(total) - first[p])
        x = codes[order[p]] ^ codes[order[q]]
        d = np.bitwise_count(x).sum(axis=1, dtype=np.int64)
        keep = d <= radius
        for jj in range(j):
            keep &= ((x & masks[jj]) != 0).any(axis=1)
        a, b = order[p[keep]], order[q[keep]]
        out.append((np.minimum(a, b), np.maximum(a, b), d[keep]))
    if not out:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty.copy(), empty.copy()
    return (
        np.concatenate([o[0] for o in out]),
        np.concatenate([o[1] for o in out]),
        np.concatenate([o[2] for o in out]),
    )


# -- the block-key table (reference of the per-call path; layout in neardup._kernels.lsh)

_MIX = np.uint64(0x9E3779B97F4A7C15)


def _block_keys(codes: U64, tab: I64) -> U64:
    """``(n, blocks)`` keys: ``fmix64(block value ^ (j + 1) * MIX)``."""
    from neardup._kernels.minhash.reference import fmix64

    nb = int(tab[5])
    cols = []
    for j in range(nb):
        s, e = int(tab[8 + j]), int(tab[8 + nb + j])
        with np.errstate(over="ignore"):
            cols.append(fmix64(block_values(codes, s, e) ^ (np.uint64(j + 1) * _MIX)))
    return np.stack(cols, axis=1) if cols else np.zeros((len(codes), 0), np.uint64)


def table_add(codes: U64, first: int, count: int, tab: I64) -> int:
    """Reference of :func:`neardup._kernels.hamming.fast.table_add`."""
    from neardup._kernels.lsh.reference import file_key, room, signed

    if not room(tab, count * int(tab[5])):
        return -1
    keys = _block_keys(codes[first : first + count], tab)
    for i in range(count):
        for j in range(keys.shape[1]):
            file_key(tab, signed(int(keys[i, j])), first + i)
    return 0


def add_code(code: int, r: int, codes: U64, alive: npt.NDArray[np.bool_], tab: I64) -> int:
    """Reference of :func:`neardup._kernels.hamming.fast.add_code`."""
    from neardup._kernels.lsh.reference import room

    if r >= min(len(codes), len(alive)) or not room(tab, int(tab[5])):
        return -1
    codes[r, 0] = np.array([code], dtype=np.int64).view(np.uint64)[0]
    alive[r] = True
    return table_add(codes, r, 1, tab)


def table_query(
    q: U64, radius: int, codes: U64, alive: npt.NDArray[np.bool_], mark: I64, tab: I64,
    out_rows: I64, out_d: I64,
) -> int:  # fmt: skip
    """Reference of :func:`neardup._kernels.hamming.fast.table_query`."""
    from neardup._kernels.lsh.reference import chain, signed

    tab[2] += 1
    stamp = int(tab[2])
    found: list[tuple[int, int]] = []
    for key in _block_keys(q, tab)[0].tolist():
        for r in chain(tab, signed(int(key))):
            if mark[r] == stamp or not alive[r]:
                continue
            mark[r] = stamp
            d = int(np.bitwise_count(codes[r] ^ q[0]).sum())
            if d <= radius:
                found.append((d, r))
    if len(found) > len(out_rows):
        return -len(found)
    found.sort()
    for i, (d, r) in enumerate(found):
        out_rows[i] = r
        out_d[i] = d
    return len(found)


def query_code(
    code: int, radius: int, codes: U64, alive: npt.NDArray[np.bool_], mark: I64, tab: I64,
    out_rows: I64, out_d: I64,
) -> int:  # fmt: skip
    """Reference of :func:`neardup._kernels.hamming.fast.query_code`."""
    q = np.array([[code]], dtype=np.int64).view(np.uint64)
    return table_query(q, radius, codes, alive, mark, tab, out_rows, out_d)


def add_query_code(
    code: int, r: int, radius: int, codes: U64, alive: npt.NDArray[np.bool_], mark: I64,
    tab: I64, out_rows: I64, out_d: I64,
) -> int:  # fmt: skip
    """Reference of :func:`neardup._kernels.hamming.fast.add_query_code`."""
    from neardup._kernels.lsh import NO_ROOM

    if add_code(code, r, codes, alive, tab):
        return NO_ROOM
    return query_code(code, radius, codes, alive, mark, tab, out_rows, out_d)
