"""``neardup lines`` and ``neardup substrings``: clean a corpus of repeated lines and substrings."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from neardup.cli.inputs import documents
from neardup.cli.options import (
    F,
    errors,
    input_options,
    on_error_option,
    progress_option,
    quiet_option,
    record_options,
    stack,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from neardup.io import Document

    U8 = npt.NDArray[np.uint8]
    I64 = npt.NDArray[np.int64]

__all__ = ["lines_cmd", "substrings_cmd"]


def _corpus_inputs(fn: F) -> F:
    """Options shared by ``lines`` and ``substrings``: input, output and record fields."""
    return stack(
        click.option(
            "--output",
            "-o",
            type=click.Path(dir_okay=False),
            default=None,
            help="Cleaned records (.jsonl, .jsonl.gz, .jsonl.zst, .csv or .parquet); required "
            "unless --dry-run.",
        ),
        record_options,
        input_options,
        on_error_option,
        quiet_option(),
        progress_option,
    )(fn)


def _progress(
    quiet: bool, progress: bool | None, paths: tuple[str, ...], kw: dict[str, Any]
) -> tuple[Callable[[str, int], None] | None, Callable[[], None]]:
    """The progress callback of a corpus command (the total: the documents of ``paths``)."""
    from neardup.cli.progress import count_documents, pass_progress

    return pass_progress(
        quiet,
        progress,
        lambda: count_documents(paths, include=kw["include"], exclude=kw["exclude"]),
    )


def _corpus_reader(
    name: str, paths: tuple[str, ...], kw: dict[str, Any], output: str | None
) -> Callable[[], Iterator[Document]]:
    """A reader of the records that can be called more than once (files, not stdin)."""
    if "-" in paths:
        raise click.UsageError(f"{name} reads its input files again; save stdin to a file first")
    if len(kw["text_field"]) != 1:
        raise click.UsageError("give one --text-field: the cleaned text is written back into it")
    from neardup._paths import check_outputs

    if output is not None:
        check_outputs(paths, output=output)  # before the work: never over an input
    return lambda: documents(paths, binary=False, keep_fields=True, input_format="text", **kw)


def _packed_texts(
    paths: tuple[str, ...], kw: dict[str, Any]
) -> Callable[[], Iterator[tuple[U8, I64]]] | None:
    """For one plain JSONL file: its texts as packed batches (the counting pass then reads no
    record into Python objects); None otherwise."""
    from neardup.cli.inputs import plain_jsonl

    if not plain_jsonl(paths, kw["text_field"], kw["id_field"], kw["on_error"]):
        return None
    from neardup.packed import PackedBatches

    batches = PackedBatches(
        Path(paths[0]),
        kw["id_field"] or "id",
        kw["text_field"][0],
        id_required=kw["id_field"] is not None,
    )
    return lambda: ((b.buf, b.offsets) for b in batches)


@click.command("lines")
@click.argument("paths", nargs=-1, required=True)
@click.option(
    "--min-docs",
    type=click.IntRange(2),
    required=True,
    help="Remove a line (paragraph) found in at least this many documents.",
)
@click.option(
    "--unit",
    type=click.Choice(["line", "paragraph"]),
    default="line",
    show_default=True,
    help="Compare lines, or paragraphs (lines between blank lines).",
)
@click.option(
    "--min-line-length",
    type=click.IntRange(0),
    default=10,
    show_default=True,
    help="A line (paragraph) shorter than this many UTF-8 bytes is never removed.",
)
@click.option(
    "--min-words",
    type=click.IntRange(1),
    default=3,
    show_default=True,
    help="A line (paragraph) with fewer words than this is never removed (C4 keeps lines "
    "of 3 words or more; 1: every line counts, as for text without spaces).",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Write nothing: list the lines that would be removed on stdout, each with the "
    "number of documents that hold it, most frequent first.",
)
@_corpus_inputs
@errors
def lines_cmd(
    paths: tuple[str, ...],
    min_docs: int,
    unit: str,
    min_line_length: int,
    min_words: int,
    dry_run: bool,
    output: str | None,
    quiet: bool,
    progress: bool | None,
    **kw: Any,
) -> None:
    """Remove lines or paragraphs that occur in at least --min-docs documents (boilerplate)."""
    from neardup.corpus.lines import LinesSummary, remove_frequent_units
    from neardup.corpus.records import cleaned_records, record_format, write_records

    if output is None and not dry_run:
        raise click.UsageError("give --output (or --dry-run to list what would be removed)")
    read = _corpus_reader("lines", paths, kw, output)
    summary = LinesSummary(unit, min_docs)
    count = _packed_texts(paths, kw)
    limits: dict[str, Any] = {"min_docs": min_docs, "unit": unit, "min_words": min_words}
    limits["min_length"] = min_line_length
    update, close = _progress(quiet, progress, paths, kw)
    try:
        if dry_run:
            from neardup.corpus.lines import frequent_units

            found = frequent_units(read, count=count, summary=summary, progress=update, **limits)
            close()
            for text, n in found:
                click.echo(f"{n}\t{_escaped(text)}")
            if not quiet:
                click.echo(f"neardup lines: {len(found)} {unit}s would be removed", err=True)
            return
        assert output is not None
        if count is not None and record_format(output).startswith("jsonl"):  # raw lines pass
            from neardup.corpus.lines import remove_frequent_units_jsonl
            from neardup.corpus.records import write_jsonl_lines

            out_lines = remove_frequent_units_jsonl(
                Path(paths[0]),
                id_field=kw["id_field"] or "id",
                text_field=kw["text_field"][0],
                summary=summary,
                id_required=kw["id_field"] is not None,
                progress=update,
                **limits,
            )
            write_jsonl_lines(out_lines, Path(output))
        else:
            docs = remove_frequent_units(
                read, summary=summary, count=count, progress=update, **limits
            )
            write_records(cleaned_records(docs, text_field=kw["text_field"][0]), Path(output))
    finally:
        close()
    if not quiet:
        click.echo(f"neardup lines: {summary.line()}", err=True)


def _escaped(text: str) -> str:
    """A unit on one line of the listing: backslashes, tabs and newlines escaped."""
    return text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")


@click.command("substrings")
@click.argument("paths", nargs=-1, required=True)
@click.option(
    "--min-length",
    type=click.IntRange(8),
    required=True,
    help="Remove every repeat of at least this many UTF-8 bytes (the first copy stays).",
)
@click.option(
    "--shard-bytes",
    type=click.IntRange(1024),
    default=32 * 1024 * 1024,
    show_default=True,
    help="Text per shard; bounds memory (about 6 bytes per shard byte plus the window table).",
)
@_corpus_inputs
@errors
def substrings_cmd(
    paths: tuple[str, ...],
    min_length: int,
    shard_bytes: int,
    output: str | None,
    quiet: bool,
    progress: bool | None,
    **kw: Any,
) -> None:
    """Remove exact repeated substrings across the corpus (Lee et al. 2022's suffix-array marks)."""
    from neardup.corpus.records import record_format
    from neardup.corpus.substrings import SubstringSummary

    if output is None:
        raise click.UsageError("give --output: where the cleaned records go")
    _keep_freed_memory()
    fmt = record_format(output)
    read = _corpus_reader("substrings", paths, kw, output)
    summary = SubstringSummary(min_length)
    workdir = Path(output).resolve().parent
    update, close = _progress(quiet, progress, paths, kw)
    try:
        _substrings(paths, kw, fmt, read, output, min_length, shard_bytes, summary, workdir, update)
    finally:
        close()
    if not quiet:
        click.echo(f"neardup substrings: {summary.line()}", err=True)


#: glibc's ``mallopt`` parameters (malloc.h).
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3


def _keep_freed_memory() -> None:
    """Let glibc's malloc keep the memory a shard's buffers free, for the next ones.

    A shard allocates a dozen text-sized buffers one after another (the packed texts, the
    join, its marks, the kernels' tables, the kept bytes, their JSON strings, the output
    lines); by default glibc serves the large ones with ``mmap`` and gives them back on
    ``free``, so each is faulted in afresh (53,000 minor faults for a 28 MB corpus, against
    22,600 for ``dedup --keep first --output``). Served from the heap (``mmap`` from 32 MiB
    up, glibc's largest threshold) and not trimmed below 1 GiB, later buffers reuse the
    pages of earlier ones (about 10,000 faults fewer); the cost is that up to the peak of a
    shard stays mapped until the process ends. Only where glibc is the allocator, and not
    when the user set ``MALLOC_MMAP_THRESHOLD_`` or ``MALLOC_TRIM_THRESHOLD_`` themselves.
    """
    import ctypes
    import os

    try:
        libc = os.confstr("CS_GNU_LIBC_VERSION") or ""
    except (ValueError, OSError):  # no such name: not glibc
        return
    if not libc.startswith("glibc") or any(
        k in os.environ for k in ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_")
    ):
        return
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    mallopt(_M_MMAP_THRESHOLD, 32 << 20)
    mallopt(_M_TRIM_THRESHOLD, 1 << 30)


def _substrings(
    paths: tuple[str, ...],
    kw: dict[str, Any],
    fmt: str,
    read: Callable[[], Iterator[Document]],
    output: str,
    min_length: int,
    shard_bytes: int,
    summary: Any,
    workdir: Path,
    update: Callable[[str, int], None] | None,
) -> None:
    from neardup.corpus.records import cleaned_records, write_records
    from neardup.corpus.substrings import remove_repeated_substrings

    if _packed_texts(paths, kw) is not None and fmt.startswith("jsonl"):  # raw lines pass through
        from neardup.corpus.records import write_jsonl_lines
        from neardup.corpus.substrings import remove_repeated_substrings_jsonl

        out_lines = remove_repeated_substrings_jsonl(
            Path(paths[0]),
            min_length=min_length,
            shard_bytes=shard_bytes,
            id_field=kw["id_field"] or "id",
            text_field=kw["text_field"][0],
            summary=summary,
            workdir=workdir,
            id_required=kw["id_field"] is not None,
            progress=update,
        )
        write_jsonl_lines(out_lines, Path(output))
    else:
        docs = remove_repeated_substrings(
            read(),
            min_length=min_length,
            shard_bytes=shard_bytes,
            summary=summary,
            workdir=workdir,
            progress=update,
        )
        write_records(cleaned_records(docs, text_field=kw["text_field"][0]), Path(output))
