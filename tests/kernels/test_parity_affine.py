"""The native affine family against its numpy twin: same bits, same errors (hypothesis)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from twins import agree

from conftest import native_pair


@pytest.fixture(scope="module")
def pair() -> tuple[Any, Any]:
    return native_pair("affine")


def offsets_of(n: int, cuts: list[int]) -> np.ndarray:
    inner = sorted(c % (n + 1) for c in cuts)
    return np.array([0, *inner, n], dtype=np.int64)


U32 = st.integers(0, 2**32 - 1)
cuts = st.lists(st.integers(0, 1000), max_size=5)


@given(st.lists(U32, max_size=80), cuts, st.lists(st.tuples(U32, U32), max_size=70))
def test_affine32(pair: tuple[Any, Any], hv: list[int], c: list[int],
                  ab: list[tuple[int, int]]) -> None:  # fmt: skip
    h = np.array(hv, dtype=np.uint32)
    a = np.array([x for x, _ in ab], dtype=np.uint32)
    b = np.array([y for _, y in ab], dtype=np.uint32)
    offs = offsets_of(len(h), c)
    agree(pair, "affine32", h, offs, a, b)
    agree(pair, "affine32", h, offs, a[::-1], b[::-1])  # strided permutations
    if len(a):
        agree(pair, "affine32", h, offs, a, b[1:])  # ConfigError


@settings(max_examples=20)
@given(st.integers(0, 20000), st.integers(0, 2**32 - 1))
def test_affine32_long_documents(pair: tuple[Any, Any], n: int, seed: int) -> None:
    """Documents longer than the reference's chunk of 4096 hashes, datasketch's 128 slots."""
    rng = np.random.default_rng(seed)
    h = rng.integers(0, 2**32, n, dtype=np.uint32)
    a = rng.integers(0, 2**31, 128, dtype=np.uint32) * np.uint32(2) + np.uint32(1)
    b = rng.integers(0, 2**32, 128, dtype=np.uint32)
    agree(pair, "affine32", h, np.array([0, n // 5, n], dtype=np.int64), a, b)
