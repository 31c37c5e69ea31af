"""Walking folders (what is left out and why) and record field paths: edge cases, bad input."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from neardup.errors import ConfigError, InputError, InputTooLargeError
from neardup.readers.fields import MISSING, FieldPath, RecordSpec
from neardup.readers.paths import (
    CYCLE,
    FILTERED,
    HIDDEN,
    SPECIAL,
    SYMLINK,
    UNREADABLE,
    ReadStats,
    root_labels,
    walk,
)
from neardup.readers.text import iter_delimited, iter_jsonl


@pytest.fixture()
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    (root / "a" / "deep").mkdir(parents=True)
    (root / "a" / "deep" / "x.txt").write_text("x")
    (root / "b.md").write_text("b")
    (root / "c.log").write_text("c")
    (root / ".hidden.txt").write_text("h")
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("g")
    (root / "link.txt").symlink_to(root / "b.md")
    (root / "dangling.txt").symlink_to(root / "nowhere")
    (root / "loop").symlink_to(root)  # a cycle once links are followed
    (root / "ext").symlink_to(tmp_path / "outside")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "o.txt").write_text("o")
    os.mkfifo(root / "pipe")
    return root


def test_walk_records_every_file_left_out(tree: Path) -> None:
    stats = ReadStats()
    got = [rel for _, rel in walk(tree, stats=stats)]
    assert got == ["b.md", "c.log", "a/deep/x.txt"]  # a folder's files, then its subfolders
    out = {reason: sorted(Path(p).name for p in paths) for reason, paths in stats.left_out.items()}
    assert out[HIDDEN] == [".git", ".hidden.txt"]
    assert out[SYMLINK] == ["dangling.txt", "ext", "link.txt", "loop"]
    assert out[SPECIAL] == ["pipe"]
    line = stats.summary(show=2)
    assert line is not None and line.startswith("left out 7 files: ")
    assert ", ..." in line  # more than `show` names under one reason


def test_walk_follow_symlinks_is_cycle_safe(tree: Path) -> None:
    stats = ReadStats()
    got = [rel for _, rel in walk(tree, follow_symlinks=True, stats=stats)]
    assert got == ["b.md", "c.log", "link.txt", "a/deep/x.txt", "ext/o.txt"]
    assert [Path(p).name for p in stats.left_out[CYCLE]] == ["loop"]
    assert [Path(p).name for p in stats.left_out[f"{UNREADABLE} (dangling link)"]] == [
        "dangling.txt"
    ]


def test_walk_include_exclude_match_path_or_name(tree: Path) -> None:
    stats = ReadStats()
    got = [rel for _, rel in walk(tree, include=["*.txt", "*.md"], exclude=["a/*"], stats=stats)]
    assert got == ["b.md"]
    assert sorted(Path(p).name for p in stats.left_out[FILTERED]) == ["c.log", "x.txt"]


def test_walk_missing_root(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"cannot list .*missing.*--on-error skip"):
        list(walk(tmp_path / "missing"))
    stats = ReadStats()
    assert list(walk(tmp_path / "missing", stats=stats, strict=False)) == []
    assert list(stats.left_out) == [f"{UNREADABLE} folder"]


def test_summary_words() -> None:
    assert ReadStats().summary() is None
    s = ReadStats(bad_records=1)
    assert s.summary() == "skipped 1 bad record"
    s.leave_out("x", HIDDEN)
    assert s.summary() == "left out 1 file: 1 hidden: x; skipped 1 bad record"
    assert s.files_left_out == 1


def test_root_labels_same_root_twice_and_trailing_slash() -> None:
    assert root_labels(["d/a", "d/a/"]) == ["d/a#0", "d/a#1"]
    assert root_labels(["x", "y"]) == ["x", "y"]


@pytest.mark.parametrize("bad", ["", "a..b", ".a", "a."])
def test_field_path_refuses_empty_parts(bad: str) -> None:
    with pytest.raises(ConfigError, match="empty part"):
        FieldPath.parse(bad)


def test_field_path_resolution() -> None:
    rec = {"meta": {"url": "u", "tags": ["t0", "t1"]}, "n": 3}
    assert FieldPath.parse("meta.tags.1").get(rec) == "t1"
    assert FieldPath.parse("meta.tags.5").get(rec) is MISSING  # index past the end
    assert FieldPath.parse("meta.tags.x").get(rec) is MISSING  # a name into a list
    assert FieldPath.parse("n.deeper").get(rec) is MISSING  # into a scalar
    assert FieldPath.parse("meta.nope").get(rec) is MISSING
    assert FieldPath.parse("meta").root == "meta"


def test_record_spec_bad_records_name_the_place() -> None:
    with pytest.raises(ConfigError, match="at least one text field"):
        RecordSpec.of([])
    spec = RecordSpec.of(["title", "body"], "meta.id")
    assert spec.roots == ("title", "body", "meta")
    assert spec.text({"title": None, "body": "B"}, "f:2") == "B"  # null parts left out
    with pytest.raises(InputError, match=r"f:3: the text .title, body. is null"):
        spec.text({"title": None, "body": None}, "f:3")
    with pytest.raises(InputError, match="f:4: field 'body' is a int, not a string"):
        spec.text({"title": "T", "body": 5}, "f:4")
    with pytest.raises(InputError, match=r"f:5: no field 'title' .fields: list."):
        spec.text([1, 2], "f:5")
    with pytest.raises(InputError, match=r"f:6: no id at 'meta.id'.*--id-field"):
        spec.ident({"meta": {"id": None}}, "f:6", "6")
    plain = RecordSpec.of("text")
    assert plain.ident({"text": "x"}, "f:7", "7") == "7"  # no id field: the row number
    assert plain.ident({"id": 0, "text": "x"}, "f:8", "8") == "0"
    assert plain.roots == ("text", "id")


def test_jsonl_lines_too_long_and_not_objects() -> None:
    data = b'{"a": 1}\n' + b'{"b": "' + b"x" * 50 + b'"}\n'
    rows = iter_jsonl(io.BytesIO(data), "f.jsonl", max_line_bytes=20)
    assert next(rows) == (1, {"a": 1})
    with pytest.raises(InputTooLargeError, match=r"f.jsonl:2: line longer than 20 bytes"):
        next(rows)
    deep = b"[" * 100_000 + b"]" * 100_000 + b"\n"
    [(n, err)] = list(iter_jsonl(io.BytesIO(deep), "g", max_line_bytes=10**6))
    assert n == 1 and isinstance(err, InputError) and "g:1: not valid JSON" in str(err)


def test_delimited_empty_and_broken() -> None:
    assert list(iter_delimited(io.BytesIO(b""), "e.csv", delimiter=",", max_field_bytes=99)) == []
    broken = b'id,text\n1,"unterminated\n'
    with pytest.raises(InputError, match=r"e.csv: not readable as CSV"):
        list(iter_delimited(io.BytesIO(broken), "e.csv", delimiter=",", max_field_bytes=5))
