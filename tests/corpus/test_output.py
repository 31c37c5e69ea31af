"""Atomic outputs: refusal, replacement, rollback on error, modes, and copies that stay inside."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from neardup._atomic import MANIFEST
from neardup.corpus.output import (
    atomic_dir,
    atomic_file,
    check_target,
    safe_relative,
    write_kept_copy,
)
from neardup.errors import ConfigError, InputError
from neardup.io import Document


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def test_check_target_refuses_non_empty_without_force(tmp_path: Path) -> None:
    check_target(tmp_path / "missing", force=False)
    (tmp_path / "empty").mkdir()
    check_target(tmp_path / "empty", force=False)
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    with pytest.raises(ConfigError, match="--force"):
        check_target(tmp_path / "full", force=False)
    with pytest.raises(ConfigError, match="not a folder neardup wrote"):  # issue 43
        check_target(tmp_path / "full", force=True)
    (tmp_path / "full" / MANIFEST).write_text(json.dumps({"files": ["x"]}))
    check_target(tmp_path / "full", force=True)
    (tmp_path / "full" / "y").write_text("y")
    with pytest.raises(ConfigError, match="did not write there"):
        check_target(tmp_path / "full", force=True)
    with pytest.raises(ConfigError, match="holds the input"):
        check_target(tmp_path / "full", force=True, inputs=[tmp_path / "full" / "x"])
    (tmp_path / "file.jsonl").write_text("{}\n")
    with pytest.raises(ConfigError, match="already exists"):
        check_target(tmp_path / "file.jsonl", force=False)
    (tmp_path / "link").symlink_to(tmp_path / "nowhere")  # a dangling link is a target too
    with pytest.raises(ConfigError):
        check_target(tmp_path / "link", force=False)


def test_atomic_dir_replaces_with_force_and_leaves_nothing_behind(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with atomic_dir(out) as tmp:
        (tmp / "stale.txt").write_text("old")
    with pytest.raises(ConfigError), atomic_dir(out):
        pass
    with atomic_dir(out, force=True) as tmp:
        assert tmp.parent == tmp_path and tmp != out
        (tmp / "new.txt").write_text("new")
    # stale files do not merge
    assert sorted(p.name for p in out.iterdir()) == [MANIFEST, "new.txt"]
    assert _leftovers(tmp_path) == []


def test_atomic_dir_rolls_back_on_error(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with atomic_dir(out) as tmp:
        (tmp / "keep.txt").write_text("keep")

    class BoomError(Exception):
        pass

    with pytest.raises(BoomError), atomic_dir(out, force=True) as tmp:
        (tmp / "partial.txt").write_text("half")
        raise BoomError
    assert sorted(p.name for p in out.iterdir()) == [MANIFEST, "keep.txt"]
    assert _leftovers(tmp_path) == []
    fresh = tmp_path / "fresh"
    # a kill (Ctrl-C) leaves no partial folder either
    with pytest.raises(KeyboardInterrupt), atomic_dir(fresh) as tmp:
        (tmp / "partial.txt").write_text("half")
        raise KeyboardInterrupt
    assert not fresh.exists() and _leftovers(tmp_path) == []


def test_atomic_file_rolls_back_and_refuses_a_folder(tmp_path: Path) -> None:
    target = tmp_path / "out.jsonl"
    target.write_text("old\n")
    with pytest.raises(RuntimeError), atomic_file(target) as tmp:
        tmp.write_text("partial")
        raise RuntimeError("stop")
    assert target.read_text() == "old\n" and _leftovers(tmp_path) == []
    with atomic_file(target) as tmp:
        tmp.write_text("new\n")
    assert target.read_text() == "new\n"
    with pytest.raises(ConfigError, match="already exists"), atomic_file(target, force=False):
        pass
    with pytest.raises(ConfigError, match="is a folder"), atomic_file(tmp_path):
        pass


def test_outputs_get_the_umask_mode_not_the_temporary_one(tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        with atomic_file(tmp_path / "a.jsonl") as tmp:
            tmp.write_text("x\n")
        with atomic_dir(tmp_path / "d") as tmp:
            (tmp / "f").write_text("x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "a.jsonl").stat().st_mode) == 0o640
    assert stat.S_IMODE((tmp_path / "d").stat().st_mode) == 0o750


@pytest.mark.parametrize("bad", ["/etc/passwd", "../up.txt", "a/../../b", "", "."])
def test_safe_relative_refuses_paths_that_leave(bad: str) -> None:
    with pytest.raises(InputError, match="outside the output folder"):
        safe_relative(bad)


def test_safe_relative_keeps_nested_and_windows_separators() -> None:
    assert safe_relative("a/b/c.txt").as_posix() == "a/b/c.txt"
    assert safe_relative("a\\b.txt").as_posix() == "a/b.txt"


def test_write_kept_copy_jsonl_records_and_paths(tmp_path: Path) -> None:
    f = tmp_path / "img.bin"
    f.write_bytes(b"\x00\x01")
    docs = [Document("1", "one"), Document("2", "two"), Document("3", None, path=f)]
    out = tmp_path / "kept.jsonl"
    assert write_kept_copy(docs, {"1", "3"}, out) == 2
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows == [{"id": "1", "text": "one"}, {"id": "3", "path": str(f)}]


def test_write_kept_copy_folder(tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "sub").mkdir(parents=True)
    (src / "sub" / "a.txt").write_text("a")
    (src / "b.txt").write_text("b")
    docs = [
        Document("sub/a.txt", "a", path=src / "sub" / "a.txt"),
        Document("b.txt", "b", path=src / "b.txt"),
        Document(str(src / "b.txt"), "b", path=src / "b.txt"),  # absolute id: its name
    ]
    out = tmp_path / "out"
    assert write_kept_copy(docs[:2], {"sub/a.txt", "b.txt"}, out) == 2
    assert (out / "sub" / "a.txt").read_text() == "a" and (out / "b.txt").read_text() == "b"
    with pytest.raises(ConfigError):  # the folder now exists and is not empty
        write_kept_copy(docs[:2], {"b.txt"}, out)
    # two kept documents landing on one name: refused, and the old output stays whole
    with pytest.raises(InputError, match=r"map to b\.txt"):
        write_kept_copy(docs[1:], {"b.txt", str(src / "b.txt")}, out, force=True)
    assert (out / "sub" / "a.txt").exists()
    with pytest.raises(InputError, match="is a record"):
        write_kept_copy([Document("r1", "text")], {"r1"}, tmp_path / "other", force=True)
    assert not (tmp_path / "other").exists() and _leftovers(tmp_path) == []
