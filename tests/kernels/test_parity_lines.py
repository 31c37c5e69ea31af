"""The native lines kernels against their numpy twin: the same bits and the same errors."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from twins import same, same_result

from conftest import native_pair
from neardup.packed import pack

TEXT = st.text(
    alphabet=st.sampled_from(["a", " ", "\n", "\t", "é", "\r", "x", '"', "\\", "\x01", "\x0b"]),
    max_size=40,
)
TEXTS = st.lists(TEXT, max_size=10)


@settings(max_examples=200)
@given(TEXTS)
def test_line_spans(texts: list[str]) -> None:
    native, reference = native_pair("lines")
    p = pack(texts)
    same_result(native.line_spans(p.buf, p.offsets), reference.line_spans(p.buf, p.offsets))


@settings(max_examples=200)
@given(TEXTS, st.randoms(use_true_random=False))
def test_kept_text_and_json_strings(texts: list[str], rnd: random.Random) -> None:
    native, reference = native_pair("lines")
    p = pack(texts)
    starts, ends, _, _, doc = reference.line_spans(p.buf, p.offsets)
    keep = np.array([rnd.random() < 0.6 for _ in starts], dtype=bool)
    args = (p.buf, p.offsets, starts, ends, doc, keep)
    same_result(native.kept_text(*args), reference.kept_text(*args))
    docs = np.array([rnd.randrange(len(texts)) for _ in texts], np.int64)
    same_result(
        native.json_strings(p.buf, p.offsets, docs), reference.json_strings(p.buf, p.offsets, docs)
    )


@settings(max_examples=100)
@given(st.lists(st.text(alphabet=st.characters(max_codepoint=0x10FF), max_size=200), max_size=6))
def test_json_strings_every_byte(texts: list[str]) -> None:
    # long runs with any character: the native escape tests sixteen bytes at a time
    native, reference = native_pair("lines")
    p = pack([t.encode("utf-8", "surrogatepass").decode("utf-8", "replace") for t in texts])
    docs = np.arange(len(texts), dtype=np.int64)
    same_result(
        native.json_strings(p.buf, p.offsets, docs), reference.json_strings(p.buf, p.offsets, docs)
    )


def _unit_counts(texts: list[str], paragraph: bool) -> list[int]:
    out = []
    for t in texts:
        n, prev = 0, False
        for line in t.split("\n"):
            solid = bool(line.encode().strip(b" \t\n\x0b\x0c\r"))
            n += solid and (not paragraph or not prev)
            prev = solid
        out.append(n)
    return out


@settings(max_examples=200)
@given(TEXTS, st.booleans(), st.randoms(use_true_random=False), st.integers(-1, 2))
def test_kept_json(texts: list[str], paragraph: bool, rnd: random.Random, skew: int) -> None:
    """Dropped units (and, with ``skew``, one document's unit count off by one: ``bad``)."""
    native, reference = native_pair("lines")
    p = pack(texts)
    counts = _unit_counts(texts, paragraph)
    if texts and skew:
        d = rnd.randrange(len(texts))
        counts[d] = max(0, counts[d] + skew)
    unit_off = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    drop = np.array([rnd.random() < 0.4 for _ in range(int(unit_off[-1]))], dtype=bool)
    args = (p.buf, p.offsets, drop, unit_off, paragraph)
    same_result(native.kept_json(*args), reference.kept_json(*args))


def test_kept_json_refuses_unit_offsets_of_another_batch() -> None:
    native, reference = native_pair("lines")
    p = pack(["a\nb", "c"])
    drop = np.array([True, False, True])
    for unit_off in ([0, 2], [1, 2, 3], [0, 2, 4]):
        args = (p.buf, p.offsets, drop, np.array(unit_off, np.int64), False)
        with pytest.raises(ValueError) as want:
            reference.kept_json(*args)
        with pytest.raises(ValueError, match="unit_off must run") as got:
            native.kept_json(*args)
        assert str(got.value) == str(want.value)


@settings(max_examples=100)
@given(
    st.lists(
        st.lists(st.integers(0, 40), max_size=30).map(lambda xs: np.array(xs, np.uint64)),
        max_size=6,
    )
)
def test_unit_table(batches: list[np.ndarray]) -> None:
    native, reference = native_pair("lines")
    table, ref = native.UnitTable(), reference.UnitTable()
    first_doc = 0
    for raw in batches:
        hashes = (raw << np.uint64(58)) | raw  # equal low bits for many distinct hashes
        docs = first_doc + np.sort(np.arange(len(hashes)) % 3).astype(np.int64)
        table.add(hashes, docs)
        ref.add(hashes, docs)
        first_doc += 3
    probe = np.array([*range(41), 2**63 + 5], np.uint64)
    probe = np.concatenate([probe, (probe << np.uint64(58)) | probe])
    same_result(table.lookup(probe), ref.lookup(probe))
    assert len(table) == len(ref)
    for n in (1, 2, 3, 7):
        assert table.at_least(n) == ref.at_least(n)
    with pytest.raises(ValueError) as want:
        ref.add(np.zeros(2, np.uint64), np.zeros(1, np.int64))
    with pytest.raises(ValueError) as got:
        table.add(np.zeros(2, np.uint64), np.zeros(1, np.int64))
    assert str(got.value) == str(want.value)


def _record(text: str, rnd: random.Random) -> tuple[bytes, tuple[int, int]]:
    """A JSONL line with ``text`` as its value (blanks around it and the line, at random),
    and the span of the value's JSON string in it; or one without a span (-1, -1)."""
    import json

    value = json.dumps(text, ensure_ascii=rnd.random() < 0.3).encode("utf-8", "surrogatepass")
    head = rnd.choice([b"", b" ", b"\t \r"]) + b'{"id": 1, "text":' + rnd.choice([b"", b" "])
    tail = rnd.choice([b"", b', "n": [1, 2]']) + b"}" + rnd.choice([b"", b"\r", b" \t"])
    if rnd.random() < 0.15:
        return head + value + tail, (-1, -1)
    return head + value + tail, (len(head), len(head) + len(value))


@settings(max_examples=200)
@given(TEXTS, st.randoms(use_true_random=False))
def test_splice_lines(texts: list[str], rnd: random.Random) -> None:
    """Each changed record's line with its new text, in place; the records without a span
    left as they were and returned."""
    native, reference = native_pair("lines")
    made = [_record(t, rnd) for t in texts]
    lines = [line for line, _ in made]
    spans = np.array([span for _, span in made], np.int64).reshape(len(made), 2)
    p = pack([t[::-1] for t in texts])  # the new texts
    changed = np.array([k for k in range(len(texts)) if rnd.random() < 0.7], np.int64)
    mine, theirs = list(lines), list(lines)
    same_result(
        native.splice_lines(mine, spans, changed, p.buf, p.offsets),
        reference.splice_lines(theirs, spans, changed, p.buf, p.offsets),
    )
    assert mine == theirs


def test_splice_lines_errors() -> None:
    native, reference = native_pair("lines")
    p = pack(["ab", "c"])
    lines = [b'{"text": "x"}', b'{"text": "y"}']
    spans = np.array([[9, 12], [9, 12]], np.int64)
    for args in (
        (lines[:1], spans, np.array([0]), p.buf, p.offsets),  # one line short
        (lines, spans[:1], np.array([0]), p.buf, p.offsets),  # one span short
        (lines, np.zeros((2, 3), np.int64), np.array([0]), p.buf, p.offsets),
        (lines, spans, np.array([2]), p.buf, p.offsets),  # out of range
        (lines, spans, np.array([-1]), p.buf, p.offsets),
        (lines, np.array([[9, 12], [9, 40]], np.int64), np.array([0, 1]), p.buf, p.offsets),
        (lines, np.array([[5, 3], [9, 12]], np.int64), np.array([0]), p.buf, p.offsets),
        (lines, spans, np.array([0]), p.buf, np.array([0, 2, 9], np.int64)),  # past the buffer
        (lines, spans, np.array([0]), p.buf, np.array([0, 2, 1], np.int64)),
    ):
        with pytest.raises((ValueError, IndexError)):
            reference.splice_lines(list(args[0]), *args[1:])
        mine, theirs = list(args[0]), list(args[0])
        same(
            lambda mine=mine, args=args: native.splice_lines(mine, *args[1:]),
            lambda theirs=theirs, args=args: reference.splice_lines(theirs, *args[1:]),
        )
        assert mine == theirs  # (the lines before the bad one replaced by both)
