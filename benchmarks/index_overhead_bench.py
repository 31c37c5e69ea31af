"""``neardup dedup IN.jsonl`` against ``... --index NEW.db``: CPU seconds of whole processes.

Runs, alternated round by round, plain ``dedup`` and ``dedup --index`` (a new store each time)
from this source tree, and ``dedup --index`` from a baseline tree (``--baseline SRC``: a ``src``
folder, e.g. ``git archive main src | tar -x -C TREE`` plus the built ``_native`` module) when
given, with ``--jobs 1``; prints each run's CPU seconds (user) and the ratios of the means.
The corpus is any JSONL file (``e2e_bench.py --work DIR`` writes the planted 100k one).

    python benchmarks/index_overhead_bench.py planted-100000.jsonl --rounds 6 [--baseline TREE/src]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"


def _children() -> tuple[float, float]:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime, ru.ru_utime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--baseline", type=Path, default=None, help="another src folder")
    args = ap.parse_args()
    trees = {"plain": SRC, "index": SRC}
    if args.baseline is not None:
        trees["baseline-index"] = args.baseline
    res: dict[str, list[tuple[float, float]]] = {k: [] for k in trees}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            for name, src in trees.items():
                env = {**os.environ, "PYTHONPATH": str(src)}
                env.pop("PYTHONDONTWRITEBYTECODE", None)
                cmd = [sys.executable, "-m", "neardup", "dedup", str(args.corpus), "-q"]
                cmd += ["--jobs", "1"]
                if name != "plain":
                    cmd += ["--index", str(Path(tmp) / f"{name}-{r}.db")]
                cpu, user = _children()
                subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)
                cpu2, user2 = _children()
                res[name].append((cpu2 - cpu, user2 - user))
    means = {k: sum(c for c, _ in v) / len(v) for k, v in res.items()}
    for k, v in res.items():
        runs = " ".join(f"{c:.2f}({u:.2f})" for c, u in v)
        print(f"{k:15s} mean {means[k]:.2f} CPU-s   {runs}")
    for k in trees:
        if k != "plain":
            print(f"{k} / plain = {means[k] / means['plain']:.2f}x")


if __name__ == "__main__":
    main()
