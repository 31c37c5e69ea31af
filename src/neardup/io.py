"""Documents and their readers: files, directories, JSONL, CSV and stdin.

Readers are generators: memory stays flat however large the corpus. Every document gets a
stable string id: the path for files (relative to the directory walked), the ``--id-field``
value for JSONL/CSV records (the 1-based line or row number when absent and allowed).
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, BinaryIO

from neardup._document import (
    DEFAULT_MAX_FILE_BYTES,
    DEFAULT_MAX_LINE_BYTES,
    Document,
    decode_text,
    read_file_bytes,
)
from neardup.errors import InputError, InputTooLargeError

__all__ = [
    "DEFAULT_MAX_LINE_BYTES",
    "Document",
    "UniqueIds",
    "read_csv",
    "read_file_text",
    "read_inputs",
    "read_jsonl",
]

log = logging.getLogger(__name__)


def _record_field(record: object, name: str, where: str) -> object:
    if not isinstance(record, dict):
        raise InputError(f"{where}: expected a JSON object, got {type(record).__name__}")
    if name not in record:
        keys = ", ".join(sorted(map(str, record))[:8])
        raise InputError(
            f"{where}: no field {name!r} (fields: {keys}); name the right one with "
            "--id-field/--text-field"
        )
    return record[name]


def _has_lone_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _record_id(value: object, number: int, where: str) -> str:
    """The id of a JSONL record: a string or a number (null or absent: the line number);
    the rules of :func:`neardup.readers.fields.id_text`."""
    from neardup.readers.fields import id_text

    if value is None:
        return str(number)
    return id_text(value, where)


def _path_id(text: str) -> str:
    """A file id as printable text: bytes of a name that is not UTF-8 (surrogate escapes from
    the file system) are written as ``\\xNN``."""
    if not _has_lone_surrogate(text):
        return text
    return os.fsencode(text).decode("utf-8", "backslashreplace")


class UniqueIds:
    """Remembers where each id was read, and refuses an id read twice (the readers keep ids
    unique across roots; a record id repeated in the data is caught here).

    One small int per id (source index and position packed), so the check costs little next
    to the ids themselves, which a dedup run keeps anyway.

    Examples:
        >>> docs = [Document("a", "x"), Document("a", "y")]
        >>> list(UniqueIds().check(docs, "in.jsonl"))
        Traceback (most recent call last):
        ...
        neardup.errors.InputError: duplicate id 'a': read from in.jsonl (document 1) ...
    """

    __slots__ = ("_seen", "_sources")

    def __init__(self) -> None:
        self._seen: dict[str, int] = {}
        self._sources: list[str] = []

    def check(self, docs: Iterable[Document], source: str) -> Iterator[Document]:
        """Yield ``docs`` (read from ``source``), raising :class:`InputError` at an id seen
        before, from this source or an earlier one."""
        index = len(self._sources)
        self._sources.append(source)
        seen = self._seen
        for number, doc in enumerate(docs, 1):
            here = index << 40 | number
            first = seen.setdefault(doc.id, here)
            if first != here:
                raise InputError(
                    f"duplicate id {doc.id!r}: read from {self._sources[first >> 40]} "
                    f"(document {first & (1 << 40) - 1}) and again from {source} (document "
                    f"{number}); ids must be unique (fix the data, or pick another field with "
                    "--id-field; files in different folders get the same id when their paths "
                    "relative to the folders match, so pass their common parent folder instead)"
                )
            yield doc


def _iter_lines(stream: BinaryIO, max_line: int, where: str) -> Iterator[tuple[int, bytes]]:
    for number, line in enumerate(iter(lambda: stream.readline(max_line + 1), b""), 1):
        if len(line) > max_line:
            raise InputTooLargeError(
                f"{where}:{number}: line longer than {max_line} bytes; split the record "
                "(from Python: raise read_inputs/read_jsonl(max_line_bytes=...))"
            )
        yield number, line


def read_jsonl(
    stream: BinaryIO,
    *,
    name: str = "<stdin>",
    id_field: str = "id",
    text_field: str = "text",
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
) -> Iterator[Document]:
    """Read JSONL records ``{id_field: ..., text_field: ...}`` from a binary stream.

    Blank lines are skipped. A record without ``id_field`` (or with a null one) gets its line
    number as id; an id must be a string or a number.

    Raises:
        InputError: a line is not JSON, not an object, lacks ``text_field``, or has an id
            that is not a string or number (or holds a lone surrogate); the message names the
            file and line.
        InputTooLargeError: a line is longer than ``max_line_bytes``.

    Examples:
        >>> import io
        >>> docs = read_jsonl(io.BytesIO(b'{"id": 7, "text": "hi"}\\n\\n{"text": "yo"}\\n'))
        >>> [(d.id, d.text) for d in docs]
        [('7', 'hi'), ('3', 'yo')]
    """
    for number, line in _iter_lines(stream, max_line_bytes, name):
        if not line.strip():
            continue
        yield jsonl_record(line, f"{name}:{number}", id_field, text_field, number)


def jsonl_record(
    line: bytes,
    where: str,
    id_field: str,
    text_field: str,
    number: int,
    *,
    id_required: bool = False,
) -> Document:
    """One JSONL line as a Document (the rules of :func:`read_jsonl`; ``where`` names it).
    ``id_required``: the id field was named (``--id-field``), so a record without it (or
    with a null id) is refused, as :class:`~neardup.readers.RecordSpec` refuses it.

    Raises:
        InputError: not JSON, not an object, no string ``text_field``, or a bad id.
    """
    try:
        record = json.loads(line)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, UnicodeDecodeError,
        # an integer over Python's digit limit, or arrays nested too deep
        raise InputError(f"{where}: not valid JSON ({exc}); fix or remove the line") from None
    text = _record_field(record, text_field, where)
    if not isinstance(text, str):
        raise InputError(f"{where}: field {text_field!r} is not a string")
    assert isinstance(record, dict)
    value = record.get(id_field)
    if id_required and value is None:
        from neardup.readers.fields import missing_id

        raise missing_id(record, where, id_field)
    return Document(_record_id(value, number, where), text)


def read_csv(
    path: Path,
    *,
    id_field: str = "id",
    text_field: str = "text",
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
) -> Iterator[Document]:
    """Read CSV rows with a header naming ``id_field`` and ``text_field``.

    Raises:
        InputError: the header lacks ``text_field`` or the file is not readable CSV.
    """
    import csv  # here, not at the top: a run that reads no CSV never loads it

    csv.field_size_limit(max_line_bytes)
    try:
        # utf-8-sig: a byte-order mark must not become part of the first column's name
        with path.open(encoding="utf-8-sig", errors="replace", newline="") as fh:
            reader = csv.DictReader(fh, strict=True)  # an open quote raises
            if reader.fieldnames is None or text_field not in reader.fieldnames:
                raise InputError(
                    f"{path}: the CSV header has no {text_field!r} column "
                    f"({', '.join(reader.fieldnames or [])}); name it with --text-field"
                )
            for number, row in enumerate(reader, 2):
                yield Document(str(row.get(id_field) or number), row[text_field] or "")
    except csv.Error as exc:
        raise InputError(f"{path}: not readable as CSV ({exc})") from None
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from exc


def read_inputs(
    paths: Iterable[str | Path],
    *,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    id_field: str | None = None,
    text_field: str | Sequence[str] = "text",
    binary: bool = False,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    stdin: BinaryIO | None = None,
    input_format: str = "text",
    main_content: bool = False,
) -> Iterator[Document]:
    """Read documents from paths: files, folders, record files (JSONL, CSV, TSV, Parquet,
    Arrow; compressed or not), Hugging Face ``save_to_disk`` folders, or ``-`` (stdin JSONL).

    A shortcut for :func:`neardup.readers.read_documents` with the common options; see there
    (and ``docs/formats.md``) for ids, field paths, streaming and error handling.

    Ids must be unique across all the paths: an id read twice raises :class:`InputError`
    naming both places (a record's file and position). File names that are not UTF-8 get ids
    with their odd bytes written as ``\\xNN``.

    Args:
        paths: What to read. ``-`` reads JSONL from ``stdin``.
        include: Glob patterns a walked file must match (on its relative path or name).
        exclude: Glob patterns that leave a walked file out.
        id_field: Record field (path such as ``meta.url``) holding the id; default ``id``
            when present, else the row number.
        text_field: Record field(s) holding the text; several are joined with a newline.
        binary: Yield file documents without reading their text (images, binary fuzzy hashing).
        max_line_bytes: Cap on one JSONL line / CSV field.
        max_file_bytes: Cap on one file read as a document.
        stdin: The stream for ``-`` (default: ``sys.stdin.buffer``).
        input_format: How files become text: ``text`` (default: UTF-8), ``html``,
            ``markdown``, ``pdf``, or ``auto`` (by extension, then by sniffing; via
            ``neardup.markup.to_text``, extra ``markup``). JSONL/CSV records are always text.
        main_content: For HTML files, keep only the main content (the article, without
            navigation, headers and footers; see ``neardup.markup.html_to_text``).

    Raises:
        InputError: a path does not exist, a record is malformed, or an id repeats.
        ConfigError: unknown ``input_format``.
    """
    from neardup.readers import ReadOptions, RecordSpec, read_documents

    options = ReadOptions(
        spec=RecordSpec.of(text_field, id_field),
        include=tuple(include),
        exclude=tuple(exclude),
        binary=binary,
        input_format=input_format,
        main_content=main_content,
        max_line_bytes=max_line_bytes,
        max_file_bytes=max_file_bytes,
    )
    paths = list(paths)
    # the readers keep ids unique across roots; a record id repeated in the data is refused
    yield from UniqueIds().check(
        read_documents(paths, options, stdin=stdin),
        ", ".join("<stdin>" if str(p) == "-" else str(p) for p in paths),
    )


#: Formats ``input_format`` accepts; ``auto`` picks by extension, then by sniffing content.
INPUT_FORMATS = ("auto", "text", "html", "markdown", "pdf")


def _file_document(
    path: Path,
    doc_id: str,
    *,
    binary: bool,
    max_file_bytes: int,
    input_format: str = "text",
    main_content: bool = False,
) -> Document:
    doc_id = _path_id(doc_id)
    if binary:
        return Document(doc_id, None, path)
    return Document(
        doc_id,
        read_file_text(
            path,
            input_format=input_format,
            main_content=main_content,
            max_file_bytes=max_file_bytes,
        ),
        path,
    )


def read_file_text(
    path: Path,
    *,
    input_format: str = "text",
    main_content: bool = False,
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
) -> str:
    """The text of one file as :func:`read_inputs` reads a file document (a report reads
    the few documents it shows again this way).

    Raises:
        InputError: the file cannot be read or decoded.
        InputTooLargeError: the file is over ``max_file_bytes``.
    """
    data = read_file_bytes(path, max_file_bytes)
    fmt: Any = input_format
    if fmt == "auto":
        # markup's own detector; importing neardup.markup loads none of its parsers
        from neardup.markup import detect_format

        fmt = detect_format(data, name=path)
    if fmt == "text":
        return decode_text(data, str(path))
    from neardup.markup import to_text

    return to_text(data, input_format=fmt, name=path, main_content=main_content)
