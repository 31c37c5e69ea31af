"""numpy reference of SimHash accumulation: the oracle of :mod:`neardup._kernels.simhash.fast`.

Bits are unpacked with ``np.unpackbits`` and summed exactly in int64 with a chunked prefix
sum, so the result does not depend on summation order and equals the numba kernel's.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["simhash_accumulate"]

_CHUNK = 1 << 15


def simhash_accumulate(
    hashes: npt.NDArray[np.uint64],
    weights: npt.NDArray[np.int64],
    doc_offsets: npt.NDArray[np.int64],
) -> npt.NDArray[np.uint64]:
    """Reference of :func:`neardup._kernels.simhash.fast.simhash_accumulate` (same contract)."""
    n, words = hashes.shape
    bits = 64 * words
    # prefix[p] = sum over features f < p of (w_f * bit_b(h_f)), and of w_f in the last column
    at = np.zeros((len(doc_offsets), bits + 1), dtype=np.int64)
    carry = np.zeros(bits + 1, dtype=np.int64)
    # boundaries sorted ascending: doc_offsets is non-decreasing
    for a in range(0, n, _CHUNK):
        b = min(n, a + _CHUNK)
        raw = np.ascontiguousarray(hashes[a:b]).astype("<u8", copy=False).view(np.uint8)
        unpacked = np.unpackbits(raw.reshape(b - a, 8 * words), axis=1, bitorder="little")
        contrib = np.empty((b - a, bits + 1), dtype=np.int64)
        np.multiply(unpacked, weights[a:b, None], out=contrib[:, :bits])
        contrib[:, bits] = weights[a:b]
        local = np.cumsum(contrib, axis=0) + carry
        sel = np.flatnonzero((doc_offsets > a) & (doc_offsets <= b))
        at[sel] = local[doc_offsets[sel] - a - 1]
        carry = local[-1]
    ones = at[1:, :bits] - at[:-1, :bits]
    total = at[1:, bits] - at[:-1, bits]
    set_bits = (2 * ones > total[:, None]).astype(np.uint8)
    packed = np.packbits(set_bits, axis=1, bitorder="little")
    return packed.view("<u8").astype(np.uint64).reshape(len(doc_offsets) - 1, words)
