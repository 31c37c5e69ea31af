"""Pinned hash values: a library upgrade must never change these."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

import oracles.hashing as h

GOLDEN_FNV = {
    b"": 0xCBF29CE484222325,
    b"a": 0xAF63DC4C8601EC8C,
    b"hello": 0xA430D84680AABD0B,
    b"foobar": 0x85944171F73967E8,
}


@pytest.mark.parametrize(("data", "expected"), sorted(GOLDEN_FNV.items()))
def test_fnv1a_64_golden(data: bytes, expected: int) -> None:
    assert h.fnv1a_64(data) == expected


def test_xxh3_golden() -> None:
    assert h.xxh3_64(b"") == 0x2D06800538D394C2
    assert h.xxh3_64(b"hello", 0) == 0x9555E8555C62DCFD
    lo, hi = h.xxh3_128_pair(b"lorem", 0x00C0FFEE5EED)
    assert (hi << 64) | lo == h.xxh3_128(b"lorem", 0x00C0FFEE5EED)


def test_murmur_and_sha1_golden() -> None:
    assert h.murmur3_32(b"foo") == 4138058784
    assert h.murmur3_32(b"", 0) == 0
    lo, hi = h.murmur3_128(b"foo")
    assert (lo, hi) == (16316970633193145697, 9128664383759220103)
    assert h.sha1_hash32(b"hello") == int.from_bytes(hashlib.sha1(b"hello").digest()[:4], "little")


@given(st.binary(max_size=200), st.integers(0, 2**64 - 1))
def test_xxh3_pair_matches_int(data: bytes, seed: int) -> None:
    lo, hi = h.xxh3_128_pair(data, seed)
    assert 0 <= lo < 2**64 and 0 <= hi < 2**64
    assert (hi << 64) | lo == h.xxh3_128(data, seed)
