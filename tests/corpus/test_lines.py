"""neardup lines: frequent lines / paragraphs removed, against a naive reference."""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path

from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.cli import main
from neardup.corpus.lines import LinesSummary, remove_frequent_units
from neardup.io import Document


def _reference(
    texts: list[str], min_docs: int, unit: str, min_length: int = 0, min_words: int = 1
) -> list[str]:
    def units(t: str) -> list[tuple[list[int], str]]:
        lines = t.split("\n")
        out: list[tuple[list[int], str]] = []
        cur: list[int] = []
        for i, line in enumerate([*lines, ""]):
            solid = line.strip(" \t\r\x0b\x0c") != ""
            if unit == "line":
                if solid and i < len(lines):
                    out.append(([i], line.strip(" \t\r\x0b\x0c")))
                continue
            if solid and i < len(lines):
                cur.append(i)
            elif cur:
                key = "\n".join(lines[j] for j in cur).strip(" \t\r\x0b\x0c\n")
                out.append((cur, key))
                cur = []
        return out

    freq: dict[str, int] = {}
    for t in texts:
        for key in {k for _, k in units(t)}:
            freq[key] = freq.get(key, 0) + 1
    result = []
    for t in texts:
        lines = t.split("\n")
        drop = {
            i
            for idx, k in units(t)
            if freq[k] >= min_docs and len(k.encode()) >= min_length and len(k.split()) >= min_words
            for i in idx
        }
        result.append(t if not drop else "\n".join(x for i, x in enumerate(lines) if i not in drop))
    return result


LINE = st.sampled_from(
    ["menu home", "  menu home ", "", "body", "Body", "© 2024 site", "x\ty", " "]
)


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.lists(LINE, max_size=6).map("\n".join), max_size=12),
    st.integers(2, 4),
    st.sampled_from(["line", "paragraph"]),
    st.sampled_from([(0, 1), (0, 2), (6, 1), (10, 3)]),
)
def test_equals_reference(
    texts: list[str], min_docs: int, unit: str, limits: tuple[int, int]
) -> None:
    docs = [Document(str(i), t) for i, t in enumerate(texts)]
    min_length, min_words = limits
    got = [
        d.text
        for d in remove_frequent_units(
            lambda: docs,
            min_docs=min_docs,
            unit=unit,
            batch_size=5,
            min_length=min_length,
            min_words=min_words,
        )
    ]
    assert got == _reference(texts, min_docs, unit, min_length, min_words)


def test_summary_counts() -> None:
    docs = [Document(str(i), f"nav a | b\nstory {i} goes here\ncookie banner") for i in range(10)]
    docs.append(Document("z", "unique\n\ncookie banner"))
    s = LinesSummary("line", 5)
    out = list(
        remove_frequent_units(lambda: docs, min_docs=5, summary=s, min_length=0, min_words=1)
    )
    assert [d.text for d in out[:2]] == ["story 0 goes here", "story 1 goes here"]
    assert out[-1].text == "unique\n"
    assert (s.documents, s.units, s.frequent_units, s.units_removed) == (11, 32, 2, 21)
    assert s.documents_changed == 11 and s.bytes_removed > 0


#: Every line counts, however short (the tests of the mechanism).
EVERY_LINE = ("--min-words", "1", "--min-line-length", "0")


def test_cli_lines_keeps_fields(tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    rows = [{"id": i, "meta": {"body": f"header\nline {i}\nfooter"}, "k": i} for i in range(4)]
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "out.jsonl"
    result = CliRunner().invoke(
        main,
        [
            "lines",
            str(src),
            "--output",
            str(out),
            "--min-docs",
            "3",
            "--text-field",
            "meta.body",
            *EVERY_LINE,
        ],
    )
    assert result.exit_code == 0, result.stderr
    got = [json.loads(x) for x in out.read_text().splitlines()]
    assert [r["meta"]["body"] for r in got] == [f"line {i}" for i in range(4)]
    assert [r["k"] for r in got] == [0, 1, 2, 3]
    assert re.search(r"2 lines in >= 3 documents \(.*\), 8 removed from 4 documents", result.stderr)
    bad = CliRunner().invoke(main, ["lines", "-", "--output", str(out), "--min-docs", "2"])
    assert bad.exit_code == 2


def test_cli_lines_one_jsonl_counts_from_packed_batches(tmp_path: Path) -> None:
    """One plain JSONL file is counted from packed batches (no records in Python); the output
    is the one of the record reader's path (a folder of that file)."""
    rows: list[str] = []
    for i in range(12):
        body = f"Home | News\\ncaf\\u00e9 {i} \\ud83d\\ude00\\n\\tshared footer \\n{'x' * (i % 3)}"
        rows.append(f'{{"id": "{i}", "text": "{body}", "n": {i}}}')
    rows += [
        '{"id": "e", "text": ""}',
        '{"id": "m", "text": "a\\r\\nb"}',
        '{"text": "Home | News"}',
    ]
    one = tmp_path / "one"
    one.mkdir()
    (one / "in.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
    outs = []
    for src in (one / "in.jsonl", one):
        out = tmp_path / f"out{len(outs)}.jsonl"
        r = CliRunner().invoke(
            main, ["lines", str(src), "-o", str(out), "--min-docs", "5", *EVERY_LINE]
        )
        assert r.exit_code == 0, r.stderr
        summary = [x for x in r.stderr.splitlines() if x.startswith("neardup lines:")]
        outs.append((out.read_text(encoding="utf-8"), "\n".join(summary)))
    assert outs[0][0] == outs[1][0]
    assert outs[0][1] == outs[1][1]
    assert "15 documents" in outs[0][1] and "shared footer" not in outs[0][0]
    assert "café 3" in json.loads(outs[0][0].splitlines()[3])["text"]


def _lines_cli(src: Path, out: Path, *args: str) -> str:
    r = CliRunner().invoke(
        main, ["lines", str(src), "-o", str(out), "--min-docs", "3", *EVERY_LINE, *args]
    )
    assert r.exit_code == 0, r.stderr
    return "\n".join(x for x in r.stderr.splitlines() if x.startswith("neardup lines:"))


BOILER = st.sampled_from(["Home | News", "  cookie banner\t", "© 2024 \u00e9t\u00e9 \U0001f600"])
BODY = st.text(
    st.characters(codec="utf-8", exclude_categories=["Cs"], exclude_characters="\n"), max_size=12
)
EXTRA = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**20), 10**20) | st.floats(allow_nan=False) | BODY,
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(BODY, kids, max_size=3),
    max_leaves=6,
)


@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(BOILER | BODY, max_size=5).map("\n".join),
            st.dictionaries(st.sampled_from(["meta", "url", "n", "path", "é"]), EXTRA),
            st.booleans(),
            st.booleans(),
        ),
        max_size=14,
    ),
    st.sampled_from(["line", "paragraph"]),
)
def test_cli_lines_raw_jsonl_equals_record_path(
    rows: list[tuple[str, dict[str, object], bool, bool]], unit: str
) -> None:
    """One JSONL file to JSONL (raw lines for unchanged records) gives the records the record
    reader's path gives (a folder of the same file): equal bytes for lines written as
    ``json.dumps(ensure_ascii=False)`` writes them, and otherwise equal records, each
    unchanged one being its input line byte for byte."""
    with tempfile.TemporaryDirectory() as name:
        _raw_vs_records(Path(name), rows, unit)


def _raw_vs_records(
    tmp: Path, rows: list[tuple[str, dict[str, object], bool, bool]], unit: str
) -> None:
    lines = []
    for i, (text, extra, ascii_escapes, crlf) in enumerate(rows):
        record = {"id": f"d{i}", **extra, "text": text}
        line = json.dumps(record, ensure_ascii=ascii_escapes)
        lines.append(line + ("\r\n" if crlf else "\n"))
    lines.insert(len(lines) // 2, "\n")  # a blank line is skipped by both
    one = tmp / "one"
    one.mkdir()
    (one / "in.jsonl").write_text("".join(lines), encoding="utf-8", newline="")
    raw_summary = _lines_cli(one / "in.jsonl", tmp / "raw.jsonl", "--unit", unit)
    rec_summary = _lines_cli(one, tmp / "rec.jsonl", "--unit", unit)
    assert raw_summary == rec_summary
    raw = (tmp / "raw.jsonl").read_bytes().splitlines(keepends=True)
    rec = (tmp / "rec.jsonl").read_bytes().splitlines(keepends=True)
    assert len(raw) == len(rec) == len(rows)
    src = [x for x in lines if x != "\n"]
    for (_, _, ascii_escapes, _), a, b, line in zip(rows, raw, rec, src, strict=True):
        assert json.loads(a) == json.loads(b)
        if not ascii_escapes:
            assert a == b
        if json.loads(line)["text"] == json.loads(a)["text"]:
            assert a == line.rstrip("\r\n").encode() + b"\n"


def test_cli_lines_raw_jsonl_compressed_and_ids(tmp_path: Path) -> None:
    """The raw path writes .jsonl.gz / .jsonl.zst too, and pass 1 still rejects a repeated id."""
    import gzip

    import zstandard

    rows = [{"id": i, "text": f"nav\nbody {i}", "m": {"a": [i]}} for i in range(4)]
    rows.append({"id": 9, "text": "alone"})
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in rows))
    _lines_cli(src, tmp_path / "o.jsonl.gz")
    _lines_cli(src, tmp_path / "o.jsonl.zst")
    gz = gzip.decompress((tmp_path / "o.jsonl.gz").read_bytes())
    with zstandard.ZstdDecompressor().stream_reader((tmp_path / "o.jsonl.zst").open("rb")) as f:
        zst = f.read()
    assert gz == zst
    got = gz.decode().splitlines()
    from neardup._kernels.engine import backend_name

    if backend_name() == "native":
        assert got[0] == '{"id":0,"text":"body 0","m":{"a":[0]}}'  # the text replaced in place
    else:  # the reference scanner takes no line: every changed record is re-encoded
        assert got[0] == '{"id": 0, "text": "body 0", "m": {"a": [0]}}'
    assert got[4] == '{"id":9,"text":"alone"}'  # unchanged: the input line
    src.write_text(src.read_text() + '{"id": 2, "text": "again"}\n')
    r = CliRunner().invoke(
        main, ["lines", str(src), "-o", str(tmp_path / "x.jsonl"), "--min-docs", "3"]
    )
    assert r.exit_code != 0 and "duplicate id" in r.stderr


def test_unit_log_reads_back_across_batches_and_spills() -> None:
    """Pass 2's batches need not match pass 1's: the log hands out any number of documents,
    from memory or from its spill file, and a read past its end is the changed-input error."""
    import numpy as np
    import pytest

    from neardup.corpus.lines import UnitLog
    from neardup.errors import ConfigError

    for cap in (0, 1 << 20):
        with UnitLog(cap=cap) as log:
            log.append(np.array([1, 2]), np.array([5, 6, 7], np.uint64))
            log.append(np.array([0, 3]), np.array([8, 9, 10], np.uint64))
            per_doc, hashes = log.take(3)
            assert per_doc.tolist() == [1, 2, 0] and hashes.tolist() == [5, 6, 7]
            per_doc, hashes = log.take(1)
            assert per_doc.tolist() == [3] and hashes.tolist() == [8, 9, 10]
            with pytest.raises(ConfigError, match="input changed"):
                log.take(1)


PY = "import sys\nfrom collections import OrderedDict as od\nif x:\n    run({})\nelse:\n    pass"


def test_short_lines_are_not_boilerplate_by_default(tmp_path: Path) -> None:
    """``import sys`` and ``else:`` are in every file, and stay; a long shared line goes."""
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps({"id": i, "text": PY.format(i)}) + "\n" for i in range(5)))
    out = tmp_path / "out.jsonl"
    r = CliRunner().invoke(main, ["lines", str(src), "-o", str(out), "--min-docs", "3"])
    assert r.exit_code == 0, r.stderr
    text = json.loads(out.read_text().splitlines()[0])["text"]
    assert text == "import sys\nif x:\n    run(0)\nelse:\n    pass"
    docs = [Document(str(i), PY.format(i)) for i in range(5)]
    every = list(remove_frequent_units(lambda: docs, min_docs=3, min_length=0, min_words=1))
    assert every[0].text == "    run(0)"  # every line counts: the old behavior


def test_dry_run_lists_what_would_go_and_writes_nothing(tmp_path: Path) -> None:
    rows = [{"id": i, "text": f"shared footer of the site\nbody {i}"} for i in range(4)]
    rows += [{"id": 9, "text": "main menu with links\nshared footer of the site"}]
    rows += [{"id": 10 + i, "text": "main menu with links"} for i in range(2)]
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    r = CliRunner().invoke(main, ["lines", str(src), "--min-docs", "3", "--dry-run"])
    assert r.exit_code == 0, r.stderr
    assert r.stdout.splitlines() == ["5\tshared footer of the site", "3\tmain menu with links"]
    assert list(tmp_path.iterdir()) == [src]
    bare = CliRunner().invoke(main, ["lines", str(src), "--min-docs", "3"])
    assert bare.exit_code == 2 and "--dry-run" in bare.stderr


def test_progress_lines_with_a_total(tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps({"id": i, "text": f"a b c d\n{i}"}) + "\n" for i in range(7)))
    out = tmp_path / "o.jsonl"
    r = CliRunner().invoke(
        main, ["lines", str(src), "-o", str(out), "--min-docs", "2", "--progress"]
    )
    assert r.exit_code == 0, r.stderr
    assert "neardup: count..." in r.stderr and "neardup: write..." in r.stderr
    quiet = CliRunner().invoke(
        main, ["lines", str(src), "-o", str(out), "--min-docs", "2", "-q", "--progress"]
    )
    assert quiet.stderr == ""
