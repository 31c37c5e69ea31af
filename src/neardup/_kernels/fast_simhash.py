"""numba kernel of SimHash accumulation, bit-identical to :mod:`reference_simhash`.

Compiled lazily on first call (``cache=True``); importing this module compiles nothing.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["simhash_accumulate"]


@numba.njit(cache=True, nogil=True)
def simhash_accumulate(hashes, weights, doc_offsets):  # type: ignore[no-untyped-def]
    """SimHash codes of feature hashes grouped per document.

    Args:
        hashes: ``(n_features, words)`` uint64, C-contiguous; bit ``i`` of word ``k`` is code
            bit ``64k + i``.
        weights: ``(n_features,)`` int64 integer weights.
        doc_offsets: ``(n_docs + 1,)`` int64; document ``d`` owns features
            ``doc_offsets[d]:doc_offsets[d+1]``.

    Returns:
        ``(n_docs, words)`` uint64 codes: bit ``b`` is set iff
        ``sum(w if bit b of h else -w) > 0``, computed exactly as ``2 * ones[b] - total``.
    """
    n_docs = len(doc_offsets) - 1
    words = hashes.shape[1]
    out = np.zeros((n_docs, words), dtype=np.uint64)
    ones = np.zeros(64 * words, dtype=np.int64)
    one = np.uint64(1)
    for d in range(n_docs):
        ones[:] = 0
        total = np.int64(0)
        for f in range(doc_offsets[d], doc_offsets[d + 1]):
            w = weights[f]
            total += w
            for k in range(words):
                h = hashes[f, k]
                base = 64 * k
                for i in range(64):
                    ones[base + i] += w * np.int64((h >> np.uint64(i)) & one)
        for k in range(words):
            code = np.uint64(0)
            base = 64 * k
            for i in range(64):
                if 2 * ones[base + i] > total:
                    code |= one << np.uint64(i)
            out[d, k] = code
    return out
