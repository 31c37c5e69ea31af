"""numpy reference of the Hamming index kernels (the oracle of :mod:`.fast`)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["all_pairs", "block_order", "block_values"]

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


def _block_keys(codes: U64, starts: I64, ends: I64) -> U64:
    """``(n, blocks)`` keys: ``fmix64(block value ^ (j + 1) * MIX)``."""
    from neardup._kernels.minhash.reference import fmix64

    cols = []
    for j, (s, e) in enumerate(zip(starts.tolist(), ends.tolist(), strict=True)):
        with np.errstate(over="ignore"):
            cols.append(fmix64(block_values(codes, s, e) ^ (np.uint64(j + 1) * _MIX)))
    return np.stack(cols, axis=1) if cols else np.zeros((len(codes), 0), np.uint64)


def table_add(
    codes: U64, first: int, count: int, starts: I64, ends: I64, tkeys: U64, thead: I64,
    erow: I64, enext: I64, meta: I64,
) -> None:  # fmt: skip
    """Reference of :func:`neardup._kernels.hamming.fast.table_add`."""
    from neardup._kernels.lsh.reference import _slot

    keys = _block_keys(codes[first : first + count], starts, ends)
    for i in range(count):
        for j in range(keys.shape[1]):
            key = int(keys[i, j])
            s = _slot(key, tkeys, thead)
            if thead[s] < 0:
                tkeys[s] = key
                meta[0] += 1
            e = int(meta[1])
            erow[e] = first + i
            enext[e] = thead[s]
            thead[s] = e
            meta[1] = e + 1


def table_query(
    q: U64, radius: int, starts: I64, ends: I64, tkeys: U64, thead: I64, erow: I64,
    enext: I64, alive: npt.NDArray[np.bool_], codes: U64, mark: I64, meta: I64,
) -> tuple[I64, I64]:  # fmt: skip
    """Reference of :func:`neardup._kernels.hamming.fast.table_query`."""
    from neardup._kernels.lsh.reference import _slot

    keys = _block_keys(q, starts, ends)[0]
    seen: set[int] = set()
    found: list[tuple[int, int]] = []
    for key in keys.tolist():
        e = int(thead[_slot(int(key), tkeys, thead)])
        while e >= 0:
            r = int(erow[e])
            e = int(enext[e])
            if r in seen or not alive[r]:
                continue
            seen.add(r)
            d = int(np.bitwise_count(codes[r] ^ q[0]).sum())
            if d <= radius:
                found.append((d, r))
    found.sort()
    return (
        np.asarray([r for _, r in found], dtype=np.int64),
        np.asarray([d for d, _ in found], dtype=np.int64),
    )
