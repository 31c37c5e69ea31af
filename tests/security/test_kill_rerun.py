"""SIGKILL, then run again (issue 43): a run killed while it writes leaves temporary files (a
kill cannot be caught); the next run that writes into the same folder removes them, and only
them (a live run's files and everything else stay).

Each writer is killed by itself at a chosen point inside the real library code (a fixed
point, not a timer: the same on a loaded machine), then the command runs again.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from neardup.cli import main

SRC = str(Path(__file__).resolve().parents[2] / "src")

KILLED = textwrap.dedent(
    """
    import os, signal, sys
    from pathlib import Path
    from neardup.io import Document

    def die():
        os.kill(os.getpid(), signal.SIGKILL)

    kind, folder = sys.argv[1], Path(sys.argv[2])
    if kind == "file":
        from neardup.corpus.output import atomic_file
        with atomic_file(folder / "out.jsonl") as tmp:
            tmp.write_text("partial")
            die()
    elif kind == "folder":
        from neardup.corpus.output import atomic_dir
        with atomic_dir(folder / "copy") as tmp:
            (tmp / "a.txt").write_text("partial")
            die()
    elif kind == "spool":
        from neardup.corpus.records import RecordSpool
        spool = RecordSpool(folder)
        docs = (Document(str(i), "text %d" % i) for i in range(5000))
        for i, _ in enumerate(spool.tee(docs)):
            if i == 4000:
                die()
    elif kind == "substrings":
        from neardup.corpus.substrings import remove_repeated_substrings
        def docs():
            yield Document("0", "a repeated sentence of some length " * 20)
            die()  # the shards' folder exists from the first document on
        for _ in remove_repeated_substrings(docs(), min_length=16, shard_bytes=4096,
                                            workdir=folder):
            pass
    """
)


def _kill_inside(kind: str, folder: Path) -> None:
    env = {**os.environ, "PYTHONPATH": SRC}
    done = subprocess.run(
        [sys.executable, "-c", KILLED, kind, str(folder)],
        env=env,
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == -9, done.stderr.decode()


def _hidden(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


@pytest.mark.parametrize("kind", ["file", "folder", "spool", "substrings"])
def test_the_next_run_removes_what_a_killed_run_left(tmp_path: Path, kind: str) -> None:
    folder = tmp_path / "out"
    folder.mkdir()
    (folder / ".mine").write_text("not neardup's")  # a hidden file of the user's stays
    _kill_inside(kind, folder)
    left = [name for name in _hidden(folder) if name != ".mine"]
    assert left, "the killed run should have left a temporary file"
    src = tmp_path / "in.jsonl"
    rows = [{"id": str(i), "text": f"line {i % 3}\nshared boilerplate line"} for i in range(6)]
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = CliRunner().invoke(
        main, ["lines", str(src), "--min-docs", "2", "-q", "-o", str(folder / "clean.jsonl")]
    )
    assert result.exit_code == 0, result.output
    assert _hidden(folder) == [".mine"]
    assert sorted(p.name for p in folder.iterdir() if not p.name.startswith(".")) == ["clean.jsonl"]


def test_a_live_run_keeps_its_temporary_files(tmp_path: Path) -> None:
    from neardup._atomic import sweep_leftovers, temp_prefix

    mine = tmp_path / (temp_prefix(".out.jsonl.tmp") + "abc")  # this process: alive
    mine.write_text("in progress")
    other = tmp_path / ".out.jsonl.tmp-00000000-1-abc"  # another host's
    other.write_text("in progress")
    assert sweep_leftovers(tmp_path) == 0
    assert mine.exists() and other.exists()
