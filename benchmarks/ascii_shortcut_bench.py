#!/usr/bin/env python3
"""The canonicalizer's pure-ASCII shortcut: ``MinHasher.sketch_many`` with and without it, in
one process, interleaved, against rensa ``RMinHash`` fed Python shingles, per document.

    .venv/bin/python benchmarks/ascii_shortcut_bench.py [--mb 5] [--rounds 25]

The corpus is ``minhash_bench.py``'s (the machine's man pages and docs, mostly ASCII). "old"
runs the canonicalizer kernel over the whole batch (``Canonicalizer._kernel_batch(...,
shortcut=False)``, the path before the shortcut), "new" the shortcut (what ``sketch_many``
does); the fused sketch kernel after it is the same, and the signatures are checked equal.
Medians of CPU seconds (``time.process_time``), with the load average.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("RAYON_NUM_THREADS", "1")
os.environ.setdefault("NUMBA_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).parent))

from minhash_bench import build_corpus, peer_shingles

from neardup.canonicalize import Canonicalizer
from neardup.packed import PackedDocs, pack
from neardup.sketch.minhash import MinHasher, _fused_args


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--mb", type=float, default=5.0)
    ap.add_argument("--rounds", type=int, default=25)
    args = ap.parse_args()

    import rensa

    docs = build_corpus(args.mb)
    n = len(docs)
    canon = Canonicalizer()
    hasher = MinHasher(128)
    fused = _fused_args(hasher._tokenizer)
    assert fused is not None

    def canonical(shortcut: bool) -> PackedDocs:
        return canon._kernel_batch(pack(docs, writable=True), False, shortcut=shortcut)

    def sketch(shortcut: bool) -> object:
        return hasher._fused("sketch_words", canonical(shortcut), fused)

    def rensa_sketch() -> None:
        for d in docs:
            m = rensa.RMinHash(128, 42)
            m.update(peer_shingles(d, canon))

    assert (sketch(True) == sketch(False)).all()
    assert (sketch(True) == hasher.sketch_many(docs)).all()
    impls: dict[str, Callable[[], object]] = {
        "pack + canonicalize, old": lambda: canonical(False),
        "pack + canonicalize, new": lambda: canonical(True),
        "sketch_many, old": lambda: sketch(False),
        "sketch_many, new": lambda: sketch(True),
        "rensa RMinHash.update per doc": rensa_sketch,
    }
    times: dict[str, list[float]] = {name: [] for name in impls}
    for r in range(args.rounds):
        for name, fn in impls.items():
            if name.startswith("rensa") and r % 5:
                continue  # 10x slower: one round in five
            gc.collect()
            t0 = time.process_time()
            fn()
            times[name].append(time.process_time() - t0)
    med = {name: statistics.median(ts) for name, ts in times.items()}
    ascii_docs = sum(d.isascii() for d in docs)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"# corpus: {n} docs ({ascii_docs} pure ASCII); load average {load}\n")
    print("| step | median µs per doc | rounds | x rensa |")
    print("|---|---:|---:|---:|")
    ref = med["rensa RMinHash.update per doc"]
    for name, t in med.items():
        print(f"| {name} | {1e6 * t / n:.1f} | {len(times[name])} | {ref / t:.2f} |")


if __name__ == "__main__":
    main()
