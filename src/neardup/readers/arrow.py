"""Columnar record files through pyarrow (extra ``parquet``): Parquet, Arrow IPC / Feather and
Hugging Face ``save_to_disk`` folders, read one record batch at a time.

Only the columns the text and id paths start in are loaded, unless the caller keeps every
field (``--annotate``), and a batch is released before the next is read, so memory follows
the batch size, not the file size.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from neardup.errors import InputError

__all__ = ["hf_data_files", "is_hf_dataset", "iter_arrow_batches"]

#: Rows per record batch read from Parquet.
BATCH_ROWS = 4096


def _pa() -> Any:
    from neardup._extras import require_extra

    return require_extra("parquet", "pyarrow")


def _errors() -> tuple[type[BaseException], ...]:
    pa = _pa()
    return (pa.ArrowException, OSError, ValueError)


def is_hf_dataset(path: Path) -> bool:
    """Whether ``path`` is a folder written by ``datasets``' ``save_to_disk``: a ``Dataset``
    (``state.json`` + ``dataset_info.json`` + ``*.arrow``) or a ``DatasetDict``
    (``dataset_dict.json`` + one such folder per split)."""
    return path.is_dir() and (
        (path / "state.json").is_file() or (path / "dataset_dict.json").is_file()
    )


def hf_data_files(path: Path) -> list[tuple[str, Path]]:
    """The Arrow files of a ``save_to_disk`` folder in row order, each with its split label
    (``""`` for a plain Dataset).

    Raises:
        InputError: the JSON metadata is unreadable or names a file that is missing.
    """
    if (path / "dataset_dict.json").is_file():
        out: list[tuple[str, Path]] = []
        for split in _splits(path):
            out.extend((split, f) for f in _dataset_files(path / split))
        return out
    return [("", f) for f in _dataset_files(path)]


def _splits(path: Path) -> list[str]:
    """The split names of a ``DatasetDict`` folder: distinct plain folder names, each a
    ``Dataset`` folder (never the folder itself, a parent, or another ``DatasetDict``)."""
    where = path / "dataset_dict.json"
    try:
        splits = json.loads(where.read_text("utf-8"))["splits"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise InputError(
            f"{where}: not a readable dataset_dict.json ({type(exc).__name__}: {exc}); re-save "
            "the dataset with datasets' save_to_disk"
        ) from None
    if not isinstance(splits, list) or not all(isinstance(x, str) for x in splits):
        raise InputError(f"{where}: 'splits' must be a list of split names, got {splits!r}")
    for split in splits:
        bad = split in ("", ".", "..") or "/" in split or "\\" in split
        if bad or splits.count(split) > 1:
            raise InputError(
                f"{where} names the split {split!r}, which is not a distinct folder inside "
                f"{path} (a split cannot be the folder itself, a parent or a path); fix the "
                "file or re-save the dataset"
            )
        if (path / split / "dataset_dict.json").exists():
            raise InputError(
                f"{where}: the split {split!r} holds a dataset_dict.json of its own; a split is "
                "one Dataset folder: re-save the dataset with save_to_disk"
            )
    return splits


def _dataset_files(path: Path) -> list[Path]:
    """The Arrow files of one ``Dataset`` folder, in ``state.json`` order."""
    try:
        state = json.loads((path / "state.json").read_text("utf-8"))
        files = [path / str(entry["filename"]) for entry in state["_data_files"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise InputError(
            f"{path}: not a readable save_to_disk folder ({type(exc).__name__}: {exc}); "
            "re-save it with datasets' save_to_disk"
        ) from None
    for f in files:
        if not f.is_file():
            raise InputError(f"{path}: state.json names {f.name}, which is missing")
    return files


def _check_columns(schema: Any, columns: Sequence[str], path: Path) -> None:
    names = list(schema.names)
    for c in columns:
        if c not in names:
            raise InputError(
                f"{path}: no column {c!r} (columns: {', '.join(names[:12])}); name the right "
                "one with --text-field / --id-field (nested: a.b)"
            )


def iter_arrow_batches(
    path: Path,
    kind: str,
    *,
    columns: Sequence[str] | None,
    required: Sequence[str] = (),
) -> Iterator[list[dict[str, object]]]:
    """Yield the records of a columnar file as lists of dicts, one list per record batch.

    Args:
        path: The file.
        kind: ``parquet``, ``ipc`` (Arrow IPC file or stream, Feather v2) .
        columns: The top-level columns to load (``None``: all of them; columns that are not
            in the file are left out).
        required: Columns that must exist (the text fields' roots).

    Raises:
        InputError: the file is not readable (a corrupt footer, a truncated stream) or lacks
            a required column; the message names the file.
        MissingExtraError: pyarrow is not installed.
    """
    pa = _pa()
    errors = _errors()
    try:
        if kind == "parquet":
            import pyarrow.parquet as pq

            pf = pq.ParquetFile(path)
            schema = pf.schema_arrow
            _check_columns(schema, required, path)
            cols = None if columns is None else [c for c in columns if c in schema.names]
            for batch in pf.iter_batches(batch_size=BATCH_ROWS, columns=cols):
                yield batch.to_pylist()
            return
        import pyarrow.ipc as ipc

        with pa.memory_map(str(path), "r") as source:
            try:
                reader: Any = ipc.open_file(source)
                batches = (reader.get_batch(i) for i in range(reader.num_record_batches))
            except pa.ArrowInvalid:
                source.seek(0)
                reader = ipc.open_stream(source)
                batches = iter(reader)
            schema = reader.schema
            _check_columns(schema, required, path)
            cols = None if columns is None else [c for c in columns if c in schema.names]
            for batch in batches:
                chosen = batch if cols is None else batch.select(cols)
                yield chosen.to_pylist()
    except InputError:
        raise
    except errors as exc:
        raise InputError(
            f"{path}: not readable as {'Parquet' if kind == 'parquet' else 'Arrow IPC'} "
            f"({type(exc).__name__}: {exc}); the file may be truncated or corrupt"
        ) from None
