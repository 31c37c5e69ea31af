"""dedup --engine spark over corpus formats: nested fields, staged formats, --annotate."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyspark")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
zstandard = pytest.importorskip("zstandard")

from neardup.errors import InputError  # noqa: E402
from neardup.spark.cli import run_spark_dedup  # noqa: E402

pytestmark = [
    pytest.mark.slow,
    pytest.mark.filterwarnings("ignore::DeprecationWarning:pyspark.*"),
    pytest.mark.filterwarnings("ignore::FutureWarning:pyspark.*"),
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
]

BASE = " ".join(f"word{i} common text of the license number {i % 7}" for i in range(60))
OTHER = " ".join(f"other{i} quite different material {i * 3}" for i in range(60))
TEXTS = [BASE, OTHER, BASE + " extra", "short unique note here", BASE, OTHER + " more"]
RECORDS = [{"doc": {"url": f"u{i}"}, "body": t, "n": i} for i, t in enumerate(TEXTS)]


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    for var in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON"):
        os.environ[var] = sys.executable
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[2]")
        .appName("neardup-corpus-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "3")
        .getOrCreate()
    )
    yield session


EXPECTED = {("u0", "u2", "u4"), ("u1", "u5")}


def test_spark_reads_nested_parquet_and_staged_zst(spark: Any, tmp_path: Path) -> None:
    pq.write_table(pa.Table.from_pylist(RECORDS), tmp_path / "in.parquet")
    zst = tmp_path / "in.jsonl.zst"
    data = "".join(json.dumps(r) + "\n" for r in RECORDS).encode()
    zst.write_bytes(zstandard.ZstdCompressor().compress(data))
    for path in (tmp_path / "in.parquet", zst):
        summary = run_spark_dedup(
            [str(path)], method="minhash", id_field="doc.url", text_field="body", collect=True
        )
        assert {c.members for c in summary.clusters} == EXPECTED, path
        assert summary.n_docs == len(RECORDS)


def test_spark_annotate(spark: Any, tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in RECORDS))
    out = tmp_path / "ann.jsonl"
    run_spark_dedup(
        [str(src)], method="minhash", id_field="doc.url", text_field="body", annotate=str(out)
    )
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["n"] for r in rows] == list(range(len(RECORDS)))
    by = {r["doc"]["url"]: r for r in rows}
    assert by["u0"]["is_duplicate"] is False and by["u0"]["cluster_id"] == "u0"
    assert by["u4"]["is_duplicate"] is True and by["u4"]["duplicate_of"] == "u0"
    assert by["u4"]["similarity"] == 1.0
    assert by["u3"]["cluster_id"] is None and by["u3"]["is_duplicate"] is False
    assert by["u5"]["duplicate_of"] == "u1" and 0.8 <= by["u5"]["similarity"] < 1.0


def test_spark_on_error_skip_leaves_out_bad_lines_and_files(spark: Any, tmp_path: Path) -> None:
    lines = [json.dumps(r) for r in RECORDS]
    lines.insert(2, '{"doc": {"url": "broken"}, "body": "cut off')
    src = tmp_path / "in.jsonl"
    src.write_text("\n".join(lines) + "\n")
    summary = run_spark_dedup(
        [str(src)], id_field="doc.url", text_field="body", collect=True, on_error="skip"
    )
    assert {c.members for c in summary.clusters} == EXPECTED
    assert summary.n_docs == len(RECORDS)
    with pytest.raises(InputError, match=r"does not parse.*--on-error skip"):
        run_spark_dedup([str(src)], id_field="doc.url", text_field="body", collect=True)
    # a staged format (.zst goes through neardup's readers): the broken line is skipped too
    good = tmp_path / "good.jsonl.zst"
    good.write_bytes(zstandard.ZstdCompressor().compress("\n".join(lines).encode()))
    summary = run_spark_dedup(
        [str(good)], id_field="doc.url", text_field="body", collect=True, on_error="skip"
    )
    assert {c.members for c in summary.clusters} == EXPECTED
