"""Compact, self-checking byte forms of shingle-hash sets and MinHash rows (for stores).

A document's shingle-hash set (the sorted unique 64-bit hashes that exact MinHash
verification compares) is kept at a **width that follows its size**: each hash is cut to its
top ``w = ceil(log2(n)) + MARGIN_BITS`` bits (at most 32), where ``n`` is the number of
distinct hashes. Two sets are compared at the smaller of their widths (the wider one is cut
further; cutting the top bits keeps the order). Of the ``|A| * |B|`` cross pairs, each
agrees by chance with probability ``2**-w``, so at most ``|B| / 2**MARGIN_BITS`` spurious
matches join the intersection: a Jaccard error under 0.2 % of the intersection for
``MARGIN_BITS = 10``, and about 11.5 bits per hash whatever the document's length (a fixed
32-bit width would need ``32 - log2(n)`` bits each). ``benchmarks/store_bench.py`` measures
the verdicts against the full 64-bit sets.

The cut hashes are sorted and delta-encoded; the deltas of a random set are geometric, for
which a **Golomb-Rice** code is near-optimal: each delta ``d`` is its low ``k`` bits, packed,
then ``d >> k`` in unary, with ``k`` picked per set (the cheapest of three around
``log2(mean d)``). That is ~12.3 bits per hash for a 100-word document, with no per-set
tables: 5 header bytes where pcodec (format 1) spent ~40. Encoding and decoding run over a
whole batch in one kernel call (:func:`neardup.sketch.sets.rice_sets`, ``rice_decode``:
native, with a bit-identical numpy twin); ``benchmarks/store_bench.py`` measures the code
against pcodec and zstandard.

Formats (little-endian):

* set, version 2: ``b"S" 0x02 w:u8 k:u8`` then ``n`` as a LEB128 varint, then one bit
  string padded with zeros to whole bytes: the ``n`` low parts (``k`` bits each, most
  significant first), then the ``n`` unary high parts (``d >> k`` zeros and a one);
* set, version 1 (read only, stores written before): ``b"S" 0x01 w:u8 n:u32`` then the
  pcodec bytes of the ``n`` ``u32`` deltas;
* MinHash row: ``b"M" 0x01 k:u16`` then ``k`` ``u32`` slots (each 64-bit slot folded to 32
  bits by xor of its halves; two slots agree by chance with probability ``2**-32``).

Decoding checks every field and raises :class:`~neardup.errors.FormatError` on anything
inconsistent, so a similarity is always in [0, 1].

Examples:
    >>> import numpy as np
    >>> a = np.array([1 << 60, 2 << 60, 3 << 60], np.uint64)
    >>> b = np.array([1 << 60, 2 << 60, 9 << 60], np.uint64)
    >>> blobs = encode_sets(np.concatenate([a, b]), np.array([0, 3, 6]))
    >>> set_similarity(decode_set(blobs[0]), decode_set(blobs[1]))
    0.5
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from neardup.errors import FormatError
from neardup.sketch.sets import rice_decode, rice_sets, rice_sets32

__all__ = [
    "MARGIN_BITS",
    "MAX_WIDTH",
    "PackedBlobs",
    "StoredSet",
    "decode_row",
    "decode_set",
    "encode_rows",
    "encode_sets",
    "encode_sets_packed",
    "row_similarity",
    "set_similarities",
    "set_similarity",
    "set_width",
]

MARGIN_BITS = 10
"""Bits beyond ``log2(n)`` that each stored hash keeps (the chance-match bound above)."""
MAX_WIDTH = 32
"""The widest a stored hash gets (``u32`` deltas)."""

_SET_HEAD = struct.Struct("<2sBI")
_ROW_HEAD = struct.Struct("<2sH")
_SET_TAG = b"S\x01"
_RICE_TAG = b"S\x02"
_ROW_TAG = b"M\x01"

U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class StoredSet:
    """A decoded set: sorted unique hashes of ``width`` bits each."""

    values: npt.NDArray[np.uint32]
    width: int


def set_width(n: int) -> int:
    """The stored width of a set of ``n`` distinct hashes.

    Examples:
        >>> set_width(0), set_width(96), set_width(1000), set_width(10**9)
        (10, 17, 20, 32)
    """
    bits = int(n - 1).bit_length() if n > 1 else 0
    return min(MAX_WIDTH, bits + MARGIN_BITS)


@functools.cache
def _pcodec() -> tuple[object, object]:
    from pcodec import ChunkConfig, DeltaSpec, ModeSpec, standalone

    config = ChunkConfig(
        compression_level=0, delta_spec=DeltaSpec.no_op(), mode_spec=ModeSpec.classic()
    )
    return standalone, config


def _read_varint(blob: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while at < len(blob) and shift <= 35:
        byte = blob[at]
        value |= (byte & 0x7F) << shift
        at += 1
        if not byte & 0x80:
            return value, at
        shift += 7
    raise FormatError("a stored shingle set has a bad length field; rebuild the store")


@dataclass(frozen=True, slots=True)
class PackedBlobs:
    """Byte strings kept in one buffer: string ``i`` is ``data[starts[i]:starts[i + 1]]``.

    A batch's blobs as a store writes them (no ``bytes`` object per document: the store
    packs its rows from the buffer); iterating or indexing makes the strings.

    Examples:
        >>> p = PackedBlobs.concat([PackedBlobs.of([b"ab", b""]), PackedBlobs.of([b"c"])])
        >>> len(p), list(p), p[2], p.size
        (3, [b'ab', b'', b'c'], b'c', 3)
    """

    data: bytes | bytearray | memoryview  # (a memoryview of bytes: a store's gathered group)
    starts: I64  # n + 1 non-decreasing offsets into data

    @classmethod
    def of(cls, blobs: Sequence[bytes]) -> PackedBlobs:
        """Pack byte strings."""
        starts = np.zeros(len(blobs) + 1, dtype=np.int64)
        np.cumsum(np.fromiter(map(len, blobs), np.int64, count=len(blobs)), out=starts[1:])
        return cls(b"".join(blobs), starts)

    @classmethod
    def concat(cls, parts: Sequence[PackedBlobs]) -> PackedBlobs:
        """One buffer of several, in order."""
        if len(parts) == 1:
            return parts[0]
        shifted = [np.zeros(1, dtype=np.int64)]
        at = 0
        for part in parts:
            shifted.append(part.starts[1:] - part.starts[0] + at)
            at += part.size
        return cls(
            b"".join(p.data[int(p.starts[0]) : int(p.starts[-1])] for p in parts),
            np.concatenate(shifted),
        )

    @property
    def size(self) -> int:
        """The strings' bytes in all."""
        return int(self.starts[-1] - self.starts[0])

    def __len__(self) -> int:
        return len(self.starts) - 1

    def __getitem__(self, i: int) -> bytes:
        if not -len(self) <= i < len(self):
            raise IndexError("PackedBlobs index out of range")
        i %= len(self)
        return bytes(self.data[int(self.starts[i]) : int(self.starts[i + 1])])

    def __iter__(self) -> Iterator[bytes]:
        data, at = self.data, self.starts.tolist()
        if isinstance(data, bytes):
            return (data[at[i] : at[i + 1]] for i in range(len(at) - 1))
        return (bytes(data[at[i] : at[i + 1]]) for i in range(len(at) - 1))


def encode_sets(values: U64, offsets: I64) -> list[bytes]:
    """Encode each document's sorted unique 64-bit hashes (CSR ``values``/``offsets``).

    Args:
        values: Every document's sorted, de-duplicated hashes, one after the other.
        offsets: ``n_docs + 1`` boundaries into ``values``.

    Returns:
        One blob per document (format version 2, see the module docstring).
    """
    return list(encode_sets_packed(values, offsets))


def encode_sets_packed(
    values: U64 | npt.NDArray[np.uint32], offsets: I64, *, top_halves: bool = False
) -> PackedBlobs:
    """:func:`encode_sets` in one buffer (what a store writes); ``top_halves``: ``values``
    are 32-bit, the top halves of the hashes (``values << 32`` encoded, without that copy;
    the blobs keep at most the top 32 bits anyway)."""
    o = np.asarray(offsets, dtype=np.int64)
    if top_halves:
        buffer, starts = rice_sets32(np.asarray(values, dtype=np.uint32), o, MARGIN_BITS, MAX_WIDTH)
    else:
        buffer, starts = rice_sets(np.asarray(values, dtype=np.uint64), o, MARGIN_BITS, MAX_WIDTH)
    return PackedBlobs(buffer.tobytes(), starts)


def decode_set(blob: bytes) -> StoredSet:
    """Decode and check a set blob of :func:`encode_sets` (either format version).

    Raises:
        FormatError: the blob is not a well-formed set.
    """
    if blob[:2] == _RICE_TAG:
        return _decode_rice(blob)
    return _decode_pcodec(blob)


def _decode_rice(blob: bytes) -> StoredSet:
    return decode_sets([blob])[0]


def _rice_head(blob: bytes) -> tuple[int, int, int, int]:
    """(width, k, n, body offset) of a format-2 blob, checked."""
    if len(blob) < 5:
        raise FormatError("a stored shingle set is truncated; rebuild the store")
    width, k = blob[2], blob[3]
    if not MARGIN_BITS <= width <= MAX_WIDTH or k >= MAX_WIDTH:
        raise FormatError("a stored shingle set has an unknown header; rebuild the store")
    n, at = _read_varint(blob, 4)
    body = len(blob) - at
    if n == 0 and body:
        raise FormatError("a stored empty shingle set has trailing bytes; rebuild the store")
    if n > (1 << width) or n * (k + 1) > 8 * body:
        raise FormatError("a stored shingle set claims more values than it can hold")
    return width, k, n, at


def decode_sets(blobs: Sequence[bytes]) -> list[StoredSet]:
    """Decode and check many set blobs at once (format 2 in one vectorized pass).

    Raises:
        FormatError: a blob is not a well-formed set.
    """
    out: list[StoredSet | None] = [None] * len(blobs)
    rice: list[int] = []
    heads: list[tuple[int, int, int, int]] = []
    for i, blob in enumerate(blobs):
        if blob[:2] == _RICE_TAG:
            rice.append(i)
            heads.append(_rice_head(blob))
        else:
            out[i] = _decode_pcodec(blob)
    if rice:
        for i, stored in zip(rice, _decode_rice_many([blobs[i] for i in rice], heads), strict=True):
            out[i] = stored
    return [s for s in out if s is not None]


def _decode_rice_many(
    blobs: list[bytes], heads: list[tuple[int, int, int, int]]
) -> list[StoredSet]:
    width, k, n, at = (np.array(col, dtype=np.int64) for col in zip(*heads, strict=True))
    bodies = [blob[a:] for blob, a in zip(blobs, at.tolist(), strict=True)]
    starts = np.zeros(len(blobs) + 1, dtype=np.int64)
    np.cumsum([len(b) for b in bodies], out=starts[1:])
    body = np.frombuffer(b"".join(bodies), dtype=np.uint8)
    deltas, ok = rice_decode(body, starts, n, k)
    if not bool(ok.all()):
        raise FormatError("a stored shingle set has a damaged bit string; rebuild it")
    first = np.zeros(len(blobs) + 1, dtype=np.int64)
    np.cumsum(n, out=first[1:])
    blob_of = np.repeat(np.arange(len(blobs)), n)
    is_first = np.zeros(len(deltas), dtype=bool)
    has_values = n > 0
    is_first[first[:-1][has_values]] = True
    sums = np.cumsum(deltas, dtype=np.uint64)
    base = np.zeros(len(blobs), dtype=np.uint64)
    heads_at = first[:-1][has_values]
    base[has_values] = sums[heads_at] - deltas[heads_at]
    values = sums - base[blob_of]
    last = first[1:][has_values] - 1
    too_wide = values[last] >= (np.uint64(1) << width[has_values].astype(np.uint64))
    if bool(np.any(too_wide)) or bool(np.any((deltas == 0) & ~is_first)):
        raise FormatError("a stored shingle set is not sorted or too wide; rebuild it")
    cut = values.astype(np.uint32)
    bounds = first.tolist()
    return [StoredSet(cut[bounds[i] : bounds[i + 1]], int(w)) for i, w in enumerate(width.tolist())]


def _decode_pcodec(blob: bytes) -> StoredSet:
    if len(blob) < _SET_HEAD.size:
        raise FormatError("a stored shingle set is truncated; rebuild the store")
    tag, width, n = _SET_HEAD.unpack_from(blob)
    if tag != _SET_TAG or not MARGIN_BITS <= width <= MAX_WIDTH:
        raise FormatError("a stored shingle set has an unknown header; rebuild the store")
    if n == 0:
        if len(blob) != _SET_HEAD.size:
            raise FormatError("a stored empty shingle set has trailing bytes; rebuild the store")
        return StoredSet(np.zeros(0, dtype=np.uint32), width)
    if n > (1 << width) or n > 8 * len(blob):  # pcodec spends at least a bit per value
        raise FormatError("a stored shingle set claims more values than it can hold")
    standalone, _ = _pcodec()
    try:
        deltas = standalone.simple_decompress(blob[_SET_HEAD.size :])  # type: ignore[attr-defined]
    except Exception as exc:  # pcodec raises its own RuntimeError/ValueError kinds
        raise FormatError(f"a stored shingle set does not decode ({exc}); rebuild it") from exc
    if not isinstance(deltas, np.ndarray) or deltas.dtype != np.uint32 or deltas.shape != (n,):
        raise FormatError("a stored shingle set decodes to the wrong length; rebuild it")
    total = np.cumsum(deltas, dtype=np.uint64)
    if int(total[-1]) >= (1 << width) or (n > 1 and int(deltas[1:].min()) == 0):
        raise FormatError("a stored shingle set is not sorted or too wide; rebuild it")
    return StoredSet(total.astype(np.uint32), width)


def encode_sets_pcodec(values: U64, offsets: I64) -> list[bytes]:
    """Format 1 (pcodec), kept for reading old stores and for the codec benchmark."""
    standalone, config = _pcodec()
    vals = np.asarray(values, dtype=np.uint64)
    offs = np.asarray(offsets, dtype=np.int64)
    out: list[bytes] = []
    for i in range(len(offs) - 1):
        v = vals[offs[i] : offs[i + 1]]
        w = set_width(int(v.size))
        cut = np.unique((v >> np.uint64(64 - w)).astype(np.uint32))
        head = _SET_HEAD.pack(_SET_TAG, w, int(cut.size))
        if not cut.size:
            out.append(head)
            continue
        deltas = np.diff(cut, prepend=np.uint32(0)).astype(np.uint32)
        out.append(head + standalone.simple_compress(deltas, config))  # type: ignore[attr-defined]
    return out


def set_similarity(a: StoredSet, b: StoredSet) -> float:
    """Jaccard of two decoded sets, compared at the smaller width; in [0, 1].

    Examples:
        >>> s = StoredSet(np.array([1, 2, 3], np.uint32), 12)
        >>> set_similarity(s, s), set_similarity(s, StoredSet(np.zeros(0, np.uint32), 10))
        (1.0, 0.0)
    """
    width = min(a.width, b.width)
    x, y = _cut(a, width), _cut(b, width)
    if not x.size or not y.size:
        return 0.0
    if x.size > y.size:
        x, y = y, x
    at = np.searchsorted(y, x)
    at[at == y.size] = 0
    inter = int(np.count_nonzero(y[at] == x))
    union = int(x.size) + int(y.size) - inter
    return min(1.0, inter / union)


def _cut(s: StoredSet, width: int) -> npt.NDArray[np.uint32]:
    if s.width == width:
        return s.values
    cut = s.values >> np.uint32(s.width - width)
    if cut.size > 1:
        cut = cut[np.concatenate(([True], cut[1:] != cut[:-1]))]
    return cut


def encode_rows(sigs: U64) -> list[bytes]:
    """Encode MinHash rows (``(n, num_perm)`` uint64) with 32-bit folded slots."""
    rows = np.asarray(sigs, dtype=np.uint64)
    folded = ((rows ^ (rows >> np.uint64(32))) & np.uint64(0xFFFFFFFF)).astype("<u4")
    head = _ROW_HEAD.pack(_ROW_TAG, rows.shape[1] if rows.ndim == 2 else 0)
    return [head + row.tobytes() for row in folded]


def decode_row(blob: bytes, num_perm: int) -> npt.NDArray[np.uint32]:
    """Decode and check a row blob of :func:`encode_rows` with ``num_perm`` slots.

    Raises:
        FormatError: the blob is not a row of ``num_perm`` slots.
    """
    if len(blob) != _ROW_HEAD.size + 4 * num_perm:
        raise FormatError(f"a stored MinHash row is not {num_perm} slots; rebuild the store")
    tag, k = _ROW_HEAD.unpack_from(blob)
    if tag != _ROW_TAG or k != num_perm:
        raise FormatError("a stored MinHash row has an unknown header; rebuild the store")
    return np.frombuffer(blob, dtype="<u4", offset=_ROW_HEAD.size)


def row_similarity(a: npt.NDArray[np.uint32], b: npt.NDArray[np.uint32]) -> float:
    """The fraction of equal slots (the MinHash Jaccard estimate); in [0, 1]."""
    if a.shape != b.shape or not a.size:
        return 0.0
    return float(np.count_nonzero(a == b)) / a.size


def set_similarities(
    sets: Sequence[StoredSet], a: npt.NDArray[np.int64], b: npt.NDArray[np.int64]
) -> npt.NDArray[np.float64]:
    """:func:`set_similarity` of ``sets[a[k]]`` and ``sets[b[k]]`` for every ``k``, batched.

    Pairs whose widths differ by at most one bit (every pair that can reach a Jaccard of 0.5:
    ``J <= n_min / n_max``) go through one intersection kernel over all the sets; the rest
    one by one.

    Examples:
        >>> s = StoredSet(np.array([1, 2, 3], np.uint32), 12)
        >>> t = StoredSet(np.array([2, 3, 4, 5], np.uint32), 12)
        >>> set_similarities([s, t], np.array([0, 0]), np.array([1, 0])).tolist()
        [0.4, 1.0]
    """
    from neardup.sketch.sets import intersections

    n = len(sets)
    widths = np.array([s.width for s in sets], dtype=np.int64)
    wa, wb = widths[a], widths[b]
    close = np.abs(wa - wb) <= 1
    # the wider set of a close pair is read one bit narrower: cut only the sets that need it
    wide = np.unique(np.concatenate((a[close & (wa > wb)], b[close & (wb > wa)])))
    native = [s.values.astype(np.uint64) for s in sets]
    narrow = [_cut(sets[k], sets[k].width - 1).astype(np.uint64) for k in wide.tolist()]
    parts = native + narrow  # widths are >= 10
    sizes = np.array([p.size for p in parts], dtype=np.int64)
    offsets = np.zeros(len(parts) + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    values = np.concatenate(parts) if parts else np.zeros(0, np.uint64)
    slot = np.full(n, -1, dtype=np.int64)
    slot[wide] = n + np.arange(len(wide), dtype=np.int64)
    ia = np.where(wa > wb, slot[a], a)
    ib = np.where(wb > wa, slot[b], b)
    out = np.zeros(len(a), dtype=np.float64)
    if bool(close.any()):
        inter = intersections(values, offsets, ia[close], ib[close]).astype(np.float64)
        union = sizes[ia[close]] + sizes[ib[close]] - inter
        sims = np.divide(inter, union, out=np.zeros_like(inter), where=union > 0)
        out[close] = np.minimum(sims, 1.0)
    for k in np.flatnonzero(~close).tolist():
        out[k] = set_similarity(sets[int(a[k])], sets[int(b[k])])
    return out
