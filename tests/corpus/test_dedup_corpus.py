"""read_corpus and dedup_corpus: every output from one read of the inputs, --min-length,
--keep largest, sharded outputs, and the thin dedup command over them."""

from __future__ import annotations

import gzip
import inspect
import json
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

import neardup
from neardup.cli import main
from neardup.corpus import Corpus, CorpusResult, dedup_corpus, read_corpus
from neardup.errors import ConfigError

BASE = " ".join(f"word{i} common text of the license number {i % 7}" for i in range(60))
OTHER = " ".join(f"other{i} quite different material {i * 3}" for i in range(60))
THIRD = " ".join(f"third{i} unrelated prose about rivers {i * 5}" for i in range(60))

_OPENED: list[str] = []
_WATCH: list[bool] = [False]


def _audit(event: str, args: tuple[object, ...]) -> None:
    if event == "open" and _WATCH[0] and isinstance(args[0], str | Path):
        mode = args[1]
        if not isinstance(mode, str) or not set(mode) & set("wax"):  # a read (os.open: None)
            _OPENED.append(str(args[0]))


sys.addaudithook(_audit)  # audit hooks cannot be removed: this one records only when asked


@pytest.fixture()
def opened() -> Iterator[list[str]]:
    """The files opened to be read while the test runs (until it sets ``_WATCH[0] = False``)."""
    _OPENED.clear()
    _WATCH[0] = True
    try:
        yield _OPENED
    finally:
        _WATCH[0] = False


def _reads(opened: list[str], *paths: Path) -> dict[str, int]:
    counts = Counter(str(Path(p).resolve()) for p in opened if not p.isdigit())
    return {p.name: counts[str(p.resolve())] for p in paths}


def _jsonl(rows: list[dict[str, object]]) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


def _rows() -> list[dict[str, object]]:
    return [
        {"id": "a", "text": BASE, "n": 1.5},
        {"id": "b", "text": BASE + " tail words here", "n": 2},
        {"id": "c", "text": OTHER, "n": 3},
        {"id": "d", "text": "tiny", "n": 4},
    ]


@pytest.mark.parametrize("keep", ["first", "longest"])
def test_one_jsonl_is_read_once_for_every_output(
    tmp_path: Path, keep: str, opened: list[str]
) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text(_jsonl(_rows()))
    kept, notes = tmp_path / "kept.jsonl", tmp_path / "notes.jsonl"
    run = dedup_corpus(read_corpus(src), keep=keep, output=kept, annotate=notes, threshold=0.5)
    _WATCH[0] = False
    assert [c.members for c in run.clusters] == [("a", "b")]
    assert _reads(opened, src) == {"in.jsonl": 1}
    winner = "a" if keep == "first" else "b"
    assert [json.loads(line)["id"] for line in kept.read_text().splitlines()] == [winner, "c", "d"]
    assert '"n": 1.5' in notes.read_text()  # the lines as written, byte for byte
    dup = [json.loads(line) for line in notes.read_text().splitlines()]
    assert [r["is_duplicate"] for r in dup] == [winner == "b", winner == "a", False, False]
    assert run.written == {"annotate": notes, "output": kept} and run.kept == 3
    assert run.read_stats is None and not list(tmp_path.glob(".neardup-*"))


def test_sharded_inputs_are_read_once_and_written_back_as_shards(
    tmp_path: Path, opened: list[str]
) -> None:
    data = tmp_path / "data"
    (data / "sub").mkdir(parents=True)
    shards = [data / "part-0.jsonl.gz", data / "sub" / "part-1.jsonl", data / "part-2.jsonl"]
    rows = _rows()
    with gzip.open(shards[0], "wt") as fh:
        fh.write(_jsonl(rows[:2]))
    shards[1].write_text(_jsonl([*rows[2:], {"id": "e", "text": OTHER + " again", "n": 5}]))
    shards[2].write_text(_jsonl([{"id": "f", "text": BASE, "n": 6}]))
    out, notes, report = tmp_path / "clean", tmp_path / "notes.parquet", tmp_path / "r.html"
    pytest.importorskip("pyarrow")
    run = dedup_corpus(
        read_corpus(data),
        keep="longest",
        output=out,
        annotate=notes,
        report=report,
        threshold=0.5,
    )
    _WATCH[0] = False
    assert _reads(opened, *shards) == {"part-0.jsonl.gz": 1, "part-1.jsonl": 1, "part-2.jsonl": 1}
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*.jsonl*")) == [
        "part-0.jsonl.gz",
        "part-2.jsonl",
        "sub/part-1.jsonl",
    ]
    with gzip.open(out / "part-0.jsonl.gz", "rt") as fh:
        assert [json.loads(line)["id"] for line in fh] == ["b"]  # the longest of a, b, f
    assert (out / "part-2.jsonl").read_text() == ""  # all duplicates: an empty shard
    kept = [json.loads(x)["id"] for x in (out / "sub" / "part-1.jsonl").read_text().splitlines()]
    assert kept == ["d", "e"]  # e is the longer of c, e
    assert run.kept == 3 and set(run.written) == {"output", "annotate", "report"}


def test_a_folder_of_files_is_read_once(tmp_path: Path, opened: list[str]) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    files = [root / "a.txt", root / "b.txt", root / "c.txt"]
    for f, text in zip(files, (BASE, BASE + " tail", OTHER), strict=True):
        f.write_text(text)
    out, notes = tmp_path / "kept.jsonl", tmp_path / "notes.csv"
    run = dedup_corpus(read_corpus(root), keep="longest", output=out, annotate=notes)
    _WATCH[0] = False
    assert _reads(opened, *files) == {"a.txt": 1, "b.txt": 1, "c.txt": 1}
    assert [json.loads(x)["id"] for x in out.read_text().splitlines()] == ["b.txt", "c.txt"]
    assert run.annotated == 3


def test_stdin_gets_a_deduplicated_copy(tmp_path: Path) -> None:
    out = tmp_path / "kept.jsonl"
    result = CliRunner().invoke(
        main, ["dedup", "-", "-q", "-t", "0.5", "--output", str(out)], input=_jsonl(_rows())
    )
    assert result.exit_code == 0, result.output
    assert [json.loads(x)["id"] for x in out.read_text().splitlines()] == ["a", "c", "d"]


def test_min_length_leaves_short_documents_out_of_matching_not_out_of_outputs(
    tmp_path: Path,
) -> None:
    src = tmp_path / "in.jsonl"
    rows = [*_rows(), {"id": "e", "text": "tiny", "n": 5}]
    src.write_text(_jsonl(rows))
    kept, notes = tmp_path / "kept.jsonl", tmp_path / "notes.jsonl"
    plain = dedup_corpus(read_corpus(src), threshold=0.5)
    assert ("d", "e") in [c.members for c in plain.clusters]
    run = dedup_corpus(read_corpus(src), threshold=0.5, min_length=10, output=kept, annotate=notes)
    assert [c.members for c in run.clusters] == [("a", "b")]
    assert run.short == ("d", "e") and run.skipped == 2
    assert [json.loads(x)["id"] for x in kept.read_text().splitlines()] == ["a", "c", "d", "e"]
    marks = {r["id"]: r["cluster_id"] for r in map(json.loads, notes.read_text().splitlines())}
    assert marks == {"a": 0, "b": 0, "c": None, "d": None, "e": None}
    result = CliRunner().invoke(main, ["dedup", str(src), "--min-length", "10", "-t", "0.5"])
    assert result.exit_code == 0 and "2 skipped (2 shorter than --min-length)" in result.stderr
    assert "5 documents" in result.stderr
    with pytest.raises(ConfigError, match="min_length"):
        dedup_corpus(read_corpus(src), min_length=-1)
    spark = CliRunner().invoke(main, ["dedup", str(src), "--engine", "spark", "--min-length", "9"])
    assert spark.exit_code == 2 and "--min-length is not available" in spark.output


def test_keep_largest_keeps_the_largest_image(tmp_path: Path) -> None:
    image = pytest.importorskip("PIL.Image")
    pytest.importorskip("imagehash")
    vectors = Path(__file__).resolve().parents[1] / "golden" / "vectors" / "images"
    root = tmp_path / "img"
    root.mkdir()
    with image.open(vectors / "photo.png") as im:
        photo = im.convert("RGB")
    photo.resize((160, 106)).save(root / "a_small.png")
    photo.resize((640, 424)).save(root / "b_large.png")
    photo.resize((320, 212)).save(root / "c_mid.png")
    out = tmp_path / "kept"
    result = CliRunner().invoke(
        main, ["dedup", str(root), "-m", "phash", "-q", "--keep", "largest", "--output", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.glob("*.png")) == ["b_large.png"]
    notes = tmp_path / "notes.jsonl"
    run = dedup_corpus(read_corpus(root), method="phash", keep="largest", annotate=notes)
    marks = {r["id"]: r["is_duplicate"] for r in map(json.loads, notes.read_text().splitlines())}
    assert marks == {"a_small.png": True, "b_large.png": False, "c_mid.png": True}
    assert run.written == {"annotate": notes}
    with pytest.raises(ConfigError, match="image method"):
        dedup_corpus(read_corpus(root), keep="largest", annotate=notes)


def test_read_corpus_picks_the_packed_path(tmp_path: Path) -> None:
    one = tmp_path / "a.jsonl"
    one.write_text(_jsonl(_rows()))
    assert read_corpus(one).packable and read_corpus(str(one), id_field="id").packable
    assert not read_corpus(one, text_field="meta.body").packable
    assert not read_corpus(one, on_error="skip").packable
    assert not read_corpus([one, one]).packable and not read_corpus(tmp_path).packable
    assert isinstance(read_corpus(one), Corpus) and read_corpus("-").rereadable is False
    with pytest.raises(ConfigError, match="on_error"):
        read_corpus(one, on_error="ignore")
    with pytest.raises(ConfigError, match="at least one path"):
        read_corpus([])


def test_dedup_corpus_refuses_bad_combinations(tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text(_jsonl(_rows()))
    corpus = read_corpus(src)
    with pytest.raises(ConfigError, match="keep goes with output"):
        dedup_corpus(corpus, keep="first")
    with pytest.raises(ConfigError, match="keep must be one of"):
        dedup_corpus(corpus, keep="biggest", output=tmp_path / "o.jsonl")
    with pytest.raises(ConfigError, match="exact_first"):
        dedup_corpus(corpus, method="exact", exact_first=True)


def test_public_names() -> None:
    assert neardup.read_corpus is read_corpus and neardup.dedup_corpus is dedup_corpus
    assert neardup.CorpusResult is CorpusResult and neardup.Corpus is Corpus


def test_dedup_command_is_parse_call_print() -> None:
    from neardup.cli.dedup import dedup_cmd

    assert dedup_cmd.callback is not None
    lines = inspect.getsource(dedup_cmd.callback.__wrapped__).splitlines()  # type: ignore[attr-defined]
    start = next(k for k, line in enumerate(lines) if line.startswith("def dedup_cmd"))
    assert len(lines) - start <= 60
    import neardup.cli.dedup as cli_dedup

    source = inspect.getsource(cli_dedup)
    assert ".documents(" not in source and "spool" not in source.lower()


@pytest.mark.parametrize("tail", ["\n", "", "\r\n\n  \n"])
def test_packed_tee_sees_every_byte_read(tmp_path: Path, tail: str) -> None:
    from neardup.packed import CHUNK_BYTES

    src = tmp_path / "in.jsonl"
    body = _jsonl([{"id": str(k), "text": "x" * (k % 97)} for k in range(3 * CHUNK_BYTES // 60)])
    src.write_bytes((body.rstrip("\n") + tail).encode())
    pieces: list[bytes] = []
    batches = read_corpus(src).packed(batch_size=64, tee=lambda p: pieces.append(bytes(p)))
    assert sum(len(b) for b in batches) == 3 * CHUNK_BYTES // 60
    copy = b"".join(pieces)
    assert copy == src.read_bytes() + (b"\n" if not tail else b"")


def test_index_by_path_or_open(tmp_path: Path) -> None:
    from neardup.store.persistent import PersistentIndex

    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first.write_text(_jsonl([{"id": "a", "text": BASE}, {"id": "c", "text": OTHER}]))
    second.write_text(_jsonl([{"id": "b", "text": BASE + " tail"}, {"id": "t", "text": THIRD}]))
    db = tmp_path / "idx.sqlite"
    run = dedup_corpus(read_corpus(first), index=db)
    assert run.written == {"index": db} and run.clusters == []
    idx = PersistentIndex.open(str(db))
    try:
        again = dedup_corpus(read_corpus(second), index=idx, output=tmp_path / "new.jsonl")
        assert [c.members for c in again.clusters] == [("a", "b")]
        assert "index" not in again.written and again.kept == 1  # b is a copy of stored a
    finally:
        idx.close()
