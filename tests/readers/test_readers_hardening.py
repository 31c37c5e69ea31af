"""Readers that never drop data silently (issue 43): damaged or trailing compressed streams,
the id field on every path, CSV byte-order marks and open quotes, one file given twice."""

from __future__ import annotations

import builtins
import bz2
import io
import json
import lzma
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from neardup.cli import main
from neardup.errors import InputError
from neardup.readers import ReadOptions, RecordSpec, read_documents

ROWS = [{"id": f"r{i}", "text": f"record number {i} with some words"} for i in range(40)]


def _lines(rows: list[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in rows)


def _ids(path: Path | str, **options: Any) -> list[str]:
    return [d.id for d in read_documents([str(path)], ReadOptions(**options))]


def run(*args: object, input: bytes | None = None) -> tuple[int, str, str, BaseException | None]:
    result = CliRunner().invoke(main, [str(a) for a in args], input=input)
    exc = result.exception
    return (
        result.exit_code,
        result.stdout,
        result.stderr,
        None if isinstance(exc, SystemExit) else exc,
    )


COMPRESS = {"bz2": bz2.compress, "xz": lzma.compress}


def _damaged(stream: bytes) -> bytes:
    mid = len(stream) // 2
    return stream[:mid] + bytes([stream[mid] ^ 0xFF]) + stream[mid + 1 :]


@pytest.mark.parametrize("codec", ["bz2", "xz"])
def test_a_damaged_later_stream_is_an_error(tmp_path: Path, codec: str) -> None:
    one, two = COMPRESS[codec](_lines(ROWS[:20])), COMPRESS[codec](_lines(ROWS[20:]))
    path = tmp_path / f"d.jsonl.{codec}"
    path.write_bytes(one + two)
    assert len(_ids(path)) == 40  # two good streams: all of it
    path.write_bytes(one + _damaged(two))
    with pytest.raises(InputError, match="decompress"):
        _ids(path)
    code, _, err, exc = run("dedup", path, "-q")
    assert exc is None and code == 1 and "decompress" in err


@pytest.mark.parametrize("codec", ["bz2", "xz"])
@pytest.mark.parametrize("tail", [b"garbage after the stream", b"\n", b"BZh9"])
def test_garbage_after_a_stream_is_an_error(tmp_path: Path, codec: str, tail: bytes) -> None:
    path = tmp_path / f"d.jsonl.{codec}"
    path.write_bytes(COMPRESS[codec](_lines(ROWS)) + tail)
    with pytest.raises(InputError, match="decompress"):
        _ids(path)
    doc = tmp_path / f"notes.txt.{codec}"  # a compressed document too
    doc.write_bytes(COMPRESS[codec](b"some text") + tail)
    with pytest.raises(InputError, match="decompress"):
        _ids(doc)


def test_xz_stream_padding_is_read(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl.xz"
    path.write_bytes(lzma.compress(_lines(ROWS[:5])) + b"\0" * 8 + lzma.compress(_lines(ROWS[5:])))
    assert len(_ids(path)) == 40


def test_a_missing_id_field_is_the_same_error_on_every_path(tmp_path: Path) -> None:
    rows = [{"id": "a", "text": "one two three"}, {"text": "four five six"}]
    plain = tmp_path / "d.jsonl"
    plain.write_bytes(_lines(rows))
    messages = []
    for args in (
        ["dedup", plain, "-q", "--id-field", "id"],  # the packed JSONL path
        ["dedup", plain, "-q", "--id-field", "id", "--report", tmp_path / "r.html"],  # general
        ["index", "add", plain, "-q", "--id-field", "id", "--index", tmp_path / "i.db"],
        ["lines", plain, "--min-docs", "2", "--id-field", "id", "-o", tmp_path / "o.jsonl"],
    ):
        code, _, err, exc = run(*args)
        assert exc is None and code == 1, (args, err)
        messages.append(err.strip())
    assert all("no id at 'id'" in m and ":2:" in m for m in messages), messages
    code, _, err, _ = run("dedup", "-", "-q", "--id-field", "id", input=_lines(rows))
    assert code == 1 and "no id at 'id'" in err
    null = tmp_path / "n.jsonl"  # a null id where the field was named: the same error
    null.write_bytes(_lines([{"id": None, "text": "x y z"}]))
    code, _, err, _ = run("dedup", null, "-q", "--id-field", "id")
    assert code == 1 and "no id at 'id'" in err, err


def test_without_id_field_a_missing_id_is_the_line_number(tmp_path: Path) -> None:
    plain = tmp_path / "d.jsonl"
    plain.write_bytes(_lines([{"id": "a", "text": "x"}, {"text": "y"}]))
    assert _ids(plain) == ["a", "2"]


@pytest.mark.parametrize("value", [True, False, "\ud800", {"a": 1}, [1]])
def test_id_checks_are_the_same_on_every_path(tmp_path: Path, value: object) -> None:
    rows = [{"id": value, "text": "one two three four"}, {"id": "b", "text": "x y z w"}]
    data = (json.dumps(rows[0]) + "\n" + json.dumps(rows[1]) + "\n").encode()
    plain = tmp_path / "d.jsonl"
    plain.write_bytes(data)
    for args in (
        ["dedup", plain, "-q"],
        ["dedup", plain, "-q", "--report", tmp_path / "r.html"],  # the general reader
        ["index", "add", plain, "-q", "--index", tmp_path / "i.db"],
    ):
        code, _, err, exc = run(*args)
        assert exc is None and code == 1 and ":1:" in err, (args, err)
    code, _, err, exc = run("dedup", "-", "-q", input=data)
    assert exc is None and code == 1 and "<stdin>:1" in err, err
    with pytest.raises(InputError):
        list(read_documents(["-"], stdin=io.BytesIO(data)))


def test_csv_byte_order_mark_keeps_the_id_column(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_bytes(b"\xef\xbb\xbfid,text\nx1,hello there\nx2,bye now\n")
    assert _ids(path, spec=RecordSpec.of("text", "id")) == ["x1", "x2"]
    assert _ids(path) == ["x1", "x2"]


@pytest.mark.parametrize("kind", ["csv", "tsv"])
def test_csv_unterminated_quote_is_an_error(tmp_path: Path, kind: str) -> None:
    sep = "," if kind == "csv" else "\t"
    path = tmp_path / f"d.{kind}"
    path.write_text(f'id{sep}text\na{sep}"open quote\nb{sep}swallowed\nc{sep}and this\n')
    with pytest.raises(InputError, match=r"quote|CSV"):
        _ids(path)


def test_a_quoted_newline_is_still_read(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_text('id,text\na,"two\nlines"\nb,"say ""hi"""\n')
    docs = list(read_documents([str(path)]))
    assert [(d.id, d.text) for d in docs] == [("a", "two\nlines"), ("b", 'say "hi"')]


def test_one_file_under_two_spellings_is_read_once(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.chdir(tmp_path)
    Path("a.txt").write_text("alpha beta gamma delta epsilon zeta eta theta")
    Path("b.txt").write_text("something else entirely different here and now")
    (tmp_path / "d").mkdir()
    Path("d/c.txt").write_text("a third text of words")
    docs = list(read_documents(["a.txt", "./a.txt", str(tmp_path / "a.txt"), "b.txt"]))
    assert [d.id for d in docs] == ["a.txt", "b.txt"]
    docs = list(read_documents(["d", "d/c.txt", "./d"]))
    assert [d.id for d in docs] == ["c.txt"]
    code, out, err, _ = run("dedup", "a.txt", "./a.txt", "-q", "--pairs")
    assert code == 0 and out.strip() == "", (out, err)
    rows = tmp_path / "r.jsonl"
    rows.write_bytes(_lines(ROWS[:3]))
    code, out, err, _ = run("dedup", rows, f"{tmp_path}/./r.jsonl", "-q")
    assert code == 0, err


def test_compare_a_file_with_itself(tmp_path: Path) -> None:
    path = tmp_path / "x.txt"
    path.write_text("the same words in the same file, compared with itself")
    code, out, err, _ = run("compare", path, path)
    assert code == 0 and out.startswith("similarity=1.000000"), err


def test_a_failing_zstandard_import_never_hides_the_cause(tmp_path: Path, monkeypatch: Any) -> None:
    """Closing a reader (a full disk ends the run; a generator is closed on the way out)
    must not import a codec module to test the exception, which can fail (a TypeError was
    seen) and hide the real error."""
    from neardup.readers import compression

    path = tmp_path / "d.jsonl"
    path.write_bytes(_lines(ROWS))
    real = builtins.__import__

    def broken(name: str, *args: Any, **kwargs: Any) -> Any:
        if name.startswith("zstandard"):
            raise TypeError("'NoneType' object is not callable")
        return real(name, *args, **kwargs)

    if hasattr(compression.decode_errors, "cache_clear"):
        compression.decode_errors.cache_clear()
    monkeypatch.setattr(builtins, "__import__", broken)
    monkeypatch.delitem(__import__("sys").modules, "zstandard", raising=False)
    docs = read_documents([str(path)])
    next(docs)
    docs.close()  # GeneratorExit passes the reader's except clauses
    docs = read_documents([str(path)])
    next(docs)
    with pytest.raises(OSError, match="disk full"):
        docs.throw(OSError(28, "disk full"))


def test_cap_messages_name_only_options_that_exist(tmp_path: Path) -> None:
    """The caps are library keywords, not command options: no message (nor formats.md) may
    tell a user to pass ``--max-line-bytes`` or ``--max-file-bytes``."""
    import gzip

    root = Path(__file__).resolve().parents[2]
    named = [
        str(p.relative_to(root))
        for p in [*root.joinpath("src").rglob("*.py"), root / "docs" / "formats.md"]
        if "--max-line-bytes" in p.read_text("utf-8") or "--max-file-bytes" in p.read_text("utf-8")
    ]
    assert named == []
    big = tmp_path / "big.txt.gz"
    big.write_bytes(gzip.compress(b"x " * 200))
    with pytest.raises(InputError) as caught:
        list(read_documents([str(big)], ReadOptions(max_file_bytes=100)))
    assert "--max" not in str(caught.value) and "max_file_bytes" in str(caught.value)
