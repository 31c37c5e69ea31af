"""End-to-end dedup of N documents: neardup vs a datasketch MinHashLSH + union-find pipeline.

The corpus is text from the machine cut into ~600-byte documents, plus edited copies (2-10%
word edits) of a tenth of them, so true near-duplicates exist. Both pipelines get the same
documents and threshold (Jaccard 0.8 of word 5-shingles); recall is measured against brute
force on a sample of the planted pairs. Run:

    python benchmarks/dedup_bench.py --docs 100000 [--skip-datasketch]
"""

from __future__ import annotations

import argparse
import random
import re
import resource
import time

import neardup
from corpus import edit_words, load_corpus
from neardup.cluster import UnionFind

WORD = re.compile(r"\w+")


def build(n_docs: int, seed: int = 3) -> tuple[list[str], list[tuple[int, int]]]:
    rng = random.Random(seed)
    chunks: list[str] = []
    for text in load_corpus(max_mb=n_docs * 0.0007 + 5):
        words = text.split()
        for i in range(0, len(words) - 60, 100):
            chunks.append(" ".join(words[i : i + 100]))
            if len(chunks) >= int(n_docs * 0.9):
                break
        if len(chunks) >= int(n_docs * 0.9):
            break
    docs = list(chunks)
    planted: list[tuple[int, int]] = []
    while len(docs) < n_docs:
        src = rng.randrange(len(chunks))
        planted.append((src, len(docs)))
        docs.append(edit_words(chunks[src], rng.choice([0.02, 0.05, 0.1]), rng))
    return docs, planted


def shingles(text: str) -> set[str]:
    toks = WORD.findall(text.lower())
    if len(toks) < 5:
        return {" ".join(toks)} if toks else set()
    return {" ".join(toks[i : i + 5]) for i in range(len(toks) - 4)}


def jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 0.0


def datasketch_pipeline(docs: list[str], threshold: float) -> set[tuple[int, int]]:
    from datasketch import MinHash, MinHashLSH

    lsh = MinHashLSH(threshold=threshold, num_perm=128)
    sigs = []
    for i, d in enumerate(docs):
        m = MinHash(num_perm=128)
        m.update_batch([s.encode() for s in shingles(d)])
        lsh.insert(i, m)
        sigs.append(m)
    pairs: set[tuple[int, int]] = set()
    uf = UnionFind(len(docs))
    for i, m in enumerate(sigs):
        for j in lsh.query(m):
            if j != i and m.jaccard(sigs[j]) >= threshold:
                a, b = (i, j) if i < j else (j, i)
                pairs.add((a, b))
                uf.union(a, b)
    return pairs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--docs", type=int, default=100_000)
    ap.add_argument("--threshold", type=float, default=0.8)
    ap.add_argument("--skip-datasketch", action="store_true")
    ap.add_argument("--jobs", default="1", help="comma-separated --jobs values for neardup")
    args = ap.parse_args()
    docs, planted = build(args.docs)
    mb = sum(len(d) for d in docs) / 1e6
    truth = [
        (a, b)
        for a, b in planted
        if jaccard(shingles(docs[a]), shingles(docs[b])) >= args.threshold
    ]
    print(
        f"corpus: {len(docs)} docs, {mb:.1f} MB; "
        f"planted pairs with J >= {args.threshold}: {len(truth)}"
    )

    t_nd = 0.0
    for jobs in [int(j) for j in args.jobs.split(",")]:
        t = time.perf_counter()
        result = neardup.dedup(
            list(enumerate(docs)), method="minhash", threshold=args.threshold, jobs=jobs
        )
        secs = time.perf_counter() - t
        t_nd = secs if jobs == 1 or not t_nd else t_nd
        found = {(int(p.a), int(p.b)) for p in result.pairs}
        rec_nd = sum((a, b) in found for a, b in truth) / max(1, len(truth))
        below = -1
        if len(result.pairs) < 50_000:
            below = sum(
                1
                for p in result.pairs
                if jaccard(shingles(docs[int(p.a)]), shingles(docs[int(p.b)]))
                < args.threshold - 1e-9
            )
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(
            f"neardup dedup jobs={jobs}: {secs:7.2f} s  {len(docs) / secs:9.0f} docs/s  "
            f"pairs={len(result.pairs)} recall={rec_nd:.4f} pairs-below-threshold={below} "
            f"peak RSS so far={peak:.0f} MB"
        )
    if args.skip_datasketch:
        return
    t = time.perf_counter()
    ds_pairs = datasketch_pipeline(docs, args.threshold)
    t_ds = time.perf_counter() - t
    rec_ds = sum((a, b) in ds_pairs for a, b in truth) / max(1, len(truth))
    print(
        f"datasketch+UF:   {t_ds:7.2f} s  {len(docs) / t_ds:9.0f} docs/s  "
        f"pairs={len(ds_pairs)} recall={rec_ds:.4f}"
    )
    print(f"speed ratio neardup/datasketch: x{t_ds / t_nd:.1f}")


if __name__ == "__main__":
    main()
