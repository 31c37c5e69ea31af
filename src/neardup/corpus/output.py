"""Atomic outputs: a folder or file is written under a temporary name beside its target and
renamed into place, so a killed run leaves no partial copy; nothing is written outside it
(the writing itself lives in :mod:`neardup._atomic`; its three context managers are public
here)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Iterator
from itertools import groupby, islice
from pathlib import Path, PurePosixPath

from neardup._atomic import atomic_dir, atomic_file, check_target
from neardup._paths import record_file
from neardup.errors import InputError
from neardup.io import Document

__all__ = [
    "atomic_dir",
    "atomic_file",
    "check_target",
    "kept_jsonl_lines",
    "safe_relative",
    "shard_name",
    "write_kept_copy",
    "write_kept_folder",
]


_BATCH = 1024  # kept records per write


def safe_relative(doc_id: str) -> PurePosixPath:
    """The relative path a document's copy takes under the output folder.

    Raises:
        InputError: the id is absolute or climbs out (``..``): the copy would land outside.

    Examples:
        >>> safe_relative("a/b.txt").as_posix()
        'a/b.txt'
    """
    rel = PurePosixPath(doc_id.replace("\\", "/"))
    if rel.is_absolute() or ".." in rel.parts or not rel.parts or rel.as_posix() in (".", ""):
        raise InputError(
            f"{doc_id!r} would be written outside the output folder; give the input as a folder "
            "(ids relative to it) or write a .jsonl --output"
        )
    return rel


def kept_jsonl_lines(
    path: Path, kept: set[str], *, id_field: str = "id", text_field: str = "text"
) -> Iterator[list[bytes]]:
    """The kept records of one JSONL file as its own lines (surrounding whitespace and a
    CRLF's ``\\r`` trimmed, ``\\n`` added), in batches: no record is decoded or encoded
    again, so every field comes back byte for byte as it was read.

    Raises:
        InputError: a line that is not a JSON object with a string ``text_field``, as when
            the file was first read.

    Examples:
        >>> import tempfile
        >>> p = Path(tempfile.mkdtemp()) / "in.jsonl"
        >>> _ = p.write_text('{"id": "a", "text": "x", "n": 1.50}\\n{"id": "b", "text": "x"}\\n')
        >>> [b"".join(batch) for batch in kept_jsonl_lines(p, {"a"})]
        [b'{"id": "a", "text": "x", "n": 1.50}\\n']
    """
    from neardup.packed import read_jsonl_packed_lines

    for docs, lines, _ in read_jsonl_packed_lines(path, id_field=id_field, text_field=text_field):
        yield [
            line.strip(b" \t\r") + b"\n"
            for doc_id, line in zip(docs.ids, lines, strict=True)
            if doc_id in kept
        ]


def write_kept_copy(
    docs: Iterable[Document], kept: set[str], output: Path, *, force: bool = False
) -> int:
    """Write the kept documents: a record file (``.jsonl``, ``.jsonl.gz``, ``.jsonl.zst``,
    ``.csv`` or ``.parquet``: each input record with all its fields, a file as
    :func:`neardup.corpus.records.record_of` makes it, a binary one as ``{"id", "path"}``),
    or a folder of file copies.

    Both are atomic (temporary name, then rename); a folder refuses an existing non-empty
    target unless ``force``, and even then one that holds files neardup did not write or a
    document's own file; no copy lands outside it.

    Returns:
        How many documents were written.

    Raises:
        ConfigError: the target exists (folder, without ``force``), holds files neardup did
            not write, or holds a document's file.
        InputError: a record (not a file) was to be copied into a folder, or an id escapes.
        OutputError: the copy cannot be written (read-only folder, disk full).
    """
    if record_file(output):
        from neardup.corpus.records import record_of, write_records

        def kept_record(d: Document) -> dict[str, object]:
            record = record_of(d)
            if d.fields is None and d.text is None:
                del record["text"]  # a binary file: its path
            return record

        records = (kept_record(d) for d in docs if d.id in kept)
        return write_records(iter(lambda: list(islice(records, _BATCH)), []), output)
    return write_kept_folder(((d, None) for d in docs), kept, output, force=force)


def shard_name(name: str) -> PurePosixPath:
    """Where an input record file's kept records go under the output folder: its own name
    (relative to its folder) when neardup writes that format, else the name with
    ``.jsonl`` in place of its extensions (``.tsv``, ``.arrow``, ``.jsonl.bz2``...).

    Examples:
        >>> shard_name("data/part-0001.jsonl.gz").as_posix(), shard_name("b.v2.tsv").as_posix()
        ('data/part-0001.jsonl.gz', 'b.v2.jsonl')
        >>> shard_name("/abs/c.jsonl.bz2").as_posix()
        'c.jsonl'
    """
    try:
        rel = safe_relative(name)
    except InputError:  # a file given by an absolute or ../ path: its name
        rel = PurePosixPath(PurePosixPath(name.replace("\\", "/")).name)
    if record_file(rel):
        return rel
    stem = PurePosixPath(rel.name)
    if stem.suffix.lower() in (".gz", ".bz2", ".xz", ".zst"):
        stem = PurePosixPath(stem.stem)
    return rel.with_name(stem.stem + ".jsonl")


def write_kept_folder(
    items: Iterable[tuple[Document, str | None]],
    kept: set[str],
    output: Path,
    *,
    force: bool = False,
) -> int:
    """Write the kept documents to a folder that mirrors the inputs: a file document is
    copied (under its id, a path relative to its input folder); the records of an input
    record file (``items`` give its name, records of one file in a row) go to one shard of
    the same name (:func:`shard_name`) holding its kept records, with all their fields. A
    shard whose records were all duplicates is written empty.

    Atomic, as :func:`write_kept_copy`; returns how many documents were written.

    Raises:
        ConfigError: the target exists (without ``force``), holds files neardup did not
            write, or holds a document's file.
        InputError: a record with no input file (stdin, a Hugging Face folder), an id that
            escapes, or two documents that map to one path.
        OutputError: the copy cannot be written.
    """
    n = 0
    real_out = Path(os.path.realpath(output))
    with atomic_dir(output, force=force) as tmp:
        for shard, group in groupby(items, key=lambda item: item[1]):
            if shard is not None:
                n += _write_shard(tmp, shard_name(shard), (d for d, _ in group), kept)
                continue
            for d, _ in group:
                n += _copy_file(d, kept, tmp, real_out, output)
    return n


def _write_shard(tmp: Path, rel: PurePosixPath, docs: Iterator[Document], kept: set[str]) -> int:
    """Write the kept records of one input record file to ``tmp / rel``."""
    from neardup.corpus.records import record_format, record_of, write_records

    target = tmp.joinpath(*rel.parts)
    if target.exists():
        raise InputError(
            f"two input files map to {rel} in the output folder; give their folders as "
            "inputs so that their names differ"
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    first = next(docs)
    stream = (record_of(d) for d in _chain_one(first, docs) if d.id in kept)
    schema = None
    if record_format(target) == "parquet":
        import pyarrow as pa

        schema = pa.Table.from_pylist([record_of(first)]).schema  # for an empty shard
    batches = iter(lambda: list(islice(stream, _BATCH)), [])
    return write_records(batches, target, schema=schema)


def _chain_one(first: Document, rest: Iterator[Document]) -> Iterator[Document]:
    yield first
    yield from rest


def _copy_file(d: Document, kept: set[str], tmp: Path, real_out: Path, output: Path) -> int:
    """Copy a kept file document under ``tmp`` (1), or leave it (0)."""
    if d.path is not None and real_out in Path(os.path.realpath(d.path)).parents:
        raise InputError(
            f"the input {d.path} is inside the output folder {output}; replacing the "
            "folder would delete it: choose an output folder outside the inputs"
        )
    if d.id not in kept:
        return 0
    if d.path is None:
        raise InputError(f"{d.id!r} is a record, not a file; write the copy to a .jsonl --output")
    try:
        rel = safe_relative(d.id)
    except InputError:  # a file given by an absolute or ../ path: its name
        rel = PurePosixPath(d.path.name)
    target = tmp.joinpath(*rel.parts)
    if not target.resolve().is_relative_to(tmp.resolve()):
        raise InputError(f"{d.id!r} would be written outside the output folder")
    if target.exists():
        raise InputError(
            f"two kept documents map to {rel}; give their folders as inputs so that "
            "their ids differ"
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(d.path, target)
    return 1
