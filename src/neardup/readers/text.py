"""Line-oriented record files: JSON lines and CSV / TSV with a header row, streamed."""

from __future__ import annotations

import contextlib
import csv
import io
import json
from collections.abc import Iterator
from typing import BinaryIO

from neardup.errors import InputError, InputTooLargeError

__all__ = ["iter_delimited", "iter_jsonl"]

#: A row: its 1-based number (line for JSONL, data row + 1 for CSV) and the record, or the
#: error that makes the row unusable (so that ``--on-error skip`` can go on with the next).
Row = tuple[int, "dict[str, object] | InputError"]


def iter_jsonl(stream: BinaryIO, where: str, *, max_line_bytes: int) -> Iterator[Row]:
    """Yield ``(line number, record)`` for every non-blank line of a JSONL stream.

    A line that is not a JSON object yields an :class:`InputError` in place of the record.

    Raises:
        InputTooLargeError: a line is longer than ``max_line_bytes`` (the rest of the file
            cannot be framed, so the file stops there).

    Examples:
        >>> rows = iter_jsonl(io.BytesIO(b'{"a": 1}\\n\\n[2]\\n'), "x", max_line_bytes=99)
        >>> [(n, r if isinstance(r, dict) else "error") for n, r in rows]
        [(1, {'a': 1}), (3, 'error')]
    """
    for number, line in enumerate(iter(lambda: stream.readline(max_line_bytes + 1), b""), 1):
        if len(line) > max_line_bytes:
            raise InputTooLargeError(
                f"{where}:{number}: line longer than {max_line_bytes} bytes; split the record "
                "(from Python: raise ReadOptions(max_line_bytes=...))"
            )
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except (ValueError, RecursionError) as exc:  # JSONDecodeError, UnicodeDecodeError,
            # an integer over Python's digit limit, or arrays nested too deep
            yield number, InputError(f"{where}:{number}: not valid JSON ({exc}); fix or remove it")
            continue
        if not isinstance(record, dict):
            yield (
                number,
                InputError(
                    f"{where}:{number}: expected a JSON object, got {type(record).__name__}"
                ),
            )
            continue
        yield number, record


def iter_delimited(
    stream: BinaryIO, where: str, *, delimiter: str, max_field_bytes: int
) -> Iterator[Row]:
    """Yield ``(row number, record)`` for each data row of a CSV/TSV stream with a header.

    Row numbers count the header as row 1. Text is decoded as UTF-8 (bad bytes replaced; a
    byte-order mark dropped). Quoting is strict: a quote left open is an error, not a field
    that runs to the end of the file.

    Raises:
        InputError: the file is not readable as CSV (the message names the line).

    Examples:
        >>> rows = iter_delimited(io.BytesIO(b"id\\ttext\\n1\\thi\\n"), "x", delimiter="\\t",
        ...                       max_field_bytes=99)
        >>> list(rows)
        [(2, {'id': '1', 'text': 'hi'})]
    """
    csv.field_size_limit(max_field_bytes)
    # utf-8-sig: a byte-order mark must not become part of the first column's name
    text = io.TextIOWrapper(stream, encoding="utf-8-sig", errors="replace", newline="")
    reader = None
    try:
        # strict: a quote left open raises at the end of the file instead of swallowing the
        # rest of it into one field (and a stray character after a closing quote raises)
        reader = csv.DictReader(text, delimiter=delimiter, strict=True)
        if reader.fieldnames is None:
            return
        for number, row in enumerate(reader, 2):
            record: dict[str, object] = {k: v for k, v in row.items() if k is not None}
            yield number, record
    except csv.Error as exc:
        near = f" near line {reader.line_num}" if reader is not None else ""
        raise InputError(
            f"{where}: not readable as CSV{near} ({exc}); fix the file (a quote left open "
            "takes the rest of the file into one field)"
        ) from None
    finally:
        # hand the stream back to its owner (it may already be closed when a caller
        # abandons this generator after an error)
        with contextlib.suppress(ValueError):
            text.detach()
