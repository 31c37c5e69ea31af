"""What ``--report`` costs: ``neardup dedup DIR`` with and without it, side by side.

Builds a folder of text files from the machine (``corpus.py``: man pages, licences,
``/usr/share/doc``, the stdlib) plus edited copies of some, then times the CLI as a
subprocess: without a report, with ``--report``, and, when ``--old-src`` points at an older
``src/`` tree (e.g. ``git archive 1f88e3a src | tar -x -C /tmp/old``), the same two runs with
that code, whose report read every input a second time. Each case runs ``--repeat`` times,
alternating, and the best time is kept. Run:

    python benchmarks/report_bench.py [--mb 12] [--copies 600] [--old-src /tmp/old/src]
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from corpus import edit_words, load_corpus

SRC = Path(__file__).resolve().parents[1] / "src"


def build(root: Path, mb: float, copies: int) -> int:
    rng = random.Random(3)
    docs = load_corpus(max_mb=mb)
    for i, d in enumerate(docs):
        (root / f"d{i:05d}.txt").write_text(d)
    for i, d in enumerate(docs[:copies]):
        (root / f"e{i:05d}.txt").write_text(edit_words(d, 0.01, rng))
    return len(docs) + min(copies, len(docs))


def run(src: Path, corpus: Path, report: Path | None) -> float:
    cmd = [sys.executable, "-m", "neardup", "dedup", str(corpus), "-q", "--jobs", "1"]
    if report is not None:
        cmd += ["--report", str(report)]
    env = {**os.environ, "PYTHONPATH": str(src)}
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=12.0)
    ap.add_argument("--copies", type=int, default=600)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--old-src", type=Path, default=None)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "corpus"
        corpus.mkdir()
        n = build(corpus, args.mb, args.copies)
        trees = [("this tree", SRC)] + ([("old tree", args.old_src)] if args.old_src else [])
        best: dict[tuple[str, bool], float] = {}
        for _ in range(args.repeat):
            for name, src in trees:
                for with_report in (False, True):
                    report = Path(tmp) / f"{name[:3]}.html" if with_report else None
                    secs = run(src, corpus, report)
                    key = (name, with_report)
                    best[key] = min(best.get(key, secs), secs)
        print(f"{n} documents; best of {args.repeat} runs, seconds (subprocess, import included)")
        for name, _ in trees:
            plain, rep = best[(name, False)], best[(name, True)]
            size = (Path(tmp) / f"{name[:3]}.html").stat().st_size
            print(
                f"{name:10} no report {plain:7.2f}  --report {rep:7.2f}  "
                f"ratio {rep / plain:5.2f}  report {size / 1e6:5.2f} MB"
            )


if __name__ == "__main__":
    main()
