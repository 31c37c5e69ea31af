"""``SparkDedupConfig``: what ``neardup dedup --engine spark`` runs, as one validated value."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from neardup.errors import ConfigError

if TYPE_CHECKING:
    from neardup.spark.cli import SparkDedupSummary

__all__ = ["SPARK_KEEP_RULES", "SPARK_METHODS", "SparkDedupConfig"]

#: The methods the Spark engine runs.
SPARK_METHODS = ("minhash", "simhash")
#: The keep rules of ``annotate`` on Spark.
SPARK_KEEP_RULES = ("first", "representative", "longest")


@dataclass(frozen=True, slots=True)
class SparkDedupConfig:
    """A Spark dedup run over record inputs (see :func:`neardup.spark.cli.run_spark_dedup`,
    whose arguments these are).

    Attributes:
        paths: Record files or folders of them (JSONL, CSV, TSV, Parquet; Arrow, Hugging
            Face folders, ``.xz``/``.zst`` are staged first); any path Spark reads.
        method: ``minhash`` or ``simhash``.
        threshold: Similarity threshold in [0, 1] (default: the method's).
        id_field: The id field (nested: ``meta.url``); default ``id``, else a row number.
        text_field: The text field(s); several are joined with newlines.
        output: Write the ``(id, cluster)`` rows here (Parquet for ``.parquet``, else JSON
            lines); ``None``: the clusters are collected to the driver.
        master: Spark master URL (default: spark-submit's, else ``local[*]``).
        annotate: Write every input record with the dedup columns here.
        keep: The keep rule of ``annotate``: ``first``, ``representative`` or ``longest``
            (the local engine's rule, :mod:`neardup.keep`).
        clustering: ``None``: a record is removed only for a kept record it has an accepted
            pair with (the default); ``components``: one record kept per cluster, chains
            included (as ``--clustering components`` locally).
        on_error: ``fail`` or ``skip`` malformed records and corrupt files.
        spark_conf: Spark settings for a new session (``spark.driver.memory``...).
        options: The method's and :func:`~neardup.spark.dedup_dataframe`'s options
            (``num_perm``, ``partitions``, ``max_bucket``...).

    Raises:
        ConfigError: no path, another method, a threshold outside [0, 1], a bad ``keep``,
            ``clustering`` or ``on_error``.

    Examples:
        >>> SparkDedupConfig(("a.parquet",), method="simhash").method
        'simhash'
        >>> SparkDedupConfig(("a.parquet",), method="tlsh")
        Traceback (most recent call last):
        ...
        neardup.errors.ConfigError: the Spark engine runs minhash and simhash, not 'tlsh' ...
    """

    paths: tuple[str, ...]
    method: str = "minhash"
    threshold: float | None = None
    id_field: str | None = None
    text_field: tuple[str, ...] = ("text",)
    output: str | None = None
    master: str | None = None
    annotate: str | None = None
    keep: str = "first"
    clustering: str | None = None
    on_error: str = "fail"
    spark_conf: Mapping[str, str] = field(default_factory=dict)
    options: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.paths:
            raise ConfigError("a Spark run needs at least one input path")
        if self.method not in SPARK_METHODS:
            raise ConfigError(
                f"the Spark engine runs {' and '.join(SPARK_METHODS)}, not {self.method!r} "
                "(run the others locally: --engine local)"
            )
        if self.threshold is not None and not 0.0 <= self.threshold <= 1.0:
            raise ConfigError(f"threshold must be in [0, 1], got {self.threshold!r}")
        if self.keep not in SPARK_KEEP_RULES:
            raise ConfigError(
                f"keep must be one of {', '.join(SPARK_KEEP_RULES)} on Spark, got {self.keep!r}"
            )
        if self.clustering not in (None, "components"):
            raise ConfigError(
                f"the Spark engine clusters by components, not {self.clustering!r} "
                "(run it locally: --engine local)"
            )
        if self.on_error not in ("fail", "skip"):
            raise ConfigError(f"on_error must be 'fail' or 'skip', got {self.on_error!r}")
        if "-" in self.paths:
            raise ConfigError("the Spark engine reads files, not stdin; save it to a file first")

    def run(self) -> SparkDedupSummary:
        """Run it (:func:`neardup.spark.cli.run_spark_dedup`).

        Raises:
            MissingExtraError: pyspark is not installed.
        """
        from neardup.spark import cli

        return cli.run_spark_dedup(
            list(self.paths),
            method=self.method,
            threshold=self.threshold,
            id_field=self.id_field,
            text_field=self.text_field,
            output=self.output,
            master=self.master,
            collect=self.output is None,
            annotate=self.annotate,
            keep=self.keep,
            clustering=self.clustering,
            on_error=self.on_error,
            spark_conf=dict(self.spark_conf),
            **dict(self.options),
        )
