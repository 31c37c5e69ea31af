"""Reference of the segments kernel: a store segment's entries sorted and packed with numpy.

Same function, results and ``ConfigError`` messages as ``neardup._native.segments``; used
without the compiled core and as the oracle.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from neardup.errors import ConfigError

__all__ = ["encode_band_segment", "encode_segment"]

U8 = npt.NDArray[np.uint8]
I64 = npt.NDArray[np.int64]
_MASK32 = np.uint64(0xFFFFFFFF)


def _check(keys: I64, docs: I64, doc_lo: int, doc_bits: int, seg: int, bucket_entries: int) -> None:
    if len(keys) != len(docs):
        raise ConfigError(f"keys and docs differ in length ({len(keys)} and {len(docs)})")
    if not len(keys):
        raise ConfigError("a segment needs at least one entry, got none")
    if not 1 <= doc_bits <= 32:
        raise ConfigError(f"doc_bits must be in 1..32, got {doc_bits}")
    if not 1 <= seg < (1 << 31):
        raise ConfigError(f"seg must be in 1..2**31, got {seg}")
    if bucket_entries < 1:
        raise ConfigError(f"bucket_entries must be at least 1, got {bucket_entries}")
    low, high = int(docs.min()), int(docs.max())
    if low - doc_lo < 0 or high - doc_lo >= (1 << doc_bits):  # the first one, as the native
        first = next(d for d in docs.tolist() if not 0 <= d - doc_lo < (1 << doc_bits))
        raise ConfigError(f"document {first} is outside doc_lo {doc_lo} + {doc_bits} bits")


def encode_segment(
    keys: I64, docs: I64, doc_lo: int, doc_bits: int, seg: int, bucket_entries: int
) -> tuple[int, int, int, int, U8, I64, I64, I64]:
    """Sort a segment's ``(folded key, document)`` entries (repeats dropped) and pack them
    into blocks: ``(shift, kmin, kmax, entries, raw, ids, ends, checks)``, ``raw`` every
    entry's bytes end to end, block ``i`` ``raw[ends[i-1]:ends[i]]`` with row id ``ids[i]``
    and checksum ``checks[i]`` (XXH3-64 of the id's 8 little-endian bytes and the data).

    Raises:
        ConfigError: the arrays differ in length or are empty, or a document lies outside
            ``doc_lo + doc_bits`` bits, or ``seg``, ``doc_bits``, ``bucket_entries`` are out
            of range.
    """
    import xxhash

    keys = np.ascontiguousarray(keys, dtype=np.int64)
    docs = np.ascontiguousarray(docs, dtype=np.int64)
    _check(keys, docs, doc_lo, doc_bits, seg, bucket_entries)
    both = keys.view(np.uint64) << np.uint64(32)
    both |= (docs - doc_lo).view(np.uint64) & _MASK32
    both = np.unique(both)
    n = int(both.size)
    bucket_bits = min(32, max(0, round(math.log2(max(1.0, n / bucket_entries)))))
    shift = 32 - bucket_bits
    ku = both >> np.uint64(32)
    kmin, kmax = int(ku[0]), int(ku[-1])
    bucket = ku >> np.uint64(shift) if shift < 32 else np.zeros(n, dtype=np.uint64)
    packed = both & _MASK32
    if shift:
        packed |= (ku & np.uint64((1 << shift) - 1)) << np.uint64(doc_bits)
    width = (shift + doc_bits + 7) // 8
    raw = np.ascontiguousarray(packed.astype("<u8").view(np.uint8).reshape(n, 8)[:, :width])
    raw = raw.reshape(-1)
    first = np.flatnonzero(np.concatenate(([True], bucket[1:] != bucket[:-1])))
    ends = np.append(first[1:], n).astype(np.int64) * width
    ids = (np.int64(seg) << np.int64(32)) | bucket[first].astype(np.int64)
    data = raw.tobytes()
    checks = np.empty(len(ids), dtype=np.int64)
    start = 0
    for i, (block, end) in enumerate(zip(ids.tolist(), ends.tolist(), strict=True)):
        digest = xxhash.xxh3_64_intdigest(
            block.to_bytes(8, "little", signed=True) + data[start:end]
        )
        checks[i] = digest - (1 << 64) if digest >= 1 << 63 else digest
        start = end
    return shift, kmin, kmax, n, raw, ids.astype(np.int64), ends, checks


_M1 = np.uint64(0x9E3779B97F4A7C15)
_M2 = np.uint64(0xC2B2AE3D27D4EB4F)
_M3 = np.uint64(0xBF58476D1CE4E5B9)


def _fold(bands: I64, values: I64) -> I64:
    """The store's fold (``neardup.store._lookup.fold``) of each ``(band, value)``."""
    v = values.view(np.uint64)
    with np.errstate(over="ignore"):
        h = v * _M1 + bands.view(np.uint64) * _M2
        h ^= h >> np.uint64(29)
        h *= _M3
        h ^= h >> np.uint64(32)
    return (h & _MASK32).astype(np.uint32).view(np.int32).astype(np.int64)


def encode_band_segment(
    values: I64, doc_base: int, doc_lo: int, doc_bits: int, seg: int, bucket_entries: int
) -> tuple[int, int, int, int, U8, I64, I64, I64]:
    """:func:`encode_segment` of the lookup entries of an ``(n, bands)`` array of band values:
    row ``i``, column ``j`` is the entry ``(fold(j, values[i, j]), doc_base + i)`` (the
    store's fold).

    Raises:
        ConfigError: as :func:`encode_segment` (no entries, documents out of range, ...).
    """
    values = np.ascontiguousarray(values, dtype=np.int64)
    n, bands = values.shape
    keys = _fold(np.arange(bands, dtype=np.int64), values).reshape(-1)
    docs = np.repeat(np.arange(n, dtype=np.int64) + np.int64(doc_base), bands)
    return encode_segment(keys, docs, doc_lo, doc_bits, seg, bucket_entries)
