"""Record files out: one writer per format chosen by extension (.parquet, .jsonl, .jsonl.gz,
.jsonl.zst, .csv), fed batch by batch, written atomically; and the record spool, which keeps
the input records on disk while dedup runs so that writing never re-reads the inputs."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import pickle
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from neardup._atomic import atomic_file, output_errors, sweep_leftovers, temp_prefix, write_error
from neardup._paths import RECORD_SUFFIXES
from neardup.errors import ConfigError, InputError
from neardup.io import Document

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "RECORD_FORMATS",
    "RecordSpool",
    "cleaned_records",
    "record_format",
    "record_of",
    "splice_texts",
    "splice_values",
    "write_jsonl_lines",
    "write_records",
]

#: Output formats by extension.
RECORD_FORMATS = {ext: ext[1:] for ext in RECORD_SUFFIXES}
SPOOL_BATCH = 1024


def record_format(path: str | Path) -> str:
    """The record format an output path asks for, by its extension.

    Raises:
        ConfigError: an extension that is not one of :data:`RECORD_FORMATS`.

    Examples:
        >>> record_format("out.jsonl.zst"), record_format("x.parquet")
        ('jsonl.zst', 'parquet')
    """
    name = str(path).lower()
    for ext in sorted(RECORD_FORMATS, key=len, reverse=True):
        if name.endswith(ext):
            return RECORD_FORMATS[ext]
    raise ConfigError(f"cannot tell the format of {path}; end it with {', '.join(RECORD_FORMATS)}")


def record_of(doc: Document) -> dict[str, object]:
    """A document as a record: its input record with all its fields, else (a file) ``{"id",
    "text", "path"}`` (``text`` null for a binary file).

    Examples:
        >>> record_of(Document("a.txt", "hi", path=Path("a.txt")))
        {'id': 'a.txt', 'text': 'hi', 'path': 'a.txt'}
    """
    if doc.fields is not None:
        return dict(doc.fields)
    out: dict[str, object] = {"id": doc.id, "text": doc.text}
    if doc.path is not None:
        out["path"] = str(doc.path)
    return out


class RecordSpool:
    """The input records, spooled to a temporary file in input order while they stream past.

    Use :meth:`tee` on the document stream handed to dedup, then :meth:`batches` (as often as
    needed) to read the records back; :meth:`close` removes the file. Memory holds one batch.
    """

    def __init__(self, directory: Path | None = None) -> None:
        import tempfile  # only when a spool is made

        folder = Path(directory if directory is not None else tempfile.gettempdir())
        sweep_leftovers(folder)  # the spools of killed runs
        try:
            fd, name = tempfile.mkstemp(
                prefix=temp_prefix(".neardup-spool"), suffix=".pkl", dir=folder
            )
        except OSError as exc:
            raise write_error(folder / ".neardup-spool", exc) from exc
        self._path = Path(name)
        self._fh: IO[bytes] | None = open(fd, "wb")  # noqa: SIM115 - closed in close()/tee
        self.count = 0

    def tee(self, docs: Iterable[Document]) -> Iterator[Document]:
        """Yield ``docs`` without their fields (the spool holds them, on disk, so that dedup
        keeps none in memory), appending ``(id, text, record)`` rows to the spool."""
        assert self._fh is not None, "spool already written"
        batch: list[tuple[str, str | None, dict[str, object]]] = []
        for d in docs:
            batch.append((d.id, d.text, record_of(d)))
            if len(batch) >= SPOOL_BATCH:
                self._dump(batch)
                batch = []
            yield d if d.fields is None else dataclasses.replace(d, fields=None)
        if batch:
            self._dump(batch)
        with output_errors(self._path):
            self._fh.close()
        self._fh = None

    def _dump(self, batch: list[tuple[str, str | None, dict[str, object]]]) -> None:
        assert self._fh is not None
        with output_errors(self._path):
            pickle.dump(batch, self._fh, protocol=pickle.HIGHEST_PROTOCOL)
        self.count += len(batch)

    def batches(self) -> Iterator[list[tuple[str, str | None, dict[str, object]]]]:
        """The spooled rows ``(id, text, record)``, one batch at a time, in input order."""
        with self._path.open("rb") as fh:
            while True:
                try:
                    yield pickle.load(fh)  # our own temporary file, written above
                except EOFError:
                    return

    def close(self) -> None:
        """Remove the spool file."""
        if self._fh is not None:
            with contextlib.suppress(OSError):  # a full disk: the file goes anyway
                self._fh.close()
            self._fh = None
        self._path.unlink(missing_ok=True)

    def __enter__(self) -> RecordSpool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _csv_cell(value: object) -> object:
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


@contextlib.contextmanager
def _text_sink(tmp: Path, fmt: str) -> Iterator[IO[str]]:
    with _byte_sink(tmp, fmt) as raw:
        # backslashreplace: a lone surrogate (no UTF-8 form) is written as its \udXXX escape,
        # which a JSON string reads back as the same text (a CSV cell keeps it visible)
        text = io.TextIOWrapper(raw, encoding="utf-8", errors="backslashreplace", newline="")
        try:
            yield text
        finally:
            text.close()


@contextlib.contextmanager
def _byte_sink(tmp: Path, fmt: str) -> Iterator[Any]:
    if fmt == "jsonl.gz":
        import gzip  # only for a .gz output

        raw: Any = gzip.open(tmp, "wb")  # noqa: SIM115 - closed with the text wrapper
    elif fmt == "jsonl.zst":
        import zstandard

        raw = zstandard.ZstdCompressor().stream_writer(tmp.open("wb"), closefd=True)
    else:
        raw = tmp.open("wb")
    try:
        yield raw
    finally:
        raw.close()


def splice_texts(
    out: list[bytes],
    lines: Sequence[bytes],
    spans: npt.NDArray[np.int64],
    got: tuple[npt.NDArray[np.int64], npt.NDArray[np.uint8], npt.NDArray[np.int64]],
    text_field: str,
) -> None:
    """Put each changed record of a batch in ``out`` (``lines``, ``substrings``): its line with
    the new text's JSON string (``json.dumps(text, ensure_ascii=False)``) in place of the old
    one, or (no span) decoded, changed and encoded again.

    Args:
        out: The batch's output lines, changed in place.
        lines / spans: The records' raw lines and their text values' spans
            (:func:`neardup.packed.read_jsonl_packed_lines`).
        got: ``(changed records, kept texts packed, their offsets)``.
        text_field: The text field (for the lines the scanner left to ``json.loads``).
    """
    from neardup.corpus._lines import json_strings

    changed, kept, kept_offsets = got
    values, v_off = json_strings(kept, kept_offsets, changed)
    splice_values(out, lines, spans, changed, values, v_off, text_field)


def splice_values(
    out: list[bytes],
    lines: Sequence[bytes],
    spans: npt.NDArray[np.int64],
    changed: npt.NDArray[np.int64],
    values: npt.NDArray[np.uint8],
    v_off: npt.NDArray[np.int64],
    text_field: str,
) -> None:
    """Put changed records in ``out``: record ``changed[j]`` gets the text whose JSON string is
    ``values[v_off[j] : v_off[j + 1]]``. A record with a span is its line with that string in
    place of its text value's; one without (the line went to ``json.loads``) is decoded, gets
    the text and is encoded again as the record writer does."""
    raw = values.tobytes()
    v = v_off.tolist()
    for j, k in enumerate(changed.tolist()):
        a, b = spans[k].tolist()
        line = lines[k]
        value = raw[v[j] : v[j + 1]]
        if a >= 0:
            out[k] = (line[:a] + value + line[b:]).strip(b" \t\r") + b"\n"
            continue
        record = json.loads(line)
        record[text_field] = json.loads(value.decode("utf-8", "surrogatepass"))
        out[k] = (json.dumps(record, ensure_ascii=False, default=str) + "\n").encode(
            "utf-8", "backslashreplace"
        )


def write_jsonl_lines(batches: Iterable[Sequence[bytes]], out: Path) -> int:
    """Write batches of encoded JSONL lines (each ending in ``\\n``) to ``out`` (``.jsonl``,
    ``.jsonl.gz`` or ``.jsonl.zst``), atomically; returns the number of lines.

    Raises:
        ConfigError: ``out`` is not a JSONL path.
    """
    fmt = record_format(out)
    if not fmt.startswith("jsonl"):
        raise ConfigError(f"{out}: JSON lines need a .jsonl, .jsonl.gz or .jsonl.zst file")
    n = 0
    with atomic_file(out) as tmp, _byte_sink(tmp, fmt) as fh:
        for batch in batches:
            if fmt == "jsonl":  # a buffered file: one joined ~1 MB buffer per write costs
                fh.writelines(batch)  # twice the system time of the buffer's own writes
            else:  # the compressors take one buffer (zstandard's writer has no writelines)
                fh.write(b"".join(batch))
            n += len(batch)
    return n


def write_records(
    batches: Iterable[Sequence[Mapping[str, object]]],
    out: Path,
    *,
    columns: Sequence[str] | None = None,
    schema: Any = None,
) -> int:
    """Write record batches to ``out`` in the format its extension names, atomically.

    Args:
        batches: Records (mappings) in batches, in output order.
        out: The target file (replaced only when the write succeeds).
        columns: Column order for CSV (default: the first record's keys).
        schema: A ``pyarrow.Schema`` for Parquet (default: inferred from the first batch).

    Returns:
        The number of records written.

    Raises:
        ConfigError: unknown extension.
        InputError: a batch does not fit the Parquet schema.
        MissingExtraError: Parquet without pyarrow.
    """
    fmt = record_format(out)
    n = 0
    with atomic_file(out) as tmp:
        if fmt == "parquet":
            from neardup._extras import require_extra

            pa = require_extra("parquet", "pyarrow")
            import pyarrow.parquet as pq

            writer = None
            try:
                for batch in batches:
                    try:
                        table = pa.Table.from_pylist(list(batch), schema=schema)
                    except (pa.ArrowException, TypeError, ValueError) as exc:
                        raise InputError(
                            f"{out}: records do not fit one Parquet schema ({exc}); write a "
                            ".jsonl file instead"
                        ) from None
                    if writer is None:
                        schema = table.schema
                        writer = pq.ParquetWriter(str(tmp), schema)
                    writer.write_table(table)
                    n += len(batch)
                if writer is None and schema is not None:
                    writer = pq.ParquetWriter(str(tmp), schema)
            finally:
                if writer is not None:
                    writer.close()
            return n
        import csv  # only for a .csv output (imported here, as gzip: most runs write neither)

        with _text_sink(tmp, fmt) as fh:
            cw: Any = None
            for batch in batches:
                for record in batch:
                    if fmt == "csv":
                        if cw is None:
                            cols = list(columns) if columns is not None else list(record)
                            cw = csv.DictWriter(fh, cols, extrasaction="ignore")
                            cw.writeheader()
                        cw.writerow({k: _csv_cell(v) for k, v in record.items()})
                    else:
                        fh.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
                    n += 1
            if fmt == "csv" and cw is None and columns is not None:
                csv.DictWriter(fh, list(columns)).writeheader()
    return n


def _set_path(record: dict[str, object], parts: Sequence[str], value: object) -> None:
    node: Any = record
    for part in parts[:-1]:
        child = node.get(part) if isinstance(node, dict) else None
        if not isinstance(child, dict):
            child = {}
            node[part] = child
        else:
            child = dict(child)  # copy on write: the spooled record is not changed
            node[part] = child
        node = child
    node[parts[-1]] = value


def cleaned_records(
    docs: Iterable[Document], *, text_field: str = "text", batch_size: int = 1024
) -> Iterator[list[dict[str, object]]]:
    """Records for documents whose text was rewritten (``lines``, ``substrings``): the record
    as read with ``text_field`` (a path such as ``meta.body``) set to the new text; a file
    document becomes ``{"id", "path", "text"}``."""
    parts = text_field.split(".")
    batch: list[dict[str, object]] = []
    for d in docs:
        if d.fields is not None and not (d.path is not None and "path" in d.fields):
            record = dict(d.fields)
            _set_path(record, parts, d.text)
        else:
            record = {"id": d.id, "text": d.text}
            if d.path is not None:
                record["path"] = str(d.path)
        batch.append(record)
        if len(batch) >= batch_size:
            yield batch
            batch = []
    if batch:
        yield batch
