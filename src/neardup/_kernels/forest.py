"""Reference LSH Forest prefix search (numpy): the twin of ``neardup._native.forest``.

Each of ``l`` trees holds every document's ``k`` slot values of its range, rows sorted
lexicographically (``order[t]`` lists row ids in that order). A query walks the prefix
length ``r`` from ``k`` down to 1 and, per ``r``, takes in tree order every row whose first
``r`` values equal the query's, until at least ``topk`` distinct live rows are found (Bawa,
Condie and Ganesan 2005, as datasketch's ``MinHashLSHForest.query``). The candidates of one
query come out in discovery order.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["query"]

U32 = npt.NDArray[np.uint32]
I64 = npt.NDArray[np.int64]
U8 = npt.NDArray[np.uint8]


def _range(vals: U32, q: U32, r: int) -> tuple[int, int]:
    """Rows ``[lo, hi)`` of sorted ``vals`` (n, k) whose first ``r`` values equal ``q[:r]``."""
    lo, hi = 0, len(vals)
    for c in range(r):
        col = vals[lo:hi, c]
        a = int(np.searchsorted(col, q[c], "left"))
        b = int(np.searchsorted(col, q[c], "right"))
        lo, hi = lo + a, lo + b
        if lo >= hi:
            return lo, lo
    return lo, hi


def query(vals: U32, order: I64, live: U8, q: U32, topk: int) -> tuple[I64, I64]:
    """Candidates of queries ``q`` (nq, l, k): flat row ids and per-query offsets.

    Args:
        vals: (l, n, k) slot values of each tree, rows in sorted order.
        order: (l, n) row id of each sorted position.
        live: (n_rows,) 1 for live rows.
        q: (nq, l, k) the queries' slot values per tree.
        topk: Stop a query once it has this many distinct candidates.
    """
    n_trees, _, k = vals.shape
    rows: list[int] = []
    offsets = [0]
    for qi in range(q.shape[0]):
        seen: set[int] = set()
        found: list[int] = []
        for r in range(k, 0, -1):
            for t in range(n_trees):
                lo, hi = _range(vals[t], q[qi, t], r)
                for pos in range(lo, hi):
                    row = int(order[t, pos])
                    if live[row] and row not in seen:
                        seen.add(row)
                        found.append(row)
                if len(found) >= topk:
                    break
            if len(found) >= topk:
                break
        rows.extend(found)
        offsets.append(len(rows))
    return np.array(rows, dtype=np.int64), np.array(offsets, dtype=np.int64)
