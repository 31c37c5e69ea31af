"""``neardup dedup --engine spark``: run on Spark via :mod:`neardup.spark.cli`, print the result."""

from __future__ import annotations

import sys
from typing import Any

import click

from neardup.report import write_clusters

__all__ = ["spark_dedup"]


def spark_dedup(
    paths: tuple[str, ...],
    method: str,
    threshold: float | None,
    id_field: str | None,
    text_field: tuple[str, ...],
    output: str | None,
    master: str | None,
    fmt: str,
    show_pairs: bool,
    report: str | None,
    keep: str | None,
    index_path: str | None,
    max_members: int | None,
    quiet: bool,
    options: dict[str, Any],
    *,
    annotate: str | None = None,
    annotate_keep: str = "first",
    on_error: str = "fail",
    spark_conf: tuple[str, ...] = (),
) -> None:
    """``dedup --engine spark``: JSONL/Parquet paths in, the same cluster output as local."""
    if method not in ("minhash", "simhash"):
        raise click.UsageError("--engine spark supports --method minhash and simhash")
    local_only = (
        ("--pairs", show_pairs),
        ("--report", report),
        ("--keep", keep),
        ("--index", index_path),
    )
    for flag, value in local_only:
        if value:
            raise click.UsageError(f"{flag} is not available with --engine spark")
    from neardup.spark.cli import run_spark_dedup
    from neardup.spark.session import parse_spark_conf

    conf = parse_spark_conf(spark_conf)  # before the session: a typo fails in one line

    summary = run_spark_dedup(
        list(paths),
        method=method,
        threshold=threshold,
        id_field=id_field,
        text_field=text_field,
        output=output,
        master=master,
        collect=output is None,
        annotate=annotate,
        keep=annotate_keep,
        on_error=on_error,
        spark_conf=conf,
        **options,
    )
    if output is None:
        write_clusters(summary.clusters, sys.stdout, fmt=fmt, max_members=max_members)  # type: ignore[arg-type]
    if not quiet:
        click.echo(
            f"neardup (spark): {summary.n_docs} documents, {len(summary.clusters)} clusters, "
            f"{summary.n_clustered} clustered documents, "
            f"{summary.stats.get('seconds_total', 0.0):.2f} s",
            err=True,
        )
