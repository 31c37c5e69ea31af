"""The XXH3 kernels (native, by xxhash-rust) agree bit for bit with python-xxhash on every length
class and seed."""

from __future__ import annotations

import numpy as np
import pytest
import xxhash
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import native_pair

MASK64 = (1 << 64) - 1

# Every length class boundary: empty, 1-3, 4-8, 9-16, 17-128, 129-240, > 240 (one block and a
# stripe, exactly one block, a block plus one, several blocks).
LENGTHS = [
    0, 1, 2, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 31, 32, 33, 63, 64, 65, 96, 97, 127, 128, 129,
    130, 143, 144, 159, 160, 161, 192, 224, 239, 240, 241, 255, 256, 257, 319, 320, 321, 1023,
    1024, 1025, 1087, 1088, 1089, 2000, 2048, 2049, 3071, 4096, 10000,
]  # fmt: skip
SEEDS = [0, 1, 7, 0xFFFFFFFF, 1 << 32, (1 << 63) - 1, 1 << 63, 0x9E3779B185EBCA87, MASK64]

seeds = st.one_of(st.sampled_from(SEEDS), st.integers(min_value=0, max_value=MASK64))
lengths = st.one_of(st.sampled_from(LENGTHS), st.integers(min_value=0, max_value=1500))


xxh3 = native_pair("xxh3")[0]  # the compiled twin


@st.composite
def payloads(draw: st.DrawFn) -> bytes:
    """Random bytes whose length is drawn from every length class, up to 1500 bytes."""
    n = draw(lengths)
    return draw(st.binary(min_size=n, max_size=n))


def _random_bytes(n: int, seed: int = 12345) -> bytes:
    return np.random.default_rng(seed + n).integers(0, 256, size=n, dtype=np.uint8).tobytes()


def _expected_128(data: bytes, seed: int) -> tuple[int, int]:
    v = xxhash.xxh3_128_intdigest(data, seed)
    return v & MASK64, v >> 64


def _h64(data: bytes, seed: int) -> int:
    buf = np.frombuffer(data, dtype=np.uint8)
    ends = np.array([len(data)], dtype=np.int64)
    return int(xxh3.xxh3_64_ranges(buf, ends * 0, ends, np.uint64(seed))[0])


def _h128(data: bytes, seed: int) -> int:
    buf = np.frombuffer(data, dtype=np.uint8)
    ends = np.array([len(data)], dtype=np.int64)
    lo, hi = xxh3.xxh3_128_ranges(buf, ends * 0, ends, np.uint64(seed))
    return int(hi[0]) << 64 | int(lo[0])


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("n", LENGTHS)
def test_fixed_lengths_match_xxhash(n: int, seed: int) -> None:
    data = _random_bytes(n)
    assert _h64(data, seed) == xxhash.xxh3_64_intdigest(data, seed)
    assert _h128(data, seed) == xxhash.xxh3_128_intdigest(data, seed)


@pytest.mark.parametrize("seed", [0, 1 << 63, 0x0123456789ABCDEF])
def test_constant_inputs_match_xxhash(seed: int) -> None:
    # All-zero and all-0xFF bytes stress the carries of the 128-bit products.
    for n in LENGTHS:
        for fill in (b"\x00", b"\xff"):
            data = fill * n
            assert _h64(data, seed) == xxhash.xxh3_64_intdigest(data, seed)
            assert _h128(data, seed) == xxhash.xxh3_128_intdigest(data, seed)


@settings(max_examples=400, deadline=None)
@given(data=payloads(), seed=seeds)
def test_xxh3_64_matches_xxhash(data: bytes, seed: int) -> None:
    assert _h64(data, seed) == xxhash.xxh3_64_intdigest(data, seed)


@settings(max_examples=400, deadline=None)
@given(data=payloads(), seed=seeds)
def test_xxh3_128_matches_xxhash(data: bytes, seed: int) -> None:
    assert _h128(data, seed) == xxhash.xxh3_128_intdigest(data, seed)


@settings(max_examples=200, deadline=None)
@given(
    prefix=st.binary(max_size=40),
    data=payloads(),
    suffix=st.binary(max_size=40),
    seed=seeds,
)
def test_slice_of_larger_buffer(prefix: bytes, data: bytes, suffix: bytes, seed: int) -> None:
    buf = np.frombuffer(prefix + data + suffix, dtype=np.uint8).copy()  # writable this time
    start, end = len(prefix), len(prefix) + len(data)
    useed = np.uint64(seed)
    s_, e_ = np.array([start], dtype=np.int64), np.array([end], dtype=np.int64)
    assert int(xxh3.xxh3_64_ranges(buf, s_, e_, useed)[0]) == xxhash.xxh3_64_intdigest(data, seed)
    lo, hi = xxh3.xxh3_128_ranges(buf, s_, e_, useed)
    assert (int(lo[0]), int(hi[0])) == _expected_128(data, seed)


@settings(max_examples=60, deadline=None)
@given(
    blob=st.binary(min_size=0, max_size=3000),
    raw_ranges=st.lists(st.tuples(st.integers(0, 3000), lengths), max_size=40),
    seed=seeds,
)
def test_batch_kernels_match_xxhash(
    blob: bytes, raw_ranges: list[tuple[int, int]], seed: int
) -> None:
    ranges = [(min(s, len(blob)), min(s + n, len(blob))) for s, n in raw_ranges]
    buf = np.frombuffer(blob, dtype=np.uint8)
    starts = np.array([s for s, _ in ranges], dtype=np.int64)
    ends = np.array([e for _, e in ranges], dtype=np.int64)
    useed = np.uint64(seed)

    got64 = xxh3.xxh3_64_ranges(buf, starts, ends, useed)
    lo, hi = xxh3.xxh3_128_ranges(buf, starts, ends, useed)

    assert got64.dtype == np.uint64
    assert lo.dtype == np.uint64
    assert hi.dtype == np.uint64
    assert got64.shape == lo.shape == hi.shape == (len(ranges),)
    for i, (s, e) in enumerate(ranges):
        assert int(got64[i]) == xxhash.xxh3_64_intdigest(blob[s:e], seed)
        assert (int(lo[i]), int(hi[i])) == _expected_128(blob[s:e], seed)


@pytest.mark.parametrize("seed", [0, 1 << 63])
def test_batch_kernels_cover_long_ranges(seed: int) -> None:
    blob = _random_bytes(12000)
    buf = np.frombuffer(blob, dtype=np.uint8)
    starts = np.array([0, 5, 100, 1, 7, 0], dtype=np.int64)
    ends = np.array([0, 246, 1129, 2001, 10007, 12000], dtype=np.int64)
    got64 = xxh3.xxh3_64_ranges(buf, starts, ends, np.uint64(seed))
    lo, hi = xxh3.xxh3_128_ranges(buf, starts, ends, np.uint64(seed))
    for i, (s, e) in enumerate(zip(starts.tolist(), ends.tolist(), strict=True)):
        assert int(got64[i]) == xxhash.xxh3_64_intdigest(blob[s:e], seed)
        assert (int(lo[i]), int(hi[i])) == _expected_128(blob[s:e], seed)
