"""Reference of datasketch 2.0.0's ``affine32`` permutations (numpy), the native twin's oracle.

Slot ``i`` of a document is ``min over its token hashes h`` of
``(a_i * fmix32(h) + b_i) mod 2**32`` (``fmix32`` is MurmurHash3's 32-bit finalizer); a
document without tokens has every slot at ``2**32 - 1``. All arithmetic is uint32.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from neardup.errors import ConfigError

__all__ = ["affine32"]

U32 = npt.NDArray[np.uint32]
I64 = npt.NDArray[np.int64]

_CHUNK = 4096


def fmix32(h: U32) -> U32:
    """MurmurHash3's 32-bit finalizer, elementwise."""
    h = h ^ (h >> np.uint32(16))
    h = h * np.uint32(0x85EBCA6B)
    h = h ^ (h >> np.uint32(13))
    h = h * np.uint32(0xC2B2AE35)
    return h ^ (h >> np.uint32(16))


def affine32(hv: U32, doc_offsets: I64, a: U32, b: U32) -> U32:
    """``(n_docs, num_perm)`` uint32 slots of the token hashes ``hv`` of each document.

    Raises:
        ConfigError: ``a`` and ``b`` differ in length.
    """
    if len(a) != len(b):
        raise ConfigError(f"the permutations a and b differ in length ({len(a)} and {len(b)})")
    n_docs = len(doc_offsets) - 1
    out = np.full((n_docs, len(a)), np.uint32(0xFFFFFFFF), dtype=np.uint32)
    mixed = fmix32(np.asarray(hv, dtype=np.uint32))
    for d in range(n_docs):
        lo, hi = int(doc_offsets[d]), int(doc_offsets[d + 1])
        for s in range(lo, hi, _CHUNK):
            part = mixed[s : min(hi, s + _CHUNK), None] * a[None, :] + b[None, :]
            np.minimum(out[d], part.min(axis=0), out=out[d])
    return out
