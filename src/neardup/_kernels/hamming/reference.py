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
