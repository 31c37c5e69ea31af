"""The repeats kernels: numba and numpy reference mark the same bytes and find the same
candidate regions; the regions hold every window that has a copy."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pds = pytest.importorskip("pydivsufsort")

from conftest import native_pair  # noqa: E402
from neardup._kernels import repeats as reference  # noqa: E402
from neardup.corpus._repeats import candidate_regions, gather  # noqa: E402

SEP = 0xFF


fast = native_pair("repeats")[0]  # the compiled twin


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from([b"ab", b"abc", b"\xff", b"x", b"b", "é".encode(), "日".encode()]),
        max_size=50,
    ).map(b"".join),
    st.integers(1, 6),
    st.integers(0, 10),
)
def test_fast_equals_reference(data: bytes, min_length: int, prefix: int) -> None:
    if len(data) < 2:
        return
    text = np.frombuffer(data, np.uint8).copy()
    sa = pds.divsufsort(text)
    prefix = min(prefix, len(data))
    want = reference.repeat_mask(text, sa, min_length, prefix)
    got = fast.repeat_mask(text, sa, min_length, prefix)
    assert got.tolist() == want.tolist()
    # the hash table of windows, and its reference, mark the same bytes
    assert fast.window_mask(text, min_length, prefix).tolist() == want.tolist()
    assert reference.window_mask(text, min_length, prefix).tolist() == want.tolist()


def test_window_table_grows_and_survives_collisions() -> None:
    # many distinct windows (the table starts small and doubles), runs, and repeats of repeats
    rng = np.random.default_rng(3)
    words = [bytes(rng.integers(97, 123, rng.integers(3, 9), dtype=np.uint8)) for _ in range(300)]
    parts = [words[int(i)] for i in rng.integers(0, 300, 6000)]
    data = b" ".join(parts) + b"\xff" + b" ".join(parts[100:900]) + b"\xff" + b"z" * 500
    text = np.frombuffer(data, np.uint8).copy()
    sa = pds.divsufsort(text)
    for min_length, prefix in ((8, 0), (20, 0), (12, len(data) // 2)):
        want = reference.repeat_mask(text, sa, min_length, prefix)
        assert fast.window_mask(text, min_length, prefix).tolist() == want.tolist()


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.integers(0, 11), min_size=2, max_size=300),
    st.integers(6, 45),
    st.floats(0, 1),
    st.integers(0, 6),
)
def test_window_anchors_in_other_contexts_equal_reference(
    picks: list[int], min_length: int, cut: float, vocab: int
) -> None:
    # few short words: anchors (w = min_length // 3 > 1) recur next to other bytes, so the
    # anchor table's first occurrence fails and the table of windows decides; a prefix
    # anywhere, separators and two-byte characters among the words
    words = [b"to", b"be", b"or", b"not", b"\xff", "é".encode(), b"a", b"is", b"q", b"zz"]
    words = [*words[: 4 + vocab], b" ", b"\n"]
    data = b"".join(words[i % len(words)] for i in picks)
    text = np.frombuffer(data, np.uint8).copy()
    sa = pds.divsufsort(text)
    for prefix in (0, int(cut * len(data))):
        want = reference.repeat_mask(text, sa, min_length, prefix)
        assert fast.window_mask(text, min_length, prefix).tolist() == want.tolist()


def test_window_anchors_of_shared_headers() -> None:
    # every document opens with the same header, then its own text: the header's last anchors
    # recur before other bytes in each document (table of windows), its first ones in the same
    # context (anchor table); the window table and the anchor table grow
    rng = np.random.default_rng(5)
    head = b"Home | About | Products | Contact us | Log in\n"
    docs = [head + bytes(rng.integers(97, 105, int(rng.integers(0, 300)), dtype=np.uint8))
            for _ in range(400)]  # fmt: skip
    text = np.frombuffer(b"\xff".join(docs), np.uint8).copy()
    sa = pds.divsufsort(text)
    for min_length, prefix in ((12, 0), (30, 0), (40, len(text) // 3), (90, 0)):
        want = reference.repeat_mask(text, sa, min_length, prefix)
        assert fast.window_mask(text, min_length, prefix).tolist() == want.tolist()


def test_marks_whole_characters_and_stops_at_separators() -> None:
    # "éé" + SEP + "éé": the second copy goes whole (both bytes of each é), nothing spans SEP
    data = "ééx".encode() + b"\xff" + "ééy".encode()
    text = np.frombuffer(data, np.uint8).copy()
    sa = pds.divsufsort(text)
    for kernel in (fast.repeat_mask, reference.repeat_mask):
        got = kernel(text, sa, 3, 0).tolist()
        assert got == [False] * 6 + [True] * 4 + [False]
        # a window of 5 would need the x / y that differ: nothing repeats
        assert not any(kernel(text, sa, 5, 0).tolist())


BYTES = st.lists(
    st.sampled_from([b"ab", b"abc", b"\xff", b"x", b"b", "é".encode(), "日".encode(), b"\x80"]),
    max_size=60,
).map(b"".join)


def _windows_with_a_copy(data: bytes, L: int) -> list[int]:
    """Starts of the L-byte windows (no 0xFF inside) whose bytes occur at another start too."""
    starts: dict[bytes, list[int]] = {}
    for p in range(len(data) - L + 1):
        w = data[p : p + L]
        if 0xFF not in w:
            starts.setdefault(w, []).append(p)
    return sorted(p for ps in starts.values() if len(ps) > 1 for p in ps)


@settings(max_examples=200, deadline=None)
@given(BYTES, st.integers(2, 9), st.integers(1, 8))
def test_prefilter_fast_equals_reference(data: bytes, min_length: int, k_less: int) -> None:
    text = np.frombuffer(data, np.uint8).copy()
    k = max(1, min_length - k_less)
    want = reference.anchors(text, min_length, k)
    got = fast.anchors(text, min_length, k)
    for g, w in zip(got, want, strict=True):
        assert g.tolist() == w.tolist()
    regions_want = reference.regions(text, *want, min_length, k)
    regions_got = fast.regions(text, *got, min_length, k)
    for g, w in zip(regions_got, regions_want, strict=True):
        assert g.tolist() == w.tolist()


@settings(max_examples=200, deadline=None)
@given(BYTES, st.integers(2, 9))
def test_candidate_regions_hold_every_repeated_window(data: bytes, min_length: int) -> None:
    text = np.frombuffer(data, np.uint8).copy()
    starts, ends = candidate_regions(text, min_length)
    assert all(0 <= a < b <= len(data) for a, b in zip(starts, ends, strict=True))
    assert all(b < a for b, a in zip(ends[:-1], starts[1:], strict=True))  # disjoint, in order
    assert all(SEP not in data[a:b] for a, b in zip(starts, ends, strict=True))
    for p in _windows_with_a_copy(data, min_length):
        j = int(np.searchsorted(ends, p, side="right"))
        assert j < len(starts) and starts[j] <= p and p + min_length <= ends[j], p
    sub, at = gather(text, starts, ends)
    for f in (fast, reference):
        s2, a2 = f.gather(text, starts, ends)
        assert s2.tobytes() == sub.tobytes() and a2.tolist() == at.tolist()
        back = f.scatter(sub == 0x62, at, starts, ends, len(data))
        inside = np.zeros(len(data), bool)
        for a, b in zip(starts, ends, strict=True):
            inside[a:b] = True
        assert back.tolist() == ((text == 0x62) & inside).tolist()
        back, counts = f.scatter_counts(sub == 0x62, at, starts, ends, len(data))
        assert back.tolist() == ((text == 0x62) & inside).tolist()
        want = [data[a:b].count(b"b") for a, b in zip(starts, ends, strict=True)]
        assert counts.tolist() == want


def test_runs_of_one_byte_grow_the_anchor_list() -> None:
    # every position of a run is an anchor (equal hashes, leftmost wins): more than the guess
    text = np.frombuffer(b"a" * 5000 + b"\xff" + b"a" * 300, np.uint8).copy()
    got = fast.anchors(text, 12, 8)
    want = reference.anchors(text, 12, 8)
    assert len(got[0]) == len(want[0]) > 5000 // 3
    assert got[0].tolist() == want[0].tolist()
    starts, ends = candidate_regions(text, 12)
    assert starts.tolist() == [0, 5001] and ends.tolist() == [5000, 5301]


def test_segments_longer_than_a_chunk() -> None:
    # segments of more than 2**16 windows go in chunks: anchors and marks across their seams
    rng = np.random.default_rng(7)
    words = [bytes(rng.integers(97, 123, rng.integers(2, 8), dtype=np.uint8)) for _ in range(900)]
    data = b" ".join(words[int(i)] for i in rng.integers(0, 900, 25_000))
    data += b"\xff" + data[1000:90_000] + b"\xff" + b"q" * 70_000 + data[5000:40_000]
    text = np.frombuffer(data, np.uint8).copy()
    for min_length, k in ((30, 21), (100, 68)):
        for got, want in zip(
            fast.anchors(text, min_length, k), reference.anchors(text, min_length, k), strict=True
        ):
            assert got.tolist() == want.tolist()
    for min_length, prefix in ((30, 0), (100, 0), (12, len(data) // 2)):
        want = reference.window_mask(text, min_length, prefix)
        assert fast.window_mask(text, min_length, prefix).tolist() == want.tolist()
