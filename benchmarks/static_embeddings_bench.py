"""Static embeddings vs MiniLM and semhash: throughput, paraphrase ranking, semantic dedup.

1. **Throughput**: texts/s of :class:`neardup.embeddings.StaticProvider` (the bundled static
   model; a fresh provider each round, so its word cache starts cold) and of
   :class:`neardup.embeddings.LocalProvider` (all-MiniLM-L6-v2 through sentence-transformers)
   on the same 20-60 word passages of the machine corpus; ratio static / MiniLM.
2. **Ranking quality**: top-1 accuracy and MRR on the paraphrase-versus-unrelated set of
   ``paraphrase_set.py`` (see its docstring for how it is built), static vs MiniLM; ratio.
3. **Semantic dedup vs semhash** (MinishLab), same static model folder, same threshold: the
   corpus is passages plus edited copies (a word dropped, two words swapped, case changed,
   punctuation added) of a third of them; ``neardup.dedup(method=make_method("embedding", ...))``
   against ``SemHash.from_records(...).self_deduplicate(threshold)``, in alternating rounds
   (median seconds); duplicates removed by each and the overlap of the removed texts.

Run: ``.venv/bin/python benchmarks/static_embeddings_bench.py [--quick]``.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections import Counter

import numpy as np
import paraphrase_set
from embeddings_bench import passages

import neardup
from neardup.embeddings import LocalProvider, StaticProvider
from neardup.methods import make_method


def bench_throughput(count: int, local_count: int, rounds: int) -> None:
    texts = passages(count)
    local = LocalProvider()
    local.embed(texts[:8])
    StaticProvider().embed(texts[:8])  # compile the kernels once
    static_s: list[float] = []
    local_s: list[float] = []
    for _ in range(rounds):
        p = StaticProvider()
        t0 = time.perf_counter()
        p.embed(texts)
        static_s.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        local.embed(texts[:local_count])
        local_s.append(time.perf_counter() - t0)
    s_rate = len(texts) / statistics.median(static_s)
    l_rate = local_count / statistics.median(local_s)
    warm = StaticProvider()
    warm.embed(texts)
    t0 = time.perf_counter()
    warm.embed(texts)
    w_rate = len(texts) / (time.perf_counter() - t0)
    print(
        f"throughput on {len(texts)} passages ({local_count} for MiniLM), median of {rounds}: "
        f"static {s_rate:,.0f} texts/s (cold word cache; warm {w_rate:,.0f}), MiniLM "
        f"{l_rate:,.1f} texts/s -> static/MiniLM = {s_rate / l_rate:,.0f}x"
    )


def bench_ranking(anchors: int, negatives: int) -> None:
    data = paraphrase_set.build(anchors, negatives)
    s_acc, s_mrr = paraphrase_set.score(StaticProvider().embed, data)
    l_acc, l_mrr = paraphrase_set.score(LocalProvider().embed, data)
    print(
        f"paraphrase ranking, {len(data.anchors)} anchors x (1 paraphrase + {negatives} hard "
        f"distractors): static top-1 {s_acc:.3f} (MRR {s_mrr:.3f}), MiniLM top-1 {l_acc:.3f} "
        f"(MRR {l_mrr:.3f}) -> static/MiniLM accuracy = {s_acc / l_acc:.1%}"
    )


def edited(text: str, rng: random.Random) -> str:
    words = text.split()
    op = rng.randrange(4)
    if op == 0 and len(words) > 3:
        del words[rng.randrange(len(words))]
    elif op == 1 and len(words) > 3:
        k = rng.randrange(len(words) - 1)
        words[k], words[k + 1] = words[k + 1], words[k]
    elif op == 2:
        k = rng.randrange(len(words))
        words[k] = words[k].upper() if words[k].islower() else words[k].lower()
    else:
        words.append(rng.choice([".", "!", ";", "..."]))
    return " ".join(words)


def dedup_corpus(count: int, *, seed: int = 11) -> list[str]:
    rng = random.Random(seed)
    base = passages(count, seed=3)
    out = list(base)
    for text in base[: len(base) // 3]:
        for _ in range(rng.randint(1, 2)):
            out.append(edited(text, rng))
    rng.shuffle(out)
    return out


def greedy(n: int, pairs: object) -> list[int]:
    """Positions semhash's rule removes: in input order, a text goes when it pairs with an
    earlier text that was kept (no chaining through removed texts)."""
    partners: dict[int, list[int]] = {}
    for p in pairs:  # type: ignore[attr-defined]
        a, b = sorted((int(p.a), int(p.b)))
        partners.setdefault(b, []).append(a)
    removed: set[int] = set()
    for k in range(n):
        if any(a not in removed for a in partners.get(k, ())):
            removed.add(k)
    return sorted(removed)


def bench_semhash(count: int, threshold: float, rounds: int) -> None:
    from model2vec import StaticModel
    from semhash import SemHash

    texts = dedup_corpus(count)
    path = StaticProvider().model_path
    ours_s: list[float] = []
    theirs_s: list[float] = []
    ours_removed: Counter[str] = Counter()
    greedy_removed: Counter[str] = Counter()
    theirs_removed: Counter[str] = Counter()
    for _ in range(rounds):
        t0 = time.perf_counter()
        method = make_method("embedding", threshold, model=str(path))
        result = neardup.dedup(list(enumerate(texts)), method=method)
        ours_s.append(time.perf_counter() - t0)
        ours_removed = Counter(
            texts[int(m)] for c in result.clusters for m in sorted(c.members, key=int)[1:]
        )
        greedy_removed = Counter(texts[k] for k in greedy(len(texts), result.pairs))
        t0 = time.perf_counter()
        model = StaticModel.from_pretrained(str(path))
        dedup = SemHash.from_records(texts, model=model).self_deduplicate(threshold=threshold)
        theirs_s.append(time.perf_counter() - t0)
        theirs_removed = Counter(str(d.record) for d in dedup.filtered)
    ours, theirs = statistics.median(ours_s), statistics.median(theirs_s)
    n_ours, n_theirs = sum(ours_removed.values()), sum(theirs_removed.values())
    common = sum((ours_removed & theirs_removed).values())
    n_greedy = sum(greedy_removed.values())
    common_greedy = sum((greedy_removed & theirs_removed).values())
    print(
        f"semantic dedup of {len(texts)} texts at cosine >= {threshold}, same static model, "
        f"median of {rounds}: neardup {ours:.1f} s, semhash {theirs:.1f} s -> "
        f"neardup {theirs / ours:.1f}x faster; removed: neardup {n_ours}, semhash {n_theirs} "
        f"({(n_ours - n_theirs) / max(1, n_theirs):+.1%}), {common} removed by both "
        f"({common / max(1, max(n_ours, n_theirs)):.1%} of the larger). semhash's rule (a text "
        f"goes when it pairs with an earlier kept one) on neardup's pairs removes {n_greedy} "
        f"({(n_greedy - n_theirs) / max(1, n_theirs):+.1%}), {common_greedy} of them the same "
        f"texts ({common_greedy / max(1, max(n_greedy, n_theirs)):.1%})"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--texts", type=int, default=10_000)
    ap.add_argument("--local-texts", type=int, default=300)
    ap.add_argument("--anchors", type=int, default=500)
    ap.add_argument("--negatives", type=int, default=9)
    ap.add_argument("--dedup-docs", type=int, default=20_000)
    ap.add_argument("--threshold", type=float, default=0.9)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", default="throughput,ranking,semhash")
    args = ap.parse_args()
    if args.quick:
        args.texts, args.local_texts, args.anchors, args.dedup_docs, args.rounds = (
            3000,
            100,
            200,
            5000,
            1,
        )
    only = set(args.only.split(","))
    np.random.seed(0)
    if "throughput" in only:
        bench_throughput(args.texts, args.local_texts, args.rounds)
    if "ranking" in only:
        bench_ranking(args.anchors, args.negatives)
    if "semhash" in only:
        bench_semhash(args.dedup_docs, args.threshold, args.rounds)


if __name__ == "__main__":
    main()
