"""``neardup dedup --engine spark``: run a :class:`~neardup.spark.config.SparkDedupConfig`,
print the result."""

from __future__ import annotations

import sys
from typing import Any

import click

from neardup.report import write_clusters
from neardup.spark.config import SparkDedupConfig

__all__ = ["spark_config", "spark_dedup"]


def spark_config(
    paths: tuple[str, ...], method: str, options: dict[str, Any], o: dict[str, Any]
) -> SparkDedupConfig:
    """The Spark run that ``dedup --engine spark`` options ``o`` ask for; a local-only option
    is a usage error."""
    from neardup.spark.config import SPARK_METHODS
    from neardup.spark.session import parse_spark_conf

    if o["output"] is not None:
        raise click.UsageError("--output is not available with --engine spark")
    if o["clustering"] == "center":
        raise click.UsageError("--engine spark clusters by components only")
    if method not in SPARK_METHODS:
        raise click.UsageError("--engine spark supports --method minhash and simhash")
    local_only = {"--pairs": o["show_pairs"], "--report": o["report"], "--index": o["index_path"]}
    local_only["--min-length"] = o["min_length"]
    local_only["--keep"] = o["keep"] if o["annotate"] is None else None
    for flag, value in local_only.items():
        if value:
            raise click.UsageError(f"{flag} is not available with --engine spark")
    if o["partitions"] is not None:
        options = options | {"partitions": o["partitions"]}
    return SparkDedupConfig(
        paths,
        method=method,
        threshold=o["threshold"],
        id_field=o["id_field"],
        text_field=o["text_field"],
        output=o["spark_output"],
        master=o["master"],
        annotate=o["annotate"],
        keep=o["keep"] or "first",
        clustering=o["clustering"],
        on_error=o["on_error"],
        spark_conf=parse_spark_conf(o["spark_conf"]),  # before the session: a typo in one line
        options=options,
    )


def spark_dedup(
    config: SparkDedupConfig, *, fmt: str = "jsonl", max_members: int | None = None, quiet: bool
) -> None:
    """Run ``config`` on Spark; print its clusters (when collected) and a summary line."""
    summary = config.run()
    if config.output is None:
        write_clusters(summary.clusters, sys.stdout, fmt=fmt, max_members=max_members)  # type: ignore[arg-type]
    if not quiet:
        removed = "" if summary.removed is None else f"{summary.removed} removed, "
        click.echo(
            f"neardup (spark): {summary.n_docs} documents, {len(summary.clusters)} clusters, "
            f"{summary.n_clustered} clustered documents, {removed}"
            f"{summary.stats.get('seconds_total', 0.0):.2f} s",
            err=True,
        )
