"""The packed JSONL reader gives exactly what read_jsonl gives: ids, texts, errors."""

from __future__ import annotations

import io
import json
import os
import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from neardup._kernels import engine
from neardup.errors import InputError
from neardup.io import read_jsonl
from neardup.packed import PackedDocs, pack, read_jsonl_packed, read_jsonl_packed_lines

BACKENDS = ["fast", "reference"]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**20), 10**20),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)
ids = st.one_of(st.text(max_size=8), st.integers(-(10**25), 10**25), st.none())


@st.composite
def records(draw: st.DrawFn) -> bytes:
    rec: dict[str, object] = {}
    for key in draw(
        st.lists(st.sampled_from(["a", "meta", "url", "tëxt", "id", "text"]), max_size=4)
    ):
        rec[key] = draw(values)
    if draw(st.booleans()):
        rec["text"] = draw(st.text(max_size=40))
    if draw(st.booleans()):
        rec["id"] = draw(ids)
    line = json.dumps(rec, ensure_ascii=draw(st.booleans()))
    if draw(st.booleans()):
        line = line.replace(", ", ",").replace(": ", ":")
    return line.encode("utf-8", "surrogatepass")


def _slow(data: bytes) -> list[tuple[str, str]] | str:
    try:
        return [(d.id, d.text or "") for d in read_jsonl(io.BytesIO(data), name="f")]
    except InputError as exc:
        return type(exc).__name__


def _fast(path: Path) -> list[tuple[str, str]] | str:
    try:
        return [(d.id, d.text or "") for b in read_jsonl_packed(path, batch_size=3) for d in b]
    except InputError as exc:
        return type(exc).__name__


@settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    st.lists(
        records() | st.sampled_from([b"", b"  ", b"\x0c", b"{bad", b"[1]", b'{"text": 5}']),
        max_size=6,
    ),
    st.sampled_from(BACKENDS),
)
def test_packed_reader_equals_read_jsonl(tmp_path: Path, lines: list[bytes], backend: str) -> None:
    data = b"\n".join(lines) + b"\n"
    path = tmp_path / "x.jsonl"
    path.write_bytes(data)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(engine, "_choice", engine.parse_backend(backend))
        assert _fast(path) == _slow(data)


@pytest.mark.parametrize(
    "line",
    [
        rb'{"text": "a\ud800b"}',  # a lone surrogate escape
        rb'{"text": "x", "text": "y"}',  # a repeated key: json keeps the last
        rb'{"id": -0, "text": "x"}',
        rb'{"id": 1.5, "text": "x"}',
        rb'{"id": 12345678901234567890123, "text": "x"}',
        rb'{"n": NaN, "text": "x"}',
        b'{"text": "tab\there"}',  # a raw control character: json refuses it
        b'{"text": "\xff"}',  # not UTF-8
        b'\xef\xbb\xbf{"text": "bom"}',
        rb'{"text": "\ud83d\ude00 \u00e9\n\"q\"\\/"}',
        b'{"text": "x"} trailing',
        b'{"text": "x"}\r',
        b'{"a": [1, {"b": [true, false, null]}, "s"], "text": "nested"}',
        b'{"a": [1, 2,], "text": "x"}',
        b'{"a": 01, "text": "x"}',
        b'{"t\\u0065xt": "escaped key"}',
    ],
)
@pytest.mark.parametrize("backend", BACKENDS)
def test_packed_reader_edge_lines(tmp_path: Path, line: bytes, backend: str) -> None:
    data = line + b'\n{"text": "after"}'  # no final newline
    path = tmp_path / "x.jsonl"
    path.write_bytes(data)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(engine, "_choice", engine.parse_backend(backend))
        assert _fast(path) == _slow(data + b"\n")


#: Raw bytes that end a run of plain string bytes (the scanner's 8-byte test), and a few that
#: do not: each is tried at every place of an 8-byte word, in keys and values.
STOP_PIECES = [
    b"\x00", b"\x1f", b"\x09", b'\\"', b"\\\\", b"\\n", b"\\u00e9", b"\xc3\xa9",
    b"\xe2\x82\xac", b"\xf0\x9f\x98\x80", b"\x80", b"\xff", b"\xed\xa0\x80", b"\x7f",
    b" ", b"!", b"#", b"[", b"]", b"\x21\x23", b'"',
]  # fmt: skip


@pytest.mark.parametrize("piece", STOP_PIECES)
def test_packed_reader_stop_bytes_at_every_word_place(tmp_path: Path, piece: bytes) -> None:
    lines = []
    for before in range(18):
        plain = bytes(0x61 + k % 26 for k in range(before))
        value = b"%s%s%s" % (plain, piece, b"xyz" * 4)
        lines.append(b'{"id": "%d", "text": "%s"}' % (before, value))
        lines.append(b'{"text":"%s","id":"v%d","more":"abcdefghijklmnop"}' % (value, before))
        lines.append(b'{"k%s%s":1,"id":"k%d","text":"tuvwxyzabcdefghi"}' % (plain, piece, before))
    for backend in BACKENDS:
        for line in lines:
            data = line + b"\n"
            path = tmp_path / "x.jsonl"
            path.write_bytes(data)
            with pytest.MonkeyPatch.context() as mp:
                mp.setattr(engine, "_choice", engine.parse_backend(backend))
                assert _fast(path) == _slow(data), (backend, line)
        data = b"\n".join(lines) + b"\n"
        path.write_bytes(data)
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(engine, "_choice", engine.parse_backend(backend))
            assert _fast(path) == _slow(data)
    # the scanner takes every line json.loads takes here itself (none is left to json.loads),
    # but for the UTF-8 of a surrogate, which it leaves to the slow path by design
    from neardup.packed import _line_bounds

    kern = engine.kernels("jsonl")
    if _slow(lines[0] + b"\n") != "InputError" and piece != b"\xed\xa0\x80" and takes_lines():
        buf = np.frombuffer(b"\n".join(lines) + b"\n", np.uint8)
        starts, ends = _line_bounds(buf, len(buf))
        keys = [np.frombuffer(k, np.uint8) for k in (b"id", b"text")]
        out = [np.empty(len(buf), np.uint8) for _ in range(2)]
        status = kern.scan_lines(buf, starts, ends, *keys, *out)[0]
        assert status.tolist() == [0] * len(lines)  # OK


def takes_lines() -> bool:
    """Whether this process's JSONL scanner reads lines itself (the numpy twin takes none)."""
    from neardup._kernels import jsonl as reference

    return engine.kernels("jsonl") is not reference


EDGE_SPANS = [
    b'{"text": "x", "text": "y"}',
    b'{"t\\u0065xt": "escaped key", "meta": {"text": "nested"}}',
    b'{"meta": {"text": "nested first"}, "text": "top", "a": 1, "a": 2}',
    b'{"text": "a\\ud800b"}',
    b'  {"id": 3,"text":"\\ud83d\\ude00 \\u00e9 \\"q\\" \\\\ \\/ \\n"}\t\r',
]


@settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.lists(records() | st.sampled_from(EDGE_SPANS), max_size=6), st.text(max_size=10))
def test_packed_lines_text_spans(tmp_path: Path, lines: list[bytes], new: str) -> None:
    """Each text span holds the JSON string of the record's text, and putting another string
    there gives the record with that text (what ``neardup lines`` writes)."""
    path = tmp_path / "x.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    try:
        batches = list(read_jsonl_packed_lines(path, batch_size=2))
    except InputError:
        return
    got = [
        (line, span)
        for _, ls, spans in batches
        for line, span in zip(ls, spans.tolist(), strict=True)
    ]
    assert [line for line, _ in got] == [x for x in lines if x.strip()]
    value = json.dumps(new, ensure_ascii=False).encode()
    for line, (a, b) in got:
        if a < 0:
            assert b == -1
            continue
        record = json.loads(line)
        assert json.loads(line[a:b]) == record["text"]
        assert json.loads(line[:a] + value + line[b:]) == {**record, "text": new}


@pytest.mark.parametrize(
    ("line", "value"),
    [
        (EDGE_SPANS[0], None),  # two text keys: json.loads decides
        (EDGE_SPANS[1], b'"escaped key"'),
        (EDGE_SPANS[2], b'"top"'),
        (EDGE_SPANS[3], None),  # a lone surrogate escape
        (EDGE_SPANS[4], EDGE_SPANS[4][18:-3]),
        (b'{"text": 5}', None),
    ],
)
def test_packed_lines_text_span_edges(tmp_path: Path, line: bytes, value: bytes | None) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(line + b"\n")
    try:
        ((_, lines, spans),) = read_jsonl_packed_lines(path)
    except InputError:
        assert value is None
        return
    a, b = spans[0].tolist()
    want = value if takes_lines() else None  # the numpy twin takes no line
    assert (lines[0][a:b] if a >= 0 else None) == want


def test_packed_docs_are_documents() -> None:
    p = PackedDocs(np.frombuffer("xé".encode(), np.uint8), np.array([0, 1, 3]), ["a", "b"])
    assert [d.text for d in p] == ["x", "é"] == p.texts()
    assert p[-1].id == "b" and [d.id for d in p[0:2]] == ["a", "b"]
    with pytest.raises(IndexError):
        p[2]


def test_packed_reader_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(b'{"text": "a"}\n{"text": oops}\n')
    with pytest.raises(InputError, match=r"x\.jsonl:2: not valid JSON"):
        list(read_jsonl_packed(path))


@pytest.mark.parametrize("batch_size", [1, 2, 3, 100])
def test_packed_batches_name_a_repeated_id_and_both_places(tmp_path, batch_size):  # type: ignore[no-untyped-def]
    from neardup.errors import InputError
    from neardup.packed import PackedBatches

    path = tmp_path / "dup.jsonl"
    lines = ['{"id": "a", "text": "x"}', '{"id": "b", "text": "y"}', "", '{"id": "c", "text": "z"}']
    path.write_text("\n".join([*lines, '{"id": "b", "text": "w"}']) + "\n")
    with pytest.raises(InputError, match=r"duplicate id 'b'.*document 2\).*document 4\)"):
        list(PackedBatches(path, batch_size=batch_size))
    path.write_text("\n".join(lines) + "\n")
    assert [d.id for b in PackedBatches(path, batch_size=batch_size) for d in b] == ["a", "b", "c"]


@pytest.mark.parametrize("batch_size", [1, 2, 100])
def test_an_id_hash_collision_is_no_repeat(tmp_path: Path, batch_size: int) -> None:
    """Two different ids whose 64-bit hashes meet (made here by a hash of the first letter):
    the check compares the strings, goes on exactly, and still finds a real repeat."""
    from neardup._kernels import engine
    from neardup._kernels import idset as reference
    from neardup.errors import InputError
    from neardup.packed import PackedBatches

    class FirstLetter(reference.IdSet):
        def add(self, ids: Any) -> int:
            return super().add([i[:1] for i in ids])

    class Kernels:
        IdSet = FirstLetter

    real = engine.kernels
    path = tmp_path / "ids.jsonl"
    rows = ["ab", "ac", "b", "ad", "c"]
    path.write_text("".join(f'{{"id": "{i}", "text": "t"}}\n' for i in rows))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(engine, "kernels", lambda f: Kernels if f == "idset" else real(f))
        assert [d.id for b in PackedBatches(path, batch_size=batch_size) for d in b] == rows
        path.write_text("".join(f'{{"id": "{i}", "text": "t"}}\n' for i in [*rows, "ac"]))
        with pytest.raises(InputError, match=r"duplicate id 'ac'.*document 2\).*document 6\)"):
            list(PackedBatches(path, batch_size=batch_size))


@pytest.mark.parametrize("chunk", [8, 16, 40, 1 << 20])
def test_packed_reader_numbers_lines_across_chunks(tmp_path: Path, chunk: int) -> None:
    """Chunks end at a newline; the line numbers (ids of id-less records, errors) run on."""
    import neardup.packed as packed
    from neardup.errors import InputTooLargeError

    lines = [b'{"text": "a"}', b"", b'{"id": "x", "text": "b c"}', b'{"text": "d"}'] * 5
    path = tmp_path / "x.jsonl"
    path.write_bytes(b"\n".join(lines))  # no final newline
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(packed, "CHUNK_BYTES", chunk)
        assert _fast(path) == _slow(b"\n".join(lines) + b"\n")
        path.write_bytes(b"\n".join([*lines, b'{"text": "' + b"y" * 60 + b'"}', b"{}"]))
        with pytest.raises(InputTooLargeError, match=r"x\.jsonl:21: line longer than 50"):
            list(read_jsonl_packed(path, max_line_bytes=50))


def test_packed_reader_reads_a_big_file_in_big_chunks(tmp_path: Path) -> None:
    """A file of BIG_FILE_BYTES or more is read in chunks of BIG_CHUNK_BYTES: fewer jobs,
    the same records, line numbers and first error as the small chunks."""
    import neardup.packed as packed
    from neardup.errors import InputTooLargeError
    from neardup.packed import PackedBatches

    lines = [b'{"text": "a"}', b"", b'{"id": "x", "text": "b c"}', b'{"text": "d"}'] * 5
    path = tmp_path / "x.jsonl"
    path.write_bytes(b"\n".join(lines))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(packed, "CHUNK_BYTES", 16)
        small = len(list(PackedBatches(path).scans()))
        mp.setattr(packed, "BIG_CHUNK_BYTES", 64)
        mp.setattr(packed, "BIG_FILE_BYTES", path.stat().st_size)
        assert len(list(PackedBatches(path).scans())) == -(-path.stat().st_size // 64) < small
        assert _fast(path) == _slow(b"\n".join(lines) + b"\n")
        path.write_bytes(b"\n".join([*lines, b'{"text": "' + b"y" * 60 + b'"}', b"{}"]))
        with pytest.raises(InputTooLargeError, match=r"x\.jsonl:21: line longer than 50"):
            list(read_jsonl_packed(path, max_line_bytes=50))
        mp.setattr(packed, "BIG_FILE_BYTES", path.stat().st_size + 1)
        assert len(list(PackedBatches(path).scans())) == -(-path.stat().st_size // 16)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
@pytest.mark.parametrize("chunk", [16, 40])
def test_packed_reader_reads_a_pipe_as_a_file(tmp_path: Path, chunk: int) -> None:
    """A file that cannot seek (a pipe) keeps each chunk's partial last line for the next
    one instead of reading it again: the same records."""
    import threading

    import neardup.packed as packed

    lines = [b'{"text": "a"}', b"", b'{"id": "x", "text": "b c"}', b'{"text": "d"}'] * 5
    data = b"\n".join(lines)  # no final newline
    path = tmp_path / "p.jsonl"
    os.mkfifo(path)
    writer = threading.Thread(target=path.write_bytes, args=(data,))
    writer.start()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(packed, "CHUNK_BYTES", chunk)
        got = [(d.id, d.text) for b in read_jsonl_packed(path) for d in b]
    writer.join()
    file = tmp_path / "f.jsonl"
    file.write_bytes(data)
    assert got == [(d.id, d.text) for b in read_jsonl_packed(file) for d in b]


def _corpus_lines(n: int) -> list[str]:
    rng = np.random.default_rng(3)
    words = [f"w{k}" for k in range(60)]
    base = [" ".join(rng.choice(words, 30).tolist()) for _ in range(n // 3)]
    out = []
    for k in range(n):
        text = base[k % len(base)] + ("" if k % 2 else f" tail{k}")
        out.append(json.dumps({"id": f"d{k}", "text": text}))
    return out


@pytest.mark.parametrize("chunk", [64, 700, 1 << 20])
def test_dedup_on_threads_scanning_chunks_equals_one_thread(tmp_path: Path, chunk: int) -> None:
    """With jobs > 1 the threads scan the file's chunks as well as sketch them: the same
    clusters, pairs and ids as jobs=1, and the same first error in file order."""
    import neardup
    import neardup.packed as packed
    from neardup.packed import PackedBatches

    path = tmp_path / "c.jsonl"
    lines = _corpus_lines(300)
    path.write_text("\n".join(lines) + "\n")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(packed, "CHUNK_BYTES", chunk)
        got = [
            neardup.dedup(PackedBatches(path, batch_size=7), jobs=jobs, threshold=0.5)
            for jobs in (1, 2, 3)
        ]
        assert got[0].doc_ids == [f"d{k}" for k in range(300)]
        assert any(c.size > 1 for c in got[0].clusters)
        for other in got[1:]:
            assert other.doc_ids == got[0].doc_ids
            assert [c.members for c in other.clusters] == [c.members for c in got[0].clusters]
            assert list(other.pairs) == list(got[0].pairs)
        # a repeated id late in the file and a broken line after it: in chunks smaller than
        # the file the repeat is met first; in one chunk the scan's error comes first
        path.write_text("\n".join([*lines[:250], lines[3], *lines[250:], "{oops"]) + "\n")
        errors = []
        for jobs in (1, 2):
            with pytest.raises(InputError) as info:
                neardup.dedup(PackedBatches(path, batch_size=7), jobs=jobs)
            errors.append(str(info.value))
        first = "duplicate id 'd3'" if chunk < 1000 else "c.jsonl:302: not valid JSON"
        assert errors[0] == errors[1] and first in errors[0]
        path.write_text("\n".join([*lines[:200], "{oops", *lines[200:]]) + "\n")
        errors = []
        for jobs in (1, 2):
            with pytest.raises(InputError) as info:
                neardup.dedup(PackedBatches(path, batch_size=7), jobs=jobs)
            errors.append(str(info.value))
        assert errors[0] == errors[1] and "c.jsonl:201:" in errors[0]


def test_pack_makes_the_one_packed_type() -> None:
    p = pack(["ab", "", "ç"])
    assert isinstance(p, PackedDocs)
    assert p.n_docs == len(p) == 3 and list(p.ids) == ["0", "1", "2"]
    assert [d.text for d in p] == ["ab", "", "ç"] == p.texts()
    with pytest.raises(AttributeError):
        p.buf = p.buf  # type: ignore[misc]
    back = pickle.loads(pickle.dumps(PackedDocs(p.buf, p.offsets, ["a", "b", "c"])))
    assert back.texts() == p.texts() and list(back.ids) == ["a", "b", "c"]


def test_packed_docs_named_arguments_first_is_a_clear_error() -> None:
    with pytest.raises(InputError, match="buf, offsets, ids"):
        PackedDocs(["a"], np.zeros(0, np.uint8), np.array([0, 0]))  # type: ignore[arg-type]


def _scanned(path: Path, tee: bool, **kw: Any) -> tuple[list[tuple[str, str]], str | None]:
    """The documents of ``PackedBatches(path).scans()`` and its error: a regular file's
    chunks read by their jobs, or (``tee``) read by the iterator."""
    from neardup.packed import PackedBatches

    docs: list[tuple[str, str]] = []
    batches = PackedBatches(path, tee=(lambda piece: None) if tee else None, **kw)
    try:
        for scan in batches.scans():
            docs.extend((d.id, d.text) for b in scan() for d in b)
    except InputError as exc:
        return [], f"{type(exc).__name__}: {exc}"
    return docs, None


line_parts = st.sampled_from(
    [
        b"",
        b"  ",
        b'{"text": "a b c"}',
        b'{"id": "x\\u00e9", "text": "d e"}',
        b'{"id": 7, "text": "' + b"y" * 90 + b'"}',
        b'{"id": "z", "text": "\xc3\xa7 f"}',
        b'{"text": 5}',
        b"{oops",
    ]
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    lines=st.lists(line_parts, max_size=30),
    end=st.sampled_from([b"", b"\n", b"\r\n"]),
    chunk=st.sampled_from([1, 2, 5, 16, 60, 200, 1 << 18]),
    max_line=st.sampled_from([40, 100, 1 << 20]),
    margin=st.sampled_from([0, 3, 1 << 14]),
)
def test_chunks_read_by_their_jobs_equal_chunks_read_in_order(
    tmp_path: Path, lines: list[bytes], end: bytes, chunk: int, max_line: int, margin: int
) -> None:
    """A regular file's jobs read their own chunk (cut at fixed byte places, then at the next
    line): the same documents, ids of id-less records (line numbers) and first error, in
    file order, as chunks read one after the other (any chunk size, long lines, blank lines,
    a missing last newline)."""
    import neardup._file_blocks as file_blocks
    import neardup.packed as packed

    path = tmp_path / "b.jsonl"
    path.write_bytes(b"\n".join(lines) + end)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(packed, "CHUNK_BYTES", chunk)
        mp.setattr(file_blocks, "MARGIN", margin)  # a chunk's last line read on
        got = _scanned(path, False, max_line_bytes=max_line, batch_size=3)
        assert got == _scanned(path, True, max_line_bytes=max_line, batch_size=3)


@pytest.mark.parametrize("chunk", [32, 300, 1 << 18])
def test_dedup_jobs_1_to_4_equal_with_blank_lines_and_repeated_ids(
    tmp_path: Path, chunk: int
) -> None:
    """Chunks read and scanned on 1-4 threads: the same rows, clusters and pairs; a repeated
    id is the same error whatever the threads."""
    import neardup
    import neardup.packed as packed
    from neardup.packed import PackedBatches

    lines = _corpus_lines(240)
    body = [x for k, line in enumerate(lines) for x in ((line, "") if k % 17 == 0 else (line,))]
    body.insert(5, "   ")
    body.append('{"text": "' + " ".join(["alpha"] * 40) + '"}')  # no id: its line number
    path = tmp_path / "c.jsonl"
    path.write_text("\n".join(body))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(packed, "CHUNK_BYTES", chunk)
        got = [
            neardup.dedup(PackedBatches(path, batch_size=5), jobs=jobs, threshold=0.5)
            for jobs in (1, 2, 3, 4)
        ]
        assert got[0].doc_ids == [*(f"d{k}" for k in range(240)), str(len(body))]
        for other in got[1:]:
            assert other.doc_ids == got[0].doc_ids
            assert [c.members for c in other.clusters] == [c.members for c in got[0].clusters]
            assert list(other.pairs) == list(got[0].pairs)
        path.write_text("\n".join([*body[:100], body[150], *body[100:]]))
        errors = set()
        for jobs in (1, 2, 3, 4):
            with pytest.raises(InputError, match="duplicate id") as info:
                neardup.dedup(PackedBatches(path, batch_size=5), jobs=jobs)
            errors.add(str(info.value))
        assert len(errors) == 1


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_scans_of_a_pipe_or_a_missing_file(tmp_path: Path) -> None:
    """A pipe cannot be read at byte places: the iterator reads it in order (same records);
    a missing file is the reader's InputError."""
    import threading

    from neardup.packed import PackedBatches

    data = b'{"text": "a"}\n\n{"id": "x", "text": "b c"}\n{"text": "d"}'
    path = tmp_path / "p.jsonl"
    os.mkfifo(path)
    writer = threading.Thread(target=path.write_bytes, args=(data,))
    writer.start()
    got = [(d.id, d.text) for scan in PackedBatches(path).scans() for b in scan() for d in b]
    writer.join()
    assert got == [("1", "a"), ("x", "b c"), ("4", "d")]
    with pytest.raises(InputError, match=r"cannot read .*nope\.jsonl"):
        list(PackedBatches(tmp_path / "nope.jsonl").scans())
