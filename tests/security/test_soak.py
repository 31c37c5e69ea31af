"""Resource use: memory grows with the index (documents), not with the text of a long stream."""

from __future__ import annotations

import random
import tracemalloc
from collections.abc import Iterator

import neardup

WORDS = [f"w{i}" for i in range(5000)]


def _stream(n: int, words: int, seed: int = 9) -> Iterator[tuple[str, str]]:
    rng = random.Random(seed)
    for i in range(n):
        yield str(i), " ".join(rng.choices(WORDS, k=words))


def _peak(n: int, words: int) -> int:
    tracemalloc.start()
    try:
        result = neardup.dedup(_stream(n, words), method="simhash", batch_size=512)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.n_docs == n
    return peak


def test_memory_grows_with_the_index_not_the_text() -> None:
    _peak(1000, 40)  # warm up: kernels compiled, Unicode tables built
    n = 8_000
    short_text = sum(len(t) for _, t in _stream(n, 40))
    long_text = sum(len(t) for _, t in _stream(n, 300))
    short_peak = _peak(n, 40)
    long_peak = _peak(n, 300)
    # Seven times the text (about 12 MB more) may only cost what one batch of it costs
    # (its packed and token buffers); keeping the text would cost all of it.
    assert long_peak - short_peak < (long_text - short_text) / 2, (
        short_peak,
        long_peak,
        short_text,
        long_text,
    )
