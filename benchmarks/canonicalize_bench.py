#!/usr/bin/env python3
"""Canonicalization on non-ASCII text: the batch kernel vs the standard-library path, and
MinHash-128 end to end against rensa ``RMinHash`` fed Python shingles, per document.

    .venv/bin/python benchmarks/canonicalize_bench.py [--mb 5] [--rounds 3]

Corpora are built from the machine's text (:mod:`corpus`, man pages and docs) with a fixed
seed, rewritten word by word so that every document holds non-ASCII text:

* ``accented`` -- Latin text with accented letters (NFC, as typed), capitals kept;
* ``mixed`` -- plus Greek and Cyrillic words, Han and kana phrases, fullwidth and ligature
  compatibility characters, decomposed (NFD) accents, zero-width and bidi controls;
* ``canonical`` -- the ``accented`` corpus already in canonical form (quick-check path).

Implementations, interleaved in rounds after a warm-up, medians reported:

* ``neardup sketch_many`` -- ``MinHasher(128).sketch_many(docs)``: canonicalization in the
  kernel, fused tokenize + shingle + hash + MinHash;
* ``neardup sketch_many, stdlib canonicalizer`` -- the same hasher with the canonicalizer
  called per document in Python (``unicodedata.normalize`` twice, ``str.casefold``, a regex
  strip): the path before the kernel;
* ``rensa per doc`` -- per document: the same stdlib canonical form, ``re.findall(r"\\w+")``,
  5-shingles joined in Python, ``RMinHash(128, 42).update(shingles)`` (the peers' features in
  ``minhash_bench.py``); ``rensa per doc, lower only`` skips the Unicode canonicalization
  (``str.lower()``), the cheapest pipeline a rensa user could write;
* canonicalization alone: ``Canonicalizer.canonicalize_packed`` against a Python loop of
  ``Canonicalizer.canonicalize``.
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import re
import statistics
import sys
import time
import unicodedata
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("RAYON_NUM_THREADS", "1")
os.environ.setdefault("NUMBA_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).parent))

from corpus import load_corpus
from neardup.canonicalize import Canonicalizer
from neardup.sketch.minhash import MinHasher

NUM_PERM = 128
K = 5
WORD = re.compile(r"\w+")
ACCENTS = {"a": "àáâäå", "e": "éèêë", "i": "íìîï", "o": "óòôöø", "u": "úùûü", "c": "ç", "n": "ñ"}
GREEK = "αβγδεζηθικλμνξοπρστυφχψω"
CYRILLIC = "абвгдежзийклмнопрстуфхцчшщыэюя"
CJK = ["東京都", "近似重複", "文書検出", "ひらがな", "カタカナ", "中文字符", "日本語"]
COMPAT = ["ﬁ", "ﬂ", "Ａ", "ｂ", "½", "①", "™", "ǅ"]
FORMAT = ["\u200b", "\u200d", "\u202e", "\u2066", "\ufeff"]


class StdlibCanonicalizer:
    """The txtfp canonicalizer called per document (not a ``Canonicalizer``, so the hashers
    cannot hand it to the kernel): the path before the batch kernel."""

    def __init__(self) -> None:
        self._c = Canonicalizer()

    @property
    def params(self) -> str:
        return self._c.params

    def canonicalize(self, text: str) -> str:
        return self._c.canonicalize(text)


def accent(word: str, rng: random.Random) -> str:
    chars = list(word)
    for i, ch in enumerate(chars):
        low = ch.lower()
        if low in ACCENTS and rng.random() < 0.5:
            acc = rng.choice(ACCENTS[low])
            chars[i] = acc.upper() if ch.isupper() else acc
            break
    return "".join(chars)


def rewrite(text: str, kind: str, rng: random.Random) -> str:
    out: list[str] = []
    for word in text.split(" "):
        r = rng.random()
        if r < 0.3:
            word = accent(word, rng)
        if kind == "mixed":
            if r < 0.05:
                word = unicodedata.normalize("NFD", accent(word, rng))
            elif r < 0.08:
                word = "".join(rng.choice(GREEK) for _ in range(len(word) or 1))
            elif r < 0.11:
                word = "".join(rng.choice(CYRILLIC) for _ in range(len(word) or 1))
            elif r < 0.13:
                word = rng.choice(CJK)
            elif r < 0.14:
                word = rng.choice(COMPAT) + word
            elif r < 0.145:
                word = word + rng.choice(FORMAT)
        out.append(word)
    return " ".join(out)


def build(mb: float) -> dict[str, list[str]]:
    base = load_corpus(mb, seed=7)
    rng = random.Random(11)
    accented = [rewrite(d, "accented", rng) for d in base]
    mixed = [rewrite(d, "mixed", rng) for d in base]
    canon = Canonicalizer()
    return {
        "accented": accented,
        "mixed": mixed,
        "canonical": [canon.canonicalize(d) for d in accented],
    }


def peer_shingles(text: str) -> list[str]:
    toks = WORD.findall(text)
    if len(toks) < K:
        return [" ".join(toks)] if toks else []
    return [" ".join(toks[i : i + K]) for i in range(len(toks) - K + 1)]


def rounds(impls: dict[str, Callable[[], object]], n: int) -> dict[str, float]:
    for fn in impls.values():
        fn()
    times: dict[str, list[float]] = {name: [] for name in impls}
    for r in range(n):
        for name, fn in impls.items():
            gc.collect()
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
        line = ", ".join(f"{k}={v[-1]:.3f}s" for k, v in times.items())
        print(f"  round {r + 1}: {line}", file=sys.stderr)
    return {name: statistics.median(ts) for name, ts in times.items()}


def table(title: str, med: dict[str, float], ref: str, n_docs: int, mb: float) -> None:
    print(f"\n## {title}\n")
    print(f"| implementation | median s | docs/s | MB/s | x {ref} |")
    print("|---|---:|---:|---:|---:|")
    for name, t in med.items():
        print(f"| {name} | {t:.3f} | {n_docs / t:,.0f} | {mb / t:.1f} | {med[ref] / t:.2f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--mb", type=float, default=5.0)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()

    import rensa

    corpora = build(args.mb)
    canon = Canonicalizer()
    hasher = MinHasher(NUM_PERM)
    stdlib_hasher = MinHasher(NUM_PERM, canonicalizer=StdlibCanonicalizer())
    for name, docs in corpora.items():
        mb = sum(len(d.encode()) for d in docs) / 1e6
        n = len(docs)
        non_ascii = sum(not d.isascii() for d in docs)
        print(f"\n# corpus {name}: {n} docs ({non_ascii} with non-ASCII text), {mb:.1f} MB")
        # the two neardup paths must agree bit for bit before they are timed
        same = (hasher.sketch_many(docs[:300]) == stdlib_hasher.sketch_many(docs[:300])).all()
        print(f"# kernel == stdlib canonicalizer on the first 300 sketches: {bool(same)}")

        def rensa_canon(docs: list[str] = docs) -> list[object]:
            out = []
            for d in docs:
                m = rensa.RMinHash(NUM_PERM, 42)
                m.update(peer_shingles(canon.canonicalize(d)))
                out.append(m)
            return out

        def rensa_lower(docs: list[str] = docs) -> list[object]:
            out = []
            for d in docs:
                m = rensa.RMinHash(NUM_PERM, 42)
                m.update(peer_shingles(d.lower()))
                out.append(m)
            return out

        med = rounds(
            {
                "neardup sketch_many": lambda docs=docs: hasher.sketch_many(docs),
                "neardup sketch_many, stdlib canonicalizer": (
                    lambda docs=docs: stdlib_hasher.sketch_many(docs)
                ),
                "rensa per doc (stdlib canonical form)": rensa_canon,
                "rensa per doc, lower only": rensa_lower,
            },
            args.rounds,
        )
        table(
            f"MinHash-128 from raw text, corpus {name}",
            med,
            "rensa per doc (stdlib canonical form)",
            n,
            mb,
        )
        med = rounds(
            {
                "Canonicalizer.canonicalize_packed (kernel)": (
                    lambda docs=docs: canon.canonicalize_packed(docs)
                ),
                "Canonicalizer.canonicalize per doc (stdlib)": (
                    lambda docs=docs: [canon.canonicalize(d) for d in docs]
                ),
            },
            args.rounds,
        )
        table(
            f"canonicalization alone, corpus {name}",
            med,
            "Canonicalizer.canonicalize per doc (stdlib)",
            n,
            mb,
        )


if __name__ == "__main__":
    main()
