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
    st.lists(st.sampled_from([b"ab", b"abc", b"\xff", b"x", b"b"]), max_size=40).map(b"".join),
    st.integers(1, 6),
    st.integers(0, 10),
)
def test_fast_equals_reference(data: bytes, min_length: int, prefix: int) -> None:
    if len(data) < 2:
        return
    text = np.frombuffer(data, np.uint8).copy()
    sa = pds.divsufsort(text)
    lcp = pds.kasai(text, sa)
    prefix = min(prefix, len(data))
    want = reference.repeat_mask(text, sa, lcp, min_length, prefix)
    got = fast.repeat_mask(text, sa, lcp, min_length, prefix)
    assert got.tolist() == want.tolist()
