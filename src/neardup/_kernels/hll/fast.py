"""numba HyperLogLog register updates, bit-identical to :mod:`.reference`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

import numpy as np
import numpy.typing as npt

from neardup._kernels.cache import njit

__all__ = ["registers"]

_F = TypeVar("_F", bound=Callable[..., Any])
U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]
I8 = npt.NDArray[np.int8]


def _kernel(fn: _F) -> _F:
    return cast(_F, njit()(fn))


@_kernel
def registers(hashes: U64, doc_offsets: I64, p: int, bits: int) -> I8:
    """``(n_docs, 2**p)`` int8 registers of each document's hashes (see the reference)."""
    m = 1 << p
    mask = np.uint64(m - 1)
    n_docs = doc_offsets.shape[0] - 1
    out = np.zeros((n_docs, m), dtype=np.int8)
    for d in range(n_docs):
        for j in range(doc_offsets[d], doc_offsets[d + 1]):
            h = hashes[j]
            rest = h >> np.uint64(p)
            length = 0
            while rest != 0:
                rest >>= np.uint64(1)
                length += 1
            rank = bits - p - length + 1
            i = np.int64(h & mask)
            if rank > out[d, i]:
                out[d, i] = rank
    return out
