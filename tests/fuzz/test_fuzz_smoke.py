"""Run every atheris harness in fuzz/ briefly (a fixed libFuzzer seed, a few thousand inputs in
all): each must finish without an exception other than a NeardupError."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

FUZZ = Path(__file__).resolve().parents[2] / "fuzz"
sys.path.insert(0, str(FUZZ))

import run_all  # noqa: E402  (fuzz/ is not a package)

#: Inputs per harness: together a few thousand, well under a minute on two cores.
RUNS = {
    "fuzz_compat": 600,
    "fuzz_fuzzy": 300,
    "fuzz_image": 150,
    "fuzz_markup": 150,
    "fuzz_outputs": 30,  # a command run per input
    "fuzz_pdf": 200,  # scaled by run_all.RUN_SCALE to 2 (one process per input)
    "fuzz_readers": 600,
    "fuzz_sketch_bytes": 1500,
    "fuzz_store": 300,
    "fuzz_store_damage": 100,
    "fuzz_text": 300,
}


def _have_atheris() -> bool:
    probe = [sys.executable, "-c", "import atheris"]
    return subprocess.run(probe, capture_output=True, check=False).returncode == 0


pytestmark = pytest.mark.skipif(
    not _have_atheris(),
    reason="atheris is not importable (pip install atheris; wheels exist for CPython on "
    "manylinux x86_64/aarch64 and macOS) - the hypothesis properties still run",
)


def test_every_harness_has_a_budget() -> None:
    assert sorted(RUNS) == run_all.harnesses()


@pytest.mark.parametrize("name", sorted(RUNS))
def test_harness_runs_clean(name: str, tmp_path: Path) -> None:
    count, ok, tail = run_all.run_one(
        name, seconds=None, runs=RUNS[name], artifacts=tmp_path, seed=1
    )
    assert ok, f"{name} found an unexpected exception:\n{tail}"
    assert count >= max(1, int(RUNS[name] * run_all.RUN_SCALE.get(name, 1.0)))
