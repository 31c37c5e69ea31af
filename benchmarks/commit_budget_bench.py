"""``dedup(index=...)`` CPU time and commit count by ``commit_every_seconds`` (inf, 2, 0).

A fast run must keep its 65,536-document transactions under the default 2-second budget;
``0`` (a commit per batch) shows what the budget saves. Runs are interleaved (inf 2 0 ...).

    PYTHONPATH=src python benchmarks/commit_budget_bench.py [N_DOCS] [ROUNDS]
"""

from __future__ import annotations

import os
import random
import resource
import sys
import tempfile
import time
from typing import Any

import neardup
from neardup.io import Document
from neardup.methods import make_method
from neardup.store.persistent import PersistentIndex


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _run(docs: list[Document], budget: float) -> tuple[float, float, int]:
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "s.db")
        with PersistentIndex(path, make_method("simhash"), commit_every_seconds=budget) as idx:
            commits = 0
            real = idx.store.add_many

            def counted(*args: Any, **kwargs: Any) -> int:
                nonlocal commits
                commits += 1
                return real(*args, **kwargs)

            idx.store.add_many = counted  # type: ignore[method-assign]
            c0, t0 = _cpu(), time.perf_counter()
            neardup.dedup(docs, index=idx, batch_size=2048)
            idx.flush()
            return _cpu() - c0, time.perf_counter() - t0, commits


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    rng = random.Random(1)
    words = [f"w{i}" for i in range(5000)]
    docs = [Document(f"d{i}", " ".join(rng.choice(words) for _ in range(80))) for i in range(n)]
    budgets = {"inf": float("inf"), "2s": 2.0, "0": 0.0}
    _run(docs, budgets["inf"])  # warm (numba)
    res: dict[str, list[tuple[float, float, int]]] = {k: [] for k in budgets}
    for _ in range(rounds):
        for name, budget in budgets.items():
            res[name].append(_run(docs, budget))
    for name, rows in res.items():
        cpu = sorted(r[0] for r in rows)[len(rows) // 2]
        wall = sorted(r[1] for r in rows)[len(rows) // 2]
        print(f"{name:>4}: CPU {cpu:.2f} s, wall {wall:.2f} s, commits {[r[2] for r in rows]}")
    print("load", os.getloadavg())


if __name__ == "__main__":
    main()
