"""Throughput of LocalProvider's numpy BERT backend (all-MiniLM-L6-v2) on ~100-word texts.

Run: PYTHONPATH=src python benchmarks/minilm_numpy_bench.py [N]. Not part of the tests.
"""

from __future__ import annotations

import random
import sys
import time

from neardup.embeddings import LocalProvider

_VOCAB = (
    "the quick brown fox jumps over lazy dog committee budget annual volcanic ash flights "
    "europe market prices fell sharply investors worried interest rates inflation growth "
    "cat sofa guitar password reset kitchen revenue cloud sales photosynthesis light water"
)
WORDS = _VOCAB.split()


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    rng = random.Random(0)
    texts = [" ".join(rng.choice(WORDS) for _ in range(100)) + "." for _ in range(n)]
    provider = LocalProvider(backend="numpy")
    provider.embed(texts[:2])  # load
    start = time.perf_counter()
    provider.embed(texts)
    elapsed = time.perf_counter() - start
    print(f"numpy BERT: {n} texts of 100 words in {elapsed:.2f} s = {n / elapsed:.1f} texts/s")


if __name__ == "__main__":
    main()
