#!/usr/bin/env python3
"""MinHash-128 and LSH (threshold 0.8): neardup vs datasketch and rensa, side by side, one core.

    .venv/bin/python benchmarks/minhash_bench.py [--mb 10] [--rounds 3]

The corpus is built from text already on the machine (man pages gunzipped from /usr/share/man,
text files from /usr/share/doc and /usr/share/common-licenses): documents of 1-20 KB, a fixed
seed, about ``--mb`` megabytes. Every implementation sees the same features: the txtfp
canonical form (ASCII lowercase for ASCII text), word tokens, 5-shingles joined by one space.
The peers get the shingles built in Python (``re.findall(r"\\w+")`` + join, as their users do);
neardup starts from the raw text. Implementations run interleaved in rounds after one warm-up
round; medians of the CPU time (``time.process_time``: every implementation runs on one thread,
and CPU time is what a loaded machine does not distort) are reported with the load average,
and ratios compare implementations of the same run.
"""

from __future__ import annotations

import argparse
import gc
import gzip
import os
import random
import re
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("RAYON_NUM_THREADS", "1")
os.environ.setdefault("NUMBA_NUM_THREADS", "1")


from neardup.canonicalize import Canonicalizer
from neardup.index.lsh import LSHIndex
from neardup.sketch.minhash import MinHasher
from neardup.tokenize import ShingleTokenizer, WordTokenizer

NUM_PERM = 128
K = 5
WORD = re.compile(r"\w+")


def build_corpus(megabytes: float, seed: int = 42) -> list[str]:
    """Documents of 1-20 KB from the machine's man pages and docs, about ``megabytes`` MB."""
    paths: list[Path] = []
    for root in ("/usr/share/man", "/usr/share/doc", "/usr/share/common-licenses"):
        base = Path(root)
        if base.is_dir():
            paths += sorted(p for p in base.rglob("*") if p.is_file() and not p.is_symlink())
    random.Random(seed).shuffle(paths)
    docs: list[str] = []
    total = 0
    for path in paths:
        try:
            if path.suffix == ".gz":
                with gzip.open(path) as fh:
                    raw = fh.read(80_000)
            else:
                raw = path.read_bytes()
        except (OSError, EOFError, gzip.BadGzipFile):
            continue
        if b"\x00" in raw[:4096]:
            continue
        data = raw.decode("utf-8", "replace").encode("utf-8")
        if len(data) < 1024:
            continue
        if len(data) > 20 * 1024:
            cut = data.rfind(b"\n", 0, 20 * 1024)
            data = data[: cut if cut > 1024 else 20 * 1024]
        text = data.decode("utf-8", "ignore")
        docs.append(text)
        total += len(data)
        if total >= megabytes * 1e6:
            break
    return docs


def peer_shingles(doc: str, canon: Canonicalizer) -> list[str]:
    text = doc.lower() if doc.isascii() else canon.canonicalize(doc)
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
            t0 = time.process_time()
            fn()
            times[name].append(time.process_time() - t0)
        line = ", ".join(f"{k}={v[-1]:.3f}s" for k, v in times.items())
        print(f"  round {r + 1}: {line}", file=sys.stderr)
    return {name: statistics.median(ts) for name, ts in times.items()}


def table(title: str, med: dict[str, float], ref: str, n_docs: int, mb: float) -> None:
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"\n## {title}\n\nload average {load}\n")
    print(f"| implementation | median CPU s | docs/s | MB/s | x {ref} |")
    print("|---|---:|---:|---:|---:|")
    for name, t in med.items():
        print(f"| {name} | {t:.3f} | {n_docs / t:,.0f} | {mb / t:.1f} | {med[ref] / t:.2f} |")


def traced(build: Callable[[], object]) -> tuple[int, object]:
    """Bytes allocated by ``build`` through Python's allocator that are still held after it."""
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    obj = build()
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return after - before, obj


def kernel_table(docs: list[str], hasher: MinHasher, n_rounds: int, n: int, mb: float) -> None:
    """The fused sketch kernel alone (tokenize, xxh3, shingles, slots) on the canonical packed
    batch: the compiled core against the numba kernel it replaces (when numba is installed)."""
    import numpy as np

    from neardup._kernels import engine, tables

    packed = Canonicalizer().canonicalize_packed(docs, lower_ascii=False)
    mask, min_bytes = WordTokenizer("word").kernel_args or (0, 1)
    args = (packed.buf, packed.offsets, tables.char_classes(), tables.simple_lower(), mask,
            min_bytes, K, True, np.uint64(hasher.config.seed), NUM_PERM)  # fmt: skip
    impls: dict[str, Callable[[], object]] = {}
    native = engine.native()
    if native is not None and hasattr(native, "minhash"):
        impls["native minhash.sketch_words"] = lambda: native.minhash.sketch_words(*args)
    try:
        from neardup._kernels.minhash import fast
    except ImportError:
        fast = None
    if fast is not None:
        impls["numba fast.sketch_words"] = lambda: fast.sketch_words(*args)
    if len(impls) < 2:
        print("\n# (the kernel table needs both the compiled core and numba)")
        return
    outs = [fn() for fn in impls.values()]
    assert all(np.array_equal(outs[0], o) for o in outs[1:]), "the kernels disagree"
    med = rounds(impls, n_rounds)
    table("The fused sketch kernel alone, canonical packed batch", med,
          "numba fast.sketch_words", n, mb)  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--mb", type=float, default=10.0)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()

    import datasketch
    import rensa

    docs = build_corpus(args.mb)
    mb = sum(len(d.encode()) for d in docs) / 1e6
    n = len(docs)
    print(f"# corpus: {n} docs, {mb:.1f} MB; RAYON/NUMBA threads = 1")
    canon = Canonicalizer()
    hasher = MinHasher(NUM_PERM)

    # Same features: neardup's shingles equal the peers' on the ASCII documents.
    ascii_docs = [d for d in docs[:200] if d.isascii()]
    shingler = ShingleTokenizer(K, WordTokenizer("word"))
    ours = [set(shingler.tokenize(d.lower())) for d in ascii_docs]
    same = sum(set(peer_shingles(d, canon)) == o for d, o in zip(ascii_docs, ours, strict=True))
    print(f"# identical shingle sets on {same}/{len(ascii_docs)} sampled ASCII documents")

    perms = datasketch.MinHash(num_perm=NUM_PERM).permutations

    def ds_sketch() -> list[object]:
        out = []
        for d in docs:
            m = datasketch.MinHash(num_perm=NUM_PERM, permutations=perms, scheme="affine32")
            m.update_batch([s.encode() for s in peer_shingles(d, canon)])
            out.append(m)
        return out

    def rensa_sketch() -> list[object]:
        out = []
        for d in docs:
            m = rensa.RMinHash(NUM_PERM, 42)
            m.update(peer_shingles(d, canon))
            out.append(m)
        return out

    def rensa_bulk() -> object:
        return rensa.RMinHash.digest_matrix_from_token_sets(
            [peer_shingles(d, canon) for d in docs], NUM_PERM, 42
        )

    med = rounds(
        {
            "neardup MinHasher.sketch_many (xxh3)": lambda: hasher.sketch_many(docs),
            "rensa RMinHash.update per doc": rensa_sketch,
            "rensa RMinHash digest_matrix (bulk)": rensa_bulk,
            "datasketch update_batch": ds_sketch,
        },
        args.rounds,
    )
    table("MinHash-128, end to end from raw text", med, "rensa RMinHash.update per doc", n, mb)
    kernel_table(docs, hasher, args.rounds, n, mb)

    # ------------------------------------------------------------------ LSH
    sigs = hasher.sketch_many(docs)
    ds_objs = [
        datasketch.MinHash(num_perm=NUM_PERM, hashvalues=row, scheme="affine64") for row in sigs
    ]
    rmh = rensa_sketch()
    keys = list(range(n))

    def ds_lsh() -> object:
        lsh = datasketch.MinHashLSH(threshold=0.8, num_perm=NUM_PERM)
        for i, m in enumerate(ds_objs):
            lsh.insert(i, m, check_duplication=False)
        return [lsh.query(m) for m in ds_objs]

    def rensa_lsh() -> object:
        lsh = rensa.RMinHashLSH(0.8, NUM_PERM, 16)
        lsh.insert_many(rmh)
        return lsh.query_all(rmh)

    def nd_query() -> object:
        index = LSHIndex(0.8, NUM_PERM)
        index.add_many(keys, sigs)
        return index.query_many(sigs)

    def nd_pairs() -> object:
        index = LSHIndex(0.8, NUM_PERM)
        index.add_many(keys, sigs)
        return list(index.pairs())

    def nd_pairs_16x8() -> object:
        index = LSHIndex(0.8, NUM_PERM, bands=16, rows=8)
        index.add_many(keys, sigs)
        return list(index.pairs())

    def nd_loop() -> object:
        index = LSHIndex(0.8, NUM_PERM)
        for i in keys:
            index.add_many([i], sigs[i : i + 1])
        return [index.query_many(sigs[i : i + 1]) for i in keys]

    ds_plan = datasketch.MinHashLSH(threshold=0.8, num_perm=NUM_PERM)
    plan = LSHIndex(0.8, NUM_PERM).plan
    print(
        f"\n# plans at threshold 0.8: datasketch b={ds_plan.b} r={ds_plan.r}; rensa b=16 r=8 "
        f"(must divide 128); neardup b={plan.bands} r={plan.rows} "
        f"(P(0.8) = {plan.recall_at_threshold:.3f}; datasketch's "
        f"{1 - (1 - 0.8**ds_plan.r) ** ds_plan.b:.3f}, rensa's {1 - (1 - 0.8**8) ** 16:.3f})"
    )
    med = rounds(
        {
            "neardup LSHIndex add_many + query_many": nd_query,
            "neardup LSHIndex add_many + pairs()": nd_pairs,
            "neardup LSHIndex(16x8, as rensa) add_many + pairs()": nd_pairs_16x8,
            "neardup LSHIndex add + query per doc": nd_loop,
            "rensa RMinHashLSH insert_many + query_all": rensa_lsh,
            "datasketch MinHashLSH insert + query": ds_lsh,
        },
        args.rounds,
    )
    table(
        "LSH threshold 0.8: insert + query every document",
        med,
        "datasketch MinHashLSH insert + query",
        n,
        mb,
    )
    rensa_name = "rensa RMinHashLSH insert_many + query_all"
    for name in ("neardup LSHIndex add_many + query_many", "neardup LSHIndex add_many + pairs()"):
        print(f"{name}: x{med[rensa_name] / med[name]:.2f} rensa")

    # ------------------------------------------------------------------ memory
    def ds_build() -> object:
        lsh = datasketch.MinHashLSH(threshold=0.8, num_perm=NUM_PERM)
        for i, m in enumerate(ds_objs):
            lsh.insert(i, m, check_duplication=False)
        return lsh

    def nd_build() -> object:
        index = LSHIndex(0.8, NUM_PERM)
        index.add_many(keys, sigs)
        index.query_many(sigs[:1])  # builds the sorted band arrays
        return index

    ds_bytes, _ = traced(ds_build)
    nd_bytes, nd_index = traced(nd_build)
    print("\n## Memory per indexed document (threshold 0.8, 128 perms, int keys)\n")
    print("| index | bytes/doc | how measured |")
    print("|---|---:|---|")
    arrays = nd_index.nbytes / n  # type: ignore[attr-defined]
    print(f"| neardup LSHIndex | {nd_bytes / n:,.0f} | tracemalloc (arrays {arrays:,.0f}) |")
    print(f"| datasketch MinHashLSH | {ds_bytes / n:,.0f} | tracemalloc |")
    print(f"neardup / datasketch = {nd_bytes / ds_bytes:.3f}")


if __name__ == "__main__":
    main()
