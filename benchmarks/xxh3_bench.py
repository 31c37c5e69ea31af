"""Throughput of the native XXH3-64 batch kernel against a Python loop over python-xxhash.

Hashes ~10 MB of random bytes cut into consecutive 30-byte ranges (shingle-sized keys).
Run: ``.venv/bin/python benchmarks/xxh3_bench.py``.
"""

from __future__ import annotations

import time

import numpy as np
import xxhash

from neardup._kernels.engine import kernels

xxh3_64_ranges = kernels("xxh3").xxh3_64_ranges

SIZE = 10 * 1024 * 1024
WIDTH = 30
SEED = 0x9E3779B185EBCA87
REPEATS = 5


def main() -> None:
    blob = np.random.default_rng(0).integers(0, 256, size=SIZE, dtype=np.uint8).tobytes()
    buf = np.frombuffer(blob, dtype=np.uint8)
    starts = np.arange(0, SIZE - WIDTH + 1, WIDTH, dtype=np.int64)
    ends = starts + WIDTH
    n = len(starts)

    xxh3_64_ranges(buf, starts[:10], ends[:10], np.uint64(SEED))  # warm the caches
    best_kernel = float("inf")
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        got = xxh3_64_ranges(buf, starts, ends, np.uint64(SEED))
        best_kernel = min(best_kernel, time.perf_counter() - t0)

    digest = xxhash.xxh3_64_intdigest
    pairs = list(zip(starts.tolist(), ends.tolist(), strict=True))
    best_python = float("inf")
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        want = [digest(blob[s:e], SEED) for s, e in pairs]
        best_python = min(best_python, time.perf_counter() - t0)

    assert got.tolist() == want, "kernel and python-xxhash disagree"
    mb = n * WIDTH / 1e6
    print(f"{n} ranges of {WIDTH} bytes ({mb:.1f} MB), best of {REPEATS}")
    print(f"numba xxh3_64_ranges : {best_kernel * 1e3:8.1f} ms  {mb / best_kernel:8.1f} MB/s")
    print(f"python xxhash loop   : {best_python * 1e3:8.1f} ms  {mb / best_python:8.1f} MB/s")
    print(f"speed-up             : {best_python / best_kernel:8.1f}x")


if __name__ == "__main__":
    main()
