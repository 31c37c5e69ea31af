"""The keep rule on Spark: which clustered record is kept and which kept record each removed
one is removed for, by the local engine's own function (:func:`neardup.keep.kept_for`).

The accepted pairs and the members of each cluster meet in one grouped step per cluster
(``cogroup(...).applyInArrow``); there the members are put in the local engine's input
order (:func:`neardup.spark.order.position`) and ``kept_for`` runs on that one cluster as it
runs locally on every cluster, so both engines remove the same records (docs/dedup.md,
"Which records are removed"). A cluster's members and pairs are held by one task.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from neardup.errors import ConfigError

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame

__all__ = ["annotate_dataframe", "keep_group", "kept_dataframe", "write_annotated"]

#: The fields of :func:`neardup.spark.order.position`, in sort order.
_POSITION = ("file", "path", "offset", "row")


def keep_group(
    members: pa.Table, pairs: pa.Table, *, keep: str, within_threshold: bool
) -> pa.Table:
    """Grouped step: one cluster's members ``(cluster, id, file, path, offset, row, size)``
    and accepted pairs ``(cluster, a, b, similarity)`` to ``(id, cluster, duplicate_of,
    similarity)`` rows, one per member (``duplicate_of`` null for a kept one), by
    :func:`neardup.keep.kept_for` over the members in input order.

    Examples:
        >>> import pyarrow as pa
        >>> m = pa.table({"cluster": ["x"] * 3, "id": ["x", "y", "z"], "file": [0] * 3,
        ...               "path": ["p"] * 3, "offset": [0] * 3, "row": [0, 1, 2],
        ...               "size": [1, 1, 1]})
        >>> p = pa.table({"cluster": ["x", "x"], "a": ["x", "y"], "b": ["y", "z"],
        ...               "similarity": [0.9, 0.8]})
        >>> out = keep_group(m, p, keep="first", within_threshold=True)
        >>> out.column("duplicate_of").to_pylist(), out.column("similarity").to_pylist()
        ([None, 'x', None], [None, 0.9, None])
    """
    import numpy as np
    import pyarrow as pa

    from neardup.keep import kept_for
    from neardup.report import Cluster, DedupResult, PairList

    ordered = members.sort_by([(name, "ascending") for name in _POSITION])
    ids = ordered.column("id").to_pylist()
    id_type = ordered.schema.field("id").type
    out_schema = pa.schema(
        [
            pa.field("id", id_type),
            pa.field("cluster", ordered.schema.field("cluster").type),
            pa.field("duplicate_of", id_type),
            pa.field("similarity", pa.float64()),
        ]
    )
    if len(ids) < 2:
        return out_schema.empty_table()
    row = {d: k for k, d in enumerate(ids)}
    a = np.fromiter((row[x] for x in pairs.column("a").to_pylist()), np.int64, len(pairs))
    b = np.fromiter((row[x] for x in pairs.column("b").to_pylist()), np.int64, len(pairs))
    s = pairs.column("similarity").to_numpy().astype(np.float64)
    result = DedupResult(
        clusters=[Cluster(0, tuple(ids), ids[0])],
        pairs=PairList(ids, a, b, s),
        n_docs=len(ids),
        method="",
        threshold=0.0,
        params="",
        doc_ids=ids,
    )
    sizes = dict(zip(ids, ordered.column("size").to_pylist(), strict=True))
    plan = kept_for(result, keep=keep, sizes=sizes, within_threshold=within_threshold)
    dup_of = [None if plan[d][1] == d else plan[d][1] for d in ids]
    sims = [None if w is None else plan[d][2] for d, w in zip(ids, dup_of, strict=True)]
    return pa.Table.from_arrays(
        [
            pa.array(ids, id_type),
            ordered.column("cluster"),
            pa.array(dup_of, id_type),
            pa.array(sims, pa.float64()),
        ],
        schema=out_schema,
    )


def kept_dataframe(
    df: DataFrame,
    clusters: DataFrame,
    pairs: DataFrame,
    *,
    id_col: str,
    text_col: str,
    pos_col: str,
    keep: str = "first",
    within_threshold: bool = True,
) -> DataFrame:
    """For every clustered row of ``df``: ``(<id_col>, cluster_id, duplicate_of, similarity)``,
    ``duplicate_of`` the kept record it is removed for (null when kept) and ``similarity`` that
    of their accepted pair (null where none: only with ``within_threshold=False``).

    Args:
        df: The rows: id, text and input position (:func:`neardup.spark.order.position`).
        clusters: ``(<id_col>, cluster)`` rows of the clustered documents.
        pairs: The accepted pairs ``(a, b, similarity)`` the clusters were made of.
        id_col: The id column of ``df`` and ``clusters``.
        text_col: The text column of ``df`` (``longest`` compares its length).
        pos_col: The input-position column of ``df``.
        keep: ``first`` / ``representative`` (input order) or ``longest`` (most
            characters; ties: the earlier).
        within_threshold: Remove a record only for a kept record it has an accepted pair
            with (default); ``False``: one kept per cluster.

    Raises:
        ConfigError: an unknown ``keep`` rule.
    """
    from pyspark.sql import functions as sf

    from neardup.keep import KEEP_RULES

    if keep not in KEEP_RULES:
        raise ConfigError(f"keep must be one of {', '.join(KEEP_RULES)}, got {keep!r}")
    members = clusters.join(df.select(id_col, text_col, pos_col), id_col).select(
        sf.col("cluster").alias("cluster"),
        sf.col(id_col).alias("id"),
        *[sf.col(f"{pos_col}.{name}").alias(name) for name in _POSITION],
        sf.length(text_col).cast("long").alias("size"),
    )
    cluster_of = clusters.select(sf.col(id_col).alias("a"), sf.col("cluster").alias("pc"))
    grouped_pairs = pairs.join(cluster_of, "a").select(
        sf.col("pc").alias("cluster"), "a", "b", "similarity"
    )
    id_type = clusters.schema[id_col].dataType.simpleString()
    kept = (
        members.groupBy("cluster")
        .cogroup(grouped_pairs.groupBy("cluster"))
        .applyInArrow(
            functools.partial(keep_group, keep=keep, within_threshold=within_threshold),
            f"id {id_type}, cluster {id_type}, duplicate_of {id_type}, similarity double",
        )
    )
    out: Any = kept.select(
        sf.col("id").alias(id_col),
        sf.col("cluster").alias("cluster_id"),
        "duplicate_of",
        "similarity",
    )
    result: DataFrame = out
    return result


def annotate_dataframe(
    df: DataFrame,
    clusters: DataFrame,
    pairs: DataFrame,
    *,
    columns: tuple[str, str, str],
    keep: str,
    method: Any,
    within_threshold: bool = True,
) -> DataFrame:
    """Every row of ``df`` with ``cluster_id``, ``is_duplicate``, ``duplicate_of`` and
    ``similarity``, in input order.

    ``cluster_id`` is Spark's cluster label (the smallest member id). Which records are
    duplicates, and of which kept record, is :func:`kept_dataframe`: every removed record
    has an accepted pair with its kept one, whose similarity it gets. With
    ``within_threshold=False`` one record is kept per cluster, and a duplicate without a
    pair with it gets its similarity from ``method.compare`` on the executors, as locally.

    Args:
        df: The rows, with their id, text and input-position columns.
        clusters: ``(<id column>, cluster)`` rows of the clustered documents.
        pairs: The accepted pairs ``(a, b, similarity)``.
        columns: The names of the id, text and input-position columns of ``df``.
        keep: The keep rule (:func:`kept_dataframe`).
        method: The method, for the similarities no pair holds.
        within_threshold: See :func:`kept_dataframe`.

    Raises:
        ConfigError: an unknown ``keep`` rule.
    """
    from pyspark.sql import functions as sf
    from pyspark.sql import types as st

    id_col, text_col, pos_col = columns
    kept = kept_dataframe(
        df,
        clusters,
        pairs,
        id_col=id_col,
        text_col=text_col,
        pos_col=pos_col,
        keep=keep,
        within_threshold=within_threshold,
    )
    joined = df.join(kept, id_col, "left")
    is_dup = sf.col("duplicate_of").isNotNull()
    if not within_threshold:  # a duplicate without a pair with its kept record
        texts = df.select(sf.col(id_col).alias("_kid"), sf.col(text_col).alias("_kept_text"))
        unknown = is_dup & sf.col("similarity").isNull()
        joined = joined.join(texts, unknown & (sf.col("duplicate_of") == sf.col("_kid")), "left")

        def compare(a: str | None, b: str | None) -> float | None:
            if a is None or b is None:
                return None
            from neardup.io import Document

            return float(method.compare(Document("a", a), Document("b", b))[0])

        udf = sf.udf(compare, st.DoubleType(), useArrow=False)
        filled = sf.coalesce(sf.col("similarity"), udf(sf.col("_kept_text"), sf.col(text_col)))
        joined = joined.withColumn("similarity", sf.when(is_dup, filled))
    out: DataFrame = joined.select(
        *[sf.col(f"`{c}`") for c in df.columns],
        sf.col("cluster_id"),
        is_dup.alias("is_duplicate"),
        sf.col("duplicate_of"),
        sf.col("similarity"),
    ).orderBy(pos_col)
    return out


def write_annotated(df: DataFrame, target: str, *, internal: tuple[str, str, str]) -> int:
    """Stream the annotated rows to the driver and write them atomically by extension
    (``internal``: the id, text and position columns, left out unless the record is only its
    id and text); returns how many rows are duplicates (``is_duplicate``)."""
    from neardup.corpus.annotate import ANNOTATION_COLUMNS
    from neardup.corpus.records import write_records

    id_col, text_col, _ = internal
    user = [c for c in df.columns if c not in internal and c not in ANNOTATION_COLUMNS]
    if not user:  # staged plain records: the id and text are the record
        df = df.withColumnRenamed(id_col, "id").withColumnRenamed(text_col, "text")
        user = ["id", "text"]
    cols = [*user, *ANNOTATION_COLUMNS]
    rows = (r.asDict(recursive=True) for r in df.select(*cols).toLocalIterator())
    removed = 0

    def batches() -> Iterator[list[dict[str, object]]]:
        nonlocal removed
        batch: list[dict[str, object]] = []
        for r in rows:
            sim = r.get("similarity")
            if sim is not None:
                r["similarity"] = round(sim, 6)
            removed += bool(r["is_duplicate"])
            batch.append(r)
            if len(batch) >= 4096:
                yield batch
                batch = []
        if batch:
            yield batch

    write_records(batches(), Path(target), columns=cols)
    return removed
