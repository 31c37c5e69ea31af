"""numpy reference of the SimHash kernels: the twin of ``neardup._native.simhash``.

Bits are unpacked with ``np.unpackbits`` and summed exactly in int64 with a chunked prefix
sum, so the result does not depend on summation order and equals the native kernel's. The
fused word-shingle path is composed from the text, spans and xxh3 references.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["simhash_accumulate", "simhash_words"]

_CHUNK = 1 << 15


def simhash_accumulate(
    hashes: npt.NDArray[np.uint64],
    weights: npt.NDArray[np.int64],
    doc_offsets: npt.NDArray[np.int64],
) -> npt.NDArray[np.uint64]:
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


def simhash_words(
    buf: npt.NDArray[np.uint8],
    offsets: npt.NDArray[np.int64],
    classes: npt.NDArray[np.uint8],
    lower: npt.NDArray[np.int32],
    mask: int,
    min_bytes: int,
    k: int,
    joined: bool,
    kind: int,
    seed: np.uint64,
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.int64]]:
    """Fused word-shingle SimHash-64: tokenize, shingle, hash and vote in one call.

    Tokens are the text family's ``tokenize_words`` (lowercased, joined by one space per
    document); features are shingles of ``k`` tokens (``joined``: a document with fewer
    tokens gives one shingle of all of them, else each token is a feature); the feature hash
    ``kind`` is 0 FNV-1a 64, 1 XXH3-64, 2 the low word of XXH3-128 (seeded by ``seed``);
    each occurrence votes with weight 1.

    Returns:
        ``(codes, counts)``: uint64 SimHash-64 and int64 feature count of every document.

    Raises:
        ConfigError: ``k`` is below 1 or ``kind`` is not 0, 1 or 2.
    """
    from neardup._kernels import text as text
    from neardup._kernels import xxh3 as xxh3
    from neardup._spans import Spans, shingle_spans
    from neardup.errors import ConfigError

    if k < 1:
        raise ConfigError(f"shingle size k must be >= 1, got {k}")
    if kind not in (0, 1, 2):
        raise ConfigError(
            f"feature hash kind must be 0 (fnv1a64), 1 (xxh3_64) or 2 (xxh3_128), got {kind}"
        )
    out, starts, ends, doc_offsets = text.tokenize_words(
        buf, offsets, classes, lower, mask, min_bytes, True
    )
    spans = shingle_spans(
        Spans(out, starts, ends, doc_offsets), k, short="joined" if joined else "separate"
    )
    if kind == 0:
        hashes = text.fnv1a_ranges(spans.buf, spans.starts, spans.ends)
    elif kind == 1:
        hashes = xxh3.xxh3_64_ranges(spans.buf, spans.starts, spans.ends, np.uint64(seed))
    else:
        hashes = xxh3.xxh3_128_ranges(spans.buf, spans.starts, spans.ends, np.uint64(seed))[0]
    weights = np.ones(len(hashes), dtype=np.int64)
    codes = simhash_accumulate(hashes.reshape(-1, 1), weights, spans.doc_offsets)[:, 0].copy()
    return codes, np.diff(spans.doc_offsets).astype(np.int64)
