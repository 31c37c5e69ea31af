"""DataFrame entry points: near-duplicate pairs and clusters of a Spark DataFrame of texts.

The steps (see ``docs/spark.md``); shuffles move packed arrays (:mod:`neardup.spark.blobs`),
one binary value per pair of tasks, and the executors run the local engine's objects and
kernels (:mod:`neardup.spark.executor`):

1. **Checks** before the job: null ids and texts (Parquet statistics); duplicate ids are
   found by the bucket step.
2. **Sketch**: the same :class:`~neardup.methods.Method` as the local engine gives each
   document its bucket keys (``lookup_keys``: MinHash LSH band keys, SimHash pigeonhole block
   keys) and its verification bytes (shingle-hash sets, folded signatures or codes).
3. **Bucket**: keys are routed by value; each task pairs the documents of its buckets.
4. **Forward / verify**: each pair meets both documents' bytes and is checked by the local
   engine's rule (exact Jaccard, signature estimate, or popcount); only documents that have
   a candidate pair move a second time.
5. **Cluster**: per-task union-find, then one task's union-find for a small graph or
   large-star / small-star iterations (:mod:`neardup.spark.components`); cluster = the
   smallest member id.

With the default bucket cap nothing is lost and the clusters equal ``neardup.dedup``'s.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from neardup.errors import ConfigError, InputError
from neardup.methods import Method, make_method
from neardup.spark.executor import (
    bucket_step,
    components_step,
    forward_step,
    method_kind,
    sketch_step,
    verify_step,
)
from neardup.spark.routing import (
    DATA,
    DUPLICATE_IDS,
    IDS,
    KEYS,
    NULL_IDS,
    NULL_TEXT,
    ROWS,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = [
    "DEFAULT_MAX_BUCKET",
    "DEFAULT_UNION_FIND_LIMIT",
    "dedup_dataframe",
    "dedup_dataframe_pairs",
    "dest_table",
    "similar_pairs",
]

log = logging.getLogger(__name__)
T = TypeVar("T")

#: Default bucket cap: buckets up to this size give every pair (the local engine's result).
DEFAULT_MAX_BUCKET = 10_000
#: Graphs (after each verify task's union-find) of up to this many edges get their
#: components from union-find in one task instead of large-star / small-star iterations.
DEFAULT_UNION_FIND_LIMIT = 5_000_000

_ON_NULL = ("fail", "skip")


def _pyspark() -> Any:
    from neardup._extras import require_extra

    return require_extra("spark", "pyspark.sql")


def _check_columns(df: DataFrame, id_col: str, text_col: str) -> None:
    """Schema checks, before any job runs."""
    from pyspark.sql import types as st

    fields = {f.name: f.dataType for f in df.schema.fields}
    missing = [c for c in (id_col, text_col) if c not in fields]
    if missing:
        raise InputError(
            f"the DataFrame has no column {', '.join(map(repr, missing))}; its columns are "
            f"{', '.join(map(repr, fields)) or 'none'} (set id_col / text_col)"
        )
    if id_col == text_col:
        raise ConfigError(f"id_col and text_col are both {id_col!r}; they must differ")
    id_type = fields[id_col]
    if not isinstance(
        id_type, st.StringType | st.ByteType | st.ShortType | st.IntegerType | st.LongType
    ):
        raise InputError(
            f"id column {id_col!r} is {id_type.simpleString()}; ids must be strings or "
            f"integers (cast it, e.g. df.withColumn({id_col!r}, sf.col({id_col!r}).cast('string')))"
        )
    if not isinstance(fields[text_col], st.StringType):
        raise InputError(
            f"text column {text_col!r} is {fields[text_col].simpleString()}; it must be a string"
        )


def _check_rows(df: DataFrame, id_col: str, text_col: str, on_null: str) -> Any:
    """Null ids and texts, before the job: one count, which Parquet answers from its
    row-group statistics without reading the columns (other sources scan them). Duplicate
    ids are found inside the job, by the bucket step."""
    from pyspark.sql import functions as sf

    ids, texts = sf.col(id_col), sf.col(text_col)
    if not df.filter(ids.isNull() | texts.isNull()).limit(1).count():
        return df
    row = df.agg(
        sf.count(sf.when(ids.isNull(), 1)).alias("ids"),
        sf.count(sf.when(texts.isNull(), 1)).alias("texts"),
    ).first()
    null_ids, null_texts = (int(row["ids"]), int(row["texts"])) if row is not None else (0, 0)
    if null_ids:
        raise InputError(f"{null_ids} rows have a null id in {id_col!r}; every row needs an id")
    if null_texts and on_null == "fail":
        raise InputError(
            f"{null_texts} rows have a null text in {text_col!r}; drop or fill them, or "
            "pass on_null='skip' to leave them out"
        )
    log.warning("leaving out %d rows with a null text in %r", null_texts, text_col)
    return df.filter(texts.isNotNull())


def _run(action: Callable[[], T], id_col: str, text_col: str, on_null: str, nulls: Any) -> T:
    """Run the job; turn the input errors raised in executors (duplicate ids, or nulls in a
    DataFrame whose rows changed since the checks) into InputError."""
    from py4j.protocol import Py4JJavaError
    from pyspark.errors import PythonException

    try:
        result = action()
    except (PythonException, Py4JJavaError) as exc:
        text = str(exc)
        if DUPLICATE_IDS in text:
            shown = text.split(DUPLICATE_IDS, 1)[1].splitlines()[0].strip()
            raise InputError(
                f"ids in {id_col!r} are not unique (e.g. {shown}); give every row its own id"
            ) from None
        if NULL_IDS in text:
            raise InputError(f"the id column {id_col!r} has null values") from None
        if NULL_TEXT in text:
            raise InputError(
                f"the text column {text_col!r} has null values; drop or fill them, or pass "
                "on_null='skip' to leave those rows out"
            ) from None
        raise
    if on_null == "skip" and nulls.value:
        log.warning("left out %d more rows with a null text in %r", nulls.value, text_col)
    return result


def dest_table(tasks: int) -> list[int]:
    """For each task ``t`` of a ``repartition(tasks, "dest")``, an int ``dest`` value that
    Spark's hash partitioning sends to task ``t``: ``pmod(murmur3_x86_32(dest, seed 42),
    tasks) == t`` (Spark's ``Murmur3Hash`` of an int column).

    Routing by these values gives every task its share exactly; results never depend on it
    (a task processes whatever rows it receives), only the balance does.

    Examples:
        >>> dest_table(2)  # Spark puts dest 2 in task 0 and dest 0 in task 1
        [2, 0]
    """
    import mmh3

    table: list[int | None] = [None] * tasks
    left, value = tasks, 0
    while left:
        t = mmh3.hash(value.to_bytes(4, "little", signed=True), 42) % tasks
        if table[t] is None:
            table[t] = value
            left -= 1
        value += 1
    return [int(v) for v in table if v is not None]


def _build_method(
    method: str, threshold: float | None, verify: bool, options: dict[str, Any]
) -> tuple[Method, dict[str, Any]]:
    """The method (validated here, on the driver) and the options to rebuild it with."""
    if not isinstance(method, str):
        raise ConfigError(
            f"method must be a name (minhash, simhash), got {type(method).__name__}: the "
            "executors rebuild the method from its name, threshold and options"
        )
    options = dict(options)
    if method == "minhash":
        options["verify"] = verify
    elif not verify:
        raise ConfigError(f"verify=False is for minhash; {method} always verifies (popcount)")
    m = make_method(method, threshold, **options)
    method_kind(m)  # raises ConfigError for methods without a Spark engine
    return m, options


class _MaxParam:
    """Accumulator parameter: the largest value added."""

    def zero(self, value: int) -> int:
        return 0

    def addInPlace(self, a: int, b: int) -> int:  # noqa: N802  (pyspark's protocol)
        return max(a, b)


def _pairs(
    df: DataFrame,
    *,
    id_col: str,
    text_col: str,
    method: str,
    threshold: float | None,
    max_bucket: int,
    verify: bool,
    on_null: str,
    check_ids: bool,
    partitions: int | None,
    mode: Literal["pairs", "edges"],
    options: dict[str, Any],
) -> tuple[DataFrame, DataFrame, Callable[[Callable[[], Any]], Any], Any]:
    """The verify step's output (lazy; ``mode`` "pairs" or "edges"), the persisted sketches
    to release once it is computed, ``run(action)`` (runs the job, re-raises the executors'
    input errors as InputError and logs the bucket-cap warning), and the accumulator of the
    rows the verify step wrote."""
    _pyspark()
    from pyspark import StorageLevel
    from pyspark.sql import functions as sf

    from neardup.spark.blobs import arrow_type

    if on_null not in _ON_NULL:
        raise ConfigError(f"on_null must be 'fail' or 'skip', got {on_null!r}")
    if isinstance(max_bucket, bool) or not isinstance(max_bucket, int) or max_bucket < 2:
        raise ConfigError(f"max_bucket must be an integer >= 2, got {max_bucket!r}")
    if partitions is not None and (
        isinstance(partitions, bool) or not isinstance(partitions, int) or partitions < 1
    ):
        raise ConfigError(f"partitions must be a positive integer, got {partitions!r}")
    _check_columns(df, id_col, text_col)
    m, options = _build_method(method, threshold, verify, options)
    kind = method_kind(m)
    df = _check_rows(df, id_col, text_col, on_null)

    docs = df.select(sf.col(id_col).alias("id"), sf.col(text_col).alias("text"))
    id_field = docs.schema["id"]
    sc = df.sparkSession.sparkContext
    tasks = partitions or max(sc.defaultParallelism, docs.rdd.getNumPartitions())
    table = dest_table(tasks)
    string_ids = id_field.dataType.simpleString() == "string"
    radius, bits = int(getattr(m, "radius", 0)), int(getattr(m, "bits", 64))
    oversized, largest = sc.accumulator(0), sc.accumulator(0, _MaxParam())  # type: ignore[arg-type]
    nulls, emitted = sc.accumulator(0), sc.accumulator(0)
    sketched = docs.mapInArrow(
        functools.partial(
            sketch_step,
            method=m.name,
            threshold=m.threshold,
            options=options,
            dest_table=table,
            drop_empty=kind == "jaccard" and m.threshold > 0,
            on_null=on_null,
            nulls=nulls,
            check_ids=check_ids,
        ),
        ROWS,
    ).persist(StorageLevel.MEMORY_AND_DISK)
    data = sketched.filter(sf.col("kind") == DATA)
    pairs = (
        sketched.filter(sf.col("kind").isin(KEYS, IDS))
        .repartition(tasks, "dest")
        .mapInArrow(
            functools.partial(
                bucket_step,
                max_bucket=max_bucket,
                dest_table=table,
                oversized=oversized,
                largest=largest,
                string_ids=string_ids,
                radius=min(radius, bits - 1) if kind == "hamming" else -1,
            ),
            ROWS,
        )
    )
    rule = {
        "kind": kind,
        "args": {"threshold": m.threshold, "radius": radius, "bits": bits},
    }
    forwarded = (
        pairs.unionByName(data)
        .repartition(tasks, "dest")
        .mapInArrow(
            functools.partial(forward_step, dest_table=table, string_ids=string_ids, rule=rule),
            ROWS,
        )
    )
    id_type = id_field.dataType.simpleString()
    schema = (
        f"a {id_type}, b {id_type}, similarity double"
        if mode == "pairs"
        else f"src {id_type}, dst {id_type}"
    )
    verified = forwarded.repartition(tasks, "dest").mapInArrow(
        functools.partial(
            verify_step,
            kind=kind,
            threshold=m.threshold,
            id_type=arrow_type(id_type),
            mode=mode,
            emitted=emitted,
            radius=radius,
            bits=bits,
        ),
        schema,
    )

    def run(action: Callable[[], T]) -> T:
        result = _run(action, id_col, text_col, on_null, nulls)
        if oversized.value:
            log.warning(
                "%d buckets have more than max_bucket=%d documents (largest %d); in those, "
                "each document is compared only with the next %d in input order, so pairs "
                "may be lost",
                oversized.value,
                max_bucket,
                largest.value,
                max_bucket - 1,
            )
        return result

    return verified, sketched, run, emitted


def similar_pairs(
    df: DataFrame,
    *,
    id_col: str = "id",
    text_col: str = "text",
    method: str = "minhash",
    threshold: float | None = None,
    max_bucket: int = DEFAULT_MAX_BUCKET,
    verify: bool = True,
    on_null: str = "fail",
    check_ids: bool = True,
    partitions: int | None = None,
    **options: Any,
) -> DataFrame:
    """The accepted near-duplicate pairs of a DataFrame: ``(a, b, similarity)`` with ``a < b``.

    The same pairs as the local ``neardup.dedup(...).pairs`` (same method, threshold and
    options) as long as no bucket exceeds ``max_bucket``. Arguments as for
    :func:`dedup_dataframe`. The pairs are computed and persisted before it returns (so
    that the bucket-cap warning can be logged); ``.unpersist()`` releases them.

    Raises:
        ConfigError, InputError, MissingExtraError: as :func:`dedup_dataframe`.
    """
    from pyspark import StorageLevel

    pairs, sketched, run, _ = _pairs(
        df,
        id_col=id_col,
        text_col=text_col,
        method=method,
        threshold=threshold,
        max_bucket=max_bucket,
        verify=verify,
        on_null=on_null,
        check_ids=check_ids,
        partitions=partitions,
        mode="pairs",
        options=options,
    )
    done: DataFrame = pairs.persist(StorageLevel.MEMORY_AND_DISK)
    run(done.count)
    sketched.unpersist()
    return done


def dedup_dataframe(
    df: DataFrame,
    *,
    id_col: str = "id",
    text_col: str = "text",
    method: str = "minhash",
    threshold: float | None = None,
    max_bucket: int = DEFAULT_MAX_BUCKET,
    verify: bool = True,
    on_null: str = "fail",
    check_ids: bool = True,
    include_singletons: bool = False,
    checkpoint_every: int = 3,
    partitions: int | None = None,
    union_find_limit: int = DEFAULT_UNION_FIND_LIMIT,
    **options: Any,
) -> DataFrame:
    """Cluster the near-duplicate documents of a DataFrame: ``(id, cluster)`` rows.

    Args:
        df: One row per document.
        id_col: Column of unique document ids: strings or integers (the output keeps its type).
        text_col: Column of texts (strings).
        method: ``"minhash"`` (default), ``"simhash"`` or ``"simhash-go"``.
        threshold: Similarity threshold in [0, 1] (default: the method's).
        max_bucket: Bucket cap. A bucket (documents sharing a band or block key) of up to
            this many documents yields all its pairs; in a larger one each document is paired
            only with the next ``max_bucket - 1`` documents in input order, which bounds the
            work but can lose pairs (a warning is logged when it happens).
        verify: MinHash: verify candidates by the exact Jaccard of their shingle-hash sets
            (default, as locally); ``False`` accepts a signature estimate >= threshold.
            SimHash always verifies (popcount).
        on_null: ``"fail"`` (default): null texts raise InputError; ``"skip"``: rows with a
            null text are left out (with a logged count).
        check_ids: Check that ids are unique: the sketch step sends every id, routed by
            its hash, to the bucket step, which fails the job with InputError on a
            duplicate (before any pair is verified).
        include_singletons: Also return documents without a near-duplicate, each as its own
            cluster (default: only clusters of two or more).
        checkpoint_every: Connected-components iterations between lineage checkpoints.
        partitions: Tasks per shuffle step (default: the larger of the input's partition
            count and the default parallelism); each holds that share of the keys and data.
        union_find_limit: Graphs left with at most this many edges after the per-task
            union-find get their components in one task; larger ones go through
            large-star / small-star iterations (``0``: always iterate).
        **options: Passed to the method (``num_perm``, ``bits``, ``preset``...).

    Returns:
        A DataFrame ``(<id_col>, cluster)``: ``cluster`` is the smallest member id of the
        document's cluster (numeric order for integer ids; Unicode code point order, which
        is Python's ``str`` order, for string ids), so it is the same on every run. Only
        documents in clusters of two or more appear unless ``include_singletons``. The pairs
        and the components are computed before it returns (a checkpoint of the final edges).

    Raises:
        ConfigError: unknown method or option, a bad threshold, ``max_bucket``, ``on_null``,
            ``partitions``, ``union_find_limit`` or ``checkpoint_every``.
        InputError: missing columns, ids that are not strings or integers, texts that are not
            strings, null ids, null texts (with ``on_null="fail"``), duplicate ids.
        MissingExtraError: pyspark is not installed.

    Examples:
        >>> out = dedup_dataframe(spark.createDataFrame(rows, "id string, text string"),
        ...                       method="simhash")  # doctest: +SKIP
    """
    _check_components(union_find_limit, checkpoint_every)
    _pyspark()
    from pyspark.sql import functions as sf

    edges, sketched, run, emitted = _pairs(
        df,
        id_col=id_col,
        text_col=text_col,
        method=method,
        threshold=threshold,
        max_bucket=max_bucket,
        verify=verify,
        on_null=on_null,
        check_ids=check_ids,
        partitions=partitions,
        mode="edges",
        options=options,
    )
    comp = _components(edges, run, emitted, union_find_limit, checkpoint_every)
    sketched.unpersist()
    out = comp.select(sf.col("id").alias(id_col), sf.col("component").alias("cluster"))
    if include_singletons:
        ids = df.select(id_col)
        if on_null == "skip":
            ids = df.filter(sf.col(text_col).isNotNull()).select(id_col)
        out = ids.join(out, on=id_col, how="left").select(
            id_col, sf.coalesce(sf.col("cluster"), sf.col(id_col)).alias("cluster")
        )
    result: DataFrame = out
    return result


def _check_components(union_find_limit: int, checkpoint_every: int) -> None:
    for name, value, low in (
        ("union_find_limit", union_find_limit, 0),
        ("checkpoint_every", checkpoint_every, 1),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ConfigError(f"{name} must be an integer >= {low}, got {value!r}")


def _components(
    edges: DataFrame,
    run: Callable[[Callable[[], Any]], Any],
    emitted: Any,
    union_find_limit: int,
    checkpoint_every: int,
) -> DataFrame:
    """``(id, component)`` of the graph of ``edges`` (``src``, ``dst``), computed: the
    pipeline runs (through ``run``), then one task's union-find for a small graph or
    large-star / small-star iterations."""
    from neardup.spark.blobs import arrow_type
    from neardup.spark.components import checkpoint, connected_components

    edges = run(lambda: checkpoint(edges))  # runs the pipeline
    if emitted.value <= union_find_limit:
        id_type = edges.schema["src"].dataType.simpleString()
        comp = edges.coalesce(1).mapInArrow(
            functools.partial(components_step, id_type=arrow_type(id_type)),
            f"id {id_type}, component {id_type}",
        )
        done: DataFrame = checkpoint(comp)
        return done
    return connected_components(edges, checkpoint_every=checkpoint_every)


def dedup_dataframe_pairs(
    df: DataFrame,
    *,
    id_col: str = "id",
    text_col: str = "text",
    method: str = "minhash",
    threshold: float | None = None,
    max_bucket: int = DEFAULT_MAX_BUCKET,
    verify: bool = True,
    on_null: str = "fail",
    check_ids: bool = True,
    checkpoint_every: int = 3,
    partitions: int | None = None,
    union_find_limit: int = DEFAULT_UNION_FIND_LIMIT,
    **options: Any,
) -> tuple[DataFrame, DataFrame]:
    """:func:`dedup_dataframe` (without singletons) and the accepted pairs the clusters were
    made of, ``(a, b, similarity)`` as :func:`similar_pairs` gives them: what the keep rule
    needs (:mod:`neardup.spark.keep`). The components come from every accepted pair (not
    from the verify tasks' reduced edges); both are computed before it returns, and the
    pairs are persisted (``.unpersist()`` releases them).

    Raises:
        ConfigError, InputError, MissingExtraError: as :func:`dedup_dataframe`.
    """
    _check_components(union_find_limit, checkpoint_every)
    _pyspark()
    from pyspark import StorageLevel
    from pyspark.sql import functions as sf

    pairs, sketched, run, emitted = _pairs(
        df,
        id_col=id_col,
        text_col=text_col,
        method=method,
        threshold=threshold,
        max_bucket=max_bucket,
        verify=verify,
        on_null=on_null,
        check_ids=check_ids,
        partitions=partitions,
        mode="pairs",
        options=options,
    )
    pairs = pairs.persist(StorageLevel.MEMORY_AND_DISK)
    edges = pairs.select(sf.col("a").alias("src"), sf.col("b").alias("dst"))
    comp = _components(edges, run, emitted, union_find_limit, checkpoint_every)
    sketched.unpersist()
    clusters = comp.select(sf.col("id").alias(id_col), sf.col("component").alias("cluster"))
    return clusters, pairs
