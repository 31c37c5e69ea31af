"""numba improved consistent weighted sampling, bit-identical to :mod:`.reference`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

import numpy as np
import numpy.typing as npt

from neardup._kernels.cache import njit

__all__ = ["icws"]

_F = TypeVar("_F", bound=Callable[..., Any])
F32 = npt.NDArray[np.float32]
I64 = npt.NDArray[np.int64]


def _kernel(fn: _F) -> _F:
    return cast(_F, njit()(fn))


@_kernel
def icws(
    cidx: I64, logv: F32, indptr: I64, rs: F32, ln_cs: F32, betas: F32, sparse_form: bool
) -> I64:
    """``(n_docs, sample_size, 2)`` samples ``(k, t)`` of CSR rows (empty rows give -1)."""
    n_docs = indptr.shape[0] - 1
    size = rs.shape[0]
    out = np.full((n_docs, size, 2), -1, dtype=np.int64)
    one = np.float32(1)
    for d in range(n_docs):
        lo, hi = indptr[d], indptr[d + 1]
        if lo == hi:
            continue
        for i in range(size):
            best = np.float32(np.inf)
            best_k = -1
            best_t = np.float32(0)
            for j in range(lo, hi):
                col = cidx[j]
                r = rs[i, col]
                b = betas[i, col]
                t = np.float32(np.floor(np.float32(np.float32(logv[j] / r) + b)))
                if sparse_form:
                    ln_a = np.float32(ln_cs[i, col] - np.float32(np.float32(t - b) + one) * r)
                else:
                    ln_a = np.float32(
                        np.float32(ln_cs[i, col] - np.float32(np.float32(t - b) * r)) - r
                    )
                if best_k < 0 or ln_a < best:
                    best = ln_a
                    best_k = col
                    best_t = t
            out[d, i, 0] = best_k
            out[d, i, 1] = np.int64(best_t)
    return out
