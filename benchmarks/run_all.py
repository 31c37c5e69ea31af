"""Run every benchmark side by side with its peers and write benchmarks/RESULTS.md.

``make bench`` runs this. Each script measures neardup and the peers installed from PyPI
(datasketch, rensa, simhash, imagehash, ppdeep, py-tlsh, semhash, model2vec) in one process
on the same corpus (text and images already on the machine), in interleaved rounds, and prints
medians and ratios; this runner collects their output verbatim under a description of the machine.
The ratios, not the absolute times, are the headline: the machine is shared and noisy.

    python benchmarks/run_all.py [--quick] [--only minhash,simhash]
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).parent

#: (name, script and arguments, quick arguments)
SUITE: list[tuple[str, list[str], list[str]]] = [
    ("tokenizer + hash throughput", ["tokenize_bench.py"], ["--mb", "5", "--rounds", "2"]),
    (
        "MinHash sketching, LSH build + query, memory per document (vs datasketch, rensa)",
        ["minhash_bench.py"],
        ["--mb", "5", "--rounds", "2"],
    ),
    (
        "per-call add + query, LSH and Hamming (vs datasketch, rensa)",
        ["percall_bench.py"],
        ["--docs", "5000", "--rounds", "2"],
    ),
    (
        "SimHash sketching and Hamming all-pairs (vs simhash, numpy scan)",
        ["simhash_bench.py"],
        ["--mb", "5", "--rounds", "2", "--codes", "200000"],
    ),
    (
        "datasketch family: compat package and native classes (vs datasketch, rensa)",
        ["datasketch_bench.py"],
        ["--mb", "1", "--rounds", "2"],
    ),
    (
        "datasketch bulk paths: compat and native batches (vs rensa's equivalents)",
        ["bulk_bench.py"],
        ["--mb", "1", "--rounds", "2"],
    ),
    (
        "canonicalization kernel and MinHash on non-ASCII text (vs the stdlib path, rensa)",
        ["canonicalize_bench.py"],
        ["--mb", "2", "--rounds", "2"],
    ),
    (
        "JSONL scanner: texts and ids out of JSON lines (vs json.loads per line)",
        ["jsonl_scan_bench.py"],
        ["--mb", "5", "--repeat", "3"],
    ),
    ("CTPH and TLSH (vs ppdeep, py-tlsh)", ["fuzzy_bench.py"], ["--mb", "3", "--rounds", "2"]),
    ("image hashing (vs imagehash)", ["image_bench.py"], ["--count", "200", "--rounds", "3"]),
    (
        "whole-process `neardup dedup` vs the rensa and datasketch scripts (issue 16)",
        ["e2e_bench.py"],
        ["--docs", "20000", "--pages-mb", "4"],
    ),
    (
        "end-to-end dedup (vs datasketch MinHashLSH + union-find)",
        ["dedup_bench.py", "--docs", "100000", "--jobs", "1,2"],
        ["--docs", "20000"],
    ),
    (
        "static embeddings: throughput and paraphrase ranking vs MiniLM, semantic dedup vs semhash",
        ["static_embeddings_bench.py"],
        ["--quick"],
    ),
    (
        "K-means-partitioned semantic dedup (SemDeDup) of 1M vectors: time, memory, recall",
        ["semdedup_million.py"],
        ["--n", "200000"],
    ),
    (
        "persistent store: build vs plain dedup, size, query latency at N and 1M (vs datasketch)",
        ["store_bench.py", "--docs", "100000", "--big", "1000000"],
        ["--docs", "20000", "--big", "200000"],
    ),
    (
        "Spark engine, local[1] and local[2] (vs the local engine, per core)",
        ["spark_bench.py", "--docs", "100000"],
        ["--docs", "20000", "--repeat", "1"],
    ),
]


def machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        kb = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f", {kb / 1024 / 1024:.0f} GiB RAM"
    except (OSError, ValueError, IndexError):
        pass
    load = ""
    if hasattr(os, "getloadavg"):
        load = f", load average at start {os.getloadavg()[0]:.1f}"
    return (
        f"{cpu}, {os.cpu_count()} cores{mem}; {platform.system()} {platform.release()}; "
        f"Python {platform.python_version()}{load}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="smaller inputs (minutes, not an hour)")
    ap.add_argument("--only", default="", help="comma-separated script name prefixes")
    ap.add_argument("--out", default=str(HERE / "RESULTS.md"))
    args = ap.parse_args()
    env = {**os.environ, "NUMBA_NUM_THREADS": "1", "RAYON_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    parts = [
        "# Benchmark results\n",
        f"Made by `benchmarks/run_all.py{' --quick' if args.quick else ''}` on "
        f"{time.strftime('%Y-%m-%d')}: {machine()}. One core per process "
        "(NUMBA_NUM_THREADS=RAYON_NUM_THREADS=1). Each section is one script's output, "
        "neardup and its peers measured in the same process on the same input; read the "
        "ratios.\n",
    ]
    wanted = [w for w in args.only.split(",") if w]
    for title, cmd, quick in SUITE:
        if wanted and not any(cmd[0].startswith(w) for w in wanted):
            continue
        argv = [sys.executable, str(HERE / cmd[0]), *(quick if args.quick else cmd[1:])]
        print(f"== {title}: {' '.join(argv[1:])}", flush=True)
        t = time.perf_counter()
        proc = subprocess.run(argv, cwd=HERE, env=env, capture_output=True, text=True, check=False)
        secs = time.perf_counter() - t
        out = proc.stdout.strip() or "(no output)"
        if proc.returncode:
            out += f"\n\n(exit {proc.returncode})\n" + proc.stderr.strip()[-2000:]
        print(out, flush=True)
        parts.append(
            f"\n## {title}\n\n`{' '.join(cmd[:1] + (quick if args.quick else cmd[1:]))}` "
            f"({secs:.0f} s)\n\n```\n{out}\n```\n"
        )
    Path(args.out).write_text("".join(parts), encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
