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


@given(
    st.lists(st.lists(keys_st, min_size=3, max_size=3), min_size=1, max_size=30),
    st.integers(0, 5000),
    st.sampled_from([1, 2, 64]),
)
def test_encode_band_segment(rows: list[list[int]], base: int, per: int) -> None:
    native, reference = native_pair("segments")
    values = np.array(rows, I64)
    bits = max(1, len(rows) - 1).bit_length()
    both(
        native.encode_band_segment, reference.encode_band_segment, values, base, base, bits, 4, per
    )


@pytest.mark.parametrize(("n", "bands"), [(1, 1), (64, 16), (5000, 16), (3, 0)])
def test_encode_band_segment_is_encode_segment_of_the_store_fold(n: int, bands: int) -> None:
    """Row ``i``, column ``j``: the entry ``(fold(j, values[i, j]), base + i)``, with the
    store's own fold; no rows, no entries (the same error)."""
    from neardup.store._lookup import fold

    native, reference = native_pair("segments")
    rng = np.random.default_rng(n)
    values = rng.integers(-(2**63), 2**63 - 1, size=(n, bands), dtype=I64)
    values[::3] = values[0]  # repeated rows: the same entries' keys
    keys = fold(np.arange(bands, dtype=I64), values).reshape(-1)
    docs = np.repeat(np.arange(n, dtype=I64) + 77, bands)
    bits = max(1, n - 1).bit_length()
    for kernels in (native, reference):
        if not bands:
            with pytest.raises(ConfigError):
                kernels.encode_band_segment(values, 77, 77, bits, 9, 64)
            continue
        got = kernels.encode_band_segment(values, 77, 77, bits, 9, 64)
        want = kernels.encode_segment(keys, docs, 77, bits, 9, 64)
        for a, b in zip(got, want, strict=True):
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize(
    ("rows", "base", "doc_lo", "doc_bits", "seg", "per"),
    [(3, 5, 6, 2, 1, 64), (3, 6, 6, 1, 1, 64), (0, 0, 0, 1, 1, 64), (2, 0, 0, 0, 1, 64)],
)
def test_encode_band_segment_errors(
    rows: int, base: int, doc_lo: int, doc_bits: int, seg: int, per: int
) -> None:
    native, reference = native_pair("segments")
    values = np.arange(2 * rows, dtype=I64).reshape(rows, 2)
    with pytest.raises(ConfigError):
        both(
            native.encode_band_segment,
            reference.encode_band_segment,
            values,
            base,
            doc_lo,
            doc_bits,
            seg,
            per,
        )
