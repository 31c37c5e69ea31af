"""Progress with a total on every long command: lines, substrings, index add, eval, hash.

Without a terminal, ``--progress`` prints status lines: one when a pass starts, one every
10 s with the count, the total and an ETA, and one when it ends (count of total, time);
``-q`` silences them, and nothing is printed without ``--progress``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from neardup.cli import main

TEXT = "the quick brown fox jumps over the lazy dog near the river bank {}"


def _run(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(main, list(args))
    return r.exit_code, r.stdout, r.stderr


@pytest.fixture()
def jsonl(tmp_path: Path) -> Path:
    src = tmp_path / "in.jsonl"
    rows = [{"id": i, "text": TEXT.format(i) + "\nshared footer of every page"} for i in range(9)]
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return src


@pytest.fixture()
def folder(tmp_path: Path) -> Path:
    d = tmp_path / "docs"
    d.mkdir()
    for i in range(5):
        (d / f"{i}.txt").write_text(TEXT.format(i % 2))
    return d


@pytest.mark.parametrize(
    ("command", "passes"),
    [
        (("lines", "--min-docs", "3"), ("count", "write")),
        (("substrings", "--min-length", "20"), ("clean",)),
    ],
)
def test_corpus_commands(jsonl: Path, command: tuple[str, ...], passes: tuple[str, ...]) -> None:
    out = str(jsonl.parent / "out.jsonl")
    code, _, err = _run(command[0], str(jsonl), "-o", out, *command[1:], "--progress")
    assert code == 0, err
    for name in passes:
        assert f"neardup: {name}..." in err
        assert f"neardup: {name} done: 9/9 documents in 0:00:0" in err
    code, _, err = _run(command[0], str(jsonl), "-o", out, *command[1:], "-q", "--progress")
    assert code == 0 and err == ""
    code, _, err = _run(command[0], str(jsonl), "-o", out, *command[1:])
    assert code == 0 and "done:" not in err  # no terminal, no --progress


def test_index_add(folder: Path, tmp_path: Path) -> None:
    db = str(tmp_path / "i.db")
    code, _, err = _run("index", "add", str(folder), "--index", db, "--progress")
    assert code == 0, err
    assert "neardup: add done: 5/5 documents" in err


def test_hash(folder: Path) -> None:
    files = [str(p) for p in sorted(folder.iterdir())]
    code, out, err = _run("hash", *files, "--progress")
    assert code == 0, err
    assert len(out.splitlines()) == 5 and "neardup: hash done: 5/5 documents" in err
    code, _, err = _run("hash", *files, "-q", "--progress")
    assert code == 0 and err == ""


def test_eval(folder: Path, tmp_path: Path) -> None:
    labels = tmp_path / "truth.jsonl"
    labels.write_text('{"a": "0.txt", "b": "2.txt"}\n')
    code, _, err = _run("eval", str(folder), "--labels", str(labels), "--progress")
    assert code == 0, err
    assert "neardup: sketch done: 5/5 documents" in err


def test_image_hashing(tmp_path: Path) -> None:
    pytest.importorskip("PIL")
    pytest.importorskip("imagehash")
    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(3)
    files = []
    for i in range(3):
        p = tmp_path / f"{i}.png"
        Image.fromarray(rng.integers(0, 255, (32, 32, 3), dtype=np.uint8)).save(p)
        files.append(str(p))
    code, out, err = _run("hash", "-m", "phash", *files, "--progress")
    assert code == 0, err
    assert len(out.splitlines()) == 3 and "neardup: hash done: 3/3 documents" in err


def test_a_large_record_file_is_estimated_from_its_head_not_read_through(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The progress total of a big JSONL file reads its first MiB only (the inputs are read
    once, by the run), and the estimate is close to the true count."""
    from neardup.cli import progress

    path = tmp_path / "big.jsonl"
    rows = [f'{{"id": {i}, "text": "{"word " * (5 + i % 40)}"}}\n' for i in range(60_000)]
    path.write_text("".join(rows))
    assert path.stat().st_size > progress._EXACT_BYTES
    read = 0
    real_open = Path.open

    class Counting:
        def __init__(self, fh: Any) -> None:
            self.fh = fh

        def __enter__(self) -> Counting:
            return self

        def __exit__(self, *exc: object) -> None:
            self.fh.close()

        def read(self, n: int = -1) -> bytes:
            nonlocal read
            data: bytes = self.fh.read(n)
            read += len(data)
            return data

        def __iter__(self) -> Any:
            raise AssertionError("the file is read through")

    monkeypatch.setattr(Path, "open", lambda self, *a, **k: Counting(real_open(self, *a, **k)))
    total = progress.count_documents([str(path)])
    assert read <= 1 << 20
    assert total is not None and abs(total - 60_000) / 60_000 < 0.05
