"""A ``neardup dedup`` process ends at once after writing (cli/_exit.py), with every byte out."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from neardup.cli import main

# an atexit handler runs in a normal shutdown only: it tells whether the teardown was skipped
SCRIPT = """
import atexit, sys
atexit.register(lambda: sys.stderr.write("teardown ran\\n"))
from neardup.cli import main
main(sys.argv[1:], prog_name="neardup")
"""


def _corpus(tmp_path: Path) -> Path:
    path = tmp_path / "c.jsonl"
    words = " ".join(f"w{k}" for k in range(40))
    rows = [f'{{"id": "d{k}", "text": "{words} tail{k % 3}"}}' for k in range(30)]
    path.write_text("\n".join(rows) + "\n")
    return path


def _run(args: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if k != "NEARDUP_FAST_EXIT"}
    full.update(env)
    full.pop("COVERAGE_PROCESS_START", None)
    return subprocess.run(
        [sys.executable, "-c", SCRIPT, *args],
        capture_output=True,
        text=True,
        env=full,
        timeout=600,
        check=False,
    )


@pytest.mark.parametrize("extra", [[], ["--pairs"], ["--format", "csv", "-q"]])
def test_dedup_process_skips_teardown_and_writes_everything(
    tmp_path: Path, extra: list[str]
) -> None:
    path = _corpus(tmp_path)
    args = ["dedup", str(path), "--threshold", "0.5", *extra]
    expected = CliRunner().invoke(main, args)  # in-process: exit_now() must return
    assert expected.exit_code == 0, expected.output
    fast = _run(args, NEARDUP_FAST_EXIT="1")  # a script is not the command: asked for
    assert fast.returncode == 0, fast.stderr
    assert fast.stdout == expected.stdout and fast.stdout
    assert "teardown ran" not in fast.stderr
    slow = _run(args)  # a script that calls main() ends as usual
    assert slow.returncode == 0, slow.stderr
    assert slow.stdout == fast.stdout
    assert "teardown ran" in slow.stderr


def test_dedup_error_exits_as_before(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": oops}\n')
    run = _run(["dedup", str(bad)], NEARDUP_FAST_EXIT="1")
    assert run.returncode == 1
    assert "not valid JSON" in run.stderr and "teardown ran" in run.stderr


def test_python_m_neardup_is_the_command(tmp_path: Path) -> None:
    path = _corpus(tmp_path)
    args = ["dedup", str(path), "--threshold", "0.5", "-q"]
    env = {k: v for k, v in os.environ.items() if k != "NEARDUP_FAST_EXIT"}
    run = subprocess.run(
        [sys.executable, "-m", "neardup", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout == CliRunner().invoke(main, args).stdout
