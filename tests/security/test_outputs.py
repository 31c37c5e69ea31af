"""Every output path against hostile targets (issue 43): an output never destroys an input or
files neardup did not write, two outputs never share a path, a FIFO stays a FIFO, and a
read-only folder or a full disk gives a NeardupError naming the path, never a raw OSError.

The read-only and full-disk targets come from ``make_readonly`` and ``full_disk``
(tests/conftest.py: a read-only bind mount and a filled tmpfs as root; mode 0555 otherwise,
and the full-disk tests skip).
"""

from __future__ import annotations

import json
import os
import select
import stat
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from neardup.cli import main
from neardup.errors import NeardupError, OutputError

TEXT = " ".join(f"word{i} common text of the license number {i % 7}" for i in range(40))
OTHER = " ".join(f"other{i} quite different material {i * 3}" for i in range(40))


def run(*args: str) -> tuple[int, str, str, BaseException | None]:
    result = CliRunner().invoke(main, [str(a) for a in args])
    exc = result.exception
    return (
        result.exit_code,
        result.stdout,
        result.stderr,
        None if isinstance(exc, SystemExit) else exc,
    )


def _jsonl(path: Path, n: int = 4) -> Path:
    rows = [{"id": f"r{i}", "text": TEXT if i % 2 else OTHER} for i in range(n)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _refused(code: int, err: str, exc: BaseException | None, *words: str) -> None:
    assert exc is None, repr(exc)  # a one-line message, never a traceback
    assert code == 1, err
    for word in words:
        assert word in err, err


# ------------------------------------------------------------------ outputs that destroy inputs


def test_force_never_replaces_a_folder_that_holds_the_input(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "a.txt").write_text(TEXT)
    (data / "b.txt").write_text(TEXT)
    code, _, err, exc = run(
        "dedup", data / "a.txt", data / "b.txt", "-q", "--keep", "first", "-o", data, "--force"
    )
    _refused(code, err, exc, str(data))
    assert (data / "a.txt").read_text() == TEXT and (data / "b.txt").exists()


def test_force_never_replaces_a_folder_neardup_did_not_write(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text(TEXT)
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.md").write_text("mine")
    code, _, err, exc = run(
        "dedup", tmp_path / "a.txt", "-q", "--keep", "first", "-o", out, "--force"
    )
    _refused(code, err, exc, "notes.md")
    assert (out / "notes.md").read_text() == "mine"


def test_force_replaces_what_neardup_wrote_and_nothing_more(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.txt").write_text(TEXT)
    (src / "b.txt").write_text(OTHER)
    out = tmp_path / "out"
    code, _, err, _ = run("dedup", src, "-q", "--keep", "first", "-o", out)
    assert code == 0, err
    code, _, err, _ = run("dedup", src, "-q", "--keep", "first", "-o", out, "--force")
    assert code == 0, err
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith(".")) == ["a.txt", "b.txt"]
    (out / "added-later.txt").write_text("mine")
    code, _, err, exc = run("dedup", src, "-q", "--keep", "first", "-o", out, "--force")
    _refused(code, err, exc, "added-later.txt")
    assert (out / "added-later.txt").exists()


@pytest.mark.parametrize("spelling", ["same", "dotted", "hardlink"])
@pytest.mark.parametrize("command", ["lines", "substrings", "annotate", "report"])
def test_an_output_never_overwrites_an_input(tmp_path: Path, command: str, spelling: str) -> None:
    src = _jsonl(tmp_path / "in.jsonl")
    before = src.read_bytes()
    target = {
        "same": str(src),
        "dotted": str(tmp_path / "." / "in.jsonl"),
        "hardlink": str(tmp_path / "link.jsonl"),
    }[spelling]
    if spelling == "hardlink":
        os.link(src, target)
    args: list[object] = {
        "lines": ["lines", src, "--min-docs", "2", "-o", target],
        "substrings": ["substrings", src, "--min-length", "16", "-o", target],
        "annotate": ["dedup", src, "-q", "--annotate", target],
        "report": ["dedup", src, "-q", "--report", target],
    }[command]
    code, _, err, exc = run(*args)
    _refused(code, err, exc, "input")
    assert src.read_bytes() == before


@pytest.mark.parametrize(
    "outputs",
    [
        ("--keep", "first", "-o", "{x}.jsonl", "--annotate", "{x}.jsonl"),
        ("--report", "{x}.jsonl", "--annotate", "{x}.jsonl"),
        ("--keep", "first", "-o", "{x}", "--annotate", "{x}/a.jsonl"),
        ("--keep", "first", "-o", "{x}", "--report", "{x}/r.html"),
    ],
    ids=["output-annotate", "report-annotate", "annotate-inside-output", "report-inside-output"],
)
def test_two_outputs_never_share_a_path(tmp_path: Path, outputs: tuple[str, ...]) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.txt").write_text(TEXT)
    x = str(tmp_path / "x")
    (tmp_path / "x").mkdir()  # an empty folder for the copy: the other output could go in it
    code, _, err, exc = run("dedup", src, "-q", *(o.format(x=x) for o in outputs))
    _refused(code, err, exc)
    assert "same path" in err or "inside" in err, err


def _read_all(fd: int) -> bytes:
    """What a FIFO's writer wrote (the outputs here are far below the pipe's 64 KiB buffer,
    so the writer never waits for this reader)."""
    got = []
    while select.select([fd], [], [], 0)[0]:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            break
        got.append(chunk)
    return b"".join(got)


@pytest.mark.parametrize("command", ["annotate", "lines", "output"])
def test_a_fifo_output_is_written_as_a_fifo(tmp_path: Path, command: str) -> None:
    src = _jsonl(tmp_path / "in.jsonl")
    fifo = tmp_path / "out.jsonl"
    os.mkfifo(fifo)
    fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a reader: the writer's open returns
    args: list[object] = {
        "annotate": ["dedup", src, "-q", "--annotate", fifo],
        "lines": ["lines", src, "--min-docs", "2", "-o", fifo, "-q"],
        "output": ["dedup", src, "-q", "--keep", "first", "-o", fifo],
    }[command]
    try:
        code, _, err, exc = run(*args)
        got = _read_all(fd)
    finally:
        os.close(fd)
    assert exc is None and code == 0, err
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    lines = got.splitlines()
    assert lines and all(json.loads(line)["id"].startswith("r") for line in lines)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


# ------------------------------------------------------------------ read-only targets


def _outputs(tmp_path: Path, where: Path) -> dict[str, list[object]]:
    src = _jsonl(tmp_path / "in.jsonl")
    folder = tmp_path / "files"
    folder.mkdir(exist_ok=True)
    (folder / "a.txt").write_text(TEXT)
    return {
        "dedup-output-file": ["dedup", src, "-q", "--keep", "first", "-o", where / "k.jsonl"],
        "dedup-output-folder": ["dedup", folder, "-q", "--keep", "first", "-o", where / "k"],
        "annotate": ["dedup", src, "-q", "--annotate", where / "a.jsonl"],
        "annotate-csv": ["dedup", src, "-q", "--annotate", where / "a.csv"],
        "report": ["dedup", src, "-q", "--report", where / "r.html"],
        "lines": ["lines", src, "--min-docs", "2", "-q", "-o", where / "l.jsonl"],
        "lines-csv": ["lines", src, "--min-docs", "2", "-q", "-o", where / "l.csv"],
        "substrings": ["substrings", src, "--min-length", "16", "-q", "-o", where / "s.jsonl"],
        "index-add": ["index", "add", src, "-q", "--index", where / "i.db"],
        "dedup-index": ["dedup", src, "-q", "--index", where / "i.db"],
        "embedding-cache": [
            "dedup", src, "-q", "-m", "embedding", "--embedding-cache", where / "e.db",
        ],
    }  # fmt: skip


OUTPUT_KINDS = [
    "dedup-output-file",
    "dedup-output-folder",
    "annotate",
    "annotate-csv",
    "report",
    "lines",
    "lines-csv",
    "substrings",
    "index-add",
    "dedup-index",
    "embedding-cache",
]


def _needs(kind: str) -> None:
    if kind == "embedding-cache":
        pytest.importorskip("model2vec")


@pytest.mark.parametrize("kind", OUTPUT_KINDS)
def test_read_only_target_is_a_neardup_error(
    tmp_path: Path, make_readonly: Callable[[Path], Path], kind: str
) -> None:
    _needs(kind)
    ro = tmp_path / "ro"
    ro.mkdir()
    (ro / "keep.txt").write_text("x")
    make_readonly(ro)
    code, _, err, exc = run(*_outputs(tmp_path, ro)[kind])
    _refused(code, err, exc, str(ro))
    assert sorted(p.name for p in ro.iterdir()) == ["keep.txt"]


@pytest.mark.parametrize("kind", OUTPUT_KINDS)
def test_full_disk_is_a_neardup_error(tmp_path: Path, full_disk: Path, kind: str) -> None:
    _needs(kind)
    code, _, err, exc = run(*_outputs(tmp_path, full_disk)[kind])
    _refused(code, err, exc, str(full_disk))
    assert "space" in err or "full" in err, err
    assert sorted(p.name for p in full_disk.iterdir()) == [".filler"]


def test_library_writers_raise_output_error(tmp_path: Path, full_disk: Path) -> None:
    from neardup.corpus.records import write_jsonl_lines, write_records

    with pytest.raises(OutputError, match="space"):
        write_records([[{"id": "a", "text": "x" * 100_000}]], full_disk / "o.jsonl")
    with pytest.raises(OutputError, match="space"):
        write_jsonl_lines([[b"x" * 100_000 + b"\n"]], full_disk / "o.jsonl.gz")
    err = OutputError("x")
    assert isinstance(err, NeardupError) and isinstance(err, OSError)
    assert sorted(p.name for p in full_disk.iterdir()) == [".filler"]


def test_embedding_cache_on_full_disk(full_disk: Path) -> None:
    from neardup.errors import StoreError
    from neardup.store.embcache import EmbeddingCache

    with pytest.raises(StoreError, match=r"space|full"):
        cache = EmbeddingCache(full_disk / "e.db")
        cache.put("m", [f"t{i}" for i in range(2000)], np.ones((2000, 256), np.float32))


def test_eval_plot_to_a_read_only_folder(
    tmp_path: Path, make_readonly: Callable[[Path], Path]
) -> None:
    from neardup.evaluate.plot import Panel, Series, write_svg

    (tmp_path / "ro").mkdir()
    ro = make_readonly(tmp_path / "ro")
    panel = Panel("t", "x", "y", [Series("s", [(0.0, 0.0), (1.0, 1.0)])])
    with pytest.raises(OutputError, match="read-only"):
        write_svg([panel], ro / "p.svg")


def test_an_os_error_in_a_command_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import neardup.cli.hash as hash_cli

    def boom(*args: object, **kwargs: object) -> None:
        raise OSError(5, "Input/output error", str(tmp_path / "x"))

    monkeypatch.setattr(hash_cli, "_regular", boom)
    code, _, err, exc = run("hash", tmp_path / "x")
    _refused(code, err, exc, "Input/output error", str(tmp_path / "x"))
