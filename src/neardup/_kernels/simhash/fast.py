"""numba kernel of SimHash accumulation, bit-identical to :mod:`neardup._kernels.simhash.reference`.

Compiled lazily on first call (``cache=True``); importing this module compiles nothing.
"""

from __future__ import annotations

import numpy as np

from neardup._kernels.cache import njit
from neardup._kernels.text.fast import _FNV_OFFSET, _FNV_PRIME, _IDEOGRAPH, _MARK, _decode, _encode
from neardup._kernels.xxh3 import fast as xxh3

__all__ = ["simhash_accumulate", "simhash_words"]


@njit()
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


@njit()
def _feature_hash(buf, start, end, kind, seed):  # type: ignore[no-untyped-def]
    if kind == 0:
        h = _FNV_OFFSET
        for i in range(start, end):
            h = (h ^ np.uint64(buf[i])) * _FNV_PRIME
        return h
    if kind == 1:
        return xxh3.xxh3_64(buf, start, end, seed)
    lo, _ = xxh3.xxh3_128(buf, start, end, seed)
    return lo


@njit()
def simhash_words(buf, offsets, classes, lower, mask, min_bytes, k, joined, kind, seed):  # type: ignore[no-untyped-def]
    """Fused word-shingle SimHash-64: tokenize, shingle, hash and accumulate in one pass.

    Tokenization is :func:`neardup._kernels.text.fast.tokenize_words` (lowercased tokens joined by
    one space per document), shingles of ``k`` tokens as :func:`~neardup._kernels.spans.
    shingle_spans` (``joined``: fewer tokens give one shingle of all; else each token), the
    feature hash ``kind`` 0 = FNV-1a 64, 1 = xxh3_64, 2 = low word of xxh3_128; +-1 per
    occurrence. Returns (codes, feature counts).
    """
    n_docs = len(offsets) - 1
    codes = np.zeros(n_docs, dtype=np.uint64)
    counts = np.zeros(n_docs, dtype=np.int64)
    longest = 0
    for d in range(n_docs):
        longest = max(longest, offsets[d + 1] - offsets[d])
    scratch = np.empty(2 * longest + 16, dtype=np.uint8)
    starts = np.empty(longest + 1, dtype=np.int64)
    ends = np.empty(longest + 1, dtype=np.int64)
    ones = np.zeros(64, dtype=np.int64)
    one = np.uint64(1)
    for d in range(n_docs):
        # tokenize into scratch, exactly as fast.tokenize_words
        i = offsets[d]
        end = offsets[d + 1]
        pos = 0
        nt = 0
        in_tok = False
        tok_ideo = False
        cls = classes[0] & mask  # the type of the per-character value
        tok_begin = 0
        rollback = 0
        while i <= end:
            is_word = False
            step = 1
            cp = np.int64(0)
            if i < end:
                if buf[i] < 0x80:  # ASCII fast path
                    cp = np.int64(buf[i])
                else:
                    cp, step = _decode(buf, i, end)
                cls = classes[cp] & mask
                is_word = cls != 0
            if is_word:
                ideo = (cls & _IDEOGRAPH) != 0
                if in_tok and (ideo or (tok_ideo and (cls & _MARK) == 0)):
                    # an ideograph is a word of its own (see fast.tokenize_words)
                    in_tok = False
                    if pos - tok_begin >= min_bytes:
                        starts[nt] = tok_begin
                        ends[nt] = pos
                        nt += 1
                    else:
                        pos = rollback
                if not in_tok:
                    in_tok = True
                    tok_ideo = ideo
                    rollback = pos
                    if nt > 0:
                        scratch[pos] = 0x20
                        pos += 1
                    tok_begin = pos
                low = lower[cp]
                if low < 0x80:
                    scratch[pos] = low
                    pos += 1
                else:
                    pos = _encode(scratch, pos, low)
            elif in_tok:
                in_tok = False
                if pos - tok_begin >= min_bytes:
                    starts[nt] = tok_begin
                    ends[nt] = pos
                    nt += 1
                else:
                    pos = rollback
            i += step
        if nt == 0:
            continue
        ones[:] = 0
        total = 0
        if nt >= k:
            nf = nt - k + 1
        elif joined:
            nf = 1
        else:
            nf = nt
        for f in range(nf):
            if nt >= k:
                s, e = starts[f], ends[f + k - 1]
            elif joined:
                s, e = starts[0], ends[nt - 1]
            else:
                s, e = starts[f], ends[f]
            h = _feature_hash(scratch, s, e, kind, seed)
            for b in range(64):
                ones[b] += np.int64((h >> np.uint64(b)) & one)
            total += 1
        code = np.uint64(0)
        for b in range(64):
            if 2 * ones[b] > total:
                code |= one << np.uint64(b)
        codes[d] = code
        counts[d] = total
    return codes, counts
