"""numba kernels of MinHash and banded LSH, bit-identical to :mod:`.reference`.

Compiled lazily on first call with ``cache=True``; importing this module compiles nothing.
The definitions (feature hash, slot formulas, densification) are documented in
:mod:`neardup._kernels.minhash.reference`, the oracle these kernels are tested against.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

import numpy as np
import numpy.typing as npt

from neardup._kernels.cache import njit
from neardup._kernels.text import fast
from neardup._kernels.xxh3 import fast as xxh3

__all__ = [
    "band_keys",
    "combine_shingles",
    "estimate",
    "minhash_affine32",
    "minhash_double",
    "minhash_double32",
    "minhash_legacy",
    "oph",
    "sketch_words",
    "sketch_words_features",
    "sketch_words_sets32",
]

_F = TypeVar("_F", bound=Callable[..., Any])
U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]
U32 = npt.NDArray[np.uint32]

_MAX = np.uint64(0xFFFFFFFFFFFFFFFF)
_MASK32 = np.uint64(0xFFFFFFFF)
_MAX32_U32 = np.uint32(0xFFFFFFFF)
_MIX = np.uint64(0x9E3779B97F4A7C15)
_C1 = np.uint64(0xFF51AFD7ED558CCD)
_C2 = np.uint64(0xC4CEB9FE1A85EC53)
_SM1 = np.uint64(0xBF58476D1CE4E5B9)
_SM2 = np.uint64(0x94D049BB133111EB)
_F32_1 = np.uint64(0x85EBCA6B)
_F32_2 = np.uint64(0xC2B2AE35)
_PRIME61 = np.uint64((1 << 61) - 1)
_S13 = np.uint64(13)
_S16 = np.uint64(16)
_S27 = np.uint64(27)
_S30 = np.uint64(30)
_S31 = np.uint64(31)
_S32 = np.uint64(32)
_S33 = np.uint64(33)
_S37 = np.uint64(37)


def _kernel(fn: _F) -> _F:
    """Wrap ``fn`` in a lazily compiled, disk-cached numba dispatcher."""
    return cast(_F, njit()(fn))


@_kernel
def _fmix64(x: np.uint64) -> np.uint64:
    x ^= x >> _S33
    x *= _C1
    x ^= x >> _S33
    x *= _C2
    x ^= x >> _S33
    return x


@_kernel
def _splitmix64(x: np.uint64) -> np.uint64:
    z = x + _MIX
    z = (z ^ (z >> _S30)) * _SM1
    z = (z ^ (z >> _S27)) * _SM2
    return z ^ (z >> _S31)


@_kernel
def _feature(toks: U64, first: int, m: int, seed: np.uint64) -> tuple[np.uint64, np.uint64]:
    """(lo, hi) of the shingle made of ``toks[first:first+m]`` (see the reference)."""
    h = seed ^ _MIX
    for q in range(m):
        h = ((h << _S27) | (h >> _S37)) ^ toks[first + q]
        h *= _MIX
    h ^= np.uint64(m)
    return _fmix64(h), _fmix64(h + _MIX)


@_kernel
def _min_double(sig: U64, idx: U64, lo: np.uint64, hi: np.uint64) -> None:
    for i in range(sig.shape[0]):
        v = lo + idx[i] * hi
        if v < sig[i]:
            sig[i] = v


@_kernel
def _min_double32(sig: U32, idx: U32, lo: np.uint64, hi: np.uint64) -> None:
    a = np.uint32(lo >> _S32)
    b = np.uint32(hi >> _S32)
    for i in range(sig.shape[0]):
        sig[i] = min(sig[i], np.uint32(a + idx[i] * b))


@_kernel
def _slots_double32(out: U64, d: int, flo: U64, fhi: U64, nf: int, fa: U32, fb: U32) -> None:
    """Row ``d`` of ``out``: slot i = min over features j < nf of ``a_j + i * b_j`` (mod
    2**32), the values :func:`_min_double32` takes, reduced slot by slot: four slots per pass
    over the features (their minima stay in registers, the feature loop vectorizes, and slots
    i+1..i+3 add ``b_j`` to slot i's value instead of multiplying)."""
    for j in range(nf):
        fa[j] = np.uint32(flo[j] >> _S32)
        fb[j] = np.uint32(fhi[j] >> _S32)
    num_perm = out.shape[1]
    blocked = num_perm - num_perm % 4
    for i in range(0, blocked, 4):
        ii = np.uint32(i)
        m0 = _MAX32_U32
        m1 = _MAX32_U32
        m2 = _MAX32_U32
        m3 = _MAX32_U32
        for j in range(nf):
            b = fb[j]
            x = np.uint32(fa[j] + ii * b)
            m0 = min(m0, x)
            x = np.uint32(x + b)
            m1 = min(m1, x)
            x = np.uint32(x + b)
            m2 = min(m2, x)
            x = np.uint32(x + b)
            m3 = min(m3, x)
        out[d, i] = m0
        out[d, i + 1] = m1
        out[d, i + 2] = m2
        out[d, i + 3] = m3
    for i in range(blocked, num_perm):
        ii = np.uint32(i)
        m = _MAX32_U32
        for j in range(nf):
            m = min(m, np.uint32(fa[j] + ii * fb[j]))
        out[d, i] = m


@_kernel
def minhash_double32(lo: U64, hi: U64, doc_offsets: I64, num_perm: int) -> U64:
    """Slot i = min over the features of ``(lo >> 32) + i * (hi >> 32)`` (mod 2**32)."""
    n_docs = doc_offsets.shape[0] - 1
    out = np.empty((n_docs, num_perm), dtype=np.uint64)
    idx = np.arange(num_perm).astype(np.uint32)
    sig = np.empty(num_perm, dtype=np.uint32)
    for d in range(n_docs):
        sig[:] = _MAX32_U32
        for j in range(doc_offsets[d], doc_offsets[d + 1]):
            _min_double32(sig, idx, lo[j], hi[j])
        out[d, :] = sig
    return out


@_kernel
def minhash_double(lo: U64, hi: U64, doc_offsets: I64, num_perm: int) -> U64:
    """Slot i of document d = min over its features of ``lo + i*hi`` (mod 2**64)."""
    n_docs = doc_offsets.shape[0] - 1
    out = np.empty((n_docs, num_perm), dtype=np.uint64)
    idx = np.arange(num_perm).astype(np.uint64)
    sig = np.empty(num_perm, dtype=np.uint64)
    for d in range(n_docs):
        sig[:] = _MAX
        for j in range(doc_offsets[d], doc_offsets[d + 1]):
            _min_double(sig, idx, lo[j], hi[j])
        out[d, :] = sig
    return out


@_kernel
def combine_shingles(
    toks: U64, tok_offsets: I64, k: int, short_joined: bool, seed: np.uint64
) -> tuple[U64, U64, I64]:
    """Feature hashes (lo, hi) of the k-shingles of token hashes, with their doc offsets."""
    n_docs = tok_offsets.shape[0] - 1
    counts = np.zeros(n_docs, dtype=np.int64)
    for d in range(n_docs):
        n = tok_offsets[d + 1] - tok_offsets[d]
        if n >= k:
            counts[d] = n - k + 1
        elif n > 0:
            counts[d] = 1 if short_joined else n
    offsets = np.zeros(n_docs + 1, dtype=np.int64)
    for d in range(n_docs):
        offsets[d + 1] = offsets[d] + counts[d]
    lo = np.empty(offsets[n_docs], dtype=np.uint64)
    hi = np.empty(offsets[n_docs], dtype=np.uint64)
    for d in range(n_docs):
        base = tok_offsets[d]
        n = tok_offsets[d + 1] - base
        o = offsets[d]
        for j in range(counts[d]):
            if n >= k:
                lo[o + j], hi[o + j] = _feature(toks, base + j, k, seed)
            elif short_joined:
                lo[o + j], hi[o + j] = _feature(toks, base, n, seed)
            else:
                lo[o + j], hi[o + j] = _feature(toks, base + j, 1, seed)
    return lo, hi, offsets


@_kernel
def _ascii_table(
    classes: npt.NDArray[np.uint8], lower: npt.NDArray[np.int32], mask: int
) -> tuple[npt.NDArray[np.uint8], bool]:
    """``(table, usable)``: ``table[b]`` is the lowercased byte of the ASCII word byte ``b``
    (class ``& mask`` not 0), 0 for the other bytes. ``usable`` is False when the tables make
    an ASCII word character an ideograph or a mark, or lowercase it to 0 or beyond ASCII: then
    the table would not give the tokens of the class and case tables."""
    table = np.zeros(256, dtype=np.uint8)
    usable = True
    for b in range(128):
        cls = classes[b] & mask
        if cls != 0:
            low = lower[b]
            if (cls & (fast._IDEOGRAPH | fast._MARK)) != 0 or low <= 0 or low >= 0x80:
                usable = False
            else:
                table[b] = np.uint8(low)
    return table, usable


@_kernel
def _is_ascii(buf: npt.NDArray[np.uint8], i: int, end: int) -> np.bool_:
    """Whether every byte of ``buf[i:end]`` is below 0x80."""
    acc = np.uint8(0)
    for j in range(np.uint64(i), np.uint64(end)):
        acc |= buf[j]
    return acc < 0x80


@_kernel
def _doc_tokens_ascii(
    buf: npt.NDArray[np.uint8],
    i: int,
    end: int,
    table: npt.NDArray[np.uint8],
    min_bytes: int,
    seed: np.uint64,
    scratch: npt.NDArray[np.uint8],
    toks: U64,
) -> int:
    """:func:`_doc_tokens` of an all-ASCII ``buf[i:end]``, with the table of
    :func:`_ascii_table`: no decoding, no class or case tables of 0x110000 entries; a word
    is a run of bytes whose table entry is not 0 (every ASCII word character is one byte and
    no ideograph, so runs are never split). Positions are unsigned (no negative-index
    checks)."""
    one = np.uint64(1)
    umin = np.uint64(min_bytes)
    nt = np.uint64(0)
    pos = np.uint64(0)
    for j in range(np.uint64(i), np.uint64(end)):
        t = table[buf[j]]
        scratch[pos] = t  # written always, kept only when it is a word byte
        if t != 0:
            pos += one
        elif pos != 0:
            if pos >= umin:
                toks[nt] = xxh3.xxh3_64(scratch, 0, pos, seed)  # type: ignore[arg-type]
                nt += one
            pos = np.uint64(0)
    if pos != 0 and pos >= umin:
        toks[nt] = xxh3.xxh3_64(scratch, 0, pos, seed)  # type: ignore[arg-type]
        nt += one
    return np.int64(nt)  # type: ignore[return-value]


@_kernel
def _doc_tokens(
    buf: npt.NDArray[np.uint8],
    i: int,
    end: int,
    classes: npt.NDArray[np.uint8],
    lower: npt.NDArray[np.int32],
    mask: int,
    min_bytes: int,
    seed: np.uint64,
    scratch: npt.NDArray[np.uint8],
    toks: U64,
    table: npt.NDArray[np.uint8],
    usable: bool,
) -> int:
    """xxh3_64 of each kept token of ``buf[i:end]`` into ``toks``; return how many.

    The tokens are exactly those of ``fast.tokenize_words(..., do_lower=True)``. When
    ``usable``, ASCII bytes take the byte ``table`` of :func:`_ascii_table` (an ASCII word
    character is neither an ideograph nor a mark: it only ends an ideograph's token).
    """
    nt = 0
    pos = 0
    in_tok = False
    tok_ideo = False
    cls = classes[0] & mask  # the type of the per-character value
    while i <= end:
        if usable and i < end and buf[i] < 0x80:
            t = table[buf[i]]
            if t != 0:
                if in_tok and tok_ideo:
                    in_tok = False
                    if pos >= min_bytes:
                        toks[nt] = xxh3.xxh3_64(scratch, 0, pos, seed)
                        nt += 1
                if not in_tok:
                    in_tok = True
                    tok_ideo = False
                    pos = 0
                scratch[pos] = t
                pos += 1
            elif in_tok:
                in_tok = False
                if pos >= min_bytes:
                    toks[nt] = xxh3.xxh3_64(scratch, 0, pos, seed)
                    nt += 1
            i += 1
            continue
        is_word = False
        step = 1
        cp = np.int64(0)
        if i < end:
            b0 = buf[i]
            if b0 < 0x80:
                cp = np.int64(b0)
            else:
                cp, step = fast._decode(buf, i, end)
            cls = classes[cp] & mask
            is_word = cls != 0
        if is_word:
            ideo = (cls & fast._IDEOGRAPH) != 0
            if in_tok and (ideo or (tok_ideo and (cls & fast._MARK) == 0)):
                # an ideograph is a word of its own (see fast.tokenize_words)
                in_tok = False
                if pos >= min_bytes:
                    toks[nt] = xxh3.xxh3_64(scratch, 0, pos, seed)
                    nt += 1
            if not in_tok:
                in_tok = True
                tok_ideo = ideo
                pos = 0
            pos = fast._encode(scratch, pos, lower[cp])
        elif in_tok:
            in_tok = False
            if pos >= min_bytes:
                toks[nt] = xxh3.xxh3_64(scratch, 0, pos, seed)
                nt += 1
        i += step
    return nt


@_kernel
def _doc_features(
    toks: U64, nt: int, k: int, short_joined: bool, seed: np.uint64, flo: U64, fhi: U64
) -> int:
    """The (lo, hi) feature hashes of one document's k-shingles; return how many.

    The k-shingles are :func:`_feature` computed for all of them at once, one token position
    at a time (each step a loop over the shingles, which vectorizes; the running hashes are
    kept in ``flo``): the same bits as one shingle after the other, about 4x faster.
    """
    if nt >= k:
        n = nt - k + 1
        h0 = seed ^ _MIX
        for j in range(n):
            flo[j] = h0
        for q in range(k):
            for j in range(n):
                h = flo[j]
                h = ((h << _S27) | (h >> _S37)) ^ toks[j + q]
                flo[j] = h * _MIX
        mk = np.uint64(k)
        for j in range(n):
            h = flo[j] ^ mk
            flo[j] = _fmix64(h)
            fhi[j] = _fmix64(h + _MIX)
        return n
    if nt > 0 and short_joined:
        flo[0], fhi[0] = _feature(toks, 0, nt, seed)
        return 1
    for j in range(nt):
        flo[j], fhi[j] = _feature(toks, j, 1, seed)
    return nt


@_kernel
def sketch_words(
    buf: npt.NDArray[np.uint8],
    offsets: I64,
    classes: npt.NDArray[np.uint8],
    lower: npt.NDArray[np.int32],
    mask: int,
    min_bytes: int,
    k: int,
    short_joined: bool,
    seed: np.uint64,
    num_perm: int,
) -> U64:
    """Fused tokenize -> xxh3_64 per token -> k-shingle features -> 32-bit double hashing.

    The tokens are exactly those of ``fast.tokenize_words(..., do_lower=True)``.
    """
    out, _, _ = sketch_words_features(
        buf, offsets, classes, lower, mask, min_bytes, k, short_joined, seed, num_perm, False
    )
    return out


#: Runs up to this long are sorted by insertion alone.
_SMALL_RUN = 32
#: At most ``2**_MAX_BUCKET_BITS`` buckets; a longer run is sorted by ``ndarray.sort``.
_MAX_BUCKET_BITS = 16
#: A bucket holding more than this many values (skewed or repeated values) sends the run to
#: ``ndarray.sort``: insertion within buckets stays linear on hashes, never quadratic.
_BUCKET_CAP = 32


@_kernel
def _insertion_sort(run: npt.NDArray[Any], src: npt.NDArray[Any]) -> None:
    """``run[:] = sorted(src)`` by insertion (``src`` may be ``run``): linear when ``src``
    is nearly sorted."""
    n = len(src)
    for i in range(n):
        x = src[i]
        j = i - 1
        while j >= 0 and run[j] > x:
            run[j + 1] = run[j]
            j -= 1
        run[j + 1] = x


@_kernel
def _bucket_sort(run: npt.NDArray[Any], bits: int) -> bool:
    """Sort ``run`` (hash values, uniform over their width) in place: a counting sort on the
    top ``bits`` bits into a copy, then insertion back (each value moves only within its
    bucket). Return False, leaving ``run`` as it was, when a bucket would hold more than
    :data:`_BUCKET_CAP` values."""
    n = len(run)
    shift = np.uint64(run.itemsize * 8 - bits)
    counts = np.zeros((1 << bits) + 1, dtype=np.int64)
    for i in range(n):
        k = np.int64(np.uint64(run[i]) >> shift) + 1
        c = counts[k] + 1
        if c > _BUCKET_CAP:
            return False
        counts[k] = c
    for i in range(1 << bits):
        counts[i + 1] += counts[i]
    tmp = np.empty_like(run)
    for i in range(n):
        k = np.int64(np.uint64(run[i]) >> shift)
        tmp[counts[k]] = run[i]
        counts[k] += 1
    _insertion_sort(run, tmp)
    return True


@_kernel
def sort_unique(run: npt.NDArray[Any]) -> int:
    """Sort ``run`` (unsigned integers) in place and move its distinct values to the front;
    return how many (also the step of ``sets.unique_per_doc32``: the sets family imports it
    from here, as the MinHash family may not import the sets family, which imports the LSH
    one).

    The values are hashes: a bucket sort on their top bits (one bucket per value or so) is
    about 4x faster than ``ndarray.sort`` on a document's hundred values; short runs are
    sorted by insertion, long or skewed ones by ``ndarray.sort``. The result is the same.
    """
    n = len(run)
    if n <= _SMALL_RUN:
        _insertion_sort(run, run)
    else:
        bits = 1
        while (1 << bits) < n:
            bits += 1
        if bits > _MAX_BUCKET_BITS or not _bucket_sort(run, bits):
            run.sort()
    m = 0
    for k in range(n):
        if k == 0 or run[k] != run[m - 1]:
            run[m] = run[k]
            m += 1
    return m


@_kernel
def _doc_buffers(
    buf: npt.NDArray[np.uint8],
    offsets: I64,
    classes: npt.NDArray[np.uint8],
    lower: npt.NDArray[np.int32],
    mask: int,
) -> tuple[Any, ...]:
    """Per-document scratch of the fused kernels, sized for the longest document, and the
    table of the ASCII path (:func:`_ascii_table`)."""
    maxlen = 0
    for d in range(offsets.shape[0] - 1):
        maxlen = max(maxlen, offsets[d + 1] - offsets[d])
    scratch = np.empty(2 * maxlen + 8, dtype=np.uint8)
    toks = np.empty(maxlen + 1, dtype=np.uint64)
    flo = np.empty(maxlen + 1, dtype=np.uint64)
    fhi = np.empty(maxlen + 1, dtype=np.uint64)
    fa = np.empty(maxlen + 1, dtype=np.uint32)
    fb = np.empty(maxlen + 1, dtype=np.uint32)
    table, usable = _ascii_table(classes, lower, mask)
    return scratch, toks, flo, fhi, fa, fb, table, usable


@_kernel
def _doc_sketch(
    buf: npt.NDArray[np.uint8],
    offsets: I64,
    d: int,
    classes: npt.NDArray[np.uint8],
    lower: npt.NDArray[np.int32],
    mask: int,
    min_bytes: int,
    k: int,
    short_joined: bool,
    seed: np.uint64,
    out: U64,
    bufs: tuple[Any, ...],
) -> int:
    """Row ``d`` of ``out`` from document ``d``; its features' ``lo`` hashes are left in
    ``bufs[2]``; return how many."""
    scratch, toks, flo, fhi, fa, fb, table, usable = bufs
    i, end = offsets[d], offsets[d + 1]
    if usable and _is_ascii(buf, i, end):
        nt = _doc_tokens_ascii(buf, i, end, table, min_bytes, seed, scratch, toks)
    else:
        nt = _doc_tokens(
            buf, i, end, classes, lower, mask, min_bytes, seed, scratch, toks, table, usable
        )
    nf: int = _doc_features(toks, nt, k, short_joined, seed, flo, fhi)
    _slots_double32(out, d, flo, fhi, nf, fa, fb)
    return nf


@_kernel
def sketch_words_features(
    buf: npt.NDArray[np.uint8],
    offsets: I64,
    classes: npt.NDArray[np.uint8],
    lower: npt.NDArray[np.int32],
    mask: int,
    min_bytes: int,
    k: int,
    short_joined: bool,
    seed: np.uint64,
    num_perm: int,
    emit: bool,
) -> tuple[U64, U64, I64]:
    """:func:`sketch_words`, also returning (when ``emit``) every feature's ``lo`` hash and
    the per-document feature offsets: the same values as ``combine_shingles`` gives."""
    n_docs = offsets.shape[0] - 1
    out = np.empty((n_docs, num_perm), dtype=np.uint64)
    bufs = _doc_buffers(buf, offsets, classes, lower, mask)
    flo = bufs[2]
    cap = (buf.shape[0] // 2 + n_docs + 1) if emit else 0
    feats = np.empty(cap, dtype=np.uint64)
    feat_offsets = np.zeros(n_docs + 1, dtype=np.int64)
    nf_total = 0
    for d in range(n_docs):
        nf = _doc_sketch(
            buf, offsets, d, classes, lower, mask, min_bytes, k, short_joined, seed, out, bufs
        )
        if emit:
            feats[nf_total : nf_total + nf] = flo[:nf]
            nf_total += nf
            feat_offsets[d + 1] = nf_total
    return out, feats[:nf_total].copy(), feat_offsets


@_kernel
def sketch_words_sets32(
    buf: npt.NDArray[np.uint8],
    offsets: I64,
    classes: npt.NDArray[np.uint8],
    lower: npt.NDArray[np.int32],
    mask: int,
    min_bytes: int,
    k: int,
    short_joined: bool,
    seed: np.uint64,
    num_perm: int,
) -> tuple[U64, U32, I64]:
    """:func:`sketch_words_features` with each document's features given as its sorted set of
    their top 32 bits, made in place in the output (the same values as
    ``sets.unique_per_doc32`` of the features): ``(sigs, values, set_offsets)``."""
    n_docs = offsets.shape[0] - 1
    out = np.empty((n_docs, num_perm), dtype=np.uint64)
    bufs = _doc_buffers(buf, offsets, classes, lower, mask)
    flo = bufs[2]
    values = np.empty(buf.shape[0] // 2 + n_docs + 1, dtype=np.uint32)
    set_offsets = np.zeros(n_docs + 1, dtype=np.int64)
    pos = 0
    for d in range(n_docs):
        nf = _doc_sketch(
            buf, offsets, d, classes, lower, mask, min_bytes, k, short_joined, seed, out, bufs
        )
        run = values[pos : pos + nf]
        for j in range(nf):
            run[j] = np.uint32(flo[j] >> _S32)
        pos += sort_unique(run)
        set_offsets[d + 1] = pos
    return out, values[:pos].copy(), set_offsets


@_kernel
def minhash_affine32(hv: U64, doc_offsets: I64, a: U64, b: U64) -> U64:
    """datasketch 2.x ``affine32``: ``a * fmix32(h) + b mod 2**32``, min per slot."""
    n_docs = doc_offsets.shape[0] - 1
    num_perm = a.shape[0]
    out = np.empty((n_docs, num_perm), dtype=np.uint64)
    sig = np.empty(num_perm, dtype=np.uint64)
    for d in range(n_docs):
        sig[:] = _MASK32
        for j in range(doc_offsets[d], doc_offsets[d + 1]):
            h = hv[j] & _MASK32
            h ^= h >> _S16
            h = (h * _F32_1) & _MASK32
            h ^= h >> _S13
            h = (h * _F32_2) & _MASK32
            h ^= h >> _S16
            for i in range(num_perm):
                v = (a[i] * h + b[i]) & _MASK32
                if v < sig[i]:
                    sig[i] = v
        out[d, :] = sig
    return out


@_kernel
def minhash_legacy(hv: U64, doc_offsets: I64, a: U64, b: U64) -> U64:
    """datasketch ``legacy``: ``((a*h + b) mod 2**64) mod (2**61 - 1)``, low 32 bits, min."""
    n_docs = doc_offsets.shape[0] - 1
    num_perm = a.shape[0]
    out = np.empty((n_docs, num_perm), dtype=np.uint64)
    sig = np.empty(num_perm, dtype=np.uint64)
    for d in range(n_docs):
        sig[:] = _MASK32
        for j in range(doc_offsets[d], doc_offsets[d + 1]):
            h = hv[j]
            for i in range(num_perm):
                v = ((a[i] * h + b[i]) % _PRIME61) & _MASK32
                if v < sig[i]:
                    sig[i] = v
        out[d, :] = sig
    return out


@_kernel
def oph(h: U64, doc_offsets: I64, num_perm: int, seed: np.uint64) -> U64:
    """One-permutation hashing with optimal densification (Shrivastava 2017)."""
    n_docs = doc_offsets.shape[0] - 1
    k = np.uint64(num_perm)
    out = np.empty((n_docs, num_perm), dtype=np.uint64)
    sig = np.empty(num_perm, dtype=np.uint64)
    for d in range(n_docs):
        sig[:] = _MAX
        for j in range(doc_offsets[d], doc_offsets[d + 1]):
            x = h[j]
            bin_ = ((x >> _S32) * k) >> _S32
            if x < sig[bin_]:
                sig[bin_] = x
        filled = 0
        for i in range(num_perm):
            if sig[i] != _MAX:
                filled += 1
        if 0 < filled < num_perm:
            src = sig.copy()
            for i in range(num_perm):
                if src[i] != _MAX:
                    continue
                t = np.uint64(1)
                while True:
                    z = _splitmix64(seed ^ (np.uint64(i) << _S32) ^ t)
                    j2 = ((z >> _S32) * k) >> _S32
                    if src[j2] != _MAX:
                        sig[i] = src[j2]
                        break
                    t += np.uint64(1)
        out[d, :] = sig
    return out


@_kernel
def band_keys(sig: npt.NDArray[np.uint32], bands: int, rows: int) -> U64:
    """64-bit key of every (document, band): a seeded mix of the band's 32-bit slots."""
    n = sig.shape[0]
    out = np.empty((n, bands), dtype=np.uint64)
    for d in range(n):
        for j in range(bands):
            h = np.uint64(j + 1) * _MIX
            for c in range(j * rows, (j + 1) * rows):
                h = ((h << _S27) | (h >> _S37)) ^ np.uint64(sig[d, c])
                h *= _MIX
            out[d, j] = _fmix64(h)
    return out


@_kernel
def estimate(
    a32: npt.NDArray[np.uint32], ai: I64, b32: npt.NDArray[np.uint32], bi: I64
) -> npt.NDArray[np.float64]:
    """Fraction of equal slots between rows ``a32[ai[t]]`` and ``b32[bi[t]]``, for every t."""
    num_perm = a32.shape[1]
    out = np.empty(ai.shape[0], dtype=np.float64)
    for t in range(ai.shape[0]):
        x = ai[t]
        y = bi[t]
        same = 0
        for i in range(num_perm):
            if a32[x, i] == b32[y, i]:
                same += 1
        out[t] = same / num_perm
    return out
