"""annotate_records / plan_annotations through the library: keep rules, similarities the
result holds only transitively, replaced dedup columns, schemas that do not unify."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from neardup.corpus.annotate import annotate_jsonl_lines, annotate_records, plan_annotations
from neardup.corpus.records import SPOOL_BATCH, RecordSpool
from neardup.errors import ConfigError, InputError
from neardup.io import Document
from neardup.methods import make_method
from neardup.pipeline import dedup

BASE = " ".join(f"word{i} shared text of the record {i % 5}" for i in range(40))


def _docs(rows: list[dict[str, object]]) -> list[Document]:
    return [Document(str(r["id"]), str(r["text"]), fields=r) for r in rows]


def _annotate(rows: list[dict[str, object]], out: Path, **kw: object) -> list[dict[str, object]]:
    spool = RecordSpool(out.parent)
    kw.setdefault("within_threshold", False)  # a result without pairs: one kept per cluster
    try:
        result = dedup(list(spool.tee(_docs(rows))), method="minhash", pairs=False)
        annotate_records(spool, result, out, **kw)  # type: ignore[arg-type]
    finally:
        spool.close()
    return [json.loads(line) for line in out.read_text().splitlines()]


def test_plan_refuses_bad_keep_rules() -> None:
    r = dedup(["a b c d e f", "a b c d e f"], method="simhash")
    with pytest.raises(ConfigError, match="keep must be one of"):
        plan_annotations(r, keep="last")
    with pytest.raises(ConfigError, match="needs the document sizes"):
        plan_annotations(r, keep="longest")


def test_similarities_filled_when_the_result_has_no_pairs(tmp_path: Path) -> None:
    rows = [
        {"id": "a", "text": BASE},
        {"id": "b", "text": BASE + " tail"},
        {"id": "c", "text": "something else entirely " * 20},
    ]
    got = _annotate(rows, tmp_path / "o.jsonl", method=make_method("minhash"))
    assert [r["id"] for r in got] == ["a", "b", "c"]
    assert got[0]["is_duplicate"] is False and got[0]["similarity"] is None
    assert got[1]["duplicate_of"] == "a" and 0.8 < got[1]["similarity"] < 1.0
    assert got[2]["cluster_id"] is None and got[2]["is_duplicate"] is False
    # without a method to compute it, the similarity stays null (not made up)
    bare = _annotate(rows, tmp_path / "p.jsonl")
    assert bare[1]["is_duplicate"] is True and bare[1]["similarity"] is None


@pytest.mark.parametrize("keep", ["first", "longest"])
def test_jsonl_lines_equal_the_spool_rows(
    tmp_path: Path, keep: str, caplog: pytest.LogCaptureFixture
) -> None:
    """annotate_jsonl_lines on a result without pairs (every similarity computed from the
    texts, the duplicates' own ones read with their lines) gives annotate_records' rows; a
    value spelled as a column name is no column (no warning), a column is replaced."""
    rows: list[dict[str, object]] = [
        {"id": "a", "text": BASE, "tag": "similarity"},
        {"id": "b", "text": BASE + " tail", "n": 1},
        {"id": "c", "text": "something else entirely " * 20},
        {"id": "d", "text": BASE + " and a longer tail"},
    ]
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    method = make_method("minhash")
    spool_rows = _annotate(rows, tmp_path / "o.jsonl", keep=keep, method=method)
    result = dedup(_docs(rows), method="minhash", pairs=False)
    with caplog.at_level(logging.WARNING):
        got = [
            json.loads(line)
            for batch in annotate_jsonl_lines(
                src, result, keep=keep, method=method, within_threshold=False
            )
            for line in batch
        ]
    assert got == spool_rows
    assert "already have dedup columns" not in caplog.text
    dups = [r for r in got if r["is_duplicate"]]
    assert len(dups) == 2 and all(0.8 < float(r["similarity"]) < 1.0 for r in dups)  # type: ignore[arg-type]
    rows[1]["cluster_id"] = "theirs"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with caplog.at_level(logging.WARNING):
        again = [
            json.loads(x)
            for b in annotate_jsonl_lines(src, result, keep=keep, within_threshold=False)
            for x in b
        ]
    assert "already have dedup columns" in caplog.text
    assert again[1]["cluster_id"] == got[1]["cluster_id"] and again[1]["similarity"] is None


def test_longest_is_kept_and_existing_columns_replaced(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    rows = [
        {"id": "a", "text": BASE, "is_duplicate": "stale"},
        {"id": "b", "text": BASE + " and a longer tail", "is_duplicate": "stale"},
    ]
    with caplog.at_level(logging.WARNING):
        got = _annotate(rows, tmp_path / "o.jsonl", keep="longest")
    assert "already have dedup columns" in caplog.text
    assert [r["is_duplicate"] for r in got] == [True, False]
    assert got[0]["duplicate_of"] == "b"


@pytest.mark.parametrize("ints", [3, SPOOL_BATCH])  # in one record batch, or across two
def test_parquet_fields_of_two_types_are_refused(tmp_path: Path, ints: int) -> None:
    pytest.importorskip("pyarrow")
    rows: list[dict[str, object]] = [
        {"id": str(i), "text": f"doc {i}", "x": i} for i in range(ints)
    ]
    rows.append({"id": "s", "text": "doc s", "x": {"nested": True}})  # a struct after ints
    with pytest.raises(InputError, match=r"o\.parquet: the records' fields differ in type"):
        _annotate(rows, tmp_path / "o.parquet")
    assert not (tmp_path / "o.parquet").exists()
