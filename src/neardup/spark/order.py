"""The local engine's input order on Spark, so that both engines pick the same representatives.

The local engine numbers documents in input order: each input path in turn, a folder walked
in sorted order (:func:`neardup.readers.paths.walk`). Spark's partitions do not follow it: it
sorts file splits by size, largest first, so ``monotonically_increasing_id`` alone orders
the rows of several files differently. :func:`position` rebuilds the input order from each
row's file (``_metadata.file_path``), the split's offset and the row within the split.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from neardup.report import Cluster

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["collect_clusters", "input_files", "position"]


def input_files(paths: Sequence[str]) -> list[str]:
    """The local input files in the order the local engine reads them (each path in turn, a
    folder walked as :func:`neardup.readers.paths.walk` does); remote paths are skipped."""
    from neardup.readers.paths import walk

    files: list[str] = []
    for p in paths:
        if "://" in p:
            continue
        path = Path(p)
        if path.is_dir():
            files.extend(str(f.resolve()) for f, _ in walk(path, strict=False))
        else:
            files.append(str(path.resolve()))
    return files


def position(paths: Sequence[str]) -> Any:
    """A column that sorts rows in the local engine's input order: ``(rank of the file among
    the inputs, the split's byte offset in it, row in the split)``. Spark's own partition order
    is not the input order: it sorts file splits by size, largest first. Rows of files that
    cannot be ranked (remote paths) come after the ranked ones, ordered by path."""
    from pyspark.sql import functions as sf

    ranks = {f: i for i, f in enumerate(dict.fromkeys(input_files(paths)))}
    # _metadata.file_path is a URI (file:/a/b%20c); decode it to compare with local paths.
    where = sf.col("_metadata.file_path")
    local = sf.regexp_replace(
        sf.url_decode(sf.regexp_replace(where, "\\+", "%2B")), "^file:/+", "/"
    )
    if ranks:
        table = sf.create_map(*[sf.lit(x) for kv in ranks.items() for x in kv])
        rank = sf.coalesce(sf.element_at(table, local), sf.lit(len(ranks)))
    else:
        rank = sf.lit(0)
    return sf.struct(
        rank.alias("file"),
        where.alias("path"),
        sf.col("_metadata.file_block_start").alias("offset"),
        sf.monotonically_increasing_id().alias("row"),
    )


def collect_clusters(df: DataFrame, result: DataFrame, id_col: str, pos_col: str) -> list[Cluster]:
    """The clusters as the local engine gives them: members in input order, the first of
    them the representative, clusters numbered in the order of their representatives."""
    from pyspark.sql import functions as sf

    ordered = result.join(df.select(id_col, pos_col), id_col).select(
        "cluster", sf.struct(sf.col(pos_col).alias("p"), sf.col(id_col).alias("id")).alias("m")
    )
    grouped = ordered.groupBy("cluster").agg(sf.sort_array(sf.collect_list("m")).alias("m"))
    rows = grouped.select(sf.col("m.id").alias("ids"), sf.col("m")[0]["p"].alias("first"))
    members = [tuple(r["ids"]) for r in rows.orderBy("first").collect()]
    return [Cluster(n, m, m[0]) for n, m in enumerate(members)]
