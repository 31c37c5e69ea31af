"""Where one ``neardup dedup IN.jsonl`` run spends its time, stage by stage, in one process.

The stages of the CLI's packed-JSONL path, run one after another over the whole file (so each
is timed alone; the CLI overlaps reading with sketching when ``--jobs`` > 1): start (imports,
method, the first kernel loads on a two-line file), read (``PackedBatches``), sketch
(``Method.sketch`` per batch, on ``--jobs`` threads), band keys (``Collector.add``), walk
(``Collector.components``: the bucket walk and verification), clusters (labels, ``Cluster``
objects) and write (the JSONL writer, into memory). Each stage's wall and CPU seconds
(process CPU, every thread), and peak RSS at the end. Holding every batch at once makes the
RSS higher than the CLI's. Run:

    PYTHONPATH=$PWD/src python benchmarks/e2e_stages.py IN.jsonl [--threshold 0.8] [--jobs 1]
"""

from __future__ import annotations

import argparse
import io
import resource
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

T0 = (time.perf_counter(), time.process_time())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("path", type=Path)
    ap.add_argument("--threshold", type=float, default=0.8)
    ap.add_argument("--jobs", type=int, default=1)
    args = ap.parse_args()
    import neardup.cli  # noqa: F401  (what the command imports)
    from neardup.methods import make_method
    from neardup.packed import PackedBatches
    from neardup.pipeline import dedup
    from neardup.report import Cluster
    from neardup.report.writers import write_clusters

    stages: list[tuple[str, float, float]] = []
    last = T0

    def mark(name: str) -> None:
        nonlocal last
        now = (time.perf_counter(), time.process_time())
        stages.append((name, now[0] - last[0], now[1] - last[1]))
        last = now

    m = make_method("minhash", args.threshold)
    with tempfile.TemporaryDirectory() as tmp:
        warm = Path(tmp) / "warm.jsonl"
        warm.write_text('{"id": "a", "text": "a b c d e f"}\n{"id": "b", "text": "a b c d e"}\n')
        dedup(PackedBatches(warm), method=m, pairs=False, jobs=args.jobs)
    mark("start")
    batches = list(PackedBatches(args.path))
    mark("read")
    with ThreadPoolExecutor(args.jobs) as pool:
        payloads = list(pool.map(m.sketch, batches))
    mark("sketch")
    col = m.collector()
    n = 0
    for b, p in zip(batches, payloads, strict=True):
        col.add(np.arange(n, n + len(b)), p)
        n += len(b)
    mark("band keys")
    roots = col.components(n, jobs=args.jobs)
    mark("walk")
    from neardup.cluster import cluster_labels

    ids = [i for b in batches for i in b.ids]
    groups = cluster_labels(roots)
    clusters = [Cluster(k, tuple(map(ids.__getitem__, g)), ids[g[0]]) for k, g in enumerate(groups)]
    mark("clusters")
    write_clusters(clusters, io.StringIO(), fmt="jsonl")
    mark("write")
    print(f"{args.path.name}: {n:,} documents, {len(clusters):,} clusters, --jobs {args.jobs}")
    print("| stage | wall s | CPU s |\n|---|---:|---:|")
    for name, wall, cpu in stages:
        print(f"| {name} | {wall:.3f} | {cpu:.3f} |")
    total_w = sum(s[1] for s in stages)
    total_c = sum(s[2] for s in stages)
    print(f"| total | {total_w:.3f} | {total_c:.3f} |")
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
