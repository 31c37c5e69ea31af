"""Exact set intersections: fast and reference agree with Python sets."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from neardup._kernels import sets


@given(
    docs=st.lists(st.lists(st.integers(0, 50), max_size=30), min_size=2, max_size=8), data=st.data()
)
def test_jaccard_matches_python_sets(docs: list[list[int]], data: st.DataObject) -> None:
    values = np.array([v for d in docs for v in d], dtype=np.uint64)
    offsets = np.cumsum([0] + [len(d) for d in docs]).astype(np.int64)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("NEARDUP_BACKEND", "reference")
        rv, ro = sets.unique_per_doc(values, offsets)
        mp.setenv("NEARDUP_BACKEND", "fast")
        uv, uo = sets.unique_per_doc(values, offsets)
    np.testing.assert_array_equal(uv, rv)
    np.testing.assert_array_equal(uo, ro)
    for i, d in enumerate(docs):
        assert uv[uo[i] : uo[i + 1]].tolist() == sorted(set(d))
    n = len(docs)
    a = np.array(data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=10)))
    b = np.array(data.draw(st.lists(st.integers(0, n - 1), min_size=len(a), max_size=len(a))))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("NEARDUP_BACKEND", "reference")
        ref = sets.jaccard_pairs(uv, uo, a, b)
        mp.setenv("NEARDUP_BACKEND", "fast")
        got = sets.jaccard_pairs(uv, uo, a, b)
    np.testing.assert_array_equal(got, ref)
    for k in range(len(a)):
        x, y = set(docs[a[k]]), set(docs[b[k]])
        want = len(x & y) / len(x | y) if x | y else 0.0
        assert got[k] == pytest.approx(want)
