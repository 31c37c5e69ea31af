"""Exact cosine pairs of a matrix of unit rows, one row block at a time.

The tile loop shared by :func:`neardup.index.vectors.cosine_pairs` and the partitioned search
of :mod:`neardup.index.semdedup`; it imports neither, so both can use it.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import numpy.typing as npt

__all__ = ["pairs_blocks"]

F32 = npt.NDArray[np.float32]
I64 = npt.NDArray[np.int64]


def pairs_blocks(v: F32, threshold: float, block_size: int) -> Iterator[tuple[I64, I64, F32]]:
    """Yield the pairs of each row block, sorted by ``(i, j)`` within and across blocks."""
    n = v.shape[0]
    for r0 in range(0, n, block_size):
        rows = v[r0 : r0 + block_size]
        found_i: list[I64] = []
        found_j: list[I64] = []
        found_s: list[F32] = []
        for c0 in range(r0, n, block_size):
            sims = rows @ v[c0 : c0 + block_size].T
            if c0 == r0:  # diagonal tile: keep only j > i
                sims[np.tril_indices(sims.shape[0], 0, sims.shape[1])] = -np.inf
            ii, jj = np.nonzero(sims >= threshold)
            if ii.size:
                found_i.append(ii.astype(np.int64) + r0)
                found_j.append(jj.astype(np.int64) + c0)
                found_s.append(np.minimum(sims[ii, jj], 1.0).astype(np.float32))
        if found_i:
            i = np.concatenate(found_i)
            j = np.concatenate(found_j)
            s = np.concatenate(found_s)
            order = np.lexsort((j, i))
            yield i[order], j[order], s[order]
