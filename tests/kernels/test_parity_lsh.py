"""The lsh family: the native band tables against their numpy twin, through the index that
drives them (LSHIndex): the same hits, estimates, candidates and serialized bytes on hypothesis
sketches, and the same names (tests/kernels/test_parity.py)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import native_pair
from neardup.index.lsh import LSHIndex

native_pair("lsh")  # skips without the compiled family


@contextmanager
def backend(name: str) -> Iterator[None]:
    old = os.environ.get("NEARDUP_BACKEND")
    os.environ["NEARDUP_BACKEND"] = name
    try:
        yield
    finally:
        if old is None:
            del os.environ["NEARDUP_BACKEND"]
        else:
            os.environ["NEARDUP_BACKEND"] = old


def run(sigs: np.ndarray, queries: np.ndarray) -> tuple[object, ...]:
    index = LSHIndex(0.5, 12, bands=4, rows=3)
    index.add_many([str(i) for i in range(len(sigs))], sigs)
    many = index.query_many(queries)
    cands = index.candidates_many(queries)
    one = []
    for i, q in enumerate(queries):  # one at a time: add, then query
        index.add_many([f"q{i}"], q[None, :])
        one.append(index.query_many(q[None, :]))
    return many, one, cands, index.to_bytes()


@settings(max_examples=40)
@given(
    st.lists(st.lists(st.integers(0, 3), min_size=12, max_size=12), max_size=30),
    st.lists(st.lists(st.integers(0, 3), min_size=12, max_size=12), min_size=1, max_size=5),
)
def test_lsh(rows: list[list[int]], queries: list[list[int]]) -> None:
    sigs = np.array(rows, dtype=np.uint64).reshape(-1, 12)
    qs = np.array(queries, dtype=np.uint64).reshape(-1, 12)
    with backend("native"):
        got = run(sigs, qs)
    with backend("reference"):
        want = run(sigs, qs)
    assert got == want
