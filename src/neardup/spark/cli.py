"""The ``neardup dedup --engine spark`` runner: read JSONL / Parquet, cluster, write, summarize.

``cli.py`` parses the options and prints; this module owns the Spark side (session, readers,
writers) so the CLI stays a thin layer. Reading declares the id and text fields as strings, so
ids are compared as strings (as the local engine's ids are) and no schema-inference pass runs.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from neardup.errors import ConfigError, InputError
from neardup.report import Cluster

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["SparkDedupSummary", "input_format", "output_format", "run_spark_dedup"]

log = logging.getLogger(__name__)

_JSON_SUFFIXES = (".jsonl", ".json", ".ndjson")
_PARQUET_SUFFIXES = (".parquet", ".pq")


@dataclass(frozen=True)
class SparkDedupSummary:
    """What a Spark dedup run found, for the CLI to print like a local result.

    Attributes:
        clusters: Clusters of two or more members (members sorted, representative = the
            smallest id, numbered in representative order); empty when not collected.
        n_docs: Documents read (after rows with null texts were skipped, if asked).
        n_clustered: Documents in clusters of two or more.
        method: The method name.
        threshold: The similarity threshold used.
        output: Where the ``(id, cluster)`` rows were written, if anywhere.
        stats: Seconds and counts (``seconds_total``, ``clusters``...).
    """

    clusters: list[Cluster]
    n_docs: int
    n_clustered: int
    method: str
    threshold: float
    output: str | None = None
    stats: dict[str, float] = field(default_factory=dict)

    @property
    def duplicates(self) -> int:
        """Documents that a deduplicated copy drops (cluster members beyond one each)."""
        return self.n_clustered - len(self.clusters)


def _suffix(path: str) -> str:
    name = path.rstrip("/").lower()
    for comp in (".gz", ".bz2", ".zst", ".snappy"):
        name = name.removesuffix(comp)
    return Path(name).suffix


def input_format(paths: Sequence[str]) -> str:
    """``"jsonl"`` or ``"parquet"`` from the paths' suffixes (``.jsonl``/``.json``/``.ndjson``,
    optionally compressed, or ``.parquet``/``.pq``); a directory is read as Parquet when it
    holds ``*.parquet`` files, else as JSONL.

    Raises:
        InputError: no paths, unknown suffixes, or a mix of formats.

    Examples:
        >>> input_format(["a.jsonl", "b.json.gz"]), input_format(["part.parquet"])
        ('jsonl', 'parquet')
    """
    if not paths:
        raise InputError("no input paths; give JSONL or Parquet files or directories")
    found = set()
    for p in paths:
        suffix = _suffix(p)
        if suffix in _JSON_SUFFIXES:
            found.add("jsonl")
        elif suffix in _PARQUET_SUFFIXES:
            found.add("parquet")
        elif Path(p).is_dir():
            found.add("parquet" if any(Path(p).glob("*.parquet")) else "jsonl")
        else:
            raise InputError(
                f"{p}: cannot tell the format; name it .jsonl/.json/.ndjson or .parquet"
            )
    if len(found) > 1:
        raise InputError("the inputs mix JSONL and Parquet; run them separately")
    return found.pop()


def output_format(path: str) -> str:
    """``"parquet"`` for a ``.parquet``/``.pq`` output path, else ``"jsonl"``.

    Examples:
        >>> output_format("out.parquet"), output_format("out.jsonl")
        ('parquet', 'jsonl')
    """
    return "parquet" if _suffix(path) in _PARQUET_SUFFIXES else "jsonl"


def _session(master: str | None) -> SparkSession:
    """The active session, or a new one: ``master`` if given, else the one that
    ``spark-submit`` configured, else ``local[*]``."""
    from neardup._extras import require_extra

    require_extra("spark", "pyspark.sql")
    from pyspark import SparkConf
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName("neardup-dedup")
    if master is not None:
        builder = builder.master(master)
    elif SparkSession.getActiveSession() is None and not SparkConf().contains("spark.master"):
        builder = builder.master("local[*]")
    return builder.getOrCreate()


def _check_first_record(spark: SparkSession, paths: Sequence[str], names: Sequence[str]) -> None:
    """Fail early when the first JSONL record lacks a field (the declared-schema reader would
    silently read it as null)."""
    first = spark.read.text(list(paths)).first()
    if first is None:
        return
    try:
        record = json.loads(first[0])
    except ValueError as exc:
        raise InputError(f"the first line of {paths[0]} is not JSON: {exc}") from None
    if not isinstance(record, dict):
        raise InputError(f"the first line of {paths[0]} is not a JSON object")
    for name in names:
        if name not in record:
            raise InputError(
                f"the first record has no field {name!r} (it has {', '.join(map(repr, record))}); "
                "set --id-field / --text-field"
            )


def _read(spark: SparkSession, paths: Sequence[str], id_field: str, text_field: str) -> DataFrame:
    from pyspark.sql import functions as sf

    fmt = input_format(paths)
    if fmt == "jsonl":
        _check_first_record(spark, paths, (id_field, text_field))
        schema = f"`{id_field}` string, `{text_field}` string"
        return spark.read.schema(schema).option("mode", "FAILFAST").json(list(paths))
    df = spark.read.parquet(*paths)
    if id_field in df.columns and text_field in df.columns:
        return df.select(sf.col(id_field), sf.col(text_field))
    return df  # dedup_dataframe names the missing column


def run_spark_dedup(
    paths: Sequence[str],
    *,
    method: str = "minhash",
    threshold: float | None = None,
    id_field: str = "id",
    text_field: str = "text",
    output: str | None = None,
    master: str | None = None,
    collect: bool | None = None,
    **options: Any,
) -> SparkDedupSummary:
    """Run ``dedup_dataframe`` over JSONL or Parquet inputs; write and/or collect the result.

    Args:
        paths: JSONL (``.jsonl``, ``.json``, ``.ndjson``, optionally ``.gz``) or Parquet
            files or directories, any path Spark reads (``hdfs://``, ``s3a://``...).
        method: ``minhash`` or ``simhash``.
        threshold: Similarity threshold (default: the method's).
        id_field: The field holding unique document ids (read as strings from JSONL).
        text_field: The field holding the text.
        output: Write the ``(id, cluster)`` rows here: Parquet for a ``.parquet`` path, else
            JSON lines; Spark writes a directory of part files. ``None``: no write.
        master: Spark master URL (``local[*]``, ``spark://host:7077``, ``yarn``...); default:
            the one ``spark-submit`` set, else ``local[*]``.
        collect: Bring the clusters to the driver for printing; default: only when there is
            no ``output`` (collecting a billion-document result would not fit the driver).
        **options: Passed to :func:`~neardup.spark.dedup_dataframe` (``max_bucket``,
            ``on_null``, ``num_perm``...).

    Returns:
        A :class:`SparkDedupSummary`.

    Raises:
        InputError: unreadable or unrecognized inputs, bad columns or rows.
        ConfigError: a bad method, threshold or option.
        MissingExtraError: pyspark is not installed.
    """
    from pyspark.sql import functions as sf

    from neardup.methods import DEFAULT_THRESHOLDS
    from neardup.spark.dedup import dedup_dataframe

    if "include_singletons" in options:
        raise ConfigError("include_singletons is not a CLI option; the result lists clusters")
    t0 = time.perf_counter()
    spark = _session(master)
    df = _read(spark, paths, id_field, text_field)
    result = dedup_dataframe(
        df, id_col=id_field, text_col=text_field, method=method, threshold=threshold, **options
    )
    out = result.withColumnRenamed(id_field, "id") if id_field != "id" else result
    if output is not None:
        writer = out.write.mode("errorifexists")
        if output_format(output) == "parquet":
            writer.parquet(output)
        else:
            writer.json(output)
    clusters: list[Cluster] = []
    if collect if collect is not None else output is None:
        grouped = out.groupBy("cluster").agg(sf.sort_array(sf.collect_list("id")).alias("m"))
        rows = grouped.orderBy("cluster").collect()
        clusters = [Cluster(n, tuple(r["m"]), r["cluster"]) for n, r in enumerate(rows)]
        n_clustered = sum(c.size for c in clusters)
    else:
        n_clustered = out.count()
    if options.get("on_null") == "skip":
        df = df.filter(sf.col(text_field).isNotNull())
    n_docs = df.count()
    t = DEFAULT_THRESHOLDS.get(method, 0.0) if threshold is None else threshold
    stats = {"seconds_total": time.perf_counter() - t0, "documents": float(n_docs)}
    stats["clustered"] = float(n_clustered)
    return SparkDedupSummary(clusters, n_docs, n_clustered, method, float(t), output, stats)
