"""Documents as one UTF-8 buffer plus offsets: the one packed type, made from texts or read
straight from JSON lines.

:class:`PackedDocs` is a batch of text documents that the sketchers and every batch kernel
take as it is (no Python string per document); it is also a ``Sequence[Document]``, whose
items are made only when asked for. :func:`pack` packs Python texts; :func:`read_jsonl_packed`
fills such batches from a JSONL file with the native scanner (``neardup._native.jsonl``, as
``engine.kernels("jsonl")`` picks it) and hands every line that scanner does not take to
``json.loads``, so each line is read exactly as :func:`neardup.io.read_jsonl` reads it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from itertools import islice
from pathlib import Path
from typing import Any, overload

import numpy as np
import numpy.typing as npt

from neardup.errors import DecodeError, InputError, InputTooLargeError
from neardup.io import DEFAULT_MAX_LINE_BYTES, Document, jsonl_record

__all__ = [
    "PackedBatches",
    "PackedDocs",
    "PackedIds",
    "encode_text",
    "pack",
    "read_jsonl_packed",
    "read_jsonl_packed_lines",
]

U8 = npt.NDArray[np.uint8]
I64 = npt.NDArray[np.int64]

#: Bytes read from the file at a time (each chunk's scan takes about four times this, which
#: is most of a short run's peak memory: 1 MiB instead of 2 MiB took a 19.6 MB JSONL run from
#: 74 to 61 MB of peak RSS at the same CPU time; 256 KiB instead of 1 MiB took 100k planted
#: documents from 119 to 114 MB (--jobs 2: 134 to 126 MB), CPU time unchanged,
#: benchmarks/RESULTS.md).
CHUNK_BYTES = 1 << 18
#: A regular file of at least this size is read in chunks of :data:`BIG_CHUNK_BYTES`.
BIG_FILE_BYTES = 1 << 27
#: The chunks of a big file: 4x fewer jobs, each with its own read, scan, batch, sketch, copy
#: and hand-offs between threads (at 1M planted documents, 827 MB, the collection took
#: 5.1-5.5 -> 4.2-4.5 CPU-s with ``--jobs 2``, 4.7-5.3 -> 3.9-4.3 with ``--jobs 1``), for
#: ~10 MB more peak memory in a run whose collector holds ~700 (benchmarks/RESULTS.md).
BIG_CHUNK_BYTES = 1 << 20


def _chunk_bytes(size: int) -> int:
    """The chunk size a regular file of ``size`` bytes is read in."""
    return BIG_CHUNK_BYTES if size >= BIG_FILE_BYTES else CHUNK_BYTES


class PackedIds(Sequence[str]):
    """A batch's ids as their UTF-8 bytes: one buffer and ``n + 1`` offsets, made into
    strings only when read. A run keeps the ids of its packed batches so until its bucket
    walk is done (:meth:`PackedDocs.id_source`): 100k short ids as ``str`` objects in a list
    take ~6 MB, which the walk's peak memory then does not hold.

    Examples:
        >>> ids = PackedIds(b"ab\\xc3\\xa7", np.array([0, 2, 4]))
        >>> len(ids), ids[1], list(ids)
        (2, 'ç', ['ab', 'ç'])
    """

    __slots__ = ("_made", "_offsets", "buf")

    def __init__(self, buf: bytes, offsets: npt.NDArray[np.integer[Any]]) -> None:
        self.buf = buf
        # 32-bit while kept (a batch's ids are far below 2 GiB): 4 bytes an id less
        self._offsets = np.asarray(offsets, dtype=np.int32)
        self._made: list[str] | None = None

    def __reduce__(self) -> tuple[type[PackedIds], tuple[bytes, I64]]:
        return (PackedIds, (self.buf, self.offsets))

    @property
    def offsets(self) -> I64:
        """The ``n + 1`` offsets of the ids in :attr:`buf`."""
        return self._offsets.astype(np.int64)

    def __len__(self) -> int:
        return len(self._offsets) - 1

    def lengths(self) -> npt.NDArray[np.int32]:
        """The ids' lengths in bytes."""
        return np.diff(self._offsets)

    @property
    def made(self) -> bool:
        """Whether the strings were made already (and kept)."""
        return self._made is not None

    def strings(self, *, keep: bool = True) -> list[str]:
        """The ids as strings; with ``keep`` they are kept for the next call."""
        if self._made is not None:
            return self._made
        from neardup._kernels import engine

        n = len(self)
        made: list[str] = engine.kernels("jsonl").row_ids(
            np.frombuffer(self.buf, np.uint8),
            self.offsets,
            np.ones(n, np.uint8),
            np.arange(n, dtype=np.int64),
            first_line=0,
        )
        if keep:
            self._made = made
        return made

    def hashes(self) -> npt.NDArray[np.uint64]:
        """What ``idset.hash_ids`` gives for these ids, with no string made."""
        from neardup._kernels import engine

        out: npt.NDArray[np.uint64] = engine.kernels("idset").hash_packed_ids(
            np.frombuffer(self.buf, np.uint8), self.offsets
        )
        return out

    @overload
    def __getitem__(self, k: int) -> str: ...
    @overload
    def __getitem__(self, k: slice) -> list[str]: ...
    def __getitem__(self, k: int | slice) -> str | list[str]:
        return self.strings()[k]

    def __iter__(self) -> Iterator[str]:
        return iter(self.strings())


class PackedDocs(Sequence[Document]):
    """A batch of text documents: one UTF-8 buffer, ``n + 1`` offsets and the ids.

    The one packed-documents type: what :func:`pack` makes, the readers fill
    (:func:`read_jsonl_packed`) and every batch kernel takes (document ``d`` is
    ``buf[offsets[d]:offsets[d + 1]]``). It is also a ``Sequence[Document]`` whose items are
    made only when asked for. Without ``ids`` the documents are numbered ``"0"``, ``"1"``, ...
    Immutable, as the arrays are shared between batches and kernels.

    Examples:
        >>> buf = np.frombuffer(b"hi\\xc3\\xa7", np.uint8)
        >>> p = PackedDocs(buf, np.array([0, 2, 4]), ["a", "b"])
        >>> len(p), p[1].text, p.texts()
        (2, 'ç', ['hi', 'ç'])
    """

    __slots__ = ("_ids", "buf", "offsets")

    buf: U8
    offsets: I64
    _ids: Sequence[str] | None

    def __init__(self, buf: U8, offsets: I64, ids: Sequence[str] | None = None) -> None:
        if not isinstance(buf, np.ndarray):
            raise InputError(
                f"PackedDocs takes (buf, offsets, ids), got a {type(buf).__name__} for buf; "
                "pass the uint8 buffer first and the ids last"
            )
        object.__setattr__(self, "buf", buf)
        object.__setattr__(self, "offsets", offsets)
        object.__setattr__(self, "_ids", ids)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"PackedDocs is immutable; cannot set {name!r}")

    def __reduce__(self) -> tuple[type[PackedDocs], tuple[U8, I64, Sequence[str] | None]]:
        return (PackedDocs, (self.buf, self.offsets, self._ids))

    @property
    def ids(self) -> Sequence[str]:
        """The document ids (``"0"``, ``"1"``, ... when none were given)."""
        if self._ids is None:
            return [str(k) for k in range(self.n_docs)]
        if isinstance(self._ids, PackedIds):
            return self._ids.strings()
        return self._ids

    def id_source(self) -> Sequence[str]:
        """The ids as the batch holds them: :class:`PackedIds` (bytes until read) for the
        lines of a JSONL file, else what :attr:`ids` gives."""
        return self._ids if isinstance(self._ids, PackedIds) else self.ids

    @property
    def n_docs(self) -> int:
        """Number of documents in the batch."""
        return len(self.offsets) - 1

    def __len__(self) -> int:
        return self.n_docs

    def text(self, k: int) -> str:
        """The text of document ``k``."""
        return (
            self.buf[self.offsets[k] : self.offsets[k + 1]]
            .tobytes()
            .decode("utf-8", "surrogatepass")
        )

    def texts(self) -> list[str]:
        """The documents decoded, one ``str`` each (``surrogatepass``, as :func:`pack` wrote
        lone surrogates): the inverse of :func:`pack`.

        Examples:
            >>> pack(["ab", "", "ç"]).texts()
            ['ab', '', 'ç']
        """
        raw = self.buf.tobytes()
        o = self.offsets.tolist()
        return [raw[o[k] : o[k + 1]].decode("utf-8", "surrogatepass") for k in range(len(o) - 1)]

    @overload
    def __getitem__(self, k: int) -> Document: ...
    @overload
    def __getitem__(self, k: slice) -> list[Document]: ...
    def __getitem__(self, k: int | slice) -> Document | list[Document]:
        if isinstance(k, slice):
            return [self[i] for i in range(*k.indices(len(self)))]
        if k < 0:
            k += len(self)
        if not 0 <= k < len(self):
            raise IndexError("document index out of range")
        return Document(self.ids[k], self.text(k))

    def __iter__(self) -> Iterator[Document]:
        ids = self.ids
        for k, text in enumerate(self.texts()):
            yield Document(ids[k], text)


def encode_text(doc: str | bytes, index: int = 0) -> bytes:
    """Return the UTF-8 bytes of one document, validating ``bytes`` input.

    ``str`` is encoded with ``surrogatepass`` so that lone surrogates never raise; they decode
    to code points of category Cs, which no tokenizer counts as word characters.

    Raises:
        DecodeError: ``bytes`` that are not valid UTF-8.
        InputError: anything that is neither ``str`` nor ``bytes``.
    """
    if isinstance(doc, str):
        return doc.encode("utf-8", "surrogatepass")
    if isinstance(doc, bytes | bytearray | memoryview):
        data = bytes(doc)
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DecodeError(
                f"document {index} is not valid UTF-8 (byte {exc.start}: {exc.reason}); "
                "decode it yourself with the right encoding and pass a str"
            ) from None
        return data
    raise InputError(
        f"document {index} is a {type(doc).__name__}, not str or bytes; "
        "pass text as str (or UTF-8 bytes)"
    )


def pack(docs: Sequence[str | bytes], *, writable: bool = False) -> PackedDocs:
    """Pack documents into one buffer plus offsets.

    ``writable=True`` joins into a ``bytearray``, so the buffer is a writable array (the type
    a kernel's own output has) at no extra copy; otherwise it is a read-only view of ``bytes``.

    Examples:
        >>> p = pack(["ab", "", "ç"])
        >>> p.offsets.tolist(), p.buf.tobytes()
        ([0, 2, 2, 4], b'ab\\xc3\\xa7')
    """
    encoded = [encode_text(d, i) for i, d in enumerate(docs)]
    lengths = np.fromiter((len(e) for e in encoded), dtype=np.int64, count=len(encoded))
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    joined = (bytearray() if writable else b"").join(encoded)
    buf = np.frombuffer(joined, dtype=np.uint8)
    return PackedDocs(buf, offsets)


@dataclass(frozen=True, slots=True)
class PackedBatches:
    """A JSONL file read as :class:`PackedDocs` batches (what :func:`neardup.dedup` takes in
    place of a stream of documents, so the texts never become Python strings).

    Attributes:
        path: The JSONL file.
        id_field: The id field (the line number when a record has none).
        text_field: The text field.
        batch_size: Documents per batch (at most).
        max_line_bytes: Longest line accepted.
        id_required: The id field was named (``--id-field``): a record without it, or with
            a null id, is refused (as every other reader refuses it), never numbered.
        tee: Given every piece of the file as :meth:`scans` reads it, in order (the bytes
            up to a newline; a missing last newline added), so that a caller can keep a copy
            of what was read instead of reading the file again.
    """

    path: Path
    id_field: str = "id"
    text_field: str = "text"
    batch_size: int = 2048
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
    id_required: bool = False
    tee: Callable[[memoryview], None] | None = field(default=None, compare=False)

    def __iter__(self) -> Iterator[PackedDocs]:
        check = self.id_check()
        for scan in self.scans():
            for batch in scan():
                check(batch.ids, None)
                yield batch

    def scans(self) -> Iterator[Callable[[], list[PackedDocs]]]:
        """The file as jobs, in order, one per chunk of about :data:`CHUNK_BYTES` (a regular
        file of :data:`BIG_FILE_BYTES` or more: :data:`BIG_CHUNK_BYTES`): each job
        scans its chunk (the JSON decoding, most of the reading's time) and returns its batches;
        a job raises the chunk's :class:`InputError`. A regular file's jobs also read their
        chunk themselves (:class:`~neardup._file_blocks.FileBlocks`), so this iterator does
        not touch the bytes; every job must then run, each after the one before it has
        started (in order, or from one queue on several threads: the scanner releases the
        GIL). Other inputs (a pipe, or with ``tee``) are read by this iterator. The batches'
        ids are not checked yet: pass each batch's ids, in order, to one :meth:`id_check`.

        Examples:
            >>> import tempfile
            >>> p = Path(tempfile.mkdtemp()) / "a.jsonl"
            >>> _ = p.write_text('{"id": "x", "text": "hi"}\\n{"id": "y", "text": "yo"}\\n')
            >>> [b.ids for scan in PackedBatches(p).scans() for b in scan()]
            [['x', 'y']]
        """
        blocks = None
        if self.tee is None:
            from neardup._file_blocks import FileBlocks

            blocks = FileBlocks.open(self.path, _chunk_bytes, self.max_line_bytes)
        if blocks is not None:  # a regular file: each job reads its own block
            scan = _chunk_scanner(
                self.path,
                self.id_field,
                self.text_field,
                self.batch_size,
                self.max_line_bytes,
                self.id_required,
            )
            for job in blocks.jobs(scan):
                yield partial(_docs_only, job)
            return
        for part in _scans(
            self.path,
            self.id_field,
            self.text_field,
            self.batch_size,
            self.max_line_bytes,
            False,
            self.id_required,
            self.tee,
        ):
            yield partial(_docs_only, part)

    @staticmethod
    def id_hashes(ids: Sequence[str]) -> npt.NDArray[np.uint64]:
        """The hashes of a batch's ids that :meth:`id_check` keeps: made on any thread, they
        spare the check its hashing."""
        from neardup._kernels import engine

        if isinstance(ids, PackedIds):
            return ids.hashes()
        hashes: npt.NDArray[np.uint64] = engine.kernels("idset").hash_ids(ids)
        return hashes

    def id_check(self) -> Callable[[Sequence[str], npt.NDArray[np.uint64] | None], None]:
        """A check of the ids of this file's batches, given in order (each with its
        :meth:`id_hashes`, or ``None``): it raises :class:`InputError` at the first id seen
        before (naming both its places).

        The ids are kept as their 64-bit hashes (``neardup._kernels.idset``), not as a set
        of strings: about half the CPU (95 against 180 ns per new id) and half the table
        (9 against 16 bytes a slot). A hash seen again is looked up
        among the ids read before, as strings: the same id is a repeat; another one (a
        64-bit collision) switches the check to a set of the id strings from there on.
        """
        from neardup._kernels import engine

        hashed = engine.kernels("idset").IdSet()
        read = [0]  # ids checked so far
        exact: list[set[str]] = []  # the ids as strings, once a collision was met

        def check(ids: Sequence[str], hashes: npt.NDArray[np.uint64] | None = None) -> None:
            if exact:
                self._check(exact[0], ids)
                return
            k = hashed.add(ids) if hashes is None else hashed.add_hashes(hashes)
            n = read[0]
            if k < 0:
                read[0] = n + len(ids)
                return
            seen = set(islice((d for b in self._read() for d in b.ids), n))
            seen.update(ids[:k])
            if ids[k] in seen:
                self._repeated(seen, ids[k:], n + k)
            exact.append(seen)  # two ids share a hash: compare strings from here on
            self._check(seen, ids[k:])

        return check

    def with_lines(self) -> Iterator[tuple[PackedDocs, list[bytes], I64]]:
        """The batches with their records' raw lines and text spans, as
        :func:`read_jsonl_packed_lines` gives them; ids checked as :meth:`__iter__` does."""
        check = self.id_check()
        for batch, lines, spans in read_jsonl_packed_lines(
            self.path,
            id_field=self.id_field,
            text_field=self.text_field,
            batch_size=self.batch_size,
            max_line_bytes=self.max_line_bytes,
            id_required=self.id_required,
        ):
            check(batch.ids, None)
            yield batch, lines, spans

    def _check(self, seen: set[str], ids: Sequence[str]) -> None:
        """Add a batch's ids to ``seen``, or raise on the first one already there."""
        n = len(seen)
        if seen.isdisjoint(ids):  # the common case, at C speed
            seen.update(ids)
            if len(seen) == n + len(ids):
                return
            seen.difference_update(ids)  # the batch repeats one of its own ids
        self._repeated(seen, ids, n)

    def _read(self) -> Iterator[PackedDocs]:
        return read_jsonl_packed(
            self.path,
            id_field=self.id_field,
            text_field=self.text_field,
            batch_size=self.batch_size,
            max_line_bytes=self.max_line_bytes,
            id_required=self.id_required,
        )

    def _repeated(self, seen: set[str], ids: Sequence[str], n: int) -> None:
        """Name the first repeated id of a batch and both its places (documents numbered from
        1; the first place is found by reading the file again)."""
        here: set[str] = set()
        for k, doc_id in enumerate(ids):
            if doc_id in seen or doc_id in here:
                first = 1 + next(
                    i for i, d in enumerate(d for b in self._read() for d in b.ids) if d == doc_id
                )
                raise InputError(
                    f"duplicate id {doc_id!r}: read from {self.path} (document {first}) "
                    f"and again (document {n + k + 1}); ids must be unique (fix the data, "
                    "or pick another field with --id-field)"
                )
            here.add(doc_id)
        raise AssertionError("no repeated id")  # pragma: no cover - the caller saw one


def _chunks(
    path: Path, max_line: int, lines: list[int], tee: Callable[[memoryview], None] | None = None
) -> Iterator[tuple[bytes, int]]:
    """Pieces of the file that end at a newline (one is added at the end if missing): each a
    buffer and how many of its bytes are the piece (the rest starts the next one; the buffer
    is not cut, which would copy it). ``lines[0]`` is kept by the caller: the lines of the
    pieces it was given (it names a line that is too long)."""
    try:
        fh = path.open("rb")
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from exc
    with fh:
        rest = b""
        # a file that can seek reads its last partial line again with the next block, so
        # that the block is yielded as it was read (``rest + block`` would copy it)
        seekable = fh.seekable()
        while True:
            try:
                block = fh.read(CHUNK_BYTES)
            except OSError as exc:
                raise InputError(f"cannot read {path}: {exc.strerror or exc}") from exc
            if not block:
                if rest:
                    if tee is not None:
                        tee(memoryview(rest + b"\n"))
                    yield rest + b"\n", len(rest) + 1
                return
            data = rest + block
            cut = data.rfind(b"\n") + 1
            if cut == 0:
                if len(data) > max_line:
                    n = lines[0] + 1
                    raise InputTooLargeError(
                        f"{path}:{n}: line longer than {max_line} bytes; split the record"
                    )
                rest = data
                continue
            if tee is not None:
                tee(memoryview(data)[:cut])
            yield data, cut
            if seekable and cut < len(data):
                fh.seek(cut - len(data), os.SEEK_CUR)
                rest = b""
            else:
                rest = data[cut:]


def read_jsonl_packed(
    path: str | Path,
    *,
    id_field: str = "id",
    text_field: str = "text",
    batch_size: int = 2048,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    id_required: bool = False,
) -> Iterator[PackedDocs]:
    """Read a JSONL file as :class:`PackedDocs` batches, the same documents (ids, texts, order,
    errors) as :func:`neardup.io.read_jsonl` gives.

    Raises:
        InputError: a line is not JSON, not an object, or lacks ``text_field``; the message
            names the file and line.
        InputTooLargeError: a line is longer than ``max_line_bytes``.

    Examples:
        >>> import tempfile
        >>> p = Path(tempfile.mkdtemp()) / "a.jsonl"
        >>> _ = p.write_text('{"id": 7, "text": "hi"}\\n\\n{"text": "yo\\\\u00e9"}\\n')
        >>> [(d.id, d.text) for b in read_jsonl_packed(p) for d in b]
        [('7', 'hi'), ('3', 'yoé')]
    """
    for docs, _, _ in _read_packed(
        Path(path), id_field, text_field, batch_size, max_line_bytes, False, id_required
    ):
        yield docs


def read_jsonl_packed_lines(
    path: str | Path,
    *,
    id_field: str = "id",
    text_field: str = "text",
    batch_size: int = 2048,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    id_required: bool = False,
) -> Iterator[tuple[PackedDocs, list[bytes], I64]]:
    """:func:`read_jsonl_packed`, each batch with the raw bytes of its records' lines (without
    the newline), so that a record can be written back as it was read, and where each line's
    text value lies in it: ``spans[k] = (start, end)``, the value's JSON string
    ``lines[k][start:end]`` quotes included, or ``(-1, -1)`` when the scanner did not
    take the line (it went to ``json.loads``). A span is the record's one top-level
    ``text_field`` (a line with two goes to ``json.loads``).

    Examples:
        >>> import tempfile
        >>> p = Path(tempfile.mkdtemp()) / "a.jsonl"
        >>> _ = p.write_bytes(b'{"text":  "hi"}\\n\\n{"text": "yo"}\\r\\n')
        >>> [(b.texts(), lines) for b, lines, _ in read_jsonl_packed_lines(p)]
        [(['hi', 'yo'], [b'{"text":  "hi"}', b'{"text": "yo"}\\r'])]
    """
    for docs, lines, spans in _read_packed(
        Path(path), id_field, text_field, batch_size, max_line_bytes, True, id_required
    ):
        assert lines is not None and spans is not None
        yield docs, lines, spans


_Scanned = list[tuple[PackedDocs, list[bytes] | None, I64 | None]]


def _read_packed(
    p: Path,
    id_field: str,
    text_field: str,
    batch_size: int,
    max_line_bytes: int,
    raw: bool,
    id_required: bool = False,
) -> Iterator[tuple[PackedDocs, list[bytes] | None, I64 | None]]:
    for scan in _scans(p, id_field, text_field, batch_size, max_line_bytes, raw, id_required):
        yield from scan()


def _scans(
    p: Path,
    id_field: str,
    text_field: str,
    batch_size: int,
    max_line_bytes: int,
    raw: bool,
    id_required: bool = False,
    tee: Callable[[memoryview], None] | None = None,
) -> Iterator[Callable[[], _Scanned]]:
    """One job per chunk of the file, in order (what :meth:`PackedBatches.scans` runs)."""
    from neardup._kernels import engine

    id_key = np.frombuffer(id_field.encode("utf-8"), np.uint8)
    text_key = np.frombuffer(text_field.encode("utf-8"), np.uint8)
    kern = engine.kernels("jsonl")
    lines = [0]
    for chunk, size in _chunks(p, max_line_bytes, lines, tee):
        first_line = lines[0]
        # the lines (memchr in the native kernel), here: their count numbers the next chunk's
        starts, ends = _line_bounds(np.frombuffer(chunk, np.uint8), size)
        lines[0] += len(starts)
        yield partial(
            _scan_chunk,
            p, chunk, starts, ends, first_line, kern, id_key, text_key, id_field, text_field,
            batch_size, max_line_bytes, raw, id_required,
        )  # fmt: skip


def _chunk_scanner(
    p: Path,
    id_field: str,
    text_field: str,
    batch_size: int,
    max_line_bytes: int,
    id_required: bool,
) -> Callable[[bytes | memoryview, I64, I64, Callable[[], int]], _Scanned]:
    """``scan(chunk, starts, ends, first_line)``: the batches of one chunk's lines (what
    :func:`_scan_chunk` makes), for :class:`~neardup._file_blocks.FileBlocks`."""
    from neardup._kernels import engine

    id_key = np.frombuffer(id_field.encode("utf-8"), np.uint8)
    text_key = np.frombuffer(text_field.encode("utf-8"), np.uint8)
    kern = engine.kernels("jsonl")

    def scan(
        chunk: bytes | memoryview, starts: I64, ends: I64, first_line: Callable[[], int]
    ) -> _Scanned:
        return _scan_chunk(
            p, chunk, starts, ends, first_line, kern, id_key, text_key, id_field, text_field,
            batch_size, max_line_bytes, False, id_required,
        )  # fmt: skip

    return scan


def _docs_only(scan: Callable[[], _Scanned]) -> list[PackedDocs]:
    return [docs for docs, _, _ in scan()]


def _scan_chunk(
    p: Path,
    chunk: bytes | memoryview,
    starts: I64,
    ends: I64,
    first_line: int | Callable[[], int],
    kern: Any,
    id_key: U8,
    text_key: U8,
    id_field: str,
    text_field: str,
    batch_size: int,
    max_line_bytes: int,
    raw: bool,
    id_required: bool = False,
) -> _Scanned:
    """The batches of one chunk (its lines ``chunk[starts[k]:ends[k]]``, the first of which is
    line ``first_line + 1`` of the file; a callable ``first_line`` is asked once the lines are
    decoded)."""
    data = np.frombuffer(chunk, np.uint8)
    size = int(ends[-1]) + 1 if len(ends) else 0
    texts = np.empty(size, np.uint8)
    idbuf = np.empty(size, np.uint8)
    spans: I64 | None = None
    if raw:
        status, toff, ioff, kind, spans = kern.scan_lines_spans(
            data, starts, ends, id_key, text_key, texts, idbuf
        )
    else:
        status, toff, ioff, kind = kern.scan_lines(
            data, starts, ends, id_key, text_key, texts, idbuf
        )
    if not isinstance(first_line, int):
        first_line = first_line()
    too_long = np.flatnonzero(ends - starts + 1 > max_line_bytes)
    r = int(too_long[0]) if len(too_long) else len(starts)
    if r < len(starts):  # the lines before it raise their own errors first
        starts, ends, status, kind = starts[:r], ends[:r], status[:r], kind[:r]
        toff, ioff = toff[: r + 1], ioff[: r + 1]
        spans = None if spans is None else spans[:r]
    found = _batches(
        p, chunk, first_line, starts, ends, status, texts, toff, idbuf, ioff, kind, id_field,
        text_field, batch_size, spans, id_required,
    )  # fmt: skip
    batches = list(found)
    if len(too_long):
        n = first_line + r + 1
        raise InputTooLargeError(
            f"{p}:{n}: line longer than {max_line_bytes} bytes; split the record"
        )
    return batches


def _line_bounds(data: U8, size: int) -> tuple[I64, I64]:
    """Starts and ends (newline excluded) of the lines of ``data[:size]``, which ends with a
    newline (the scanner's ``line_bounds``: memchr in the native kernel)."""
    from neardup._kernels import engine

    starts: I64
    ends: I64
    starts, ends = engine.kernels("jsonl").line_bounds(data, size)
    return starts, ends


def _batches(
    path: Path,
    chunk: bytes | memoryview,
    first_line: int,
    starts: I64,
    ends: I64,
    status: npt.NDArray[np.uint8],
    texts: U8,
    toff: I64,
    idbuf: U8,
    ioff: I64,
    kind: npt.NDArray[np.uint8],
    id_field: str,
    text_field: str,
    batch_size: int,
    spans: I64 | None = None,
    id_required: bool = False,
) -> Iterator[tuple[PackedDocs, list[bytes] | None, I64 | None]]:
    """Turn one scanned chunk into batches: OK lines from the buffers, the rest from json
    (with each record's line and its text span in it, when the scanner's ``spans`` are
    given)."""
    from neardup._kernels import engine

    keep = np.flatnonzero(status != 2)  # BLANK lines are skipped
    # a line the scanner took whole: OK, and its id a string or an integer of <= 18 digits
    id_len = np.diff(ioff)
    fast = (status == 0) & ((kind != 2) | (id_len <= 18))
    raw_ids = idbuf[: int(ioff[-1])].tobytes()
    ascii_ids = raw_ids.isascii()
    # the ids of the lines the scanner took: their bytes decoded, or the line number
    row_ids = partial(engine.kernels("jsonl").row_ids, idbuf, ioff, kind, first_line=first_line)
    odd = np.zeros(len(starts), np.bool_)  # fast lines whose id the Python rules refuse
    if id_required:
        odd |= fast & (kind == 0)  # no id, though one was named
    if not ascii_ids:
        odd |= fast & _unpaired(raw_ids, ioff)
    if odd.any():  # the first such line, through json, raises the error every reader raises
        r = int(np.flatnonzero(odd)[0])
        line = bytes(chunk[int(starts[r]) : int(ends[r])])
        number = first_line + r + 1
        jsonl_record(
            line, f"{path}:{number}", id_field, text_field, number, id_required=id_required
        )
    for s in range(0, len(keep), batch_size):
        rows = keep[s : s + batch_size]
        lines = None
        line_spans = None
        if spans is not None:
            lines = [
                bytes(chunk[a:b])
                for a, b in zip(starts[rows].tolist(), ends[rows].tolist(), strict=True)
            ]
            line_spans = spans[rows]
            line_spans = np.where(line_spans >= 0, line_spans - starts[rows, None], -1)
        if fast[rows].all():
            offsets = np.zeros(len(rows) + 1, np.int64)
            np.cumsum(toff[rows + 1] - toff[rows], out=offsets[1:])
            # OK rows of a chunk are contiguous in the text buffer, in line order
            buf = texts[int(toff[rows[0]]) : int(toff[rows[-1] + 1])]
            if len(buf) != offsets[-1]:  # pragma: no cover - the scanner's invariant
                raise AssertionError("packed JSONL texts are not contiguous")
            yield (
                PackedDocs(buf, offsets, _packed_ids(idbuf, ioff, kind, rows, row_ids)),
                lines,
                line_spans,
            )
            continue
        ids = []
        parts: list[bytes] = []
        for r in rows.tolist():
            number = first_line + r + 1
            if fast[r]:
                one = np.array([r], np.int64)
                ids.extend(row_ids(one))
                parts.append(texts[toff[r] : toff[r + 1]].tobytes())
            else:
                line = bytes(chunk[int(starts[r]) : int(ends[r])])
                doc = jsonl_record(
                    line, f"{path}:{number}", id_field, text_field, number, id_required=id_required
                )
                ids.append(doc.id)
                assert doc.text is not None
                parts.append(doc.text.encode("utf-8", "surrogatepass"))
        offsets = np.zeros(len(rows) + 1, np.int64)
        np.cumsum([len(x) for x in parts], out=offsets[1:])
        yield (
            PackedDocs(np.frombuffer(b"".join(parts), np.uint8), offsets, ids),
            lines,
            line_spans,
        )


def _unpaired(raw: bytes, ioff: I64) -> npt.NDArray[np.bool_]:
    """Which ids (``raw[ioff[k]:ioff[k + 1]]``) hold a lone surrogate (written by the scanner
    as ``surrogatepass`` UTF-8: ED A0..BF xx), which no id may hold."""
    out = np.zeros(len(ioff) - 1, np.bool_)
    at = raw.find(b"\xed")
    while at >= 0:
        if at + 1 < len(raw) and 0xA0 <= raw[at + 1] <= 0xBF:
            out[int(np.searchsorted(ioff, at, side="right")) - 1] = True
        at = raw.find(b"\xed", at + 1)
    return out


def _packed_ids(
    idbuf: U8,
    ioff: I64,
    kind: npt.NDArray[np.uint8],
    rows: I64,
    row_ids: Callable[[I64], list[str]],
) -> Sequence[str]:
    """The ids of ``rows`` (lines the scanner took, ascending) as :class:`PackedIds` when
    they are one run of lines that each have their own id; else as strings."""
    if len(rows) and int(rows[-1]) - int(rows[0]) + 1 == len(rows):  # no blank line between
        first, end = int(rows[0]), int(rows[-1]) + 1
        if (kind[first:end] != 0).all():
            bounds = ioff[first : end + 1]
            start = int(bounds[0])
            return PackedIds(idbuf[start : int(bounds[-1])].tobytes(), bounds - start)
    return row_ids(rows)
