"""The native segments family against its numpy twin: same bits, same errors, on hypothesis
inputs (short runs: one sort; long ones: the native's counting pass first)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from twins import both

from conftest import native_pair
from neardup.errors import ConfigError

I64 = np.int64

keys_st = st.integers(-(2**63), 2**63 - 1) | st.integers(-3, 3) | st.integers(0, 2**32 - 1)


@given(
    st.lists(st.tuples(keys_st, st.integers(0, 40)), min_size=1, max_size=60),
    st.integers(-5, 5),
    st.sampled_from([1, 2, 64]),
    st.integers(1, 2**31 - 1),
)
def test_encode_segment(entries: list[tuple[int, int]], lo: int, per: int, seg: int) -> None:
    native, reference = native_pair("segments")
    keys = np.array([k for k, _ in entries], I64)
    docs = np.array([d for _, d in entries], I64) + 1000 + lo
    doc_lo = int(docs.min())
    doc_bits = max(1, int(docs.max()) - doc_lo).bit_length()
    both(native.encode_segment, reference.encode_segment, keys, docs, doc_lo, doc_bits, seg, per)


@pytest.mark.parametrize("n", [1023, 1024, 5000, 70_000])
def test_encode_segment_long_runs(n: int) -> None:
    """A batch's entries: document-major, every document a few keys, some repeated."""
    native, reference = native_pair("segments")
    rng = np.random.default_rng(n)
    docs = np.repeat(np.arange(n // 16 + 1, dtype=I64), 16)[:n] + 32
    keys = rng.integers(-(2**31), 2**31, size=n, dtype=I64)
    keys[::7] = keys[0]  # repeats: the same key of many documents, and a few same entries
    docs[1::50] = docs[::50][: len(docs[1::50])]
    keys[1::50] = keys[::50][: len(keys[1::50])]
    doc_lo = int(docs.min())
    doc_bits = max(1, int(docs.max()) - doc_lo).bit_length()
    for per in (64, 1):
        both(native.encode_segment, reference.encode_segment, keys, docs, doc_lo, doc_bits, 3, per)


@pytest.mark.parametrize(
    ("keys", "docs", "doc_lo", "doc_bits", "seg", "per"),
    [
        ([1], [1, 2], 0, 2, 1, 64),
        ([], [], 0, 1, 1, 64),
        ([1, 2], [0, 9], 0, 2, 1, 64),
        ([1], [-1], 0, 1, 1, 64),
        ([1], [0], 0, 0, 1, 64),
        ([1], [0], 0, 33, 1, 64),
        ([1], [0], 0, 1, 0, 64),
        ([1], [0], 0, 1, 2**31, 64),
        ([1], [0], 0, 1, 1, 0),
    ],
)
def test_encode_segment_errors(
    keys: list[int], docs: list[int], doc_lo: int, doc_bits: int, seg: int, per: int
) -> None:
    native, reference = native_pair("segments")
    with pytest.raises(ConfigError):
        both(
            native.encode_segment,
            reference.encode_segment,
            np.array(keys, I64),
            np.array(docs, I64),
            doc_lo,
            doc_bits,
            seg,
            per,
        )
