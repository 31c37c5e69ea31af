"""The first ``neardup dedup`` after ``pip install`` against a warm run (issue #41).

Installs ``make wheel``'s wheel into a fresh virtual environment (its dependencies come from
this environment's site-packages through a path line, so nothing is downloaded), with a new
empty HOME and no cache directory, then runs the same command there several times on the
same JSONL corpus: the first run is a new user's first run, the rest are warm. Reports each
run's wall and CPU seconds, the first run over the median warm run, and whether the first
run wrote anything outside its output (it must not: no compile, no cache, no background
process). Run after ``make wheel``:

    python benchmarks/first_run_bench.py [--docs 100000] [--runs 5] [--work DIR]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

from dedup_bench import build
from e2e_bench import write_jsonl

ROOT = Path(__file__).resolve().parents[1]


def fresh_venv(where: Path) -> Path:
    """A new venv at ``where`` with the wheel installed; returns its ``neardup`` script."""
    wheels = sorted((ROOT / "dist").glob("neardup-*.whl"))
    if not wheels:
        raise SystemExit("no wheel in dist/: run `make wheel` first")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    python = where / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    (Path(site) / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "-q",
            "--no-deps",
            "--no-index",
            str(wheels[-1]),
        ],
        check=True,
    )
    return where / "bin" / "neardup"


def timed(cmd: list[str], env: dict[str, str], out: Path) -> tuple[float, float]:
    """Wall and CPU seconds of ``cmd`` (a child of this process: its own rusage)."""
    before = os.times()
    t0 = time.perf_counter()
    with out.open("wb") as sink:
        subprocess.run(cmd, env=env, stdout=sink, check=True)
    wall = time.perf_counter() - t0
    after = os.times()
    cpu = (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )
    return wall, cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--docs", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=5, help="warm runs after the first")
    ap.add_argument("--threshold", type=float, default=0.8)
    ap.add_argument("--work", type=Path, default=None)
    args = ap.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="neardup-first-run-"))
    work.mkdir(parents=True, exist_ok=True)
    corpus = work / f"planted-{args.docs}.jsonl"
    if not corpus.exists():
        docs, _ = build(args.docs)
        write_jsonl(corpus, docs)
    home = work / "home"
    home.mkdir(exist_ok=True)
    neardup = fresh_venv(work / "venv")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NEARDUP_", "PYTHON"))}
    env.update(HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"))
    cmd = [str(neardup), "dedup", str(corpus), "--threshold", str(args.threshold), "-q"]
    first = timed(cmd, env, work / "first.out")
    written = sorted(str(p.relative_to(home)) for p in home.rglob("*"))
    warm = [timed(cmd, env, work / "warm.out") for _ in range(args.runs)]
    same = (work / "first.out").read_bytes() == (work / "warm.out").read_bytes()
    wall = statistics.median(w for w, _ in warm)
    cpu = statistics.median(c for _, c in warm)
    print(f"corpus: {args.docs:,} documents ({corpus.stat().st_size / 1e6:.1f} MB)")
    print("| run | wall s | CPU s |\n|---|---:|---:|")
    print(f"| first after install | {first[0]:.2f} | {first[1]:.2f} |")
    print(f"| warm (median of {args.runs}) | {wall:.2f} | {cpu:.2f} |")
    print(f"first / warm: wall x{first[0] / wall:.2f}, CPU x{first[1] / cpu:.2f}")
    print(f"same clusters: {'yes' if same else 'NO'}")
    print(f"written under HOME by the first run: {written or 'nothing'}")


if __name__ == "__main__":
    main()
