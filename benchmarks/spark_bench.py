"""Spark engine throughput: documents/s for local[1] and local[2] against the local engine.

The input is the dedup benchmark's corpus (~100-word chunks of text from the machine plus
edited copies of a tenth of them), written once to Parquet so Spark reads it from files as it
would in production. Each Spark run is timed from the read to the materialized (id, cluster)
result, after a warm-up run on 2,000 documents in the same session (the local engine, too, is
timed after its kernels are loaded); the local engine is ``neardup.dedup`` in one process
(``jobs=1``: one core). Both report the best of ``--repeat`` runs. The script also checks
that every run finds the local clusters. Run:

    PYSPARK_PYTHON=$PWD/.venv/bin/python SPARK_LOCAL_IP=127.0.0.1 \\
        .venv/bin/python benchmarks/spark_bench.py --docs 100000 [--method minhash]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from dedup_bench import build

import neardup


def spark_run(
    master: str, parquet: Path, method: str, repeat: int
) -> tuple[float, float, set[frozenset[str]]]:
    """Seconds of the cold warm-up run, the best of ``repeat`` timed runs (read to a
    materialized result), and the clusters found."""
    from pyspark.sql import SparkSession

    from neardup.spark import dedup_dataframe

    cores = int(master[6:-1])
    spark = (
        SparkSession.builder.master(master)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", str(cores))
        .config("spark.driver.memory", "4g")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    # Warm up as the local engine is warmed up (its kernels are loaded before the clock
    # starts): a small run on every core starts the Python workers, loads the numba kernels
    # in them and lets the JVM compile its Arrow and shuffle paths.
    t0 = time.perf_counter()
    small = spark.read.parquet(str(parquet)).limit(2000).repartition(cores)
    dedup_dataframe(small, method=method).collect()
    warm = time.perf_counter() - t0
    best = float("inf")
    rows: list[Any] = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        rows = dedup_dataframe(spark.read.parquet(str(parquet)), method=method).collect()
        best = min(best, time.perf_counter() - t0)
    spark.stop()
    groups: dict[str, set[str]] = {}
    for r in rows:
        groups.setdefault(r["cluster"], set()).add(r["id"])
    return warm, best, {frozenset(g) for g in groups.values()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--docs", type=int, default=20_000)
    ap.add_argument("--method", default="minhash", choices=["minhash", "simhash"])
    ap.add_argument("--masters", default="local[1],local[2]")
    ap.add_argument("--repeat", type=int, default=2, help="timed runs; the best is reported")
    args = ap.parse_args()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")

    texts, _ = build(args.docs)
    docs = [(f"{i:09d}", t) for i, t in enumerate(texts)]
    mb = sum(len(t.encode()) for t in texts) / 1e6
    print(f"{len(docs)} documents, {mb:.1f} MB, method {args.method}")

    neardup.dedup(docs[:200], method=args.method)  # compile / load the kernels
    t_local = float("inf")
    for _ in range(args.repeat + 1):
        t0 = time.perf_counter()
        local = neardup.dedup(docs, method=args.method)
        t_local = min(t_local, time.perf_counter() - t0)
    expected = {frozenset(c.members) for c in local.clusters}
    rate_local = len(docs) / t_local
    print(
        f"local engine, 1 process (best of {args.repeat + 1}): {t_local:.1f} s, "
        f"{rate_local:,.0f} docs/s, {len(expected)} clusters"
    )

    import pyarrow as pa
    import pyarrow.parquet as pq

    with tempfile.TemporaryDirectory() as tmp:
        parquet = Path(tmp) / "docs.parquet"
        table = pa.table({"id": [d[0] for d in docs], "text": [d[1] for d in docs]})
        pq.write_table(table, parquet, row_group_size=5000)
        for master in args.masters.split(","):
            cores = int(master[6:-1])
            warm, seconds, clusters = spark_run(master, parquet, args.method, args.repeat)
            rate = len(docs) / seconds
            same = "same clusters" if clusters == expected else "DIFFERENT clusters"
            print(
                f"spark {master} (best of {args.repeat}; cold warm-up run on 2,000 documents "
                f"{warm:.1f} s): {seconds:.1f} s, {rate:,.0f} docs/s, {rate / cores:,.0f} "
                f"docs/s/core ({rate_local / (rate / cores):.2f}x slower per core than "
                f"local), {same}"
            )


if __name__ == "__main__":
    main()
