"""The ``neardup dedup --engine spark`` runner: read JSONL / Parquet, cluster, write, summarize.

``neardup.cli`` parses the options and prints; this module owns the Spark side (session, readers,
writers) so the CLI stays a thin layer. Reading declares the id and text fields as strings, so
ids are compared as strings (as the local engine's ids are) and no schema-inference pass runs.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from neardup.errors import ConfigError, InputError
from neardup.report import Cluster
from neardup.spark.order import collect_clusters, position
from neardup.spark.session import check_workers as _check_workers

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
        clusters: Clusters of two or more members, as the local engine gives them: members
            in input order, the representative the first of them, numbered in the order of
            the representatives; empty when not collected.
        n_docs: Documents read (after rows with null texts were skipped, if asked).
        n_clustered: Documents in clusters of two or more.
        method: The method name.
        threshold: The similarity threshold used.
        output: Where the ``(id, cluster)`` rows were written, if anywhere.
        stats: Seconds and counts (``seconds_total``, ``clusters``...).
        removed: Records the keep rule marked ``is_duplicate`` in ``annotate`` (``None``:
            no annotation written).
    """

    clusters: list[Cluster]
    n_docs: int
    n_clustered: int
    method: str
    threshold: float
    output: str | None = None
    stats: dict[str, float] = field(default_factory=dict)
    removed: int | None = None

    @property
    def duplicates(self) -> int:
        """Cluster members beyond one each, when the clusters were collected (what a copy
        keeping one record per cluster drops; the keep rule drops :attr:`removed`)."""
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


def _session(master: str | None, spark_conf: Mapping[str, str] | None = None) -> SparkSession:
    """The active session, or a new one: ``master`` if given, else the one that
    ``spark-submit`` configured, else ``local[*]``; with ``spark_conf`` given to the builder.

    A new local session's driver memory comes from the machine unless set by the user
    (:mod:`neardup.spark.session`). In local mode the Python workers run this interpreter
    (``PYSPARK_PYTHON`` is set to ``sys.executable`` unless it, or ``spark.pyspark.python``,
    is set already), so neardup imports there without any environment variable. Then one tiny
    job checks that the workers can import neardup, so that a wrong interpreter fails in one
    line, not in a Java trace.

    Raises:
        ConfigError: the workers' Python cannot import neardup, or no Java to start Spark
            with; the message says what to set or install.
    """
    import sys

    from neardup._extras import require_extra
    from neardup.spark.session import check_java, gateway_failed, session_conf, total_memory

    require_extra("spark", "pyspark.sql")
    from pyspark import SparkConf, SparkContext
    from pyspark.sql import SparkSession

    user = dict(spark_conf or {})
    builder = SparkSession.builder.appName("neardup-dedup")
    active = SparkSession.getActiveSession()
    if active is not None and master is None:
        for key, value in user.items():  # runtime settings only: the JVM runs already
            try:
                active.conf.set(key, value)
            except Exception as exc:  # pyspark's AnalysisException: a static setting
                log.warning("--spark-conf %s: not changed in the running session (%s)", key, exc)
        return active
    conf = SparkConf()
    resolved = master or conf.get("spark.master", None) or "local[*]"
    builder = builder.master(resolved)
    local = resolved.startswith("local")
    jvm_running = SparkContext._gateway is not None or "PYSPARK_GATEWAY_PORT" in os.environ
    if not jvm_running:
        check_java(os.environ)
        user = session_conf(local=local, user=user, env=os.environ, total=total_memory())
    for key, value in user.items():
        builder = builder.config(key, value)
    configured = os.environ.get("PYSPARK_PYTHON") or conf.get("spark.pyspark.python", None)
    if local and not configured:
        os.environ["PYSPARK_PYTHON"] = sys.executable
    try:
        spark = builder.getOrCreate()
    except Exception as exc:  # pyspark's own error types; only the gateway's is translated
        short = gateway_failed(exc)
        if short is None:
            raise
        raise short from None
    _check_workers(spark, local=local)
    return spark


def _check_first_record(spark: SparkSession, paths: Sequence[str], names: Sequence[str]) -> None:
    """Fail early when the first JSONL record lacks a field (the declared-schema reader would
    silently read it as null). Field paths (``meta.url``) are followed into objects."""
    from neardup.readers import FieldPath
    from neardup.readers.fields import MISSING

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
        if FieldPath.parse(name).get(record) is MISSING:
            raise InputError(
                f"the first record has no field {name!r} (it has {', '.join(map(repr, record))}); "
                "set --id-field / --text-field"
            )


#: Internal column names of the id, text and input position in a read DataFrame.
ID_COL, TEXT_COL, POS_COL = "_neardup_id", "_neardup_text", "_neardup_pos"


def _absolute(path: str) -> str:
    """A local path without a scheme, made absolute against this process's directory (Spark
    would resolve it against the directory its JVM started in); URLs stay as they are."""
    if "://" in path or path.startswith("/"):
        return path
    return os.path.abspath(path)


def _native(paths: Sequence[str]) -> str | None:
    """The one format Spark reads natively for all of ``paths`` (``jsonl``, ``parquet``,
    ``csv``, ``tsv``), or ``None`` when the inputs need neardup's readers first (Arrow IPC,
    Hugging Face folders, .xz / .zst, mixed folders)."""
    from neardup.readers import file_kind
    from neardup.readers.arrow import is_hf_dataset

    kinds = set()
    for p in paths:
        if "://" in p:  # a remote path: trust the suffix, Spark reads it
            kinds.add(input_format([p]))
            continue
        path = Path(p)
        if is_hf_dataset(path):
            return None
        if path.is_dir():
            files = [
                f for f in path.rglob("*") if f.is_file() and not f.name.startswith((".", "_"))
            ]
            found = {file_kind(f.name) for f in files}
        else:
            found = {file_kind(path.name)}
        for kind, codec in found:
            if kind == "document":
                if path.is_dir():
                    continue
                raise InputError(
                    f"{p}: cannot tell the format; name it .jsonl/.json/.ndjson, .csv, .tsv, "
                    ".parquet or .arrow (compressed or not)"
                )
            if kind == "ipc" or codec in ("xz", "zstd"):
                return None
            kinds.add(kind)
    if len(kinds) != 1:
        if not kinds:
            raise InputError("no record files among the inputs; give JSONL, CSV or Parquet")
        return None
    return kinds.pop()


def _column(path: str) -> Any:
    """A Spark column for a field path (``meta.url`` -> struct field ``url`` of ``meta``)."""
    from pyspark.sql import functions as sf

    return sf.col(".".join(f"`{part}`" for part in path.split(".")))


def _stage(
    paths: Sequence[str],
    id_field: str | None,
    text_field: Sequence[str],
    keep: bool,
    on_error: str = "fail",
) -> str:
    """Read ``paths`` with neardup's readers into a temporary Parquet folder Spark can read
    (one pass, one record batch at a time); returns the folder. Under ``on_error="skip"``
    bad records and unreadable files are skipped and counted, as the local engine does."""
    import tempfile

    import pyarrow as pa
    import pyarrow.parquet as pq

    from neardup.readers import ReadOptions, ReadStats, RecordSpec, read_documents

    folder = tempfile.mkdtemp(prefix="neardup-spark-stage-")
    options = ReadOptions(
        spec=RecordSpec.of(text_field, id_field), keep_fields=keep, on_error=on_error
    )
    stats = ReadStats()
    writer = None
    batch: list[dict[str, object]] = []

    def flush() -> None:
        nonlocal writer, batch
        table = pa.Table.from_pylist(batch, schema=None if writer is None else writer.schema)
        if writer is None:
            writer = pq.ParquetWriter(f"{folder}/part-0.parquet", table.schema)
        writer.write_table(table)
        batch = []

    try:
        for d in read_documents(paths, options, stats=stats):
            row = dict(d.fields) if keep and d.fields is not None else {}
            row[ID_COL], row[TEXT_COL] = d.id, d.text
            batch.append(row)
            if len(batch) >= 8192:
                flush()
        if batch or writer is None:
            if not batch:
                raise InputError("the inputs hold no records")
            flush()
    finally:
        if writer is not None:
            writer.close()
    if stats.bad_records:
        log.warning("skipped %d bad records (--on-error skip)", stats.bad_records)
    left = stats.summary()
    if left:
        log.warning("%s", left)
    return folder


def _read(
    spark: SparkSession,
    paths: Sequence[str],
    id_field: str | None,
    text_field: str | Sequence[str],
    *,
    keep_all: bool = False,
    on_error: str = "fail",
) -> DataFrame:
    """The inputs as a DataFrame with the id in :data:`ID_COL` and the text in
    :data:`TEXT_COL` (plus every input column when ``keep_all``).

    ``on_error="skip"`` reads JSONL and CSV with Spark's ``DROPMALFORMED`` mode (a line that
    does not parse is left out) and skips corrupt files (``ignoreCorruptFiles``); the
    default ``fail`` stops at the first of either."""
    from pyspark.sql import functions as sf

    if on_error not in ("fail", "skip"):
        raise ConfigError(f"on_error must be 'fail' or 'skip', got {on_error!r}")
    texts = [text_field] if isinstance(text_field, str) else list(text_field)
    fmt = _native(paths)
    if fmt is None:
        staged = _stage(paths, id_field, texts, keep_all, on_error)
        df = spark.read.parquet(staged)
        pos = position([staged]).alias(POS_COL)
        return df.select("*", pos) if keep_all else df.select(ID_COL, TEXT_COL, pos)
    skip = on_error == "skip"
    reader = spark.read.option("mode", "DROPMALFORMED" if skip else "FAILFAST")
    reader = reader.option("ignoreCorruptFiles", "true" if skip else "false")
    nested = any("." in f for f in [*texts, id_field or ""])
    if fmt == "jsonl":
        names = [id_field] if id_field else []
        if not skip:  # under skip a bad first line is dropped like any other
            _check_first_record(spark, paths, [*names, *texts])
        if keep_all or nested or id_field is None or len(texts) > 1:
            df = reader.json(list(paths))
        else:
            schema = f"`{id_field}` string, `{texts[0]}` string"
            df = reader.schema(schema).json(list(paths))
    elif fmt in ("csv", "tsv"):
        sep = "," if fmt == "csv" else "\t"
        df = reader.options(header=True, sep=sep, multiLine=True, escape='"').csv(list(paths))
    else:
        df = reader.parquet(*paths)
    top = set(df.columns)
    for f in [*texts, *([id_field] if id_field else [])]:
        if f.split(".")[0] not in top:
            raise InputError(
                f"{paths[0]}: no field {f!r} (fields: {', '.join(sorted(top)[:12])}); set "
                "--id-field / --text-field (nested: a.b)"
            )
    if id_field is not None:
        ident = _column(id_field).cast("string")
    elif "id" in top:
        ident = sf.col("id").cast("string")
    else:
        ident = (sf.monotonically_increasing_id() + 1).cast("string")
    text = _column(texts[0]) if len(texts) == 1 else sf.concat_ws("\n", *map(_column, texts))
    cols = [sf.col(f"`{c}`") for c in df.columns] if keep_all else []
    pos = position(paths).alias(POS_COL)
    return df.select(*cols, ident.alias(ID_COL), text.alias(TEXT_COL), pos)


@contextmanager
def _malformed_as_input_error(paths: Sequence[str]) -> Iterator[None]:
    """Spark's FAILFAST parse error (raised by whichever action first reads the bad line)
    as an :class:`InputError` that says what to do."""
    from py4j.protocol import Py4JJavaError

    try:
        yield
    except Py4JJavaError as exc:
        text = str(exc)
        if "Malformed records are detected" not in text and "MALFORMED_RECORD" not in text:
            raise
        shown = ", ".join(paths[:3]) + (" ..." if len(paths) > 3 else "")
        raise InputError(
            f"a record in {shown} does not parse; fix it, or pass --on-error skip "
            "(on_error='skip') to leave such records out"
        ) from None


def run_spark_dedup(
    paths: Sequence[str],
    *,
    method: str = "minhash",
    threshold: float | None = None,
    id_field: str | None = None,
    text_field: str | Sequence[str] = "text",
    output: str | None = None,
    master: str | None = None,
    collect: bool | None = None,
    annotate: str | None = None,
    keep: str = "first",
    clustering: str | None = None,
    on_error: str = "fail",
    spark_conf: Mapping[str, str] | None = None,
    **options: Any,
) -> SparkDedupSummary:
    """Run ``dedup_dataframe`` over record inputs; write and/or collect the result.

    Args:
        paths: Record files or folders of them: JSONL (``.jsonl``, ``.ndjson``, ``.json``),
            CSV, TSV, Parquet (Spark reads these itself, ``.gz``/``.bz2`` too, from any path
            Spark reads: ``hdfs://``, ``s3a://``...), and Arrow IPC / Feather, Hugging Face
            ``save_to_disk`` folders, ``.xz`` / ``.zst`` files, which neardup's readers stage
            to a temporary Parquet folder first (on the driver, one batch at a time).
        method: ``minhash`` or ``simhash``.
        threshold: Similarity threshold (default: the method's).
        id_field: The field holding unique document ids (nested: ``meta.url``); default
            ``id`` when the records have it, else a generated row number.
        text_field: The field(s) holding the text; several are joined with newlines.
        output: Write the ``(id, cluster)`` rows here: Parquet for a ``.parquet`` path, else
            JSON lines; Spark writes a directory of part files. ``None``: no write.
        master: Spark master URL (``local[*]``, ``spark://host:7077``, ``yarn``...); default:
            the one ``spark-submit`` set, else ``local[*]``.
        collect: Bring the clusters to the driver for printing; default: only when there is
            no ``output`` (collecting a billion-document result would not fit the driver).
        annotate: Write every input record with the dedup columns here
            (:func:`neardup.spark.keep.annotate_dataframe`), in input order, streamed to the
            driver partition by partition and written atomically in the format the extension
            names.
        keep: The ``--keep`` rule for ``annotate``: ``first`` / ``representative`` or
            ``longest`` (:mod:`neardup.keep`, the local engine's rule).
        clustering: ``None`` (default): a record is removed only for a kept record it has
            an accepted pair with, as locally; ``"components"``: one record kept per
            cluster, chains included (the local ``--clustering components``).
        on_error: ``fail`` stops at the first malformed record or corrupt file; ``skip``
            leaves them out (JSONL/CSV lines that do not parse, unreadable files, and, in
            staged formats, records without the fields) and logs how many records it
            skipped. Rows with a null text are then skipped too (``on_null="skip"``).
        spark_conf: Spark settings for a new session (``spark.driver.memory``...); with
            a session already running, only its runtime (SQL) settings can change. In local
            mode the driver memory defaults to half of the machine's (docs/spark.md).
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
    from neardup.spark.dedup import dedup_dataframe, dedup_dataframe_pairs

    if "include_singletons" in options:
        raise ConfigError("include_singletons is not a CLI option; the result lists clusters")
    if clustering not in (None, "components"):
        raise ConfigError(
            f"the Spark engine clusters by components, not {clustering!r}; run it locally"
        )
    t0 = time.perf_counter()
    paths = [_absolute(p) for p in paths]
    output = None if output is None else _absolute(output)
    annotate = None if annotate is None else _absolute(annotate)
    spark = _session(master, spark_conf)
    if on_error == "skip":
        options.setdefault("on_null", "skip")
    with _malformed_as_input_error(paths):
        df = _read(
            spark, paths, id_field, text_field, keep_all=annotate is not None, on_error=on_error
        )
        pairs = None
        if annotate is None:
            result = dedup_dataframe(
                df.select(ID_COL, TEXT_COL),
                id_col=ID_COL,
                text_col=TEXT_COL,
                method=method,
                threshold=threshold,
                **options,
            )
        else:  # the keep rule needs every accepted pair
            result, pairs = dedup_dataframe_pairs(
                df.select(ID_COL, TEXT_COL),
                id_col=ID_COL,
                text_col=TEXT_COL,
                method=method,
                threshold=threshold,
                **options,
            )
        out = result.withColumnRenamed(ID_COL, "id")
        if output is not None:
            writer = out.write.mode("errorifexists")
            if output_format(output) == "parquet":
                writer.parquet(output)
            else:
                writer.json(output)
        clusters: list[Cluster] = []
        if collect if collect is not None else output is None:
            clusters = collect_clusters(df, result, ID_COL, POS_COL)
            n_clustered = sum(c.size for c in clusters)
        else:
            n_clustered = out.count()
        removed = None
        if annotate is not None and pairs is not None:
            from neardup.methods import make_method
            from neardup.spark.keep import annotate_dataframe, write_annotated

            m = make_method(method, threshold, **_method_options(options))
            annotated = annotate_dataframe(
                df,
                result,
                pairs,
                columns=(ID_COL, TEXT_COL, POS_COL),
                keep=keep,
                method=m,
                within_threshold=clustering != "components",
            )
            removed = write_annotated(annotated, annotate, internal=(ID_COL, TEXT_COL, POS_COL))
            pairs.unpersist()
        if options.get("on_null") == "skip":
            df = df.filter(sf.col(TEXT_COL).isNotNull())
        n_docs = df.count()
    t = DEFAULT_THRESHOLDS.get(method, 0.0) if threshold is None else threshold
    stats = {"seconds_total": time.perf_counter() - t0, "documents": float(n_docs)}
    stats["clustered"] = float(n_clustered)
    return SparkDedupSummary(
        clusters, n_docs, n_clustered, method, float(t), output, stats, removed
    )


_SPARK_ONLY = (
    "max_bucket",
    "verify",
    "on_null",
    "check_ids",
    "checkpoint_every",
    "partitions",
    "union_find_limit",
)


def _method_options(options: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in options.items() if k not in _SPARK_ONLY}
