"""1M-vector semantic dedup in bounded memory: K-means-partitioned all-pairs (SemDeDup).

Generates ``--n`` (default 1,000,000) clustered 256-d vectors (groups of 1-8 around random
centres, noise varying per group so that within-group cosines straddle the threshold), runs
:func:`neardup.index.semdedup.partitioned_pairs` at cosine >= 0.9, and reports time, peak RSS
and recall against the exact pairs of ``--queries`` random rows (each compared with all ``n``
rows by blocked matrix products).

Run: ``.venv/bin/python benchmarks/semdedup_million.py [--n 1000000] [--queries 300]``.
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np

from neardup.index.semdedup import partitioned_pairs


def clustered(n: int, dim: int, *, seed: int = 0) -> np.ndarray:
    """Unit rows in groups of 1-8 around random centres (generated in chunks)."""
    rng = np.random.default_rng(seed)
    out = np.empty((n, dim), dtype=np.float32)
    at = 0
    while at < n:
        size = min(int(rng.integers(1, 9)), n - at)
        centre = rng.standard_normal(dim).astype(np.float32)
        noise = np.float32(rng.uniform(0.05, 0.6))
        out[at : at + size] = centre + noise * rng.standard_normal((size, dim), dtype=np.float32)
        at += size
    out /= np.linalg.norm(out, axis=1, keepdims=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--dim", type=int, default=256)
    ap.add_argument("--threshold", type=float, default=0.9)
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--margin", type=float, default=0.03)
    args = ap.parse_args()
    t0 = time.perf_counter()
    x = clustered(args.n, args.dim)
    gen = time.perf_counter() - t0
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    t0 = time.perf_counter()
    i, j, _ = partitioned_pairs(x, args.threshold, margin=args.margin)
    took = time.perf_counter() - t0
    rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    rng = np.random.default_rng(1)
    q = np.sort(rng.choice(args.n, size=args.queries, replace=False))
    want: set[tuple[int, int]] = set()
    for start in range(0, args.n, 65_536):
        sims = x[q] @ x[start : start + 65_536].T
        qi, col = np.nonzero(sims >= args.threshold)
        for a, b in zip(q[qi].tolist(), (col + start).tolist(), strict=True):
            if a != b:
                want.add((min(a, b), max(a, b)))
    got = set(zip(i.tolist(), j.tolist(), strict=True))
    hit = len(want & got)
    print(
        f"{args.n:,} x {args.dim} float32 vectors ({x.nbytes / 2**20:.0f} MiB, generated in "
        f"{gen:.0f} s): partitioned all-pairs at cosine >= {args.threshold} "
        f"(margin {args.margin}) in {took:.0f} s, "
        f"{len(got):,} pairs; peak RSS {rss0:.0f} MiB before, {rss1:.0f} MiB after "
        f"(+{rss1 - rss0:.0f} MiB); recall on the pairs of {args.queries} random rows "
        f"{hit}/{len(want)} = {hit / max(1, len(want)):.4f}"
    )


if __name__ == "__main__":
    main()
