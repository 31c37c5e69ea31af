"""numba ``affine32`` permutations in uint32 lanes (SIMD-friendly), bit-identical to
:mod:`.reference`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

import numpy as np
import numpy.typing as npt

from neardup._kernels.cache import njit

__all__ = ["affine32"]

_F = TypeVar("_F", bound=Callable[..., Any])
U32 = npt.NDArray[np.uint32]
I64 = npt.NDArray[np.int64]


def _kernel(fn: _F) -> _F:
    return cast(_F, njit()(fn))


@_kernel
def affine32(hv: U32, doc_offsets: I64, a: U32, b: U32) -> U32:
    """``(n_docs, num_perm)`` uint32 slots of the token hashes ``hv`` of each document."""
    n_docs = doc_offsets.shape[0] - 1
    k = a.shape[0]
    out = np.empty((n_docs, k), dtype=np.uint32)
    sig = np.empty(k, dtype=np.uint32)
    for d in range(n_docs):
        sig[:] = np.uint32(0xFFFFFFFF)
        for j in range(doc_offsets[d], doc_offsets[d + 1]):
            h = np.uint32(hv[j])
            h = np.uint32(h ^ (h >> np.uint32(16)))
            h = np.uint32(h * np.uint32(0x85EBCA6B))
            h = np.uint32(h ^ (h >> np.uint32(13)))
            h = np.uint32(h * np.uint32(0xC2B2AE35))
            h = np.uint32(h ^ (h >> np.uint32(16)))
            for i in range(k):  # branch-free, so LLVM vectorizes it (8 lanes with AVX2)
                sig[i] = min(sig[i], np.uint32(a[i] * h + b[i]))
        out[d, :] = sig
    return out
