#!/usr/bin/env python3
"""Per-call index use: ``add`` then ``query`` for each document, neardup vs datasketch and rensa.

    .venv/bin/python benchmarks/percall_bench.py [--docs 20000] [--rounds 3]

datasketch's calling pattern: one ``insert`` and one ``query`` per document, interleaved (a
streaming deduplicator). Sketches are made beforehand (each library gets its own objects of
the same documents), so only the index calls are timed. Documents: ``--docs`` word lists from
a fixed-seed vocabulary, a third of them near-copies (5% of words replaced) of earlier ones.
LSH at threshold 0.8 with 128 slots (rensa with 16 bands, its divisor of 128). The Hamming
rows time :class:`~neardup.index.hamming.HammingIndex` ``add`` + ``query`` of 64-bit SimHash
codes (radius 3) per document; neither peer has a Hamming index, so its ratios are against
the peers' LSH per-call times. The compat row times ``neardup.compat.datasketch.MinHashLSH``
(datasketch's API and band plan, b=9 r=13) with the same calls as the datasketch row.
Implementations run interleaved in rounds after a warm-up;
medians of CPU time (``time.process_time``: the machine is shared), and ratios within the run.
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

os.environ.setdefault("RAYON_NUM_THREADS", "1")
os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import neardup.compat.datasketch as compat
from neardup.index.hamming import HammingIndex
from neardup.index.lsh import LSHIndex
from neardup.sketch.minhash import MinHash, MinHasher
from neardup.sketch.simhash import SimHasher

NUM_PERM = 128


def corpus(n: int, seed: int = 7) -> list[str]:
    """``n`` documents of 60-140 words; a third are near-copies of earlier documents."""
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(20_000)]
    docs: list[str] = []
    for i in range(n):
        if i and rng.random() < 1 / 3:
            words = docs[rng.randrange(i)].split()
            for k in rng.sample(range(len(words)), max(1, len(words) // 20)):
                words[k] = rng.choice(vocab)
        else:
            words = [rng.choice(vocab) for _ in range(rng.randint(60, 140))]
        docs.append(" ".join(words))
    return docs


def rounds(impls: dict[str, Callable[[], object]], n: int) -> dict[str, float]:
    for fn in impls.values():
        fn()
    times: dict[str, list[float]] = {name: [] for name in impls}
    for r in range(n):
        for name, fn in impls.items():
            gc.collect()
            t0 = time.process_time()
            fn()
            times[name].append(time.process_time() - t0)
        line = ", ".join(f"{k}={v[-1]:.3f}s" for k, v in times.items())
        print(f"  round {r + 1}: {line}", file=sys.stderr)
    return {name: statistics.median(ts) for name, ts in times.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--docs", type=int, default=20_000)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()

    import datasketch
    import rensa

    docs = corpus(args.docs)
    n = len(docs)
    hasher = MinHasher(NUM_PERM)
    sigs = hasher.sketch_many(docs)
    params = hasher.sketch(docs[0]).params
    nd_objs = [MinHash(row, "xxh3", params) for row in sigs]
    ds_objs = [
        datasketch.MinHash(num_perm=NUM_PERM, hashvalues=row, scheme="affine64") for row in sigs
    ]
    compat_objs = [
        compat.MinHash(num_perm=NUM_PERM, hashvalues=row, scheme="affine64") for row in sigs
    ]
    rmh = []
    for doc in docs:
        m = rensa.RMinHash(NUM_PERM, 42)
        m.update(doc.split())
        rmh.append(m)
    codes = SimHasher(bits=64).sketch_many(docs)
    code_ints = [int(c) for c in codes.reshape(-1)]

    def nd_lsh() -> object:
        index = LSHIndex(0.8, NUM_PERM)
        hits = 0
        for i, m in enumerate(nd_objs):
            index.add(i, m)
            hits += len(index.query(m))
        return hits

    def nd_lsh_16x8() -> object:
        index = LSHIndex(0.8, NUM_PERM, bands=16, rows=8)
        hits = 0
        for i, m in enumerate(nd_objs):
            index.add(i, m)
            hits += len(index.query(m))
        return hits

    def ds_pattern(cls: Callable[..., Any], objs: list[Any]) -> int:
        lsh = cls(threshold=0.8, num_perm=NUM_PERM)
        hits = 0
        for i, m in enumerate(objs):
            lsh.insert(i, m, check_duplication=False)
            hits += len(lsh.query(m))
        return hits

    def ds_lsh() -> object:
        return ds_pattern(datasketch.MinHashLSH, ds_objs)

    def compat_lsh() -> object:
        return ds_pattern(compat.MinHashLSH, compat_objs)

    def rensa_lsh() -> object:
        lsh = rensa.RMinHashLSH(0.8, NUM_PERM, 16)
        hits = 0
        for i, m in enumerate(rmh):
            lsh.insert(i, m)
            hits += len(lsh.query(m))
        return hits

    def nd_hamming() -> object:
        index = HammingIndex(64, 3)
        hits = 0
        for i, c in enumerate(code_ints):
            index.add(i, c)
            hits += len(index.query(c))
        return hits

    plan = LSHIndex(0.8, NUM_PERM).plan
    ds_plan = datasketch.MinHashLSH(threshold=0.8, num_perm=NUM_PERM)
    print(f"# load average at start: {os.getloadavg()[0]:.1f} (CPU seconds below)")
    print(
        f"# {n} documents; plans at 0.8: neardup b={plan.bands} r={plan.rows}, "
        f"datasketch b={ds_plan.b} r={ds_plan.r}, rensa b=16 r=8"
    )
    peers = (
        ("neardup", nd_lsh),
        ("datasketch", ds_lsh),
        ("compat", compat_lsh),
        ("rensa", rensa_lsh),
    )
    for name, fn in peers:
        print(f"# hits summed over the queries, {name}: {fn()}")
    med = rounds(
        {
            "neardup LSHIndex.add + query": nd_lsh,
            "neardup LSHIndex(16x8, as rensa).add + query": nd_lsh_16x8,
            "rensa RMinHashLSH.insert + query": rensa_lsh,
            "datasketch MinHashLSH.insert + query": ds_lsh,
            "neardup.compat.datasketch MinHashLSH.insert + query": compat_lsh,
            "neardup HammingIndex.add + query (64-bit, r=3)": nd_hamming,
        },
        args.rounds,
    )
    ds = med["datasketch MinHashLSH.insert + query"]
    rs = med["rensa RMinHashLSH.insert + query"]
    print(f"# load average at end: {os.getloadavg()[0]:.1f}")
    print("\n## Per call: add then query, each document (threshold 0.8, 128 slots)\n")
    print("| implementation | median CPU s | µs per add+query | x datasketch | x rensa |")
    print("|---|---:|---:|---:|---:|")
    for name, t in med.items():
        print(f"| {name} | {t:.3f} | {1e6 * t / n:.1f} | {ds / t:.2f} | {rs / t:.2f} |")


if __name__ == "__main__":
    main()
