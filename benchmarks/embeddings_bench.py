"""Embeddings benchmark: local-model throughput on CPU and all-pairs cosine search at a threshold.

1. Texts per second of :class:`neardup.embeddings.LocalProvider` (all-MiniLM-L6-v2, CPU) on
   passages of 20-60 words cut from the machine corpus (``corpus.py``, no downloads).
2. All pairs at cosine >= threshold over ``--n`` (default 100,000) clustered random 384-d
   vectors: exact blocked numpy products vs the approximate usearch HNSW index, with the
   approximate method's recall against the exact pairs.

Run: ``.venv/bin/python benchmarks/embeddings_bench.py [--n 100000] [--texts 2000]``.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import time

import numpy as np

from corpus import load_corpus
from neardup.embeddings import LocalProvider
from neardup.index.vectors import VectorIndex, cosine_pairs


def passages(count: int, *, seed: int = 7) -> list[str]:
    """``count`` passages of 20-60 words from the machine corpus."""
    rng = random.Random(seed)
    out: list[str] = []
    for doc in load_corpus(4.0):
        words = doc.split()
        while len(words) >= 20 and len(out) < count:
            take = rng.randint(20, 60)
            out.append(" ".join(words[:take]))
            words = words[take:]
        if len(out) >= count:
            break
    return out


def clustered(n: int, dim: int, *, seed: int = 0) -> np.ndarray:
    """``n`` vectors in clusters of 1-8 around random centres; the noise level varies per
    cluster so that within-cluster cosines straddle 0.9 (about 1/(1 + dim * s**2 / |c|**2))."""
    rng = np.random.default_rng(seed)
    out = np.empty((n, dim), dtype=np.float32)
    at = 0
    while at < n:
        size = min(int(rng.integers(1, 9)), n - at)
        centre = rng.standard_normal(dim)
        noise = rng.uniform(0.05, 0.6)
        out[at : at + size] = centre + noise * rng.standard_normal((size, dim))
        at += size
    return out[rng.permutation(n)]


def bench_model(count: int) -> None:
    texts = passages(count)
    t0 = time.perf_counter()
    provider = LocalProvider()
    provider.embed(texts[:8])  # import, load and warm up
    load = time.perf_counter() - t0
    t0 = time.perf_counter()
    out = provider.embed(texts)
    took = time.perf_counter() - t0
    words = sum(len(t.split()) for t in texts)
    print(
        f"local model {provider.model_id}: load+warm-up {load:.1f} s; {len(texts)} passages "
        f"({words / len(texts):.0f} words avg) in {took:.1f} s = {len(texts) / took:.0f} texts/s "
        f"(batch {provider.batch_size}, {os.cpu_count()} cores, shape {out.shape})"
    )


def bench_pairs(n: int, threshold: float) -> None:
    vectors = clustered(n, 384)
    t0 = time.perf_counter()
    i, j, _ = cosine_pairs(vectors, threshold, block_size=2048)
    exact_s = time.perf_counter() - t0
    exact = set(zip(i.tolist(), j.tolist(), strict=True))
    print(
        f"exact all-pairs n={n} dim=384 threshold={threshold}: {len(exact)} pairs in "
        f"{exact_s:.1f} s (numpy blocks of 2048)"
    )

    index = VectorIndex(384, method="approx")
    index.add_many(range(n), vectors)
    t0 = time.perf_counter()
    index._graph()  # build the HNSW graph (timed apart from the search)
    build_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    approx = {(a, b) for a, b, _ in index.pairs(threshold)}
    search_s = time.perf_counter() - t0
    found = len(approx & exact)
    recall = found / len(exact) if exact else 1.0
    false = len(approx - exact)
    print(
        f"approx (usearch HNSW, M=16, ef=64, 32 neighbours) n={n}: build {build_s:.1f} s + "
        f"pairs {search_s:.1f} s = {build_s + search_s:.1f} s; {len(approx)} pairs, recall "
        f"{recall:.4f} ({found}/{len(exact)}), {false} not in exact"
    )
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS {rss:.0f} MB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=100_000, help="vectors for all-pairs")
    parser.add_argument("--texts", type=int, default=2000, help="passages for the model")
    parser.add_argument("--threshold", type=float, default=0.9)
    parser.add_argument("--skip-model", action="store_true")
    args = parser.parse_args()
    if not args.skip_model:
        bench_model(args.texts)
    bench_pairs(args.n, args.threshold)


if __name__ == "__main__":
    main()
