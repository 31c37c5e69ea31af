"""numpy reference of the MinHash and LSH kernels: the definitions, and the fallback.

Definitions (all arithmetic on unsigned 64-bit integers, wrapping mod 2**64):

* ``fmix64`` is MurmurHash3's 64-bit finalizer; ``splitmix64(x)`` is Vigna's SplitMix64 output
  function applied to ``x + 0x9E3779B97F4A7C15``; ``rotl`` rotates left.
* **Feature hash** of a shingle of ``m`` token hashes ``t_1..t_m`` (``xxh3_64`` of each token's
  UTF-8 bytes with the sketch seed): ``h = seed ^ M``; for each token
  ``h = (rotl(h, 27) ^ t) * M``; then ``h ^= m``; ``lo = fmix64(h)``, ``hi = fmix64(h + M)``,
  with ``M = 0x9E3779B97F4A7C15``.
* **Double hashing** (Kirsch and Mitzenmacher 2008): preset ``txtfp``, slot ``i`` is the
  minimum over the features of ``lo + i * hi`` mod 2**64 (txtfp's formula, 64-bit slots);
  preset ``xxh3``, the minimum of ``(lo >> 32) + i * (hi >> 32)`` mod 2**32 (32-bit slots,
  which vectorize twice as wide).
* **datasketch** ``affine32`` and ``legacy``: exactly datasketch 2.0.0's ``update_batch``.
* **One-permutation hashing** (Li, Owen and Zhang 2012) with optimal densification
  (Shrivastava, ICML 2017, arXiv 1703.04664): a feature hash ``x`` falls in bin
  ``((x >> 32) * k) >> 32`` and each bin keeps its minimum ``x``; an empty bin ``i`` copies
  bin ``j = ((splitmix64(seed ^ (i << 32) ^ t) >> 32) * k) >> 32`` for the first attempt
  ``t = 1, 2, ...`` whose ``j`` is not empty (in the undensified sketch).

* The **fused sketch** ``sketch_words`` (the default path) is ``tokenize_words`` of
  :mod:`neardup._kernels.text` with lowercasing, ``xxh3_64`` of each token,
  :func:`combine_shingles` and :func:`minhash_double32`, in one call.

Empty documents (no features) give every slot the scheme's maximum value. Parameters out of
range raise :class:`~neardup.errors.ConfigError`, with the same messages in both twins.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from neardup._kernels import text as text
from neardup._kernels import xxh3 as xxh3
from neardup.errors import ConfigError

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
    "sort_unique",
]

U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]

_MAX = np.uint64(0xFFFFFFFFFFFFFFFF)
_MASK32 = np.uint64(0xFFFFFFFF)
_MIX = np.uint64(0x9E3779B97F4A7C15)
_PRIME61 = np.uint64((1 << 61) - 1)
# Features per chunk of the (num_perm, n) matrices: bounds the temporary memory.
_CHUNK = 1 << 15
# Entries of tables.char_classes() and tables.simple_lower(): one per code point.
_TABLE_LEN = 0x110000


def _count(name: str, value: int, low: int) -> None:
    if value < low:
        raise ConfigError(f"{name} must be at least {low}, got {value}")


def _check_k(k: int) -> None:
    if k < 1:
        raise ConfigError(f"k (tokens per shingle) must be at least 1, got {k}")


def _check_permutations(a: U64, b: U64) -> None:
    if len(a) != len(b):
        raise ConfigError(f"the permutations a and b differ in length ({len(a)} and {len(b)})")


def fmix64(x: U64) -> U64:
    """MurmurHash3's 64-bit finalizer, elementwise."""
    x = x ^ (x >> np.uint64(33))
    x = x * np.uint64(0xFF51AFD7ED558CCD)
    x = x ^ (x >> np.uint64(33))
    x = x * np.uint64(0xC4CEB9FE1A85EC53)
    return x ^ (x >> np.uint64(33))


def splitmix64(x: U64) -> U64:
    """SplitMix64's output function of ``x + 0x9E3779B97F4A7C15``, elementwise."""
    z = x + _MIX
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def _rotl(x: U64, r: int) -> U64:
    return (x << np.uint64(r)) | (x >> np.uint64(64 - r))


def combine_shingles(
    toks: U64, tok_offsets: I64, k: int, short_joined: bool, seed: np.uint64
) -> tuple[U64, U64, I64]:
    """Feature hashes (lo, hi) of the k-shingles of token hashes, with their doc offsets.

    Raises:
        ConfigError: ``k`` is below 1.
    """
    _check_k(k)
    n = np.diff(tok_offsets)
    full = n >= k
    partial = (n > 0) & ~full
    if short_joined:
        counts = np.where(full, n - k + 1, partial.astype(np.int64))
    else:
        counts = np.where(full, n - k + 1, np.where(partial, n, 0))
    offsets = np.zeros(len(n) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    total = int(offsets[-1])
    first = np.repeat(tok_offsets[:-1], counts) + (
        np.arange(total, dtype=np.int64) - np.repeat(offsets[:-1], counts)
    )
    width = np.where(full, k, np.where(partial, n if short_joined else 1, 0))
    m = np.repeat(width, counts).astype(np.int64)
    h = np.full(total, np.uint64(seed) ^ _MIX, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for q in range(max(k, 1)):
            active = q < m
            if not active.any():
                break
            pos = np.where(active, first + q, 0)
            mixed = (_rotl(h, 27) ^ toks[pos]) * _MIX if len(toks) else h
            h = np.where(active, mixed, h)
        h = h ^ m.astype(np.uint64)
        return fmix64(h), fmix64(h + _MIX), offsets


def _reduce(doc_offsets: I64, num_perm: int, empty: np.uint64, permute: object) -> U64:
    """Min over each document's features of ``permute(chunk) -> (num_perm, m)`` matrices."""
    n_docs = len(doc_offsets) - 1
    out = np.full((n_docs, num_perm), empty, dtype=np.uint64)
    counts = np.diff(doc_offsets)
    d = 0
    while d < n_docs:
        # a run of whole documents holding about _CHUNK features (at least one document)
        stop = int(np.searchsorted(doc_offsets, doc_offsets[d] + _CHUNK, side="right")) - 1
        stop = min(max(stop, d + 1), n_docs)
        lo, hi = int(doc_offsets[d]), int(doc_offsets[stop])
        if hi > lo:
            mat = permute(slice(lo, hi))  # type: ignore[operator]
            nonempty = np.flatnonzero(counts[d:stop] > 0)
            starts = (doc_offsets[d:stop] - lo)[nonempty]
            out[d + nonempty] = np.minimum.reduceat(mat, starts, axis=1).T
        d = stop
    return out


def minhash_double(lo: U64, hi: U64, doc_offsets: I64, num_perm: int) -> U64:
    """Slot i of document d = min over its features of ``lo + i*hi`` (mod 2**64)."""
    _count("num_perm", num_perm, 0)
    idx = np.arange(num_perm, dtype=np.uint64)[:, None]

    def permute(s: slice) -> U64:
        with np.errstate(over="ignore"):
            return lo[None, s] + idx * hi[None, s]

    return _reduce(doc_offsets, num_perm, _MAX, permute)


def minhash_double32(lo: U64, hi: U64, doc_offsets: I64, num_perm: int) -> U64:
    """Slot i = min over the features of ``(lo >> 32) + i * (hi >> 32)`` (mod 2**32)."""
    _count("num_perm", num_perm, 0)
    idx = np.arange(num_perm, dtype=np.uint32)[:, None]
    a = (lo >> np.uint64(32)).astype(np.uint32)
    b = (hi >> np.uint64(32)).astype(np.uint32)

    def permute(s: slice) -> U64:
        return (a[None, s] + idx * b[None, s]).astype(np.uint64)

    return _reduce(doc_offsets, num_perm, _MASK32, permute)


def minhash_affine32(hv: U64, doc_offsets: I64, a: U64, b: U64) -> U64:
    """datasketch 2.x ``affine32``: ``a * fmix32(h) + b mod 2**32``, min per slot."""
    _check_permutations(a, b)
    a32 = a.astype(np.uint32)[:, None]
    b32 = b.astype(np.uint32)[:, None]
    h = (hv & _MASK32).astype(np.uint32)
    h = h ^ (h >> np.uint32(16))
    h = h * np.uint32(0x85EBCA6B)
    h = h ^ (h >> np.uint32(13))
    h = h * np.uint32(0xC2B2AE35)
    h = h ^ (h >> np.uint32(16))

    def permute(s: slice) -> U64:
        return (h[None, s] * a32 + b32).astype(np.uint64)

    return _reduce(doc_offsets, len(a), _MASK32, permute)


def minhash_legacy(hv: U64, doc_offsets: I64, a: U64, b: U64) -> U64:
    """datasketch ``legacy``: ``((a*h + b) mod 2**64) mod (2**61 - 1)``, low 32 bits, min."""
    _check_permutations(a, b)
    a2 = a[:, None]
    b2 = b[:, None]

    def permute(s: slice) -> U64:
        with np.errstate(over="ignore"):
            return ((hv[None, s] * a2 + b2) % _PRIME61) & _MASK32

    return _reduce(doc_offsets, len(a), _MASK32, permute)


def oph(h: U64, doc_offsets: I64, num_perm: int, seed: np.uint64) -> U64:
    """One-permutation hashing with optimal densification (Shrivastava 2017)."""
    _count("num_perm", num_perm, 1)
    n_docs = len(doc_offsets) - 1
    k = np.uint64(num_perm)
    out = np.full(n_docs * num_perm, _MAX, dtype=np.uint64)
    with np.errstate(over="ignore"):
        bins = ((h >> np.uint64(32)) * k) >> np.uint64(32)
        doc = np.repeat(np.arange(n_docs, dtype=np.int64), np.diff(doc_offsets))
        np.minimum.at(out, doc * num_perm + bins.astype(np.int64), h)
        sig = out.reshape(n_docs, num_perm)
        src = sig.copy()
        empty = src == _MAX
        partial = ~empty.all(axis=1)
        todo_d, todo_i = np.nonzero(empty & partial[:, None])
        t = np.uint64(1)
        while len(todo_d):
            z = splitmix64(seed ^ (todo_i.astype(np.uint64) << np.uint64(32)) ^ t)
            j = (((z >> np.uint64(32)) * k) >> np.uint64(32)).astype(np.int64)
            got = src[todo_d, j]
            hit = got != _MAX
            sig[todo_d[hit], todo_i[hit]] = got[hit]
            todo_d, todo_i = todo_d[~hit], todo_i[~hit]
            t = t + np.uint64(1)
    return sig


def band_keys(sig: npt.NDArray[np.uint32], bands: int, rows: int) -> U64:
    """64-bit key of every (document, band): ``h = (j+1)*M``; per slot ``v`` of band ``j``
    ``h = (rotl(h, 27) ^ v) * M``; key ``fmix64(h)``.

    Raises:
        ConfigError: ``bands`` or ``rows`` is negative, or the bands need more slots than
            the sketches have.
    """
    if bands < 0 or rows < 0:
        raise ConfigError(f"bands and rows must not be negative, got bands={bands}, rows={rows}")
    if bands * rows > sig.shape[1]:
        raise ConfigError(
            f"bands * rows = {bands * rows} is more than the {sig.shape[1]} slots of a sketch"
        )
    n = sig.shape[0]
    cube = sig[:, : bands * rows].reshape(n, bands, rows).astype(np.uint64)
    with np.errstate(over="ignore"):
        h = np.broadcast_to(np.arange(1, bands + 1, dtype=np.uint64) * _MIX, (n, bands)).copy()
        for c in range(rows):
            h = (_rotl(h, 27) ^ cube[:, :, c]) * _MIX
        return fmix64(h)


def estimate(
    a32: npt.NDArray[np.uint32], ai: I64, b32: npt.NDArray[np.uint32], bi: I64
) -> npt.NDArray[np.float64]:
    """Fraction of equal slots between rows ``a32[ai[t]]`` and ``b32[bi[t]]``, for every t.

    Raises:
        ConfigError: The sketches differ in width, or ``ai`` and ``bi`` in length.
        IndexError: An index is out of range.
    """
    num_perm = a32.shape[1]
    if b32.shape[1] != num_perm:
        raise ConfigError(
            f"the sketches have {num_perm} and {b32.shape[1]} slots; "
            "compare sketches of one num_perm"
        )
    if len(ai) != len(bi):
        raise ConfigError(f"ai and bi differ in length ({len(ai)} and {len(bi)})")
    for idx, n in ((ai, a32.shape[0]), (bi, b32.shape[0])):
        bad = (idx < -n) | (idx >= n)
        if bad.any():
            raise IndexError(f"index {idx[bad][0]} is out of bounds for axis 0 with size {n}")
    est = np.empty(len(ai), dtype=np.float64)
    step = max(1, (1 << 22) // max(num_perm, 1))
    for s in range(0, len(ai), step):
        eq = a32[ai[s : s + step]] == b32[bi[s : s + step]]
        with np.errstate(invalid="ignore"):  # no slots: nan, as 0 / 0
            est[s : s + step] = np.count_nonzero(eq, axis=1) / num_perm
    return est


def sort_unique(run: npt.NDArray[np.unsignedinteger]) -> int:
    """Sort ``run`` (a 1-D uint32 or uint64 array) in place and move its distinct values to
    the front; return how many. The rest of ``run`` keeps the sorted values that were there.

    Raises:
        ConfigError: ``run`` is not a 1-D uint32 or uint64 array.
    """
    if not isinstance(run, np.ndarray) or run.ndim != 1 or run.dtype not in (np.uint32, np.uint64):
        got = run.dtype if isinstance(run, np.ndarray) else type(run).__name__
        raise ConfigError(f"sort_unique takes a 1-D uint32 or uint64 array, got {got}")
    run.sort()
    distinct = np.unique(run)
    run[: len(distinct)] = distinct
    return len(distinct)


def _word_features(
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
) -> tuple[U64, U64, I64]:
    """(lo, hi, feature offsets) of the fused sketch's documents, its arguments checked."""
    _check_k(k)
    _count("num_perm", num_perm, 0)
    if len(classes) < _TABLE_LEN or len(lower) < _TABLE_LEN:
        raise ConfigError(
            "classes and lower must be the 0x110000-entry tables of neardup._unicode.classes, "
            f"got {len(classes)} and {len(lower)} entries"
        )
    out, starts, ends, tok_offsets = text.tokenize_words(
        buf, offsets, classes, lower, mask & 0xFF, min_bytes, True
    )
    toks = xxh3.xxh3_64_ranges(out, starts, ends, np.uint64(seed))
    return combine_shingles(toks, tok_offsets, k, short_joined, np.uint64(seed))


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

    The tokens are those of :func:`neardup._kernels.text.tokenize_words` with
    ``do_lower=True`` (``buf`` must be UTF-8; surrogates pass).

    Raises:
        ConfigError: ``k`` below 1, ``num_perm`` negative, or tables that are not the
            0x110000-entry tables of :mod:`neardup._unicode.classes`.
    """
    lo, hi, feat_offsets = _word_features(
        buf, offsets, classes, lower, mask, min_bytes, k, short_joined, seed, num_perm
    )
    return minhash_double32(lo, hi, feat_offsets, num_perm)


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
    the per-document feature offsets (else no features and offsets all 0).

    Raises:
        ConfigError: As :func:`sketch_words`.
    """
    lo, hi, feat_offsets = _word_features(
        buf, offsets, classes, lower, mask, min_bytes, k, short_joined, seed, num_perm
    )
    sigs = minhash_double32(lo, hi, feat_offsets, num_perm)
    if not emit:
        return sigs, np.empty(0, dtype=np.uint64), np.zeros(len(offsets), dtype=np.int64)
    return sigs, lo, feat_offsets


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
) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.uint32], I64]:
    """:func:`sketch_words_features` with each document's features given as its sorted set of
    their top 32 bits: ``(sigs, values, set_offsets)``; the slots (all below 2**32) as
    ``uint32``, which is what the band keys read.

    Raises:
        ConfigError: As :func:`sketch_words`.
    """
    lo, hi, feat_offsets = _word_features(
        buf, offsets, classes, lower, mask, min_bytes, k, short_joined, seed, num_perm
    )
    sigs = minhash_double32(lo, hi, feat_offsets, num_perm).astype(np.uint32)
    n_docs = len(feat_offsets) - 1
    doc = np.repeat(np.arange(n_docs, dtype=np.uint64), np.diff(feat_offsets))
    keys = np.unique((doc << np.uint64(32)) | (lo >> np.uint64(32)))
    values = (keys & _MASK32).astype(np.uint32)
    set_offsets = np.searchsorted(
        keys >> np.uint64(32), np.arange(n_docs + 1, dtype=np.uint64), side="left"
    ).astype(np.int64)
    return sigs, values, set_offsets
