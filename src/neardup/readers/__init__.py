"""Corpus readers: files, folders, JSONL / CSV / TSV (plain or .gz/.bz2/.xz/.zst), Parquet,
Arrow IPC / Feather and Hugging Face ``save_to_disk`` folders, streamed into Documents.

Every reader streams (line by line, or one record batch at a time), so memory does not grow
with the size of a file. Bad input raises :class:`~neardup.errors.InputError` naming the file
(and row); with ``on_error="skip"`` bad records and unreadable files are skipped and counted in
:class:`ReadStats`, whose :meth:`~ReadStats.summary` also names every file left out and why.
See ``docs/formats.md``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from neardup._document import (
    DEFAULT_MAX_FILE_BYTES,
    DEFAULT_MAX_LINE_BYTES,
    Document,
    decode_text,
    read_file_bytes,
)
from neardup.errors import ConfigError, InputError, InputTooLargeError
from neardup.readers.compression import decode_errors, open_decompressed, split_compression
from neardup.readers.fields import FieldPath, RecordSpec
from neardup.readers.paths import ReadStats, root_labels, walk

__all__ = [
    "INPUT_FORMATS",
    "FieldPath",
    "ReadOptions",
    "ReadStats",
    "RecordSpec",
    "file_kind",
    "read_documents",
]

log = logging.getLogger(__name__)

#: How non-record files become text: ``auto`` picks by extension, then by sniffing content.
INPUT_FORMATS = ("auto", "text", "html", "markdown", "pdf")

_KINDS = {
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".csv": "csv",
    ".tsv": "tsv",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".arrow": "ipc",
    ".feather": "ipc",
    ".ipc": "ipc",
}
_COLUMNAR = ("parquet", "ipc")


def file_kind(name: str) -> tuple[str, str | None]:
    """``(kind, codec)`` of a file name: kind is ``jsonl``, ``csv``, ``tsv``, ``parquet``,
    ``ipc`` or ``document`` (any other file, read as one document); codec is the compression.

    ``.json`` counts as JSON lines when compressed (``c4-train.00000.json.gz``); a plain
    ``.json`` file is one document.

    Examples:
        >>> file_kind("dump.jsonl.zst"), file_kind("x.json.gz"), file_kind("man.1.gz")
        (('jsonl', 'zstd'), ('jsonl', 'gzip'), ('document', 'gzip'))
        >>> file_kind("data.parquet"), file_kind("notes.txt")
        (('parquet', None), ('document', None))
    """
    base, codec = split_compression(name)
    suffix = Path(base).suffix.lower()
    if suffix == ".json" and codec is not None:
        return "jsonl", codec
    kind = _KINDS.get(suffix, "document")
    if kind in _COLUMNAR and codec is not None:
        return "document", codec  # Parquet / Arrow compress inside; a wrapped one is opaque
    return kind, codec


@dataclass(frozen=True)
class ReadOptions:
    """How inputs are read (one object instead of a dozen keyword arguments).

    Attributes:
        spec: Text and id fields of records.
        include: Globs a walked file must match (relative path or name).
        exclude: Globs that leave a walked file out.
        binary: Yield file documents without reading them (images); no record parsing.
        images_only: A folder walk picks image files only (by name, see
            :data:`~neardup.readers.paths.IMAGE_SUFFIXES`); the others are left out and counted.
        input_format: How non-record files become text (see :data:`INPUT_FORMATS`).
        follow_symlinks: Follow symbolic links in folders (cycle-safe).
        on_error: ``fail`` stops at the first bad record or file; ``skip`` counts and skips.
        keep_fields: Attach each record's fields to its Document (for ``--annotate``).
        main_content: For HTML files, keep only the main content (no navigation, headers
            or footers; see ``neardup.markup.html_to_text``).
        max_line_bytes: Cap on one JSONL line / CSV field.
        max_file_bytes: Cap on one file read as a document (after decompression).
    """

    spec: RecordSpec = field(default_factory=RecordSpec.of)
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    binary: bool = False
    images_only: bool = False
    input_format: str = "text"
    follow_symlinks: bool = False
    on_error: str = "fail"
    keep_fields: bool = False
    main_content: bool = False
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES

    def __post_init__(self) -> None:
        if self.input_format not in INPUT_FORMATS:
            raise ConfigError(
                f"input_format must be one of {', '.join(INPUT_FORMATS)}, got {self.input_format!r}"
            )
        if self.on_error not in ("fail", "skip"):
            raise ConfigError(f"on_error must be 'fail' or 'skip', got {self.on_error!r}")


def read_documents(
    paths: Iterable[str | Path],
    options: ReadOptions | None = None,
    *,
    stats: ReadStats | None = None,
    stdin: BinaryIO | None = None,
) -> Iterator[Document]:
    """Read every input as Documents, in order.

    Args:
        paths: Files, folders (walked; record files inside are read as records), Hugging Face
            ``save_to_disk`` folders, or ``-`` for JSON lines on ``stdin``.
        options: How to read (default :class:`ReadOptions`).
        stats: Filled with the files left out and the records skipped.
        stdin: The stream for ``-`` (default ``sys.stdin.buffer``).

    Ids: a record's id field (else its row number when it is the only input, else
    ``source:row``); a walked file's path relative to its root, prefixed with the root's label
    when two roots hold the same relative path; a file given directly, its path as given.

    Raises:
        InputError: a path does not exist, a file or record is malformed (``on_error="fail"``).

    Examples:
        >>> import io
        >>> docs = read_documents(["-"], stdin=io.BytesIO(b'{"text": "hi"}\\n'))
        >>> [(d.id, d.text) for d in docs]
        [('1', 'hi')]
    """
    opts = options if options is not None else ReadOptions()
    st = stats if stats is not None else ReadStats()
    seen: dict[tuple[int, int], int] = {}  # (device, inode) of each file read -> its input
    items = _distinct([str(p) for p in paths], st)
    alone = len(items) == 1
    dirs = [p for p in items if p != "-" and Path(p).is_dir() and not _is_hf(Path(p))]
    prefixes = _colliding_roots(dirs, opts, st) if len(dirs) > 1 else {}
    for k, raw in enumerate(items):
        one = _read_one(
            raw,
            opts,
            st,
            alone=alone,
            prefix=prefixes.get(raw),
            stdin=stdin,
            seen=(seen, -1 if alone else k),
        )
        for doc in one:
            st.documents += 1
            yield doc


#: Why a path is left out when it names a file or folder read already.
READ_ALREADY = "given twice: the same file or folder under another name, read once"


def _key(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _distinct(items: list[str], st: ReadStats) -> list[str]:
    """The paths with every later name of a file or folder given before left out (``a.txt``
    and ``./a.txt`` are one file: read twice, it would be its own duplicate)."""
    out: list[str] = []
    keys: set[tuple[int, int]] = set()
    for raw in items:
        key = None if raw == "-" else _key(Path(raw))
        if key is not None and key in keys:
            st.leave_out(raw, READ_ALREADY)
            continue
        if key is not None:
            keys.add(key)
        out.append(raw)
    return out


def _is_hf(path: Path) -> bool:
    from neardup.readers.arrow import is_hf_dataset

    return is_hf_dataset(path)


def _colliding_roots(dirs: list[str], opts: ReadOptions, st: ReadStats) -> dict[str, str]:
    """Prefix (root label) of each folder root whose relative ids another root also has."""
    owners: dict[str, set[int]] = {}
    quiet = ReadStats()  # the real walk records what it leaves out
    for k, root in enumerate(dirs):
        walked = walk(
            Path(root),
            include=opts.include,
            exclude=opts.exclude,
            follow_symlinks=opts.follow_symlinks,
            stats=quiet,
            strict=False,
            images_only=opts.images_only,
        )
        for _, rel in walked:
            owners.setdefault(rel, set()).add(k)
    clashing = {k for ks in owners.values() if len(ks) > 1 for k in ks}
    labels = root_labels(dirs)
    return {dirs[k]: labels[k] + "/" for k in sorted(clashing)}


def _read_one(
    raw: str,
    opts: ReadOptions,
    st: ReadStats,
    *,
    alone: bool,
    prefix: str | None,
    stdin: BinaryIO | None,
    seen: tuple[dict[tuple[int, int], int], int],
) -> Iterator[Document]:
    if raw == "-":
        import sys

        from neardup.readers.text import iter_jsonl

        stream = stdin if stdin is not None else sys.stdin.buffer
        rows = iter_jsonl(stream, "<stdin>", max_line_bytes=opts.max_line_bytes)
        st.current = None
        yield from _records(rows, "<stdin>", "" if alone else "<stdin>:", opts, st)
        return
    path = Path(raw)
    if not _first_time(path, seen, st):
        return
    if _is_hf(path):
        st.current = None  # a dataset of Arrow files, not shards of records
        yield from _guard(_hf_records(path, "" if alone else raw + ":", opts, st), path, opts, st)
    elif path.is_dir():
        strict = opts.on_error == "fail"
        for file, rel in walk(
            path,
            include=opts.include,
            exclude=opts.exclude,
            follow_symlinks=opts.follow_symlinks,
            stats=st,
            strict=strict,
            images_only=opts.images_only,
        ):
            if not _first_time(file, seen, st):
                continue  # also given on its own, or under another root
            doc_id = (prefix or "") + rel
            yield from _guard(_file(file, doc_id, doc_id + ":", opts, st), file, opts, st)
    elif path.is_file():
        yield from _guard(_file(path, raw, "" if alone else raw + ":", opts, st), path, opts, st)
    else:
        raise InputError(f"{path} does not exist (or is not a file or folder); check the path")


def _first_time(path: Path, seen: tuple[dict[tuple[int, int], int], int], st: ReadStats) -> bool:
    """Whether ``path`` (a file, or a folder read as one dataset) was not read yet from
    another input of this run (``seen``: what was read, and which input this is, -1 when it
    is the only one); read from
    another input already, it is left out and recorded. Two names of one file inside one
    folder (hard links) stay two documents."""
    read, here = seen
    if here < 0:
        return True  # the only input: nothing else can hold the same file (no stat)
    if path.is_dir() and not _is_hf(path):
        return True  # a walked folder: its files are checked one by one
    key = _key(path)
    if key is None:
        return True  # missing or unreadable: the reader says so
    if read.setdefault(key, here) != here:
        st.leave_out(path, READ_ALREADY)
        return False
    return True


def _guard(
    docs: Iterator[Document], path: Path, opts: ReadOptions, st: ReadStats
) -> Iterator[Document]:
    """Turn a file's failure into a skip under ``on_error="skip"``."""
    try:
        yield from docs
    except InputTooLargeError:
        if opts.on_error == "fail":
            raise
        st.leave_out(path, "over a size cap")
    except InputError as exc:
        if opts.on_error == "fail":
            raise
        log.warning("skipped %s", exc)
        st.leave_out(path, UNREADABLE_FILE)


UNREADABLE_FILE = "unreadable or malformed file"


def _file(
    path: Path, doc_id: str, row_prefix: str, opts: ReadOptions, st: ReadStats
) -> Iterator[Document]:
    st.current = (path, doc_id)
    kind, codec = ("document", None) if opts.binary else file_kind(path.name)
    if kind == "document":
        yield _document(path, doc_id, codec, opts)
        return
    if kind in _COLUMNAR:
        yield from _columnar(path, kind, row_prefix, opts, st)
        return
    from neardup.readers.text import iter_delimited, iter_jsonl

    try:
        with open_decompressed(path, codec) as stream:
            if kind == "jsonl":
                rows = iter_jsonl(stream, str(path), max_line_bytes=opts.max_line_bytes)
            else:
                delimiter = "," if kind == "csv" else "\t"
                rows = iter_delimited(
                    stream, str(path), delimiter=delimiter, max_field_bytes=opts.max_line_bytes
                )
            yield from _records(rows, str(path), row_prefix, opts, st)
    except decode_errors() as exc:
        raise InputError(
            f"{path}: cannot decompress ({type(exc).__name__}: {exc}); the file is truncated "
            "or corrupt"
        ) from None


def _records(
    rows: Iterable[tuple[int, Any]], where: str, row_prefix: str, opts: ReadOptions, st: ReadStats
) -> Iterator[Document]:
    spec = opts.spec
    for number, record in rows:
        at = f"{where}:{number}"
        try:
            if isinstance(record, InputError):
                raise record
            text = spec.text(record, at)
            doc_id = spec.ident(record, at, f"{row_prefix}{number}")
        except InputError as exc:
            if opts.on_error == "fail":
                raise
            st.bad_records += 1
            log.warning("skipped %s", exc)
            continue
        yield Document(doc_id, text, None, record if opts.keep_fields else None)


def _required(spec: RecordSpec) -> list[str]:
    required = [p.root for p in spec.text_fields]
    if spec.id_field is not None:
        required.append(spec.id_field.root)
    return required


def _columnar(
    path: Path, kind: str, row_prefix: str, opts: ReadOptions, st: ReadStats
) -> Iterator[Document]:
    yield from _records(_arrow_rows([path], kind, opts), str(path), row_prefix, opts, st)


def _arrow_rows(files: Iterable[Path], kind: str, opts: ReadOptions) -> Iterator[tuple[int, Any]]:
    """Rows of one or more columnar files, numbered on across them from 1."""
    from neardup.readers.arrow import iter_arrow_batches

    columns = None if opts.keep_fields else list(opts.spec.roots)
    required = _required(opts.spec)
    number = 0
    for file in files:
        for batch in iter_arrow_batches(file, kind, columns=columns, required=required):
            for record in batch:
                number += 1
                yield number, record


def _hf_records(
    path: Path, row_prefix: str, opts: ReadOptions, st: ReadStats
) -> Iterator[Document]:
    """A save_to_disk folder: its Arrow files in order; a DatasetDict split by split, with
    ``split:row`` ids where there is no id field."""
    from itertools import groupby

    from neardup.readers.arrow import hf_data_files

    for split, group in groupby(hf_data_files(path), key=lambda item: item[0]):
        files = [f for _, f in group]
        prefix = row_prefix + (f"{split}:" if split else "")
        where = str(path / split) if split else str(path)
        yield from _records(_arrow_rows(files, "ipc", opts), where, prefix, opts, st)


def _document(path: Path, doc_id: str, codec: str | None, opts: ReadOptions) -> Document:

    if opts.binary:
        return Document(doc_id, None, path)
    if codec is None:
        data = read_file_bytes(path, opts.max_file_bytes)
        name = path.name
    else:
        name = split_compression(path.name)[0]
        try:
            with open_decompressed(path, codec) as stream:
                data = stream.read(opts.max_file_bytes + 1)
        except decode_errors() as exc:
            raise InputError(
                f"{path}: cannot decompress ({type(exc).__name__}: {exc}); the file is truncated "
                "or corrupt"
            ) from None
        if len(data) > opts.max_file_bytes:
            raise InputTooLargeError(
                f"{path} decompresses to over {opts.max_file_bytes} bytes; leave the file out "
                "(--exclude) or split it (from Python: raise ReadOptions(max_file_bytes=...))"
            )
    fmt = opts.input_format
    if fmt == "auto":
        from neardup.markup import detect_format

        fmt = detect_format(data, name=Path(name))
    fields = {"id": doc_id, "path": str(path)} if opts.keep_fields else None
    if fmt == "text":
        text = decode_text(data, str(path))
    else:
        from neardup.markup import to_text

        text = to_text(
            data,
            input_format=fmt,  # type: ignore[arg-type]
            name=Path(name),
            main_content=opts.main_content,
        )
    if fields is not None:
        fields["text"] = text
    return Document(doc_id, text, path, fields)
