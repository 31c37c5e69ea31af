"""numba LSH Forest prefix search, identical to :mod:`.reference` (same rows, same order)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

import numpy as np
import numpy.typing as npt

from neardup._kernels.cache import njit

__all__ = ["query"]

_F = TypeVar("_F", bound=Callable[..., Any])
U32 = npt.NDArray[np.uint32]
I64 = npt.NDArray[np.int64]
U8 = npt.NDArray[np.uint8]


def _kernel(fn: _F) -> _F:
    return cast(_F, njit()(fn))


@_kernel
def _bound(vals: U32, lo: int, hi: int, c: int, x: np.uint32, right: bool) -> int:
    while lo < hi:
        mid = (lo + hi) // 2
        v = vals[mid, c]
        if v < x or (right and v == x):
            lo = mid + 1
        else:
            hi = mid
    return lo


@_kernel
def query(vals: U32, order: I64, live: U8, q: U32, topk: int) -> tuple[I64, I64]:
    """Candidates of queries ``q`` (nq, l, k): flat row ids and per-query offsets."""
    n_trees, n, k = vals.shape
    nq = q.shape[0]
    stamp = np.zeros(live.shape[0], dtype=np.int64)
    cap = max(16, nq * topk)
    rows = np.empty(cap, dtype=np.int64)
    offsets = np.zeros(nq + 1, dtype=np.int64)
    total = 0
    for qi in range(nq):
        found = 0
        r = k
        while r > 0 and found < topk:
            for t in range(n_trees):
                lo, hi = 0, n
                for c in range(r):
                    x = q[qi, t, c]
                    a = _bound(vals[t], lo, hi, c, x, False)
                    b = _bound(vals[t], a, hi, c, x, True)
                    lo, hi = a, b
                    if lo >= hi:
                        break
                for pos in range(lo, hi):
                    row = order[t, pos]
                    if live[row] and stamp[row] != qi + 1:
                        stamp[row] = qi + 1
                        if total == rows.shape[0]:
                            grown = np.empty(2 * rows.shape[0], dtype=np.int64)
                            grown[:total] = rows[:total]
                            rows = grown
                        rows[total] = row
                        total += 1
                        found += 1
                if found >= topk:
                    break
            r -= 1
        offsets[qi + 1] = total
    return rows[:total].copy(), offsets
