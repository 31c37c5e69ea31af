"""Documents packed :data:`SLOTS` (32) to a row: the ``chunks`` table of schema version 4 (private).

One SQLite row per document cost ~7 us to insert here (a table row and a key-index entry),
a third of a plain dedup's per-document cost. A chunk row instead holds the documents with
ids ``id * SLOTS .. id * SLOTS + n - 1`` (slot ``i`` = id ``id * SLOTS + i``): its ``data``
is a little-endian int32 ``(3, n)`` array of key, sketch and metadata lengths, then the keys'
UTF-8, the sketches and the metadata's UTF-8, each concatenated. A key length of -1 marks a
slot with no document (a gap, or a document dropped by compaction); a metadata length of -1
means no metadata. The row's checksum is xxh3-64 of its id and data, so a flipped byte in any
key or sketch is caught. A write batch starts at a fresh chunk, so chunks are never updated
by adds; document ids only grow.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from neardup.sketch.setcodec import PackedBlobs
from neardup.store._rows import id_checksum

__all__ = ["SLOTS", "Chunk", "chunk_checksum", "decode_chunk", "encode_chunks", "iter_chunks"]

SLOTS = 32
"""Documents per chunk row: rows of a few pages (smaller ones leave part of each page
empty: 16 took 354 bytes per document, 32 295), few enough for a candidate's read."""

_EMPTY = -1


chunk_checksum = id_checksum
"""xxh3-64 of the row id (8 bytes, little-endian) and its data, as a signed integer."""


@dataclass(frozen=True, slots=True)
class Chunk:
    """A checked chunk row; slots are decoded one at a time, as reads ask for them."""

    first: int  # the id of slot 0
    n: int
    data: bytes
    lens: list[int]  # key lengths, then sketch lengths, then metadata lengths (-1: none)
    starts: list[int]  # where each of those 3n fields starts in ``data``

    def filled(self, i: int) -> bool:
        """Whether slot ``i`` holds a document."""
        return 0 <= i < self.n and self.lens[i] >= 0

    def key(self, i: int) -> str:
        """The key of filled slot ``i``.

        Raises:
            ValueError: it is not UTF-8 (the checksum passed: written so by hand).
        """
        try:
            return self.data[self.starts[i] : self.starts[i] + self.lens[i]].decode("utf-8")
        except UnicodeDecodeError:
            raise ValueError(
                f"a key in document chunk {self.first // SLOTS} is not UTF-8"
            ) from None

    def sketch(self, i: int) -> bytes:
        """The sketch of filled slot ``i``."""
        at = self.starts[self.n + i]
        return self.data[at : at + self.lens[self.n + i]]

    def meta(self, i: int) -> str | None:
        """The metadata of filled slot ``i`` (None: none)."""
        size = self.lens[2 * self.n + i]
        if size < 0:
            return None
        at = self.starts[2 * self.n + i]
        try:
            return self.data[at : at + size].decode("utf-8")
        except UnicodeDecodeError:
            raise ValueError(
                f"metadata in document chunk {self.first // SLOTS} is not UTF-8"
            ) from None

    def documents(self) -> list[tuple[int, str, bytes, str | None]]:
        """Every filled slot as ``(id, key, sketch, meta)``."""
        return [
            (self.first + i, self.key(i), self.sketch(i), self.meta(i))
            for i in range(self.n)
            if self.lens[i] >= 0
        ]


def encode_chunks(
    first_chunk: int,
    keys: Sequence[bytes] | PackedBlobs,
    sketches: Sequence[bytes] | PackedBlobs,
    meta: Sequence[str | None] | None,
    added: int,
) -> list[tuple[int, int, int, bytearray, int]]:
    """Pack documents given ids from ``first_chunk * SLOTS`` on into ``chunks`` rows
    ``(id, n, added, data, checksum)``.

    Each field is gathered into one buffer first (the keys and sketches may come so
    already), and each row is joined from slices of the buffers: no Python work per
    document.

    Examples:
        >>> rows = encode_chunks(1, [b"a", b"b"], [b"A", b"BB"], None, 0)
        >>> [(r[0], r[1]) for r in rows], decode_chunk(rows[0][0], rows[0][1], rows[0][3]).key(1)
        ([(1, 2)], 'b')
    """
    return list(iter_chunks(first_chunk, keys, sketches, meta, added))


def iter_chunks(
    first_chunk: int,
    keys: Sequence[bytes] | PackedBlobs,
    sketches: Sequence[bytes] | PackedBlobs,
    meta: Sequence[str | None] | None,
    added: int,
) -> Iterator[tuple[int, int, int, bytearray, int]]:
    """:func:`encode_chunks` one row at a time, as ``executemany`` takes them: a write holds
    one row, not all of them (a 65,536-document write's rows are ~12 MB)."""
    n = len(keys)
    if not n:
        return
    packed = sketches if isinstance(sketches, PackedBlobs) else PackedBlobs.of(sketches)
    names = keys if isinstance(keys, PackedBlobs) else PackedBlobs.of(keys)
    lens = np.empty((3, n), dtype="<i4")
    lens[0] = np.diff(names.starts)
    lens[1] = np.diff(packed.starts)
    notes = PackedBlobs.of([])
    if meta is None:
        lens[2] = _EMPTY
    else:
        raw = [b"" if m is None else m.encode("utf-8") for m in meta]
        notes = PackedBlobs.of(raw)
        lens[2] = [_EMPTY if m is None else len(b) for m, b in zip(meta, raw, strict=True)]
    bounds = np.minimum(np.arange(0, n + SLOTS, SLOTS, dtype=np.int64), n)
    if bounds[-2] == n:  # n a multiple of SLOTS: one bound too many
        bounds = bounds[:-1]
    fields = [  # (buffer, where each chunk's part starts), in row order after the header
        (memoryview(names.data), names.starts[bounds].tolist()),
        (memoryview(packed.data), packed.starts[bounds].tolist()),
        (
            memoryview(notes.data),
            (notes.starts[bounds] if meta is not None else bounds * 0).tolist(),
        ),
    ]
    full = n // SLOTS  # the full chunks' headers in one buffer, 12 * SLOTS bytes each
    heads = memoryview(
        np.ascontiguousarray(
            lens[:, : full * SLOTS].reshape(3, full, SLOTS).transpose(1, 0, 2)
        ).tobytes()
    )
    size = 12 * SLOTS
    for c in range(len(bounds) - 1):
        lo, hi = int(bounds[c]), int(bounds[c + 1])
        head = heads[c * size : (c + 1) * size] if c < full else lens[:, lo:hi].copy().tobytes()
        cid = first_chunk + c
        # bytearray: sqlite3 binds it as it is (a bytes parameter goes through its adapters)
        data = bytearray().join((head, *(buf[at[c] : at[c + 1]] for buf, at in fields)))
        yield cid, hi - lo, added, data, chunk_checksum(cid, data)


def encode_slots(
    chunk_id: int, slots: Sequence[tuple[str, bytes, str | None] | None], added: int
) -> tuple[int, int, int, bytes, int]:
    """One chunk row from per-slot documents (None: an empty slot); for migration and
    compaction, which rewrite chunks with gaps."""
    n = len(slots)
    lens = np.full((3, n), _EMPTY, dtype="<i4")
    keys: list[bytes] = []
    sketches: list[bytes] = []
    notes: list[bytes] = []
    for i, slot in enumerate(slots):
        if slot is None:
            lens[1, i] = 0
            continue
        key, sketch, note = slot
        raw = key.encode("utf-8")
        keys.append(raw)
        sketches.append(sketch)
        lens[0, i], lens[1, i] = len(raw), len(sketch)
        if note is not None:
            notes.append(note.encode("utf-8"))
            lens[2, i] = len(notes[-1])
    data = b"".join((lens.tobytes(), *keys, *sketches, *notes))
    return chunk_id, n, added, data, chunk_checksum(chunk_id, data)


def decode_chunk(chunk_id: int, n: int, data: bytes) -> Chunk:
    """Check a chunk row's lengths (its checksum already checked) and index its fields.

    Raises:
        ValueError: the lengths do not add up to the data (a damaged row).
    """
    if not 1 <= n <= SLOTS or len(data) < 12 * n:
        raise ValueError(f"document chunk {chunk_id} has a bad slot count or header")
    lens = np.frombuffer(data, dtype="<i4", count=3 * n).astype(np.int64)
    if bool((lens < _EMPTY).any()) or bool((lens[n : 2 * n] < 0).any()):
        raise ValueError(f"document chunk {chunk_id} has a negative length")
    sizes = np.maximum(lens, 0)
    ends = 12 * n + np.cumsum(sizes)
    if int(ends[-1]) != len(data):
        raise ValueError(f"document chunk {chunk_id}'s lengths do not match its data")
    return Chunk(chunk_id * SLOTS, n, data, lens.tolist(), (ends - sizes).tolist())
