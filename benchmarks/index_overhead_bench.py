"""``neardup dedup IN.jsonl`` against ``... --index NEW.db``: CPU seconds and wall, whole processes.

Runs, alternated round by round, plain ``dedup`` and ``dedup --index`` (a new store each time)
from this source tree, and ``dedup --index`` from a baseline tree (``--baseline SRC``: a ``src``
folder, e.g. ``git archive main src | tar -x -C TREE`` plus the built ``_native`` module) when
given, each twice: with ``--jobs 1`` (prints each run's CPU seconds, user in brackets, and the
ratios of the means: the CPU the store adds) and with the default ``--jobs`` (what a user
times: prints each run's wall seconds, CPU in brackets, and the ratios of the means).
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
import time
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"


def _children() -> tuple[float, float]:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime, ru.ru_utime


def _run(cmd: list[str], env: dict[str, str]) -> tuple[float, float, float]:
    """Wall, CPU (user + system) and user seconds of one whole process."""
    cpu, user = _children()
    start = time.perf_counter()
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    cpu2, user2 = _children()
    return wall, cpu2 - cpu, user2 - user


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--baseline", type=Path, default=None, help="another src folder")
    args = ap.parse_args()
    trees = {"plain": SRC, "index": SRC}
    if args.baseline is not None:
        trees["baseline-index"] = args.baseline
    # --jobs 1: (cpu, user) per run; default jobs: (wall, cpu) per run
    one: dict[str, list[tuple[float, float]]] = {k: [] for k in trees}
    dflt: dict[str, list[tuple[float, float]]] = {k: [] for k in trees}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            for jobs in ("1", None):
                for name, src in trees.items():
                    env = {**os.environ, "PYTHONPATH": str(src)}
                    env.pop("PYTHONDONTWRITEBYTECODE", None)
                    cmd = [sys.executable, "-m", "neardup", "dedup", str(args.corpus), "-q"]
                    if jobs is not None:
                        cmd += ["--jobs", jobs]
                    if name != "plain":
                        cmd += ["--index", str(Path(tmp) / f"{name}-{r}-{jobs or 'd'}.db")]
                    wall, cpu, user = _run(cmd, env)
                    if jobs is None:
                        dflt[name].append((wall, cpu))
                    else:
                        one[name].append((cpu, user))
    means = {k: sum(c for c, _ in v) / len(v) for k, v in one.items()}
    for k, v in one.items():
        runs = " ".join(f"{c:.2f}({u:.2f})" for c, u in v)
        print(f"{k:15s} mean {means[k]:.2f} CPU-s   {runs}")
    for k in trees:
        if k != "plain":
            print(f"{k} / plain = {means[k] / means['plain']:.2f}x")
    print("default --jobs: wall s (CPU-s)")
    walls = {k: sum(w for w, _ in v) / len(v) for k, v in dflt.items()}
    cpus = {k: sum(c for _, c in v) / len(v) for k, v in dflt.items()}
    for k, v in dflt.items():
        runs = " ".join(f"{w:.2f}({c:.2f})" for w, c in v)
        print(f"{k:15s} mean {walls[k]:.2f} s wall {cpus[k]:.2f} CPU-s   {runs}")
    for k in trees:
        if k != "plain":
            print(
                f"{k} / plain = {walls[k] / walls['plain']:.2f}x wall, "
                f"{cpus[k] / cpus['plain']:.2f}x CPU (default --jobs)"
            )


if __name__ == "__main__":
    main()
