"""The repeat-mark kernel: numba and numpy reference mark the same bytes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pds = pytest.importorskip("pydivsufsort")

from neardup._kernels.repeats import fast, reference  # noqa: E402


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.sampled_from([b"ab", b"abc", b"\xff", b"x", b"b", "é".encode(), "日".encode()]),
        max_size=40,
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
