"""Corpus readers: every format, compressed or not, field paths, streaming and bad input."""

from __future__ import annotations

import bz2
import csv
import gzip
import json
import lzma
from pathlib import Path

import pytest

from neardup.errors import InputError
from neardup.readers import ReadOptions, ReadStats, RecordSpec, file_kind, read_documents

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
zstandard = pytest.importorskip("zstandard")

RECORDS = [
    {"id": f"r{i}", "text": f"document number {i} says hello", "meta": {"url": f"u{i}"}, "n": i}
    for i in range(5)
]


def _jsonl_bytes(records: list[dict[str, object]]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in records).encode()


COMPRESS = {
    "": lambda b: b,
    ".gz": gzip.compress,
    ".bz2": bz2.compress,
    ".xz": lzma.compress,
    ".zst": lambda b: zstandard.ZstdCompressor().compress(b),
}


def _read(paths: list[Path], **kw: object) -> list[tuple[str, str]]:
    opts = ReadOptions(**kw)  # type: ignore[arg-type]
    return [(d.id, d.text or "") for d in read_documents(paths, opts)]


@pytest.mark.parametrize("suffix", list(COMPRESS))
def test_jsonl_compressed(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"dump.jsonl{suffix}"
    path.write_bytes(COMPRESS[suffix](_jsonl_bytes(RECORDS)))
    assert _read([path]) == [(r["id"], r["text"]) for r in RECORDS]


@pytest.mark.parametrize(("kind", "delim"), [("csv", ","), ("tsv", "\t")])
def test_csv_tsv(tmp_path: Path, kind: str, delim: str) -> None:
    plain = tmp_path / f"t.{kind}"
    with plain.open("w", newline="") as fh:
        w = csv.writer(fh, delimiter=delim)
        w.writerow(["id", "text"])
        w.writerows([[r["id"], r["text"]] for r in RECORDS])
    gz = tmp_path / f"t.{kind}.gz"
    gz.write_bytes(gzip.compress(plain.read_bytes()))
    expect = [(r["id"], r["text"]) for r in RECORDS]
    assert _read([plain]) == expect
    assert [t for _, t in _read([gz])] == [t for _, t in expect]


def test_parquet_feather_ipc_nested_fields(tmp_path: Path) -> None:
    table = pa.Table.from_pylist(RECORDS)
    pq.write_table(table, tmp_path / "a.parquet", row_group_size=2)
    import pyarrow.feather as feather

    feather.write_feather(table, tmp_path / "b.feather")
    with (
        pa.OSFile(str(tmp_path / "c.arrow"), "wb") as sink,
        pa.ipc.new_stream(sink, table.schema) as w,
    ):
        w.write_table(table)
    spec = RecordSpec.of(["text", "meta.url"], "meta.url", join=" | ")
    for name in ("a.parquet", "b.feather", "c.arrow"):
        got = _read([tmp_path / name], spec=spec)
        assert got == [(r["meta"]["url"], f"{r['text']} | {r['meta']['url']}") for r in RECORDS]


def test_keep_fields(tmp_path: Path) -> None:
    pq.write_table(pa.Table.from_pylist(RECORDS), tmp_path / "a.parquet")
    docs = list(read_documents([tmp_path / "a.parquet"], ReadOptions(keep_fields=True)))
    assert [dict(d.fields or {}) for d in docs] == RECORDS


def _hf_folder(root: Path, records: list[dict[str, object]], files: int = 2) -> Path:
    """What datasets' save_to_disk writes: Arrow streams plus state / info JSON."""
    root.mkdir()
    table = pa.Table.from_pylist(records)
    names = []
    step = -(-len(records) // files)
    for k in range(files):
        name = f"data-{k:05d}-of-{files:05d}.arrow"
        with pa.OSFile(str(root / name), "wb") as sink, pa.ipc.new_stream(sink, table.schema) as w:
            w.write_table(table.slice(k * step, step))
        names.append({"filename": name})
    (root / "state.json").write_text(json.dumps({"_data_files": names, "_split": None}))
    (root / "dataset_info.json").write_text(json.dumps({"features": {}}))
    return root


def test_hf_save_to_disk(tmp_path: Path) -> None:
    plain = [{"text": r["text"]} for r in RECORDS]
    folder = _hf_folder(tmp_path / "ds", plain)
    assert _read([folder]) == [(str(i), r["text"]) for i, r in enumerate(plain, 1)]
    dd = tmp_path / "dd"
    dd.mkdir()
    _hf_folder(dd / "train", plain[:3], files=1)
    _hf_folder(dd / "test", plain[3:], files=1)
    (dd / "dataset_dict.json").write_text(json.dumps({"splits": ["train", "test"]}))
    assert [i for i, _ in _read([dd])] == ["train:1", "train:2", "train:3", "test:1", "test:2"]


def test_hf_with_datasets(tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    datasets.Dataset.from_list(RECORDS).save_to_disk(str(tmp_path / "real"))
    assert _read([tmp_path / "real"]) == [(r["id"], r["text"]) for r in RECORDS]


def test_folders_of_record_files_and_ids(tmp_path: Path) -> None:
    for root in ("a", "b"):
        (tmp_path / root / "sub").mkdir(parents=True)
        (tmp_path / root / "sub" / "same.txt").write_text(f"text in {root}")
    (tmp_path / "a" / "only.txt").write_text("only a")
    (tmp_path / "a" / "recs.jsonl.gz").write_bytes(gzip.compress(b'{"text": "r"}\n'))
    ids = [i for i, _ in _read([tmp_path / "a", tmp_path / "b"])]
    assert ids == ["a/only.txt", "a/recs.jsonl.gz:1", "a/sub/same.txt", "b/sub/same.txt"]
    assert [i for i, _ in _read([tmp_path / "a"])] == [
        "only.txt",
        "recs.jsonl.gz:1",
        "sub/same.txt",
    ]


def test_compressed_plain_text_is_decompressed(tmp_path: Path) -> None:
    (tmp_path / "ls.1.gz").write_bytes(gzip.compress(b".TH LS 1\nlist directory contents\n"))
    assert _read([tmp_path / "ls.1.gz"]) == [
        (str(tmp_path / "ls.1.gz"), ".TH LS 1\nlist directory contents\n")
    ]


def test_streaming_reads_in_batches(tmp_path: Path) -> None:
    """Records arrive before the file is read to its end (a generator, one batch at a time)."""
    rows = [{"text": f"t{i}"} for i in range(20000)]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "big.parquet", row_group_size=4096)
    docs = read_documents([tmp_path / "big.parquet"])
    first = next(docs)
    assert first.text == "t0"
    assert sum(1 for _ in docs) == 19999


def test_file_kind() -> None:
    assert file_kind("x.tsv.xz") == ("tsv", "xz")
    assert file_kind("x.parquet.gz") == ("document", "gzip")


# ----------------------------------------------------------------------------- bad input


def test_truncated_gzip_names_file(tmp_path: Path) -> None:
    path = tmp_path / "cut.jsonl.gz"
    path.write_bytes(gzip.compress(_jsonl_bytes(RECORDS * 50))[:-40])
    with pytest.raises(InputError, match=r"cut\.jsonl\.gz.*truncated or corrupt"):
        _read([path])
    text = tmp_path / "cut.txt.zst"
    text.write_bytes(zstandard.ZstdCompressor().compress(b"x" * 5000)[:-8])
    with pytest.raises(InputError, match=r"cut\.txt\.zst"):
        _read([text])


def test_corrupt_parquet_footer_names_file(tmp_path: Path) -> None:
    path = tmp_path / "bad.parquet"
    pq.write_table(pa.Table.from_pylist(RECORDS), path)
    data = path.read_bytes()
    path.write_bytes(data[:-12] + b"\0" * 8 + data[-4:])
    with pytest.raises(InputError, match=r"bad\.parquet"):
        _read([path])
    (tmp_path / "bad.feather").write_bytes(b"ARROW1\0\0garbage")
    with pytest.raises(InputError, match=r"bad\.feather"):
        _read([tmp_path / "bad.feather"])


def test_wrong_field_path_names_file(tmp_path: Path) -> None:
    jl = tmp_path / "a.jsonl"
    jl.write_bytes(_jsonl_bytes(RECORDS))
    pq.write_table(pa.Table.from_pylist(RECORDS), tmp_path / "a.parquet")
    for path in (jl, tmp_path / "a.parquet"):
        with pytest.raises(InputError, match=rf"{path.name}.*meta\.uri"):
            _read([path], spec=RecordSpec.of("meta.uri"))
        with pytest.raises(InputError, match=rf"{path.name}.*--id-field"):
            _read([path], spec=RecordSpec.of("text", "meta.nope"))
    with pytest.raises(InputError, match=r"a\.parquet.*no column 'body'"):
        _read([tmp_path / "a.parquet"], spec=RecordSpec.of("body"))


def test_bad_hf_folder(tmp_path: Path) -> None:
    folder = _hf_folder(tmp_path / "ds", [{"text": "a"}], files=1)
    (folder / "state.json").write_text('{"_data_files": [{"filename": "gone.arrow"}]}')
    with pytest.raises(InputError, match=r"gone\.arrow"):
        _read([folder])


def test_on_error_skip_counts(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "a.jsonl").write_text(
        '{"text": "ok"}\nnot json\n{"nope": 1}\n{"text": "ok2"}\n'
    )
    (tmp_path / "d" / "b.jsonl.gz").write_bytes(gzip.compress(b'{"text": "x"}\n' * 200)[:-30])
    (tmp_path / "d" / "c.txt").write_text("fine")
    stats = ReadStats()
    opts = ReadOptions(on_error="skip")
    docs = list(read_documents([tmp_path / "d"], opts, stats=stats))
    texts = [d.text for d in docs]
    assert texts[:2] == ["ok", "ok2"] and texts[-1] == "fine"
    assert stats.bad_records == 2
    summary = stats.summary() or ""
    assert "b.jsonl.gz" in summary and "2 bad records" in summary
    with pytest.raises(InputError):
        list(read_documents([tmp_path / "d"]))
