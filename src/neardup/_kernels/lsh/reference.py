"""Reference of the LSH band-key table kernels (Python and numpy): the oracle of :mod:`.fast`.

Same functions, arguments, results and table contents as the numba kernels; band keys come
from :func:`neardup._kernels.minhash.reference.band_keys` (vectorised), the probing and the
chains are plain Python.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from neardup._kernels.minhash.reference import band_keys

__all__ = ["add_rows", "insert_rows", "query_rows", "rehash"]

U64 = npt.NDArray[np.uint64]
U32 = npt.NDArray[np.uint32]
U8 = npt.NDArray[np.uint8]
I64 = npt.NDArray[np.int64]

_MAX64 = np.uint64(0xFFFFFFFFFFFFFFFF)
_LOW32 = np.uint64(0xFFFFFFFF)


def _fold(values: U64) -> U32:
    return ((values ^ (values >> np.uint64(32))) & _LOW32).astype(np.uint32)


def _empty(values: U64) -> npt.NDArray[np.bool_]:
    result: npt.NDArray[np.bool_] = np.all(values == _MAX64, axis=1) | np.all(
        values == _LOW32, axis=1
    )
    return result


def _slot(key: int, tkeys: U64, thead: I64) -> int:
    mask = len(tkeys) - 1
    s = key & mask
    while thead[s] >= 0 and int(tkeys[s]) != key:
        s = (s + 1) & mask
    return s


def insert_rows(
    rows_in: I64, sig32: U32, bands: int, rows: int, tkeys: U64, thead: I64, erow: I64,
    enext: I64, meta: I64,
) -> None:  # fmt: skip
    """Reference of :func:`neardup._kernels.lsh.fast.insert_rows`."""
    keys = band_keys(np.ascontiguousarray(sig32[rows_in]), bands, rows)
    for i, r in enumerate(rows_in.tolist()):
        for j in range(bands):
            key = int(keys[i, j])
            s = _slot(key, tkeys, thead)
            if thead[s] < 0:
                tkeys[s] = key
                meta[0] += 1
            e = int(meta[1])
            erow[e] = r
            enext[e] = thead[s]
            thead[s] = e
            meta[1] = e + 1


def add_rows(
    sig64: U64, first: int, sig32: U32, state: U8, bands: int, rows: int, tkeys: U64,
    thead: I64, erow: I64, enext: I64, meta: I64,
) -> None:  # fmt: skip
    """Reference of :func:`neardup._kernels.lsh.fast.add_rows`."""
    src = np.asarray(sig64, dtype=np.uint64).reshape(-1, sig32.shape[1])
    k = len(src)
    sig32[first : first + k] = _fold(src)
    state[first : first + k] = np.where(_empty(src), 2, 1)
    insert_rows(
        np.arange(first, first + k, dtype=np.int64), sig32, bands, rows, tkeys, thead, erow,
        enext, meta,
    )  # fmt: skip


def rehash(tkeys: U64, thead: I64, cap: int) -> tuple[U64, I64]:
    """Reference of :func:`neardup._kernels.lsh.fast.rehash`."""
    nkeys = np.empty(cap, dtype=np.uint64)
    nhead = np.full(cap, -1, dtype=np.int64)
    for s in np.flatnonzero(thead >= 0).tolist():
        t = _slot(int(tkeys[s]), nkeys, nhead)
        nkeys[t] = tkeys[s]
        nhead[t] = thead[s]
    return nkeys, nhead


def query_rows(
    sig64: U64, bands: int, rows: int, tkeys: U64, thead: I64, erow: I64, enext: I64,
    state: U8, sig32: U32, mark: I64, meta: I64, min_est: float,
) -> tuple[I64, I64, npt.NDArray[np.float64]]:  # fmt: skip
    """Reference of :func:`neardup._kernels.lsh.fast.query_rows`."""
    num_perm = sig32.shape[1]
    src = np.asarray(sig64, dtype=np.uint64).reshape(-1, num_perm)
    q32 = _fold(src)
    empty = _empty(src)
    keys = band_keys(q32, bands, rows)
    offsets = [0]
    hit_rows: list[int] = []
    estimates: list[float] = []
    for q in range(len(src)):
        found: list[tuple[int, int]] = []
        if not empty[q]:
            seen: set[int] = set()
            for j in range(bands):
                e = int(thead[_slot(int(keys[q, j]), tkeys, thead)])
                while e >= 0:
                    r = int(erow[e])
                    e = int(enext[e])
                    if r in seen or state[r] != 1:
                        continue
                    seen.add(r)
                    same = int(np.count_nonzero(sig32[r] == q32[q]))
                    if same / num_perm >= min_est:
                        found.append((num_perm - same, r))
        found.sort()
        hit_rows.extend(r for _, r in found)
        estimates.extend((num_perm - d) / num_perm for d, _ in found)
        offsets.append(len(hit_rows))
    return (
        np.asarray(offsets, dtype=np.int64),
        np.asarray(hit_rows, dtype=np.int64),
        np.asarray(estimates, dtype=np.float64),
    )
