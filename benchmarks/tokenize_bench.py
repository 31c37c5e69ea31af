"""Tokenizer + shingle + hash throughput of the batch engine, side by side with the Python way.

Every peer that takes token lists (datasketch, rensa, simhash) pays for Python-side
tokenizing: ``re.findall`` + ``" ".join`` + a hash per shingle. This measures that cost next to
neardup's engine (the native kernels; ``NEARDUP_BACKEND=reference`` for the numpy twins) on
the same corpus, in one process, and prints MB/s and ratios.
Run: ``python benchmarks/tokenize_bench.py [--mb 10] [--rounds 3]``.
"""

from __future__ import annotations

import argparse
import re
import statistics
import time
from collections.abc import Callable

import xxhash

from corpus import load_corpus
from neardup._kernels import engine
from neardup._spans import shingle_spans
from neardup.packed import pack
from neardup.tokenize import WordTokenizer

WORD = re.compile(r"\w+")


def python_way(docs: list[str]) -> int:
    n = 0
    for d in docs:
        toks = WORD.findall(d.lower())
        for i in range(len(toks) - 4):
            xxhash.xxh3_64_intdigest(" ".join(toks[i : i + 5]).encode())
            n += 1
    return n


def engine_way(docs: list[str], mode: str) -> int:
    spans = WordTokenizer(mode).spans(docs)  # type: ignore[arg-type]
    sh = shingle_spans(spans, 5)
    lo, _ = engine.hash_spans(sh, "xxh3_64", 0)
    return len(lo)


def time_it(fn: Callable[[], int], rounds: int) -> float:
    fn()  # warm-up (and JIT compile)
    return statistics.median(_once(fn) for _ in range(rounds))


def _once(fn: Callable[[], int]) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--mb", type=float, default=10.0)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    docs = load_corpus(args.mb)
    mb = len(pack(docs).buf) / 1e6
    print(f"corpus: {len(docs)} docs, {mb:.1f} MB (numba threads: 1)")
    rows: list[tuple[str, float]] = []
    rows.append(
        ("python re + join + xxh3 per shingle", time_it(lambda: python_way(docs), args.rounds))
    )
    # the kernels are chosen once per process: NEARDUP_BACKEND=reference runs the numpy twins
    backend = "native" if "text" in engine.native_families() else "reference"
    for mode in ("word", "go"):
        label = f"neardup engine [{backend}] WordTokenizer({mode!r}) 5-shingles xxh3_64"
        rows.append((label, time_it(lambda m=mode: engine_way(docs, m), args.rounds)))
    base = rows[0][1]
    for label, secs in rows:
        print(f"{label:70s} {mb / secs:8.1f} MB/s  x{base / secs:6.2f}")


if __name__ == "__main__":
    main()
