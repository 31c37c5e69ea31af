"""The bucket walk and components on the planted corpus: native kernels against numba's.

In one process, over the same arrays: the planted corpus of ``e2e_bench.py`` (100k documents
by default; built once, or reused from ``--work DIR``) is sketched by the MinHash method
(threshold 0.8, exact verification) as ``neardup dedup`` does, then each kernel family runs
from ``neardup._native`` and from the numba twins (``neardup._kernels.<family>.fast``, called
directly; compiled before timing):

* ``set_profiles`` of every document's set;
* the walk in join mode (what ``dedup`` runs) and in pairs mode (``--pairs``), on one thread
  and with the band columns split over two threads (``--jobs 2``, as
  ``neardup._kernels.buckets.bucket_pairs_verified`` splits them);
* ``components`` of the accepted pairs.

Each line gives the best wall and CPU seconds of ``--rounds`` runs, and the run checks that
both backends return the same pairs, roots and counts. Build the extension with
``maturin develop --release`` first. Run:

    PYTHONPATH=$PWD/src python benchmarks/walk_bench.py [--docs 100000] [--work DIR]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from itertools import pairwise
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np


def planted(docs: int, work: Path) -> Path:
    """The planted corpus of e2e_bench.py, written once to ``work``."""
    path = work / f"planted-{docs}.jsonl"
    if not path.exists():
        from dedup_bench import build
        from e2e_bench import write_jsonl

        write_jsonl(path, build(docs)[0])
    return path


def arrays(path: Path) -> dict[str, Any]:
    """Band keys and 32-bit sets of every document, as a ``dedup`` run collects them."""
    from neardup.methods import make_method
    from neardup.packed import PackedBatches

    method = make_method("minhash", 0.8)
    collector = method.collector()
    n = 0
    for batch in PackedBatches(path):
        collector.add(np.arange(n, n + len(batch)), method.sketch(batch))
        n += len(batch)
    sizes = collector._sizes.values()  # type: ignore[attr-defined]
    offsets = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    return {
        "keys": np.ascontiguousarray(collector._keys.values()),  # type: ignore[attr-defined]
        "values": np.ascontiguousarray(collector._values.values()),  # type: ignore[attr-defined]
        "offsets": offsets,
        "threshold": float(method.threshold),
    }


def best(fn: Callable[[], Any], rounds: int) -> tuple[float, float, Any]:
    """Best wall and CPU seconds of ``rounds`` calls, and the last result."""
    wall, cpu, out = float("inf"), float("inf"), None
    for _ in range(rounds):
        t0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        wall = min(wall, time.perf_counter() - t0)
        cpu = min(cpu, time.process_time() - c0)
    return wall, cpu, out


def walk(kern: ModuleType, sets: ModuleType, data: dict[str, Any], prof: Any, big: Any,
         join: bool, jobs: int) -> tuple[Any, ...]:  # fmt: skip
    """The walk as ``bucket_pairs_verified`` runs it: ``jobs`` threads over the band columns,
    their roots joined by ``components``."""
    keys, values, offsets = data["keys"], data["values"], data["offsets"]
    n, bands = keys.shape
    sigs = np.empty((n, 0), np.uint32)
    cuts = np.linspace(0, bands, jobs + 1).round().astype(int).tolist()

    def one(r: tuple[int, int]) -> tuple[Any, ...]:
        return kern.bucket_pairs_verified(  # type: ignore[no-any-return]
            keys, values, offsets, sigs, prof, big, True, data["threshold"], join, *r
        )

    if jobs == 1:
        return one((0, bands))
    with ThreadPoolExecutor(jobs) as pool:
        parts = list(pool.map(one, pairwise(cuts)))
    rows = np.arange(n, dtype=np.int64)
    roots = sets.components(n, np.concatenate([rows] * jobs), np.concatenate([p[3] for p in parts]))
    a = np.concatenate([p[0] for p in parts])
    b = np.concatenate([p[1] for p in parts])
    return a, b, np.concatenate([p[2] for p in parts]), roots, sum(p[4] for p in parts)


def same(x: Any, y: Any) -> bool:
    if isinstance(x, tuple):
        return all(same(p, q) for p, q in zip(x, y, strict=True))
    if isinstance(x, np.ndarray):
        return x.dtype == y.dtype and x.shape == y.shape and bool(np.array_equal(x, y))
    return bool(x == y)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=100_000)
    ap.add_argument("--work", type=Path, default=None, help="keep and reuse the corpus here")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    from neardup import _native
    from neardup._kernels.buckets import fast as numba_buckets
    from neardup._kernels.sets import fast as numba_sets

    with tempfile.TemporaryDirectory() as tmp:
        work = args.work or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        data = arrays(planted(args.docs, work))
    n, bands = data["keys"].shape
    print(f"{n:,} documents, {bands} bands, {len(data['values']):,} set values (uint32)")
    backends = {"native": (_native.buckets, _native.sets), "numba": (numba_buckets, numba_sets)}
    for kern, sets in backends.values():  # compile numba's kernels before any timing
        kern.set_profiles(data["values"], data["offsets"])
        sets.components(2, np.array([1]), np.array([0]))
    results: dict[str, dict[str, Any]] = {name: {} for name in backends}
    print("| kernel | native wall s | native CPU s | numba wall s | numba CPU s | same |")
    print("|---|---:|---:|---:|---:|---|")

    def row(label: str, make: Callable[[ModuleType, ModuleType], Callable[[], Any]]) -> None:
        timed = {}
        for name, (kern, sets) in backends.items():
            timed[name] = best(make(kern, sets), args.rounds)
            results[name][label] = timed[name][2]
        ok = same(timed["native"][2], timed["numba"][2])
        nw, nc, _ = timed["native"]
        fw, fc, _ = timed["numba"]
        print(f"| {label} | {nw:.3f} | {nc:.3f} | {fw:.3f} | {fc:.3f} | {ok} |")

    def timed_walk(
        kern: ModuleType, sets: ModuleType, *, join: bool, jobs: int
    ) -> Callable[[], Any]:
        return lambda: walk(kern, sets, data, prof, big, join, jobs)

    row("set_profiles", lambda k, s: lambda: k.set_profiles(data["values"], data["offsets"]))
    prof, big = _native.buckets.set_profiles(data["values"], data["offsets"])
    for join in (True, False):
        for jobs in (1, 2):
            label = f"walk {'join' if join else 'pairs'}, {jobs} thread{'s' * (jobs > 1)}"
            row(label, partial(timed_walk, join=join, jobs=jobs))
    native = results["native"]
    one_root = [
        native[f"walk {m}, {t}"][3] for m in ("join", "pairs") for t in ("1 thread", "2 threads")
    ]
    agree = all(same(r, one_root[0]) for r in one_root)
    print(f"the same roots for join and pairs, 1 and 2 threads: {agree}")
    a, b = results["native"]["walk pairs, 1 thread"][:2]
    print(f"accepted pairs: {len(a):,}; join-mode verified: "
          f"{results['native']['walk join, 1 thread'][4]:,}")  # fmt: skip
    row(f"components ({len(a):,} pairs)", lambda k, s: lambda: s.components(n, a, b))


if __name__ == "__main__":
    main()
