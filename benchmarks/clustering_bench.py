"""Center vs connected-components clustering: recall on planted near-duplicates, and chaining.

The corpus is text from the machine (man pages, licences, /usr/share/doc, the stdlib; see
``corpus.py``), plus planted groups: for some documents, 1-4 edited copies (0.5-2 % word
edits, Jaccard of 5-shingles about 0.9) placed at random positions, so a copy often comes
before its original. Both clusterings get the same accepted pairs from one ``neardup.dedup``
run per method; only the clustering differs.

Measured per clustering:

* pair recall: planted pairs (any two documents of a planted group) that share a cluster;
* removal recall: of the copies a perfect dedup drops (group size - 1 per group), the share
  that ``--keep first`` drops (a group split over two clusters keeps two documents);
* wrong merges: documents put in a cluster with a planted document of another group;
* the largest cluster, and its lowest similarity to its representative (center).

Run:

    python benchmarks/clustering_bench.py [--mb 8] [--groups 600] [--methods minhash,simhash]
"""

from __future__ import annotations

import argparse
import random
import time
from collections import Counter

import numpy as np
from corpus import edit_words, load_corpus

import neardup
from neardup.cluster import cluster_labels, cluster_roots


def build(mb: float, groups: int, seed: int) -> tuple[list[str], list[int]]:
    """Documents and, per document, its planted group (-1 = not planted)."""
    rng = random.Random(seed)
    base = load_corpus(max_mb=mb, seed=seed)
    docs: list[str] = list(base)
    group = [-1] * len(base)
    for g, k in enumerate(rng.sample(range(len(base)), min(groups, len(base)))):
        group[k] = g
        for _ in range(rng.randint(1, 4)):
            docs.append(edit_words(base[k], rng.uniform(0.005, 0.02), rng))
            group.append(g)
    order = list(range(len(docs)))
    rng.shuffle(order)
    return [docs[i] for i in order], [group[i] for i in order]


def score(roots: np.ndarray, group: list[int]) -> dict[str, float]:
    """Pair recall, removal recall and wrong merges of one clustering against the groups."""
    g = np.asarray(group)
    planted = g >= 0
    pair_total = pair_found = need = dropped = wrong = 0
    by_group: dict[int, list[int]] = {}
    for i in np.flatnonzero(planted).tolist():
        by_group.setdefault(int(g[i]), []).append(i)
    for members in by_group.values():
        r = Counter(int(roots[i]) for i in members)
        pair_total += len(members) * (len(members) - 1) // 2
        pair_found += sum(c * (c - 1) // 2 for c in r.values())
        need += len(members) - 1
        # keep-first drops every member that is not its cluster's representative
        dropped += sum(1 for i in members if int(roots[i]) != i)
    for cl in cluster_labels(roots):
        gs = {int(g[i]) for i in cl if g[i] >= 0}
        if len(gs) > 1:
            wrong += len(cl) - max(Counter(int(g[i]) for i in cl if g[i] >= 0).values())
    return {
        "pair_recall": pair_found / pair_total if pair_total else 1.0,
        "removal_recall": dropped / need if need else 1.0,
        "wrong_merges": float(wrong),
    }


def kernel_times(n_pairs: int) -> None:
    """Both clusterings on ``n_pairs`` random pairs over ``n_pairs // 2`` rows (warm)."""
    rng = np.random.default_rng(1)
    n = n_pairs // 2
    a = rng.integers(0, n, n_pairs)
    b = rng.integers(0, n, n_pairs)
    i, j = np.minimum(a, b), np.maximum(a, b)
    s = rng.uniform(0.8, 1.0, n_pairs)
    for clustering in ("components", "center"):
        cluster_roots(10, i[:5] % 10, j[:5] % 10, s[:5], clustering=clustering)  # compile
        t0 = time.perf_counter()
        cluster_roots(n, i, j, s, clustering=clustering)
        print(f"kernel {clustering:10} {n_pairs:,} pairs: {time.perf_counter() - t0:.3f} s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=8.0, help="MB of machine text")
    ap.add_argument("--groups", type=int, default=600, help="planted groups")
    ap.add_argument("--methods", default="minhash,simhash")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--kernel", type=int, default=0, help="also time both kernels on N pairs")
    args = ap.parse_args()
    if args.kernel:
        kernel_times(args.kernel)
    docs, group = build(args.mb, args.groups, args.seed)
    n_planted = sum(1 for x in group if x >= 0)
    print(f"{len(docs)} documents, {args.groups} planted groups ({n_planted} documents)")
    print(
        f"{'method':8} {'clustering':10} {'pair recall':>11} {'removal recall':>14} "
        f"{'wrong merges':>12} {'clusters':>8} {'largest':>7} {'low sim':>7} {'seconds':>7}"
    )
    for method in args.methods.split(","):
        r = neardup.dedup(docs, method=method)
        pos = {d: k for k, d in enumerate(r.doc_ids)}
        i = np.array([pos[p.a] for p in r.pairs], dtype=np.int64)
        j = np.array([pos[p.b] for p in r.pairs], dtype=np.int64)
        s = np.array([p.similarity for p in r.pairs], dtype=np.float64)
        for clustering in ("components", "center"):
            t0 = time.perf_counter()
            roots, to_root = cluster_roots(len(docs), i, j, s, clustering=clustering)
            secs = time.perf_counter() - t0
            sc = score(roots, group)
            cl = cluster_labels(roots)
            big = max(cl, key=len) if cl else []
            low = f"{min(to_root[k] for k in big):.3f}" if to_root is not None and big else "-"
            print(
                f"{method:8} {clustering:10} {sc['pair_recall']:11.4f} "
                f"{sc['removal_recall']:14.4f} {int(sc['wrong_merges']):12d} {len(cl):8d} "
                f"{len(big):7d} {low:>7} {secs:7.3f}"
            )


if __name__ == "__main__":
    main()
