"""The native repeats kernels against their numpy twin: the same marks, anchors, regions and
errors (the twin's marks come from divsufsort's suffix array)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from twins import same_result

from conftest import native_pair
from neardup.errors import ConfigError

pds = pytest.importorskip("pydivsufsort")

PIECES = [b"ab", b"abc", b"\xff", b"x", b"b", "é".encode(), "日".encode(), b"\x80", b"the cat "]
BYTES = st.lists(st.sampled_from(PIECES), max_size=80).map(b"".join)


@settings(max_examples=300)
@given(BYTES, st.integers(1, 12), st.floats(0, 1.2))
def test_marks(data: bytes, min_length: int, cut: float) -> None:
    native, reference = native_pair("repeats")
    text = np.frombuffer(data, np.uint8).copy()
    prefix = int(cut * len(data))
    sa = pds.divsufsort(text)
    want = reference.repeat_mask(text, sa, min_length, prefix)
    for s in (sa.astype(np.int32), sa.astype(np.int64)):
        same_result(native.repeat_mask(text, s, min_length, prefix), want)
    same_result(reference.window_mask(text, min_length, prefix), want)
    same_result(native.window_mask(text, min_length, prefix), want)


def test_marks_of_shared_headers_and_long_segments() -> None:
    """Documents that open with one header (both tables grow), and segments of more than a
    chunk of windows (anchors and marks across the seams)."""
    native, reference = native_pair("repeats")
    rng = np.random.default_rng(5)
    head = b"Home | About | Products | Contact us | Log in\n"
    docs = [head + bytes(rng.integers(97, 105, int(rng.integers(0, 300)), dtype=np.uint8))
            for _ in range(300)]  # fmt: skip
    words = [bytes(rng.integers(97, 123, rng.integers(2, 8), dtype=np.uint8)) for _ in range(900)]
    long = b" ".join(words[int(i)] for i in rng.integers(0, 900, 20_000))
    docs += [long, long[1000:90_000], b"q" * 70_000 + long[5000:40_000]]
    text = np.frombuffer(b"\xff".join(docs), np.uint8).copy()
    sa = pds.divsufsort(text)
    for min_length, prefix in ((12, 0), (30, 0), (40, len(text) // 3), (100, 0)):
        want = reference.repeat_mask(text, sa, min_length, prefix)
        same_result(native.repeat_mask(text, sa, min_length, prefix), want)
        same_result(native.window_mask(text, min_length, prefix), want)
    offsets = np.zeros(len(docs) + 1, dtype=np.int64)
    np.cumsum([len(d) for d in docs], out=offsets[1:])
    flat = np.frombuffer(b"".join(docs), np.uint8).copy()
    joined, at = reference.gather(flat, offsets[:-1], offsets[1:])
    for min_length in (12, 30, 100):
        want = reference.cut(flat, offsets, native.window_mask(joined, min_length, 0), at)
        for g, w in zip(
            native.window_cut(flat, offsets, joined, at, min_length), want, strict=True
        ):
            same_result(g, w)
    for min_length, k in ((30, 21), (100, 68)):
        for got, want in zip(
            native.anchors(text, min_length, k), reference.anchors(text, min_length, k), strict=True
        ):
            same_result(got, want)


@settings(max_examples=300)
@given(BYTES, st.integers(2, 12), st.integers(1, 8))
def test_prefilter(data: bytes, min_length: int, k_less: int) -> None:
    native, reference = native_pair("repeats")
    text = np.frombuffer(data, np.uint8).copy()
    k = max(1, min_length - k_less)
    want = reference.anchors(text, min_length, k)
    got = native.anchors(text, min_length, k)
    for g, w in zip(got, want, strict=True):
        same_result(g, w)
    starts, ends = reference.regions(text, *want, min_length, k)
    for g, w in zip(native.regions(text, *want, min_length, k), (starts, ends), strict=True):
        same_result(g, w)
    sub, at = reference.gather(text, starts, ends)
    for g, w in zip(native.gather(text, starts, ends), (sub, at), strict=True):
        same_result(g, w)
    marks = (sub == 0x62) | (sub == 0x78)
    same_result(
        native.scatter(marks, at, starts, ends, len(text)),
        reference.scatter(marks, at, starts, ends, len(text)),
    )
    for g, w in zip(
        native.scatter_counts(marks, at, starts, ends, len(text)),
        reference.scatter_counts(marks, at, starts, ends, len(text)),
        strict=True,
    ):
        same_result(g, w)


@pytest.mark.parametrize(("min_length", "prefix"), [(0, 0), (-3, 0), (5, -1)])
def test_errors(min_length: int, prefix: int) -> None:
    native, reference = native_pair("repeats")
    text = np.frombuffer(b"abcabcabc", np.uint8).copy()
    sa = pds.divsufsort(text)
    calls = (
        lambda k: k.repeat_mask(text, sa, min_length, prefix),
        lambda k: k.window_mask(text, min_length, prefix),
    )
    for call in calls:
        with pytest.raises(ConfigError) as want:
            call(reference)
        with pytest.raises(ConfigError) as got:
            call(native)
        assert str(got.value) == str(want.value)


@settings(max_examples=300)
@given(BYTES, BYTES, st.integers(2, 12), st.integers(1, 8))
def test_shared_regions(a: bytes, b: bytes, min_length: int, k_less: int) -> None:
    """The regions around the anchors two texts share (from either side)."""
    native, reference = native_pair("repeats")
    k = max(1, min_length - k_less)
    one = np.frombuffer(a + b, np.uint8).copy()  # shares b's windows with the other text
    two = np.frombuffer(b + a[: len(a) // 2], np.uint8).copy()
    p1, h1, _, _ = reference.anchors(one, min_length, k)
    p2, h2, _, _ = reference.anchors(two, min_length, k)
    for text, pos, hs, other in ((one, p1, h1, h2), (two, p2, h2, h1)):
        want = reference.shared_regions(text, pos, hs, other, min_length, k)
        got = native.shared_regions(text, pos, hs, other, min_length, k)
        for g, w in zip(got, want, strict=True):
            same_result(g, w)


@settings(max_examples=300)
@given(st.lists(BYTES, max_size=12), st.data())
def test_cut(docs: list[bytes], data: st.DataObject) -> None:
    """The kept bytes cut from a join's marks: documents kept whole, dropped whole, or cut."""
    native, reference = native_pair("repeats")
    text = np.frombuffer(b"".join(docs), np.uint8).copy()
    offsets = np.zeros(len(docs) + 1, dtype=np.int64)
    np.cumsum([len(d) for d in docs], out=offsets[1:])
    ways = data.draw(st.lists(st.sampled_from([-2, -1, 0]), min_size=len(docs), max_size=len(docs)))
    marked = [j for j, w in enumerate(ways) if w == 0]
    sub, at = reference.gather(text, offsets[marked], offsets[np.array(marked, int) + 1])
    marks = np.array(data.draw(st.lists(st.booleans(), min_size=len(sub), max_size=len(sub))))
    where = np.array(ways, dtype=np.int64)
    where[marked] = at
    want = reference.cut(text, offsets, marks.astype(bool), where)
    got = native.cut(text, offsets, marks.astype(bool), where)
    for g, w in zip(got, want, strict=True):
        same_result(g, w)
    assert want[0].tobytes() == b"".join(
        d
        if w == -1
        else b""
        if w == -2
        else bytes(np.frombuffer(d, np.uint8)[~marks[a : a + len(d)]])
        for d, w, a in zip(docs, ways, where.tolist(), strict=True)
    )


@settings(max_examples=300)
@given(st.lists(BYTES, max_size=12), st.data(), st.integers(1, 12))
def test_window_cut(docs: list[bytes], data: st.DataObject, min_length: int) -> None:
    """The kept bytes cut from a join's window marks in one call (the native kernel keeps them
    as runs): as cut of window_mask's mask."""
    native, reference = native_pair("repeats")
    text = np.frombuffer(b"".join(docs), np.uint8).copy()
    offsets = np.zeros(len(docs) + 1, dtype=np.int64)
    np.cumsum([len(d) for d in docs], out=offsets[1:])
    ways = data.draw(st.lists(st.sampled_from([-2, -1, 0]), min_size=len(docs), max_size=len(docs)))
    marked = [j for j, w in enumerate(ways) if w == 0]
    joined, at = reference.gather(text, offsets[marked], offsets[np.array(marked, int) + 1])
    where = np.array(ways, dtype=np.int64)
    where[marked] = at
    want = reference.window_cut(text, offsets, joined, where, min_length)
    got = native.window_cut(text, offsets, joined, where, min_length)
    for g, w in zip(got, want, strict=True):
        same_result(g, w)
    marks = reference.window_mask(joined, min_length, 0)
    for g, w in zip(got, reference.cut(text, offsets, marks, where), strict=True):
        same_result(g, w)


@settings(max_examples=300)
@given(st.lists(BYTES, max_size=12), st.data(), st.integers(1, 12))
def test_window_cut_in_place(docs: list[bytes], data: st.DataObject, min_length: int) -> None:
    """The kept bytes written into the text itself: as window_cut of the text against itself,
    at the text's start (the rest of the buffer is not specified)."""
    native, reference = native_pair("repeats")
    text = np.frombuffer(b"".join(docs), np.uint8).copy()
    offsets = np.zeros(len(docs) + 1, dtype=np.int64)
    np.cumsum([len(d) for d in docs], out=offsets[1:])
    ways = data.draw(st.lists(st.sampled_from([-2, -1, 0]), min_size=len(docs), max_size=len(docs)))
    where = np.array(ways, dtype=np.int64)
    marked = where == 0
    where[marked] = offsets[:-1][marked]
    kept, kept_offsets, removed = reference.window_cut(text, offsets, text, where, min_length)
    for k in (native, reference):
        buf = text.copy()
        got = k.window_cut_in_place(buf, offsets, where, min_length)
        for g, w in zip(got, (kept_offsets, removed), strict=True):
            same_result(g, w)
        assert buf[: len(kept)].tobytes() == kept.tobytes()


def test_window_cut_in_place_errors() -> None:
    native, reference = native_pair("repeats")
    offsets = np.array([0, 4], np.int64)
    for k in (native, reference):
        with pytest.raises(ConfigError, match="min_length"):
            k.window_cut_in_place(np.frombuffer(b"abcd", np.uint8).copy(), offsets, offsets[:1], 0)
    for offs, at in (([0, 4], [2]), ([0, 3, 2], [-1, -1]), ([0, 9], [-1])):
        args = (np.array(offs, np.int64), np.array(at, np.int64), 3)
        with pytest.raises(ValueError) as want:
            reference.window_cut_in_place(np.frombuffer(b"abcd", np.uint8).copy(), *args)
        with pytest.raises(ValueError) as got:
            native.window_cut_in_place(np.frombuffer(b"abcd", np.uint8).copy(), *args)
        assert str(got.value) == str(want.value)


def test_window_cut_errors() -> None:
    native, reference = native_pair("repeats")
    text = np.frombuffer(b"abcd", np.uint8).copy()
    joined = np.frombuffer(b"\xffabcd", np.uint8).copy()
    offsets = np.array([0, 4], np.int64)
    for k in (native, reference):
        with pytest.raises(ConfigError, match="min_length"):
            k.window_cut(text, offsets, joined, np.array([1], np.int64), 0)
    args = (text, offsets, joined, np.array([2], np.int64), 3)
    with pytest.raises(ValueError, match="marks") as want:
        reference.window_cut(*args)
    with pytest.raises(ValueError, match="marks") as got:
        native.window_cut(*args)
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize(
    ("offsets", "at"),
    [([0, 2], [-3]), ([0, 9], [-1]), ([0, 2], [2]), ([0, 2, 1], [-1, -1]), ([0], [-1])],
)
def test_cut_errors(offsets: list[int], at: list[int]) -> None:
    native, reference = native_pair("repeats")
    text = np.frombuffer(b"abcd", np.uint8).copy()
    args = (text, np.array(offsets, np.int64), np.zeros(3, bool), np.array(at, np.int64))
    with pytest.raises(ValueError, match=r"length|range|marks") as want:
        reference.cut(*args)
    with pytest.raises(ValueError, match=r"length|range|marks") as got:
        native.cut(*args)
    assert str(got.value) == str(want.value)
