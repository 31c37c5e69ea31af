"""Documents and their readers: files, directories, JSONL, CSV and stdin.

Readers are generators: memory stays flat however large the corpus. Every document gets a
stable string id: the path for files (relative to the directory walked), the ``--id-field``
value for JSONL/CSV records (the 1-based line or row number when absent and allowed).
"""

from __future__ import annotations

import csv
import fnmatch
import json
import logging
import os
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from neardup.errors import ConfigError, InputError, InputTooLargeError

__all__ = [
    "DEFAULT_MAX_LINE_BYTES",
    "Document",
    "read_csv",
    "read_file_text",
    "read_inputs",
    "read_jsonl",
]

log = logging.getLogger(__name__)

#: Longest JSONL line (or CSV field) accepted, in bytes; larger ones raise InputTooLargeError.
DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024
#: Largest file read as one document, in bytes.
DEFAULT_MAX_FILE_BYTES = 256 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Document:
    """One input document.

    Attributes:
        id: Stable identifier (path or record id).
        text: The text (``None`` for binary inputs such as images before they are read).
        path: The file it came from, if any.
        fields: The record's other fields (JSONL/CSV/mapping input), if any.
    """

    id: str
    text: str | None = None
    path: Path | None = None
    fields: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)

    def read_bytes(self, *, max_bytes: int = DEFAULT_MAX_FILE_BYTES) -> bytes:
        """Return the raw bytes: the file's content, or the text as UTF-8.

        Raises:
            InputError: the document has neither a path nor text, or the file cannot be read.
            InputTooLargeError: the file is over ``max_bytes``.
        """
        if self.path is not None:
            return _read_file(self.path, max_bytes)
        if self.text is not None:
            return self.text.encode("utf-8", "surrogatepass")
        raise InputError(f"document {self.id!r} has no text and no path")


def _read_file(path: Path, max_bytes: int) -> bytes:
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise InputTooLargeError(
                f"{path} is {size} bytes, over the {max_bytes}-byte cap; raise the cap "
                "(--max-file-bytes) or leave the file out (--exclude)"
            )
        return path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from exc


def _decode(data: bytes, where: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        log.warning("%s is not valid UTF-8; undecodable bytes replaced by U+FFFD", where)
        return data.decode("utf-8", "replace")


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


def _iter_lines(stream: BinaryIO, max_line: int, where: str) -> Iterator[tuple[int, bytes]]:
    for number, line in enumerate(iter(lambda: stream.readline(max_line + 1), b""), 1):
        if len(line) > max_line:
            raise InputTooLargeError(
                f"{where}:{number}: line longer than {max_line} bytes; raise --max-line-bytes "
                "or split the record"
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

    Blank lines are skipped. A record without ``id_field`` gets its line number as id.

    Raises:
        InputError: a line is not JSON, not an object, or lacks ``text_field``; the message
            names the file and line.
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
        where = f"{name}:{number}"
        try:
            record = json.loads(line)
        except (ValueError, RecursionError) as exc:  # JSONDecodeError, UnicodeDecodeError,
            # an integer over Python's digit limit, or arrays nested too deep
            raise InputError(f"{where}: not valid JSON ({exc}); fix or remove the line") from None
        text = _record_field(record, text_field, where)
        if not isinstance(text, str):
            raise InputError(f"{where}: field {text_field!r} is not a string")
        assert isinstance(record, dict)
        doc_id = record.get(id_field, number)
        yield Document(str(doc_id), text)


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
    csv.field_size_limit(max_line_bytes)
    try:
        with path.open(encoding="utf-8", errors="replace", newline="") as fh:
            reader = csv.DictReader(fh)
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


def _matches(rel: str, patterns: Sequence[str]) -> bool:
    name = rel.rsplit("/", 1)[-1]
    return any(fnmatch.fnmatch(rel, p) or fnmatch.fnmatch(name, p) for p in patterns)


def walk(root: Path, *, include: Sequence[str] = (), exclude: Sequence[str] = ()) -> Iterator[Path]:
    """Yield the regular files under ``root`` in sorted order, filtered by glob patterns.

    Hidden files and directories (names starting with ``.``) are skipped; symbolic links are
    not followed.
    """
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for fname in sorted(filenames):
            if fname.startswith("."):
                continue
            path = Path(dirpath) / fname
            if path.is_symlink() or not path.is_file():
                continue
            rel = path.relative_to(root).as_posix()
            if include and not _matches(rel, include):
                continue
            if exclude and _matches(rel, exclude):
                continue
            yield path


def read_inputs(
    paths: Iterable[str | Path],
    *,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    id_field: str = "id",
    text_field: str = "text",
    binary: bool = False,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    stdin: BinaryIO | None = None,
    input_format: str = "text",
    main_content: bool = False,
) -> Iterator[Document]:
    """Read documents from paths: files, directories (walked), ``.jsonl``, ``.csv`` or ``-``.

    Args:
        paths: What to read. ``-`` reads JSONL from ``stdin``.
        include: Glob patterns a walked file must match (on its relative path or name).
        exclude: Glob patterns that leave a walked file out.
        id_field: JSONL/CSV field holding the id.
        text_field: JSONL/CSV field holding the text.
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
        InputError: a path does not exist, or a record is malformed.
        ConfigError: unknown ``input_format``.
    """
    if input_format not in INPUT_FORMATS:
        raise ConfigError(
            f"input_format must be one of {', '.join(INPUT_FORMATS)}, got {input_format!r}"
        )
    for raw in paths:
        if str(raw) == "-":
            yield from read_jsonl(
                stdin if stdin is not None else sys.stdin.buffer,
                id_field=id_field,
                text_field=text_field,
                max_line_bytes=max_line_bytes,
            )
            continue
        path = Path(raw)
        if path.is_dir():
            for file in walk(path, include=include, exclude=exclude):
                rel = file.relative_to(path).as_posix()
                yield _file_document(
                    file,
                    rel,
                    binary=binary,
                    max_file_bytes=max_file_bytes,
                    input_format=input_format,
                    main_content=main_content,
                )
        elif path.is_file():
            suffix = path.suffix.lower()
            if suffix == ".jsonl" and not binary:
                try:
                    with path.open("rb") as fh:
                        yield from read_jsonl(
                            fh,
                            name=str(path),
                            id_field=id_field,
                            text_field=text_field,
                            max_line_bytes=max_line_bytes,
                        )
                except OSError as exc:
                    raise InputError(f"cannot read {path}: {exc.strerror or exc}") from exc
            elif suffix == ".csv" and not binary:
                yield from read_csv(
                    path, id_field=id_field, text_field=text_field, max_line_bytes=max_line_bytes
                )
            else:
                yield _file_document(
                    path,
                    str(path),
                    binary=binary,
                    max_file_bytes=max_file_bytes,
                    input_format=input_format,
                    main_content=main_content,
                )
        else:
            raise InputError(f"{path} does not exist (or is not a file or directory)")


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
    data = _read_file(path, max_file_bytes)
    fmt: Any = input_format
    if fmt == "auto":
        # markup's own detector; importing neardup.markup loads none of its parsers
        from neardup.markup import detect_format

        fmt = detect_format(data, name=path)
    if fmt == "text":
        return _decode(data, str(path))
    from neardup.markup import to_text

    return to_text(data, input_format=fmt, name=path, main_content=main_content)
