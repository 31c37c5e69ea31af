"""SimHash-64 throughput and all-pairs Hamming search, side by side in one process.

Peers: the ``simhash`` package (``Simhash`` over Python-built word 3-shingles, its own default
features; ``SimhashIndex``) and a numpy popcount scan. Implementations run interleaved in
rounds after a warm-up; medians of CPU time (``time.process_time``: the machine is shared) are
reported. Single core (``RAYON_NUM_THREADS=1``).

Corpus: up to ``--mb`` MB (default 10) of text already on the machine: man pages (gunzipped)
from /usr/share/man and text files from /usr/share/doc, 1-20 KB each, in sorted path order.

Run: ``.venv/bin/python benchmarks/simhash_bench.py [--mb 10] [--rounds 3] [--codes 1000000]``.
"""

from __future__ import annotations

import argparse
import gzip
import os
import re
import statistics
import time
from collections.abc import Callable, Iterator
from pathlib import Path

os.environ.setdefault("RAYON_NUM_THREADS", "1")
os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import numpy as np
from simhash import Simhash, SimhashIndex

from neardup.index.hamming import HammingIndex
from neardup.sketch.simhash import SimHasher

WORD = re.compile(r"\w+")


def iter_texts(roots: list[Path]) -> Iterator[str]:
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames.sort()
            for name in sorted(filenames):
                path = Path(dirpath) / name
                if path.is_symlink() or not path.is_file():
                    continue
                try:
                    if name.endswith(".gz"):
                        with gzip.open(path, "rb") as f:
                            raw = f.read(80_000)
                    elif "." not in name or name.endswith((".txt", ".md", ".rst")):
                        raw = path.read_bytes()[:80_000]
                    else:
                        continue
                except (OSError, EOFError):
                    continue
                if b"\x00" in raw[:4096] or len(raw) < 1024:
                    continue
                yield raw[:20_000].decode("utf-8", "replace")


def build_corpus(mb: float) -> list[str]:
    docs: list[str] = []
    size = 0
    for text in iter_texts([Path("/usr/share/man"), Path("/usr/share/doc")]):
        docs.append(text)
        size += len(text.encode("utf-8"))
        if size >= mb * 1e6:
            break
    return docs


def timed(fns: dict[str, Callable[[], object]], rounds: int) -> dict[str, float]:
    for fn in fns.values():  # warm-up
        fn()
    times: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            t0 = time.process_time()
            fn()
            times[name].append(time.process_time() - t0)
    return {k: statistics.median(v) for k, v in times.items()}


def shingles(text: str, k: int = 3) -> list[str]:
    words = WORD.findall(text.lower())
    if len(words) < k:
        return words
    return [" ".join(words[i : i + k]) for i in range(len(words) - k + 1)]


def bench_sketch(docs: list[str], rounds: int) -> None:
    nbytes = sum(len(d.encode("utf-8")) for d in docs)
    go, default = SimHasher(preset="go"), SimHasher()

    fns: dict[str, Callable[[], object]] = {
        "simhash pkg: Simhash(word 3-shingles)": lambda: [Simhash(shingles(d)).value for d in docs],
        "neardup SimHasher(preset='go')": lambda: go.sketch_many(docs),
        "neardup SimHasher() default": lambda: default.sketch_many(docs),
    }
    times = timed(fns, rounds)
    ref = times["simhash pkg: Simhash(word 3-shingles)"]
    print(f"\n## SimHash-64: {len(docs)} docs, {nbytes / 1e6:.1f} MB, median of {rounds}")
    print(f"{'implementation':52s} {'CPU s':>8s} {'MB/s':>8s} {'x pkg':>7s}")
    for name, t in times.items():
        print(f"{name:52s} {t:8.3f} {nbytes / 1e6 / t:8.1f} {ref / t:7.1f}")


def planted_codes(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 2**64, size=n, dtype=np.uint64)
    dup = rng.choice(n, size=n // 100, replace=False)
    src = rng.choice(n, size=n // 100)
    flips = rng.integers(0, 64, size=(n // 100, 2)).astype(np.uint64)
    codes[dup] = codes[src] ^ (np.uint64(1) << flips[:, 0]) ^ (np.uint64(1) << flips[:, 1])
    return codes


def numpy_scan_pairs(codes: np.ndarray, radius: int) -> set[tuple[int, int]]:
    out = set()
    for i in range(len(codes) - 1):
        d = np.bitwise_count(codes[i + 1 :] ^ codes[i])
        for j in np.flatnonzero(d <= radius).tolist():
            out.add((i, i + 1 + j))
    return out


def simhash_pkg_pairs(codes: np.ndarray, radius: int) -> set[tuple[int, int]]:
    objs = [(str(i), Simhash(int(c), f=64)) for i, c in enumerate(codes)]
    index = SimhashIndex(objs, f=64, k=radius)
    out = set()
    for i, (_, obj) in enumerate(objs):
        for j in index.get_near_dups(obj):
            if int(j) != i:
                out.add((min(i, int(j)), max(i, int(j))))
    return out


def bench_pairs(n: int, subset: int, rounds: int) -> None:
    radius = 3
    codes = np.random.default_rng(1).integers(0, 2**64, size=n, dtype=np.uint64)
    build, scan = [], []
    found = 0
    for _ in range(rounds):
        t0 = time.process_time()
        index = HammingIndex(64, radius)
        index.add_many(range(n), codes)
        t1 = time.process_time()
        found = len(list(index.pairs()))
        build.append(t1 - t0)
        scan.append(time.process_time() - t1)
    t_add, t_pairs = statistics.median(build), statistics.median(scan)
    print(f"\n## All pairs within distance {radius}: {n:,} random 64-bit codes (CPU s)")
    print(
        f"neardup HammingIndex.add_many: {t_add:.3f} s; pairs(): {t_pairs:.3f} s; "
        f"build + pairs {t_add + t_pairs:.3f} s (median of {rounds}); {found} pairs"
    )

    small = planted_codes(subset, 2)
    idx = HammingIndex(64, radius)
    idx.add_many(range(subset), small)
    fns: dict[str, Callable[[], object]] = {
        "neardup HammingIndex (build + pairs)": lambda: _build_pairs(small, radius),
        "simhash pkg SimhashIndex (build + get_near_dups each)": lambda: simhash_pkg_pairs(
            small, radius
        ),
        "numpy popcount scan (row by row)": lambda: numpy_scan_pairs(small, radius),
    }
    results = {k: fn() for k, fn in fns.items()}
    want = results["numpy popcount scan (row by row)"]
    assert all(r == want for r in results.values()), "pair sets differ"
    t = timed(fns, 1)
    print(
        f"\n## Same task on {subset:,} codes (1% planted near-duplicates; {len(want)} pairs); "
        "all three agree"
    )
    print(f"{'implementation':55s} {'s':>8s} {'x neardup':>10s} {'est. 1M s':>10s}")
    base = t["neardup HammingIndex (build + pairs)"]
    for name, s in t.items():
        scale = (n / subset) ** 2 if "numpy" in name else n / subset
        est = "" if "neardup" in name else f"{s * scale:10.0f}"
        print(f"{name:55s} {s:8.3f} {s / base:10.1f} {est:>10s}")


def _build_pairs(codes: np.ndarray, radius: int) -> set[tuple[int, int]]:
    idx = HammingIndex(64, radius)
    idx.add_many(range(len(codes)), codes)
    return {(a, b) for a, b, _ in idx.pairs()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=10.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--codes", type=int, default=1_000_000)
    ap.add_argument("--subset", type=int, default=20_000)
    args = ap.parse_args()
    docs = build_corpus(args.mb)
    print(f"# load average at start: {os.getloadavg()[0]:.1f} (2 shared cores)")
    bench_sketch(docs, args.rounds)
    bench_pairs(args.codes, args.subset, args.rounds)
    print(f"# load average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
