"""dedup over corpora via the CLI: ids across roots, links, skips, atomic outputs, --annotate."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from neardup.cli import main

BASE = " ".join(f"word{i} common text of the license number {i % 7}" for i in range(60))
OTHER = " ".join(f"other{i} quite different material {i * 3}" for i in range(60))


def run(*args: str, input: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), input=input)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture()
def roots(tmp_path: Path) -> tuple[Path, Path]:
    a, b = tmp_path / "in" / "a", tmp_path / "in" / "b"
    for root in (a, b):
        (root / "sub").mkdir(parents=True)
    (a / "sub" / "same.txt").write_text(BASE)
    (b / "sub" / "same.txt").write_text(BASE + " tail")
    (b / "other.txt").write_text(OTHER)
    return a, b


def test_ids_unique_across_roots_and_output(roots: tuple[Path, Path], tmp_path: Path) -> None:
    a, b = roots
    out = tmp_path / "clean"
    code, stdout, err = run("dedup", str(a), str(b), "-q", "--keep", "first", "--output", str(out))
    assert code == 0, err
    assert json.loads(stdout)["members"] == ["a/sub/same.txt", "b/sub/same.txt"]
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*.txt")) == [
        "a/sub/same.txt",
        "b/other.txt",
    ]
    # a non-empty target is refused without --force; with it, replaced whole only while it
    # holds nothing but what neardup wrote there (issue 43)
    code, _, err = run("dedup", str(a), str(b), "-q", "--keep", "first", "--output", str(out))
    assert code == 1 and "--force" in err
    (out / "stale.txt").write_text("mine")
    code, _, err = run(
        "dedup", str(a), str(b), "-q", "--keep", "first", "--output", str(out), "--force"
    )
    assert code == 1 and "stale.txt" in err and (out / "stale.txt").exists()
    (out / "stale.txt").unlink()
    (out / "b" / "other.txt").unlink()  # what neardup wrote may go missing: still its own
    code, _, err = run(
        "dedup", str(a), str(b), "-q", "--keep", "first", "--output", str(out), "--force"
    )
    assert code == 0, err
    assert (out / "b" / "other.txt").exists()
    assert not [p for p in out.parent.iterdir() if p.name.startswith(".clean")]


def test_symlinks_reported_and_cycle_safe(roots: tuple[Path, Path]) -> None:
    a, b = roots
    os.symlink(b, a / "link")
    os.symlink(a, a / "sub" / "loop")  # points back up the tree
    code, stdout, err = run("dedup", str(a))
    assert code == 0, err
    assert "symbolic link (add --follow-symlinks)" in err and "link" in err
    code, stdout, err = run("dedup", str(a), "--follow-symlinks")
    assert code == 0, err
    assert "symbolic link cycle" in err
    members = json.loads(stdout.splitlines()[0])["members"]
    assert members == ["link/sub/same.txt", "sub/same.txt"]


def test_on_error_skip_counts_bad_records_and_files(tmp_path: Path) -> None:
    d = tmp_path / "d"
    d.mkdir()
    (d / "a.jsonl").write_text(
        json.dumps({"id": "x", "text": BASE})
        + "\nnot json\n"
        + json.dumps({"id": "y", "text": BASE})
        + "\n"
    )
    (d / "b.jsonl.gz").write_bytes(gzip.compress(b'{"text": "x"}\n' * 300)[:-30])
    code, _, err = run("dedup", str(d))
    assert code == 1 and "a.jsonl:2" in err
    code, stdout, err = run("dedup", str(d), "--on-error", "skip")
    assert code == 0, err
    assert json.loads(stdout)["members"] == ["x", "y"]
    assert "1 skipped" in err and "b.jsonl.gz" in err and "unreadable or malformed" in err


def _records(n: int = 6) -> list[dict[str, object]]:
    texts = [BASE, OTHER, BASE + " extra", "short unique note here", BASE, OTHER + " more"]
    return [
        {"doc": {"url": f"u{i}"}, "body": texts[i % len(texts)], "lang": "en", "n": i}
        for i in range(n)
    ]


@pytest.mark.parametrize("ext", [".jsonl", ".jsonl.gz", ".jsonl.zst", ".csv", ".parquet"])
def test_annotate_formats(tmp_path: Path, ext: str) -> None:
    if ext == ".parquet":
        pytest.importorskip("pyarrow")
    if ext == ".jsonl.zst":
        pytest.importorskip("zstandard")
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in _records()))
    out = tmp_path / f"ann{ext}"
    code, _, err = run(
        "dedup", str(src), "--id-field", "doc.url", "--text-field", "body", "-q",
        "--annotate", str(out),
    )  # fmt: skip
    assert code == 0, err
    rows = _read_back(out, ext)
    assert [r["n"] for r in rows] == [0, 1, 2, 3, 4, 5]
    by = {str(r["n"]): r for r in rows}
    assert by["0"]["is_duplicate"] in (False, "False") and by["0"]["duplicate_of"] in (None, "")
    assert by["4"]["is_duplicate"] in (True, "True") and by["4"]["duplicate_of"] == "u0"
    assert float(by["4"]["similarity"]) == 1.0
    assert by["3"]["cluster_id"] in (None, "") and by["3"]["is_duplicate"] in (False, "False")
    assert by["2"]["duplicate_of"] == "u0" and 0.8 <= float(by["2"]["similarity"]) < 1.0
    assert by["0"]["cluster_id"] == by["2"]["cluster_id"] == by["4"]["cluster_id"]
    assert rows[0]["lang"] == "en"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def _read_back(out: Path, ext: str) -> list[dict[str, object]]:
    if ext == ".parquet":
        import pyarrow.parquet as pq

        return pq.read_table(out).to_pylist()
    if ext == ".csv":
        import csv

        with out.open(newline="") as fh:
            return [dict(r, n=int(r["n"])) for r in csv.DictReader(fh)]
    data = out.read_bytes()
    if ext == ".jsonl.gz":
        data = gzip.decompress(data)
    elif ext == ".jsonl.zst":
        import zstandard

        data = zstandard.ZstdDecompressor().stream_reader(data).read()
    return [json.loads(line) for line in data.decode().splitlines()]


def test_annotate_longest_and_stdin(tmp_path: Path) -> None:
    lines = "".join(json.dumps(r) + "\n" for r in _records())
    out = tmp_path / "a.jsonl"
    code, _, err = run(
        "dedup", "-", "--id-field", "doc.url", "--text-field", "body", "-q",
        "--keep", "longest", "--annotate", str(out), input=lines,
    )  # fmt: skip
    assert code == 0, err
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    kept = [r for r in rows if r["cluster_id"] == rows[0]["cluster_id"] and not r["is_duplicate"]]
    assert [r["doc"]["url"] for r in kept] == ["u2"]  # the longest member
    assert rows[0]["duplicate_of"] == "u2"


def _jsonl(rows: list[dict[str, object]]) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


def test_keep_output_jsonl_gives_the_records_back_as_read(tmp_path: Path) -> None:
    """One JSONL file to a .jsonl copy: each kept record is its own input line (every field,
    its escapes and number spellings as written), CRLF endings and blank lines dropped."""
    rows = [
        {"id": "a", "text": BASE, "url": "https://x/a", "meta": {"n": 1}},
        {"id": "b", "text": BASE + " tail", "url": "https://x/b"},
        {"id": "c", "text": OTHER + " caf\u00e9", "score": 0.5},
    ]
    lines = [json.dumps(r) for r in rows]  # ensure_ascii: "caf\u00e9" stays escaped
    lines[2] = lines[2].replace('"score": 0.5', '"score": 0.50')
    src = tmp_path / "in.jsonl"
    src.write_bytes(("\r\n".join(lines) + "\r\n\n").encode())
    out = tmp_path / "clean.jsonl"
    code, _, err = run("dedup", str(src), "-q", "--keep", "first", "--output", str(out))
    assert code == 0, err
    assert out.read_text() == lines[0] + "\n" + lines[2] + "\n"
    # --keep longest picks b; the same lines otherwise
    code, _, err = run("dedup", str(src), "-q", "--keep", "longest", "--output", str(out))
    assert code == 0, err
    assert out.read_text() == lines[1] + "\n" + lines[2] + "\n"


def test_keep_output_jsonl_keeps_every_field_from_other_readers(tmp_path: Path) -> None:
    """Inputs the line path does not take (two files, a nested text field) still give each
    kept record with all its fields."""
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text(_jsonl([{"id": "a1", "body": {"t": BASE}, "lang": "en"}]))
    b.write_text(
        _jsonl(
            [
                {"id": "b1", "body": {"t": BASE + " tail"}, "lang": "en"},
                {"id": "b2", "body": {"t": OTHER}, "lang": "fr"},
            ]
        )
    )
    out = tmp_path / "clean.jsonl"
    code, _, err = run(
        "dedup", str(a), str(b), "-q", "--text-field", "body.t", "--keep", "first",
        "--output", str(out),
    )  # fmt: skip
    assert code == 0, err
    got = [json.loads(line) for line in out.read_text().splitlines()]
    assert got == [
        {"id": "a1", "body": {"t": BASE}, "lang": "en"},
        {"id": "b2", "body": {"t": OTHER}, "lang": "fr"},
    ]


@pytest.mark.parametrize("keep", ["first", "longest"])
def test_annotate_jsonl_lines_keep_the_records_bytes(tmp_path: Path, keep: str) -> None:
    """One JSONL file annotated to JSON lines: each record is its own line with the columns
    before its closing brace (compact separators, escapes and numbers as written); a record
    that has a column already is decoded and gets it replaced. The same rows as the spool
    path (taken with --on-error skip)."""
    rows = [
        {"id": f"d{i}", "body": r["body"], "n": i, "note": "caf\u00e9"}
        for i, r in enumerate(_records())
    ]
    rows[5]["similarity"] = "theirs"
    lines = [json.dumps(r, separators=(",", ":")) for r in rows]  # "caf\u00e9" stays escaped
    lines[1] = lines[1].replace('"n":1', '"n":1.0e0')
    src = tmp_path / "in.jsonl"
    src.write_text("\r\n".join(lines) + "\n")
    outs = {}
    for name, extra in (("lines", ()), ("spool", ("--on-error", "skip"))):
        out = outs[name] = tmp_path / f"{name}.jsonl"
        code, _, err = run(
            "dedup", str(src), "--text-field", "body", "--keep", keep, "-q",
            "--annotate", str(out), *extra,
        )  # fmt: skip
        assert code == 0, err
    got = outs["lines"].read_text().splitlines()
    assert [json.loads(x) for x in got] == [
        json.loads(x) for x in outs["spool"].read_text().splitlines()
    ]
    assert got[1].startswith(lines[1][:-1] + ", ") and '"cluster_id": ' in got[1]
    assert got[3] == lines[3][:-1] + (
        ', "cluster_id": null, "is_duplicate": false, "duplicate_of": null, "similarity": null}'
    )
    assert json.loads(got[5])["similarity"] != "theirs" and got[5].count('"similarity"') == 1
    by = {r["id"]: r for r in map(json.loads, got)}
    kept = "d2" if keep == "longest" else "d0"
    assert by["d4"]["duplicate_of"] == kept and by["d4"]["is_duplicate"]
    assert by["d2" if kept == "d0" else "d0"]["similarity"] is not None


def test_annotate_jsonl_gz_from_the_lines(tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text(
        "".join(json.dumps({"id": f"d{i}", **r}) + "\n" for i, r in enumerate(_records()))
    )
    out = tmp_path / "ann.jsonl.gz"
    code, _, err = run("dedup", str(src), "--text-field", "body", "-q", "--annotate", str(out))
    assert code == 0, err
    rows = _read_back(out, ".jsonl.gz")
    assert [r["n"] for r in rows] == list(range(6))
    assert rows[4]["duplicate_of"] == "d0" and rows[4]["similarity"] == 1.0


@pytest.mark.parametrize("ext", [".parquet", ".csv", ".jsonl.gz", ".jsonl.zst"])
def test_keep_output_record_formats(tmp_path: Path, ext: str) -> None:
    """--keep --output writes the kept records in the format its extension names, from a
    JSONL file (its lines for the JSON formats) and from Parquet (the records' fields)."""
    if ext == ".parquet" or ext == ".csv":
        pytest.importorskip("pyarrow")
    if ext == ".jsonl.zst":
        pytest.importorskip("zstandard")
    rows = [{"id": f"d{i}", **r} for i, r in enumerate(_records())]
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    sources = [src]
    if ext in (".parquet", ".csv"):
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq_src = tmp_path / "in.parquet"
        pq.write_table(pa.Table.from_pylist(rows), pq_src)
        sources.append(pq_src)
    for source in sources:
        out = tmp_path / f"clean-{source.suffix[1:]}{ext}"
        code, _, err = run(
            "dedup", str(source), "--text-field", "body", "-q", "--keep", "first",
            "--output", str(out),
        )  # fmt: skip
        assert code == 0, err
        got = _read_back(out, ext)
        assert [r["id"] for r in got] == ["d0", "d1", "d3"]
        assert got[0]["lang"] == "en" and str(got[2]["n"]) == "3"
        if ext != ".csv":
            assert got[0]["doc"] == {"url": "u0"}
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]
