"""What ``neardup dedup`` writes besides its stdout: the HTML report, the kept copy, the summary."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from neardup.cli import inputs

if TYPE_CHECKING:
    from neardup.readers import ReadStats
    from neardup.report import DedupResult
    from neardup.report.sources import DocumentSource
    from neardup.types import DocId

__all__ = ["report_source", "write_kept", "write_report", "write_summary"]

log = logging.getLogger("neardup")


def report_source(input_format: str, main_content: bool) -> DocumentSource:
    """Remembers where each document is while the run streams them (no second read)."""
    from neardup.io import read_file_text
    from neardup.report.sources import DocumentSource

    def load(path: Path) -> str:
        return read_file_text(path, input_format=input_format, main_content=main_content)

    return DocumentSource(loader=load)


def write_report(result: DedupResult, report: str, source: DocumentSource, *, binary: bool) -> None:
    """Write the HTML report, reading back only the documents it shows."""
    from neardup.report.html import write_html

    with source:
        write_html(
            result,
            report,
            texts=None if binary else source.text,
            images=source.path if binary else None,
            links=source.path,
        )
    log.info("report written to %s", report)


def write_kept(
    result: DedupResult,
    paths: tuple[str, ...],
    output: Path,
    keep: str,
    *,
    binary: bool,
    force: bool = False,
    within_threshold: bool = True,
    **read: Any,
) -> int:
    """Write the deduplicated copy (``--keep`` with ``--output``); return the documents kept
    (``within_threshold``: see :func:`neardup.pipeline.kept_ids`)."""
    from neardup._paths import record_file
    from neardup.corpus.output import write_kept_copy
    from neardup.corpus.records import record_format
    from neardup.pipeline import kept_ids

    sizes: dict[DocId, int] | None = None
    if keep == "longest":
        sizes = {}
        for d in inputs.documents(paths, binary=binary, **read):
            sizes[d.id] = d.path.stat().st_size if binary and d.path else len(d.text or "")
    kept = {
        str(k) for k in kept_ids(result, keep=keep, sizes=sizes, within_threshold=within_threshold)
    }
    fields, id_field = read.get("text_field", ("text",)), read.get("id_field")
    to_lines = record_file(output) and record_format(output).startswith("jsonl")
    if to_lines and inputs.plain_jsonl(paths, fields, id_field, read.get("on_error", "fail")):
        # one JSONL file to JSON lines: the kept records' own lines, never decoded again
        from neardup.corpus.output import kept_jsonl_lines
        from neardup.corpus.records import write_jsonl_lines

        lines = kept_jsonl_lines(
            Path(paths[0]), kept, id_field=id_field or "id", text_field=fields[0]
        )
        return write_jsonl_lines(lines, output)
    return write_kept_copy(
        inputs.documents(paths, binary=binary, keep_fields=True, **read), kept, output, force=force
    )


def write_summary(result: DedupResult, stats: ReadStats | None) -> None:
    """The run's one-line summary on stderr (and what the readers skipped, if anything;
    ``None``: a reader that skips nothing)."""
    s = result.stats
    known = len(result.stored)
    # stored documents that matched are in the clusters, not among the documents read
    also = f" (+{known} stored that they match)" if known else ""
    click.echo(
        f"neardup: {result.n_docs} documents{also}, {len(result.clusters)} clusters, "
        f"{result.duplicates} duplicates, {len(result.pairs)} pairs, "
        f"{int(s.get('skipped', 0)) + (stats.bad_records if stats is not None else 0)} skipped, "
        f"{s.get('seconds_total', 0.0):.2f} s",
        err=True,
    )
    left = stats.summary() if stats is not None else ""
    if left:
        click.echo(f"neardup: {left}", err=True)
