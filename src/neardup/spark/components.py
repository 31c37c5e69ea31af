"""Connected components of a DataFrame edge list by alternating large-star / small-star.

Kiveris, Lattanzi, Mirrokni, Rastogi, Vassilvitskii: "Connected Components in MapReduce and
Beyond", SoCC 2014. Every step is a DataFrame operation (window minimum, projection,
``distinct``), so the graph never goes to the driver. Edges are kept oriented from the larger
node to the smaller one. The loop stops when the graph is a forest of stars centred on each
component's smallest node: every node that points somewhere points to exactly one node, and
that node points nowhere. Node ids may be strings or integers; "smallest" is Spark's ordering
(numeric for integers, UTF-8 byte order for strings, which equals Unicode code point order and
so Python's ``str`` ordering).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from neardup.errors import ConfigError, NeardupError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["checkpoint", "connected_components", "large_star", "small_star"]

log = logging.getLogger(__name__)


def large_star(edges: DataFrame, *, distinct: bool = True) -> DataFrame:
    """One large-star step: each node links its larger neighbours to its smallest neighbour
    (or itself). Input and output: ``(src, dst)`` with ``src > dst``, distinct unless
    ``distinct=False`` (when small-star, which de-duplicates, comes next)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as sf

    sym = edges.select(sf.col("src").alias("u"), sf.col("dst").alias("v")).unionByName(
        edges.select(sf.col("dst").alias("u"), sf.col("src").alias("v"))
    )
    m = sf.least(sf.min("v").over(Window.partitionBy("u")), sf.col("u"))
    out = (
        sym.withColumn("m", m)
        .filter(sf.col("v") > sf.col("u"))
        .select(sf.col("v").alias("src"), sf.col("m").alias("dst"))
    )
    return out.distinct() if distinct else out


def small_star(edges: DataFrame) -> DataFrame:
    """One small-star step: each node links itself and its smaller neighbours to the smallest
    of them. Input and output: distinct ``(src, dst)`` with ``src > dst``."""
    from pyspark.sql import Window
    from pyspark.sql import functions as sf

    t = edges.withColumn("m", sf.min("dst").over(Window.partitionBy("src")))
    moved = t.filter(sf.col("dst") != sf.col("m")).select(
        sf.col("dst").alias("src"), sf.col("m").alias("dst")
    )
    return moved.unionByName(t.select("src", sf.col("m").alias("dst"))).distinct()


def _is_star_forest(edges: DataFrame) -> bool:
    """Every source has one target and no target is a source (one aggregation job)."""
    from pyspark.sql import functions as sf

    ends = edges.select(
        sf.col("src").alias("n"), sf.lit(1).alias("out"), sf.lit(0).alias("inn")
    ).unionByName(
        edges.select(sf.col("dst").alias("n"), sf.lit(0).alias("out"), sf.lit(1).alias("inn"))
    )
    stats = ends.groupBy("n").agg(sf.sum("out").alias("o"), sf.sum("inn").alias("i"))
    bad = stats.filter((sf.col("o") > 1) | ((sf.col("o") > 0) & (sf.col("i") > 0)))
    return bool(bad.isEmpty())


def checkpoint(df: DataFrame) -> DataFrame:
    """``df`` computed now, its lineage cut: a reliable checkpoint when
    ``SparkContext.setCheckpointDir`` was called, else a local one (executor storage)."""
    if df.sparkSession.sparkContext.getCheckpointDir() is not None:
        return df.checkpoint(eager=True)
    return df.localCheckpoint(eager=True)


def _materialize(df: DataFrame, cut: bool) -> DataFrame:
    """A checkpoint (:func:`checkpoint`), or a persisted copy."""
    from pyspark import StorageLevel

    if cut:
        return checkpoint(df)
    # persisted, filled by the convergence check that reads it next (no separate count job)
    return df.persist(StorageLevel.MEMORY_AND_DISK)


def connected_components(
    edges: DataFrame,
    *,
    src: str = "src",
    dst: str = "dst",
    checkpoint_every: int = 3,
    max_iterations: int = 200,
) -> DataFrame:
    """Label every node that has an edge with the smallest node of its component.

    Each iteration runs large-star then small-star and one convergence check; the edge list is
    persisted after each iteration and checkpointed every ``checkpoint_every`` iterations (a
    reliable checkpoint when ``SparkContext.setCheckpointDir`` was called, else a local one),
    so the lineage stays short. Converges in O(log² n) iterations (about ``log2`` of the
    longest shortest path in practice).

    Args:
        edges: Undirected edges in columns ``src`` and ``dst`` (same type: strings or
            integers; self-loops and repeats are allowed). Nulls are not allowed.
        src: Name of the first end's column.
        dst: Name of the second end's column.
        checkpoint_every: Iterations between lineage-cutting checkpoints (>= 1).
        max_iterations: Give up after this many iterations (a safeguard; never reached on
            valid input).

    Returns:
        A computed DataFrame ``(id, component)``, one row per node that has an edge to another
        node; ``component`` is the smallest node of the component. Isolated nodes are absent.

    Raises:
        ConfigError: bad ``checkpoint_every`` or ``max_iterations``.
        NeardupError: no convergence within ``max_iterations``.
    """
    from pyspark.sql import functions as sf

    if isinstance(checkpoint_every, bool) or not isinstance(checkpoint_every, int):
        raise ConfigError(f"checkpoint_every must be a positive integer, got {checkpoint_every!r}")
    if checkpoint_every < 1 or max_iterations < 1:
        raise ConfigError("checkpoint_every and max_iterations must be at least 1")
    a, b = sf.col(src), sf.col(dst)
    cur = _materialize(
        edges.filter(a != b)
        .select(sf.greatest(a, b).alias("src"), sf.least(a, b).alias("dst"))
        .distinct(),
        cut=True,
    )
    iteration = 0
    prev: DataFrame | None = None
    while not _is_star_forest(cur):  # this job also fills ``cur``'s cache
        if prev is not None:
            prev.unpersist()
        iteration += 1
        if iteration > max_iterations:
            raise NeardupError(
                f"connected components did not converge in {max_iterations} iterations"
            )
        prev, cur = (
            cur,
            _materialize(
                small_star(large_star(cur, distinct=False)), iteration % checkpoint_every == 0
            ),
        )
    if prev is not None:
        prev.unpersist()
    log.info("connected components converged after %d iterations", iteration)
    return cur.select(sf.col("src").alias("id"), sf.col("dst").alias("component")).unionByName(
        cur.select(sf.col("dst").alias("id"), sf.col("dst").alias("component")).distinct()
    )
