"""The native sha1 family against its numpy twin (hashlib): same bits, same errors."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from twins import both

from conftest import native_pair


@given(
    st.binary(max_size=400),
    st.lists(st.tuples(st.integers(0, 400), st.integers(0, 400)), max_size=12),
)
def test_sha1_prefixes(data: bytes, cuts: list[tuple[int, int]]) -> None:
    native, reference = native_pair("sha1")
    buf = np.frombuffer(data, dtype=np.uint8)
    size = len(data)
    ranges = [(min(a, b) % (size + 1), max(a, b) % (size + 1)) for a, b in cuts]
    ranges = [(a, b) if a <= b else (b, a) for a, b in ranges]
    starts = np.array([a for a, _ in ranges], dtype=np.int64)
    ends = np.array([b for _, b in ranges], dtype=np.int64)
    got32 = both(native.sha1_32, reference.sha1_32, buf, starts, ends)
    got64 = both(native.sha1_64, reference.sha1_64, buf, starts, ends)
    for (a, b), h32, h64 in zip(ranges, got32.tolist(), got64.tolist(), strict=True):
        digest = hashlib.sha1(data[a:b]).digest()
        assert h32 == int.from_bytes(digest[:4], "little")
        assert h64 == int.from_bytes(digest[:8], "little")


@pytest.mark.parametrize("length", [0, 1, 55, 56, 63, 64, 65, 119, 120, 128, 1000])
def test_sha1_block_boundaries(length: int) -> None:
    native, reference = native_pair("sha1")
    data = bytes(range(256)) * 4
    buf = np.frombuffer(data[:length] + b"x", dtype=np.uint8)
    starts, ends = np.array([0, 1], np.int64), np.array([length, length + 1], np.int64)
    both(native.sha1_32, reference.sha1_32, buf, starts, ends)
    both(native.sha1_64, reference.sha1_64, buf, starts, ends)


@pytest.mark.parametrize(("starts", "ends"), [([0], [5]), ([2], [1]), ([-1], [1]), ([0, 1], [1])])
def test_sha1_errors(starts: list[int], ends: list[int]) -> None:
    native, reference = native_pair("sha1")
    buf = np.zeros(4, dtype=np.uint8)
    s, e = np.array(starts, np.int64), np.array(ends, np.int64)
    for name in ("sha1_32", "sha1_64"):
        with pytest.raises(ValueError):
            both(getattr(native, name), getattr(reference, name), buf, s, e)
