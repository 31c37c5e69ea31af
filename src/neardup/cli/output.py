"""What ``neardup dedup`` prints besides its stdout: the summary line on stderr."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from neardup.corpus import CorpusResult

__all__ = ["write_summary"]


def write_summary(run: CorpusResult) -> None:
    """The run's one-line summary on stderr (and what the readers left out, if anything)."""
    result, stats = run.result, run.read_stats
    s = result.stats
    known = len(result.stored)
    # stored documents that matched are in the clusters, not among the documents read
    also = f" (+{known} stored that they match)" if known else ""
    short = f" ({len(run.short)} shorter than --min-length)" if run.short else ""
    # what --keep removed (chained clusters keep more than one record each)
    removed = "" if run.removed is None else f"{run.removed} removed, "
    click.echo(
        f"neardup: {result.n_docs + len(run.short)} documents{also}, "
        f"{len(result.clusters)} clusters, {result.duplicates} duplicates, {removed}"
        f"{len(result.pairs)} pairs, {run.skipped} skipped{short}, "
        f"{s.get('seconds_total', 0.0):.2f} s",
        err=True,
    )
    left = stats.summary() if stats is not None else ""
    if left:
        click.echo(f"neardup: {left}", err=True)
