"""Run every harness in this folder for a bounded time (or number of inputs) and report.

Usage::

    python fuzz/run_all.py --seconds 60        # each harness for 60 s
    python fuzz/run_all.py --runs 2000         # each harness for 2000 inputs
    python fuzz/run_all.py --runs 500 --only fuzz_fuzzy fuzz_compat

Each harness runs in its own process with libFuzzer's flags; crash inputs are written to
``--artifacts`` (default: a temporary folder). Prints one line per harness with the number
of inputs it ran, and exits 1 if any harness found an unexpected exception.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DONE_RE = re.compile(r"Done (\d+) runs in (\d+) second")
#: Inputs per harness relative to --runs: PDF extraction starts a process per input.
RUN_SCALE = {"fuzz_pdf": 0.01}


def harnesses() -> list[str]:
    """Names of every harness (``fuzz_*.py``) in this folder, sorted."""
    return sorted(p.stem for p in HERE.glob("fuzz_*.py"))


def run_one(
    name: str, *, seconds: float | None, runs: int | None, artifacts: Path, seed: int
) -> tuple[int, bool, str]:
    """Run one harness; return (inputs run, passed, tail of its output)."""
    flags = [f"-artifact_prefix={artifacts}/{name}-", "-timeout=60", f"-seed={seed}"]
    flags.append("-rss_limit_mb=4096")
    if runs is not None:
        flags.append(f"-runs={max(1, int(runs * RUN_SCALE.get(name, 1.0)))}")
    if seconds is not None:
        flags.append(f"-max_total_time={max(1, int(seconds))}")
    proc = subprocess.run(
        [sys.executable, str(HERE / f"{name}.py"), *flags],
        capture_output=True,
        text=True,
        check=False,
        timeout=None if seconds is None else seconds * 3 + 300,
    )
    out = proc.stderr + proc.stdout
    match = DONE_RE.search(out)
    count = int(match.group(1)) if match else 0
    ok = proc.returncode == 0 and match is not None
    return count, ok, "\n".join(out.strip().splitlines()[-30:])


def main(argv: list[str] | None = None) -> int:
    """Parse the command line, run the harnesses, print the counts."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    bound = parser.add_mutually_exclusive_group(required=True)
    bound.add_argument("--seconds", type=float, help="time per harness")
    bound.add_argument("--runs", type=int, help="inputs per harness")
    parser.add_argument("--only", nargs="+", choices=harnesses(), help="harnesses to run")
    parser.add_argument("--artifacts", type=Path, help="folder for crash inputs")
    parser.add_argument("--seed", type=int, default=1, help="libFuzzer seed (0: random)")
    args = parser.parse_args(argv)
    artifacts = args.artifacts or Path(tempfile.mkdtemp(prefix="neardup-fuzz-artifacts-"))
    artifacts.mkdir(parents=True, exist_ok=True)
    failed = []
    for name in args.only or harnesses():
        start = time.monotonic()
        count, ok, tail = run_one(
            name, seconds=args.seconds, runs=args.runs, artifacts=artifacts, seed=args.seed
        )
        took = time.monotonic() - start
        print(f"{name:<20} {count:>9} inputs  {took:7.1f} s  {'ok' if ok else 'FAILED'}")
        if not ok:
            failed.append(name)
            print(tail, file=sys.stderr)
    total = "all harnesses ok" if not failed else f"FAILED: {', '.join(failed)}"
    print(f"{total}; crash inputs (if any) in {artifacts}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
