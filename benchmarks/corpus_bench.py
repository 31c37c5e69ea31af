"""Corpus stages side by side: exact, lines and substrings against datatrove's equivalents on
the same corpus, and each stage per document against the minhash method.

Corpus: real documents from this machine (benchmarks/corpus.py) with planted exact copies,
near copies (word edits), a shared header/footer on a share of the documents (boilerplate
lines) and a repeated passage (for substrings). Timings are wall-clock, best of ``--repeat``.

Peers (datatrove, installed from the ``bench`` dependency group):
- exact: ExactDedupSignature -> ExactFindDedups -> ExactDedupFilter (xxhash64 of the text).
- lines: SentenceDedupSignature -> SentenceFindDedups -> SentenceDedupFilter with
  ``split_sentences=False, n_sentences=1`` (line spans; sha1-64 hashes: datatrove 0.10's
  xxhash path fails on str input). Its rule differs: it drops every
  line already seen in an earlier document, not lines in >= N documents; the time is the
  comparable part.
- substrings: datatrove's ExactSubstr steps need Lee et al.'s Rust suffix-array tool and a
  Hugging Face tokenizer download, neither of which installs here; so is text-dedup's.
  The line printed says so; no ratio is made up.

Run: ``python benchmarks/corpus_bench.py --docs 20000``.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import neardup
from corpus import edit_words, load_corpus
from neardup.corpus.exact import exact_first
from neardup.corpus.lines import LinesSummary, remove_frequent_units
from neardup.corpus.substrings import SubstringSummary, remove_repeated_substrings
from neardup.io import Document
from neardup.methods import make_method

HEADER = "Home | About | Products | Contact us | Log in"
FOOTER = "Copyright 2024 Example Media. All rights reserved. Privacy policy. Cookie settings."
PASSAGE = (
    "This article is provided for informational purposes only and does not constitute legal, "
    "financial or medical advice; always consult a qualified professional before acting on it."
)


def build(n_docs: int, copy_rate: float, seed: int = 4) -> list[Document]:
    rng = random.Random(seed)
    base = load_corpus(max_mb=n_docs * 0.004 + 2)
    out: list[str] = []
    i = 0
    while len(out) < n_docs:
        r = rng.random()
        if out and r < copy_rate:
            out.append(out[rng.randrange(len(out))])  # exact copy
            continue
        text = base[i % len(base)]
        i += 1
        if out and r < copy_rate + 0.1:
            text = edit_words(out[rng.randrange(len(out))], 0.03, rng)  # near copy
        elif rng.random() < 0.4:
            text = f"{HEADER}\n{text}\n{FOOTER}"
        if rng.random() < 0.1:
            text = f"{text}\n{PASSAGE}"
        out.append(text)
    return [Document(str(k), t) for k, t in enumerate(out)]


def best(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return min(times), result


def datatrove_exact(docs: list[Document]) -> int:
    from datatrove.data import Document as DtDoc
    from datatrove.pipeline.dedup.exact_dedup import (
        ExactDedupConfig,
        ExactDedupFilter,
        ExactDedupSignature,
        ExactFindDedups,
    )

    def content(doc: DtDoc) -> bytes:
        # (with postponed annotations datatrove sees a string here and hashes raw bytes)
        return doc.text.encode("utf-8")

    config = ExactDedupConfig(content_getter=content)
    with tempfile.TemporaryDirectory() as tmp:
        data = [DtDoc(text=d.text or "", id=d.id) for d in docs]
        ExactDedupSignature(f"{tmp}/sigs", config).run(iter(data))
        ExactFindDedups(f"{tmp}/sigs", f"{tmp}/dups", config).run()
        kept = sum(1 for _ in ExactDedupFilter(f"{tmp}/dups", config).run(iter(data)))
    return len(docs) - kept


def datatrove_lines(docs: list[Document]) -> int:
    from datatrove.data import Document as DtDoc
    from datatrove.pipeline.dedup.sentence_dedup import (
        SentDedupConfig,
        SentenceDedupFilter,
        SentenceDedupSignature,
        SentenceFindDedups,
    )
    from datatrove.utils.hashing import HashConfig

    # datatrove 0.10's xxhash path hashes str unencoded and fails; its sha1 path works
    config = SentDedupConfig(
        n_sentences=1,
        split_sentences=False,
        min_doc_words=0,
        min_num_sentences=0,
        hash_config=HashConfig(hash_fc="sha1", precision=64),
    )
    with tempfile.TemporaryDirectory() as tmp:
        data = [DtDoc(text=d.text or "", id=d.id) for d in docs]
        SentenceDedupSignature(f"{tmp}/sigs", config=config).run(iter(data))
        SentenceFindDedups(f"{tmp}/sigs", f"{tmp}/dups", config=config).run()
        out = list(SentenceDedupFilter(f"{tmp}/dups", config=config).run(iter(data)))
    return sum(len(d.text) for d in docs) - sum(len(d.text) for d in out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--docs", type=int, default=20_000)
    ap.add_argument("--copy-rate", type=float, default=0.2)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--min-docs", type=int, default=50)
    ap.add_argument("--min-length", type=int, default=100)
    ap.add_argument("--skip-datatrove", action="store_true")
    args = ap.parse_args()
    docs = build(args.docs, args.copy_rate)
    mb = sum(len((d.text or "").encode()) for d in docs) / 1e6
    n = len(docs)
    print(f"corpus: {n} docs, {mb:.1f} MB, copy rate {args.copy_rate}")

    def rate(name: str, seconds: float, extra: str = "") -> float:
        print(f"{name:<34} {seconds:8.2f} s {n / seconds:10.0f} docs/s  {extra}")
        return seconds

    neardup.dedup(docs[:500], method="minhash")  # compile the kernels once
    neardup.dedup(docs[:500], method="exact")
    sum(1 for _ in remove_frequent_units(lambda: docs[:200], min_docs=5))
    sum(1 for _ in remove_repeated_substrings(docs[:200], min_length=args.min_length))
    t_min, r_min = best(lambda: neardup.dedup(docs, method="minhash", pairs=False), args.repeat)
    rate("neardup minhash", t_min, f"clusters={len(r_min.clusters)}")
    t_ef, r_ef = best(lambda: exact_first(docs, method=make_method("minhash")), args.repeat)
    same = [c.members for c in r_ef.clusters] == [c.members for c in r_min.clusters]
    rate("neardup minhash --exact-first", t_ef, f"same clusters={same} x{t_min / t_ef:.2f}")
    t_ex, r_ex = best(lambda: neardup.dedup(docs, method="exact"), args.repeat)
    dups = r_ex.duplicates
    rate("neardup exact", t_ex, f"duplicates={dups} vs minhash x{t_min / t_ex:.1f}")
    raw = make_method("exact", canonicalize="none")
    t_raw, r_raw = best(lambda: neardup.dedup(docs, method=raw), args.repeat)
    rate("neardup exact --canonicalize none", t_raw, f"duplicates={r_raw.duplicates}")
    bloom = make_method("exact", bloom_capacity=n, bloom_fp_rate=1e-3)
    t_bl, r_bl = best(lambda: neardup.dedup(docs, method=bloom), args.repeat)
    rate("neardup exact (bloom 0.001)", t_bl, f"duplicates={r_bl.duplicates}")
    if not args.skip_datatrove:
        t_dt, dt_dups = best(lambda: datatrove_exact(docs), args.repeat)
        rate(
            "datatrove exact (raw text)",
            t_dt,
            f"duplicates={dt_dups}; neardup x{t_dt / t_ex:.1f}, raw x{t_dt / t_raw:.1f}",
        )

    summary = LinesSummary("line", args.min_docs)

    def lines() -> int:
        s = LinesSummary("line", args.min_docs)
        out = sum(1 for _ in remove_frequent_units(lambda: docs, min_docs=args.min_docs, summary=s))
        summary.__dict__.update(s.__dict__)
        return out

    t_ln, _ = best(lines, args.repeat)
    rate(
        f"neardup lines --min-docs {args.min_docs}",
        t_ln,
        f"{summary.line()}; vs minhash x{t_min / t_ln:.1f}",
    )
    if not args.skip_datatrove:
        t_dl, removed = best(lambda: datatrove_lines(docs), args.repeat)
        rate(
            "datatrove sentence dedup (lines)",
            t_dl,
            f"chars removed={removed}; neardup x{t_dl / t_ln:.1f}",
        )

    ssum = SubstringSummary(args.min_length)

    def substrings() -> int:
        s = SubstringSummary(args.min_length)
        out = sum(
            1 for _ in remove_repeated_substrings(docs, min_length=args.min_length, summary=s)
        )
        ssum.__dict__.update(s.__dict__)
        return out

    t_ss, _ = best(substrings, args.repeat)
    rate(
        f"neardup substrings --min-length {args.min_length}",
        t_ss,
        f"{ssum.line()}; vs minhash x{t_min / t_ss:.1f}",
    )
    print(
        "datatrove / text-dedup exact substrings: not run (they need Lee et al.'s Rust "
        "suffix-array binary and a tokenizer download; neither installs on this machine)"
    )


if __name__ == "__main__":
    main()
