"""DataFrame entry points: near-duplicate pairs and clusters of a Spark DataFrame of texts.

The steps, each a Spark operation (see ``docs/spark.md``):

1. **Sketch** (``mapInArrow``, executors): the same :class:`~neardup.methods.Method` object as
   the local engine sketches each Arrow batch and gives the documents' bucket keys
   (``lookup_keys``: MinHash LSH band keys, SimHash pigeonhole block keys) and their
   verification bytes (shingle-hash sets, folded signatures or codes).
2. **Candidates**: keys are exploded to ``(id, key)`` rows and grouped by key; each bucket's
   sorted ids give the pairs ``a < b``, deduplicated across bands.
3. **Verify** (``mapInArrow``, executors): both documents' bytes are joined to each candidate and
   checked by the local engine's rule (exact Jaccard, signature estimate, or popcount).
4. **Cluster**: large-star / small-star connected components
   (:mod:`neardup.spark.components`); cluster = the smallest member id.

With the default bucket cap nothing is lost and the clusters equal ``neardup.dedup``'s.
"""

from __future__ import annotations

import functools
import logging
from typing import TYPE_CHECKING, Any

from neardup.errors import ConfigError, InputError
from neardup.methods import Method, make_method
from neardup.spark.executor import method_kind, sketch_batches, verify_batches

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["DEFAULT_MAX_BUCKET", "dedup_dataframe", "similar_pairs"]

log = logging.getLogger(__name__)

#: Default bucket cap: buckets up to this size give every pair (the local engine's result).
DEFAULT_MAX_BUCKET = 10_000

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


def _check_rows(df: DataFrame, id_col: str, text_col: str, on_null: str, check_ids: bool) -> Any:
    """Null and duplicate checks (one aggregation, and one grouping when ``check_ids``)."""
    from pyspark.sql import functions as sf

    row = df.agg(
        sf.count(sf.when(sf.col(id_col).isNull(), 1)).alias("ids"),
        sf.count(sf.when(sf.col(text_col).isNull(), 1)).alias("texts"),
    ).first()
    null_ids, null_texts = (int(row["ids"]), int(row["texts"])) if row is not None else (0, 0)
    if null_ids:
        raise InputError(f"{null_ids} rows have a null id in {id_col!r}; every row needs an id")
    if null_texts:
        if on_null == "fail":
            raise InputError(
                f"{null_texts} rows have a null text in {text_col!r}; drop or fill them, or "
                "pass on_null='skip' to leave them out"
            )
        log.warning("leaving out %d rows with a null text in %r", null_texts, text_col)
        df = df.filter(sf.col(text_col).isNotNull())
    if check_ids:
        dups = df.groupBy(id_col).count().filter(sf.col("count") > 1).limit(3).collect()
        if dups:
            shown = ", ".join(repr(r[id_col]) for r in dups)
            raise InputError(
                f"ids in {id_col!r} are not unique (e.g. {shown}); give every row its own id"
            )
    return df


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
    options: dict[str, Any],
) -> tuple[DataFrame, list[DataFrame]]:
    """The verified pairs (lazy) and the persisted frames to release once they are used."""
    _pyspark()
    from pyspark import StorageLevel
    from pyspark.sql import functions as sf

    if on_null not in _ON_NULL:
        raise ConfigError(f"on_null must be 'fail' or 'skip', got {on_null!r}")
    if isinstance(max_bucket, bool) or not isinstance(max_bucket, int) or max_bucket < 2:
        raise ConfigError(f"max_bucket must be an integer >= 2, got {max_bucket!r}")
    _check_columns(df, id_col, text_col)
    m, options = _build_method(method, threshold, verify, options)
    kind = method_kind(m)
    df = _check_rows(df, id_col, text_col, on_null, check_ids)

    docs = df.select(sf.col(id_col).alias("id"), sf.col(text_col).alias("text"))
    id_type = docs.schema["id"].dataType.simpleString()
    sketch = functools.partial(
        sketch_batches,
        method=m.name,
        threshold=m.threshold,
        options=options,
        drop_empty=kind == "jaccard" and m.threshold > 0,
    )
    sketched = docs.mapInArrow(sketch, f"id {id_type}, keys array<bigint>, data binary").persist(
        StorageLevel.MEMORY_AND_DISK
    )
    buckets = (
        sketched.select("id", sf.explode("keys").alias("key"))
        .groupBy("key")
        .agg(sf.sort_array(sf.collect_list("id")).alias("ids"))
        .filter(sf.size("ids") > 1)
        .persist(StorageLevel.MEMORY_AND_DISK)
    )
    over = buckets.filter(sf.size("ids") > max_bucket).agg(
        sf.count("*").alias("n"), sf.max(sf.size("ids")).alias("largest")
    )
    row = over.first()
    if row is not None and row["n"]:
        log.warning(
            "%d buckets have more than max_bucket=%d documents (largest %d); in those, each "
            "document is compared only with the next %d in id order, so pairs may be lost",
            row["n"],
            max_bucket,
            row["largest"],
            max_bucket - 1,
        )
    i = sf.col("i")
    size = sf.size("ids")
    candidates = (
        buckets.select(sf.posexplode("ids").alias("i", "a"), "ids")
        .select(
            "a",
            sf.explode(
                sf.slice("ids", i + 2, sf.least(size - i - 1, sf.lit(max_bucket - 1)))
            ).alias("b"),
        )
        .distinct()
    )
    data = sketched.select("id", "data")
    joined = candidates.join(
        data.select(sf.col("id").alias("a"), sf.col("data").alias("da")), "a"
    ).join(data.select(sf.col("id").alias("b"), sf.col("data").alias("db")), "b")
    verify_step = functools.partial(
        verify_batches,
        kind=kind,
        threshold=m.threshold,
        radius=int(getattr(m, "radius", 0)),
        bits=int(getattr(m, "bits", 64)),
    )
    pairs = joined.select("a", "b", "da", "db").mapInArrow(
        verify_step, f"a {id_type}, b {id_type}, similarity double"
    )
    return pairs, [sketched, buckets]


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
    **options: Any,
) -> DataFrame:
    """The accepted near-duplicate pairs of a DataFrame: ``(a, b, similarity)`` with ``a < b``.

    The same pairs as the local ``neardup.dedup(...).pairs`` (same method, threshold and
    options) as long as no bucket exceeds ``max_bucket``. Arguments as for
    :func:`dedup_dataframe`. The result is lazy, and it reads a persisted copy of the sketches
    that stays cached for the session (``spark.catalog.clearCache()`` releases it).

    Raises:
        ConfigError, InputError, MissingExtraError: as :func:`dedup_dataframe`.
    """
    pairs, _ = _pairs(
        df,
        id_col=id_col,
        text_col=text_col,
        method=method,
        threshold=threshold,
        max_bucket=max_bucket,
        verify=verify,
        on_null=on_null,
        check_ids=check_ids,
        options=options,
    )
    return pairs


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
            only with the next ``max_bucket - 1`` documents in id order, which bounds the work
            but can lose pairs (a warning is logged when it happens).
        verify: MinHash: verify candidates by the exact Jaccard of their shingle-hash sets
            (default, as locally); ``False`` accepts a signature estimate >= threshold.
            SimHash always verifies (popcount).
        on_null: ``"fail"`` (default): null texts raise InputError; ``"skip"``: rows with a
            null text are left out (with a logged count).
        check_ids: Check that ids are unique (one grouping job) before the run.
        include_singletons: Also return documents without a near-duplicate, each as its own
            cluster (default: only clusters of two or more).
        checkpoint_every: Connected-components iterations between lineage checkpoints.
        **options: Passed to the method (``num_perm``, ``bits``, ``preset``...).

    Returns:
        A DataFrame ``(<id_col>, cluster)``: ``cluster`` is the smallest member id of the
        document's cluster (numeric order for integer ids; Unicode code point order, which
        is Python's ``str`` order, for string ids), so it is the same on every run. Only
        documents in clusters of two or more appear unless ``include_singletons``. The pairs
        and the components are computed before it returns (a checkpoint of the final edges).

    Raises:
        ConfigError: unknown method or option, a bad threshold, ``max_bucket`` or ``on_null``.
        InputError: missing columns, ids that are not strings or integers, texts that are not
            strings, null ids, null texts (with ``on_null="fail"``), duplicate ids.
        MissingExtraError: pyspark is not installed.

    Examples:
        >>> out = dedup_dataframe(spark.createDataFrame(rows, "id string, text string"),
        ...                       method="simhash")  # doctest: +SKIP
    """
    _pyspark()
    from pyspark.sql import functions as sf

    from neardup.spark.components import connected_components

    pairs, held = _pairs(
        df,
        id_col=id_col,
        text_col=text_col,
        method=method,
        threshold=threshold,
        max_bucket=max_bucket,
        verify=verify,
        on_null=on_null,
        check_ids=check_ids,
        options=options,
    )
    comp = connected_components(
        pairs.select(sf.col("b").alias("src"), sf.col("a").alias("dst")),
        checkpoint_every=checkpoint_every,
    )
    for frame in held:
        frame.unpersist()
    out = comp.select(sf.col("id").alias(id_col), sf.col("component").alias("cluster"))
    if include_singletons:
        ids = df.select(id_col)
        if on_null == "skip":
            ids = df.filter(sf.col(text_col).isNotNull()).select(id_col)
        out = ids.join(out, on=id_col, how="left").select(
            id_col, sf.coalesce(sf.col("cluster"), sf.col(id_col)).alias("cluster")
        )
    return out
