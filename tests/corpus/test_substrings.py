"""neardup substrings: suffix-array repeat removal against a naive window reference."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("pydivsufsort")

from neardup.cli import main
from neardup.corpus.substrings import (
    SubstringSummary,
    remove_repeated_substrings,
    remove_repeated_substrings_jsonl,
    repeated_mask,
)
from neardup.errors import InputError
from neardup.io import Document


def _reference(texts: list[str], L: int) -> list[str]:
    """Mark every L-byte window whose bytes occurred earlier (no window crosses a document)."""
    raw = [t.encode() for t in texts]
    first: dict[bytes, int] = {}
    out = []
    pos = 0
    for b in raw:
        mark = [False] * len(b)
        for p in range(len(b) - L + 1):
            w = b[p : p + L]
            if w in first:
                for q in range(p, p + L):
                    mark[q] = True
            else:
                first[w] = pos + p
        keep = bytearray()
        lead_marked = False
        for q, byte in enumerate(b):
            if byte & 0xC0 != 0x80:
                lead_marked = mark[q]
            if not lead_marked:
                keep.append(byte)
        out.append(keep.decode())
        pos += len(b) + 1
    return out


WORDS = st.sampled_from(["the ", "cat ", "sat ", "on ", "mat ", "é", "日本", "\n", "x"])


@settings(max_examples=50, deadline=None)
@given(st.lists(st.lists(WORDS, max_size=14).map("".join), max_size=8), st.integers(8, 14))
def test_equals_naive_reference(texts: list[str], L: int) -> None:
    docs = [Document(str(i), t) for i, t in enumerate(texts)]
    want = _reference(texts, L)
    got = [d.text for d in remove_repeated_substrings(docs, min_length=L)]
    assert got == want
    sharded = [d.text for d in remove_repeated_substrings(docs, min_length=L, shard_bytes=2 * L)]
    assert sharded == want


@pytest.mark.parametrize(
    ("texts", "L", "want"),
    [
        # a repeat that overlaps its own earlier copy (period 4 < L): one period is kept
        (["the the the "], 8, ["the "]),
        (["abcabcabcab"], 8, ["abc"]),
        # ... also when the document is shorter than two copies of the window
        (["xy the the the ", "the the the "], 8, ["xy the", ""]),
        # no window repeats: nothing removed, whatever the length
        (["abcdefghij"], 8, ["abcdefghij"]),
        # a repeat across documents never spans the separator
        (["aaaaaaaa", "aaaaaaaa"], 8, ["aaaaaaaa", ""]),
    ],
)
def test_overlapping_repeats(texts: list[str], L: int, want: list[str]) -> None:
    docs = [Document(str(i), t) for i, t in enumerate(texts)]
    assert _reference(texts, L) == want
    assert [d.text for d in remove_repeated_substrings(docs, min_length=L)] == want
    sharded = remove_repeated_substrings(docs, min_length=L, shard_bytes=2 * L)
    assert [d.text for d in sharded] == want


def test_summary_and_first_copy_kept() -> None:
    passage = "This website uses cookies to improve your experience. Accept all? "
    docs = [Document(str(i), f"story {i} begins. {passage}end {i}") for i in range(5)]
    s = SubstringSummary(40)
    out = [d.text for d in remove_repeated_substrings(docs, min_length=40, summary=s)]
    assert passage.strip() in (out[0] or "")
    assert all("cookies" not in (t or "") for t in out[1:])
    assert s.documents == 5 and s.documents_changed == 4 and s.shards == 1
    assert 0 < s.bytes_removed < s.bytes_in


def test_cli_substrings(tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    shared = " ".join(f"token{i}" for i in range(30))
    rows = [{"id": i, "text": f"head {i} {shared} tail {i}", "k": i} for i in range(3)]
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "out.jsonl"
    r = CliRunner().invoke(main, ["substrings", str(src), "-o", str(out), "--min-length", "50"])
    assert r.exit_code == 0, r.stderr
    got = [json.loads(x) for x in out.read_text().splitlines()]
    assert shared in got[0]["text"] and shared not in got[1]["text"]
    assert got[2]["text"].startswith("head 2") and got[2]["k"] == 2
    assert "removed" in r.stderr and "3 documents in 1 shards" in r.stderr


PLANTS = ["The quick brown fox jumps over the lazy dog. ", "Überall 日本語 — naïve café. "]


@st.composite
def _planted(draw: st.DrawFn) -> tuple[list[str], int]:
    """Random documents with passages planted in several of them (whole, cut or edited)."""
    size = draw(st.integers(8, 40))
    n = draw(st.integers(1, 10))
    texts = []
    for _ in range(n):
        parts = draw(st.lists(WORDS, max_size=20))
        if draw(st.booleans()):
            p = draw(st.sampled_from(PLANTS)) * draw(st.integers(1, 3))
            a = draw(st.integers(0, len(p)))
            b = draw(st.integers(a, len(p)))
            parts.insert(draw(st.integers(0, len(parts))), p[a:b])
        texts.append("".join(parts))
    if texts and draw(st.booleans()):  # an exact copy of an earlier document
        texts.append(texts[draw(st.integers(0, len(texts) - 1))])
    return texts, size


def _join(texts: list[str]) -> np.ndarray:  # type: ignore[type-arg]
    raw = b"\xff".join(t.encode() for t in texts)
    return np.frombuffer(raw, np.uint8).copy()


@settings(max_examples=150, deadline=None)
@given(_planted(), st.integers(0, 4))
def test_prefilter_gives_the_full_suffix_array_marks(case: tuple[list[str], int], cut: int) -> None:
    """The suffix array over the candidate regions marks exactly what the suffix array over
    the whole text marks, alone and with an earlier shard as reference (prefix)."""
    texts, size = case
    text = _join(texts)
    want = repeated_mask(text, size, prefilter=False)
    assert repeated_mask(text, size).tolist() == want.tolist()
    cut = min(cut, len(texts))
    if 0 < cut < len(texts):
        ref, rest = _join(texts[:cut]), _join(texts[cut:])
        both = np.concatenate([ref, np.array([0xFF], np.uint8), rest])
        want = repeated_mask(both, size, prefix=len(ref) + 1, prefilter=False)
        got = repeated_mask(both, size, prefix=len(ref) + 1)
        assert got.tolist() == want.tolist()


@settings(max_examples=60, deadline=None)
@given(_planted())
def test_planted_corpora_equal_naive_reference(case: tuple[list[str], int]) -> None:
    texts, size = case
    docs = [Document(str(i), t) for i, t in enumerate(texts)]
    want = _reference(texts, size)
    assert [d.text for d in remove_repeated_substrings(docs, min_length=size)] == want
    sharded = remove_repeated_substrings(docs, min_length=size, shard_bytes=3 * size)
    assert [d.text for d in sharded] == want


def test_exact_copies_and_short_documents() -> None:
    body = "a line that is long enough to be a window of its own. " * 2
    texts = [body, "short", body, "short", body + "x"]
    s = SubstringSummary(30)
    docs = [Document(str(i), t) for i, t in enumerate(texts)]
    out = [d.text for d in remove_repeated_substrings(docs, min_length=30, summary=s)]
    assert out == _reference(texts, 30)
    assert out[2] == "" and out[1] == out[3] == "short"
    assert s.documents_changed == 3 and s.bytes_removed == sum(map(len, texts)) - sum(
        len(t.encode()) for t in out
    )


@settings(max_examples=60, deadline=None)
@given(_planted(), st.sampled_from([10**6, 60, 200]))
def test_jsonl_path_equals_document_path(case: tuple[list[str], int], shard: int) -> None:
    texts, size = case
    shard = max(shard, 2 * size)
    docs = [Document(str(i), t) for i, t in enumerate(texts)]
    want = [d.text for d in remove_repeated_substrings(docs, min_length=size, shard_bytes=shard)]
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "in.jsonl"
        rows = [
            json.dumps({"id": str(i), "text": t, "n": i}, ensure_ascii=False)
            for i, t in enumerate(texts)
        ]
        src.write_text("".join(r + "\n" for r in rows), encoding="utf-8")
        s_doc, s_raw = SubstringSummary(size), SubstringSummary(size)
        list(remove_repeated_substrings(docs, min_length=size, shard_bytes=shard, summary=s_doc))
        out = b"".join(
            b"".join(batch)
            for batch in remove_repeated_substrings_jsonl(
                src, min_length=size, shard_bytes=shard, batch_size=3, summary=s_raw
            )
        )
    got = [json.loads(line) for line in out.decode().splitlines()]
    assert [g["text"] for g in got] == want
    assert [g["n"] for g in got] == list(range(len(texts)))
    # written as the record writer writes the changed records: byte for byte
    expected = "".join(
        json.dumps({"id": str(i), "text": t, "n": i}, ensure_ascii=False) + "\n"
        for i, t in enumerate(want)
    )
    assert out.decode() == expected
    assert s_raw == s_doc


def test_jsonl_path_keeps_unchanged_lines_and_checks_ids(tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    shared = " ".join(f"token{i}" for i in range(30))
    src.write_bytes(
        b'{"id":"a","text":"alone \\u00e9"}\r\n'
        + json.dumps({"id": "b", "text": shared}).encode() + b"\n"
        + json.dumps({"id": "c", "text": "x " + shared}).encode() + b"\n"
    )  # fmt: skip
    out = b"".join(b"".join(b) for b in remove_repeated_substrings_jsonl(src, min_length=20))
    lines = out.splitlines()
    assert lines[0] == b'{"id":"a","text":"alone \\u00e9"}'  # as read (CR trimmed)
    assert json.loads(lines[2]) == {"id": "c", "text": "x "}
    src.write_text('{"id": "a", "text": "one"}\n{"id": "a", "text": "two"}\n')
    with pytest.raises(InputError, match="duplicate id"):
        list(remove_repeated_substrings_jsonl(src, min_length=20))


def test_jsonl_lines_are_spliced_as_splice_texts_does(tmp_path: Path) -> None:
    """Changed lines with blanks around them, nested values, escapes, and lines the scanner
    leaves to json.loads (a repeated key): byte for byte what splice_texts writes."""
    from neardup._kernels import engine
    from neardup.corpus.records import splice_texts
    from neardup.packed import read_jsonl_packed_lines

    shared = "the quick brown fox jumps over the lazy dog and keeps running "
    rows = []
    for i in range(30):
        t = json.dumps(shared * 2 + f"unique {i} \u00e9\n\t\U0001f600", ensure_ascii=i % 2 == 0)
        rows.append(
            [
                f'  {{"id": {i}, "meta": {{"a": [1, {{"b": "x"}}]}}, "text": {t}}}  \r',
                f'{{"text": "dup", "id": {i}, "text": {t}}}',
                f'\t{{"id":{i},"text":{t} }}',
            ][i % 3]
        )
    src = tmp_path / "in.jsonl"
    src.write_text("\n".join(rows) + "\n", encoding="utf-8")
    got = b"".join(b"".join(b) for b in remove_repeated_substrings_jsonl(src, min_length=20))
    docs = [Document(str(i), json.loads(r)["text"]) for i, r in enumerate(rows)]
    texts = [d.text or "" for d in remove_repeated_substrings(docs, min_length=20)]
    (_, lines, spans), *_ = read_jsonl_packed_lines(src, id_field="id", text_field="text")
    assert (spans[:, 0] < 0).any()
    if engine.backend_name() == "native":  # the reference scanner leaves every line to json
        assert (spans[:, 0] >= 0).any()
    raw = [t.encode("utf-8", "surrogatepass") for t in texts]
    offsets = np.zeros(len(raw) + 1, dtype=np.int64)
    np.cumsum([len(r) for r in raw], out=offsets[1:])
    changed = np.array([j for j, d in enumerate(docs) if d.text != texts[j]], dtype=np.int64)
    want = [line.strip(b" \t\r") + b"\n" for line in lines]
    kept = np.frombuffer(b"".join(raw), np.uint8)
    splice_texts(want, lines, spans, (changed, kept, offsets), "text")
    assert len(changed) >= len(rows) - 1
    assert got == b"".join(want)


def test_copies_compare_bytes_when_digests_collide(monkeypatch: pytest.MonkeyPatch) -> None:
    # every document gets the same digest: only equal bytes make a copy
    from types import SimpleNamespace

    from neardup._kernels import engine
    from neardup.corpus import substrings

    def same_digest(buf: object, starts: np.ndarray, ends: np.ndarray, seed: object) -> np.ndarray:
        return np.zeros(len(starts), dtype=np.uint64)

    monkeypatch.setattr(
        engine, "kernels", lambda family: SimpleNamespace(xxh3_64_ranges=same_digest)
    )
    texts = [b"first text", b"short", b"other text", b"first text", b"other text", b"third one!"]
    text, starts, ends = substrings._pack(texts)
    assert substrings._copies(text, starts, ends, 8) == ([0, 2, 5], [3, 4])


def test_malloc_setting_respects_the_users(monkeypatch: pytest.MonkeyPatch) -> None:
    """The start-up malloc setting calls mallopt only with glibc and without the user's
    MALLOC_ variables."""
    import ctypes
    import os
    import types

    from neardup.cli import corpus as cli_corpus

    calls: list[tuple[int, int]] = []

    def mallopt(param: int, value: int) -> int:
        calls.append((param, value))
        return 1

    monkeypatch.setattr(ctypes, "CDLL", lambda _name: types.SimpleNamespace(mallopt=mallopt))
    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "0")
    cli_corpus._keep_freed_memory()
    assert calls == []
    monkeypatch.delenv("MALLOC_TRIM_THRESHOLD_")
    monkeypatch.delenv("MALLOC_MMAP_THRESHOLD_", raising=False)
    cli_corpus._keep_freed_memory()
    glibc = (os.confstr("CS_GNU_LIBC_VERSION") or "").startswith("glibc")
    assert calls == ([(-3, 32 << 20), (-1, 1 << 30)] if glibc else [])


def test_shard_buffer_small_pages_and_populate(monkeypatch: pytest.MonkeyPatch) -> None:
    """The shard's buffer: zero, writable, grown with its bytes; pre-faulting its pages
    changes no byte, and a kernel that refuses the advice turns it off (pages fault as
    they are written)."""
    from neardup.corpus import substrings as sub

    text = sub._small_pages(5 << 20)
    assert text.flags.writeable and len(text) == 5 << 20 and not text.any()
    sub._populate(text, 4097, 3 << 20)
    assert not text.any()
    text[:3] = [1, 2, 3]
    grown = sub._grown(text, 3, 6 << 20)
    assert len(grown) == 10 << 20 and grown[:4].tolist() == [1, 2, 3, 0]
    monkeypatch.setattr(sub, "_POPULATE", [-1])  # (no such advice: EINVAL)
    sub._populate(grown, 0, 1 << 20)
    assert sub._POPULATE == [None]
    sub._populate(grown, 0, 1 << 20)  # (then nothing)
    sub._populate(np.zeros(10, np.uint8), 0, 10)  # (not a mapping of its own: nothing)
