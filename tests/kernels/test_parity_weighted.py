"""The native weighted family against its numpy twin: same bits, same errors (hypothesis)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from twins import agree

from conftest import native_pair


@pytest.fixture(scope="module")
def pair() -> tuple[Any, Any]:
    return native_pair("weighted")


def offsets_of(n: int, cuts: list[int]) -> np.ndarray:
    inner = sorted(c % (n + 1) for c in cuts)
    return np.array([0, *inner, n], dtype=np.int64)


def params(seed: int, size: int, dim: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """datasketch's WeightedMinHashGenerator draws: gamma(2, 1), log gamma(2, 1), U(0, 1)."""
    rng = np.random.RandomState(seed)
    rs = rng.gamma(2, 1, (size, dim)).astype(np.float32)
    ln_cs = np.log(rng.gamma(2, 1, (size, dim))).astype(np.float32)
    betas = rng.uniform(0, 1, (size, dim)).astype(np.float32)
    return rs, ln_cs, betas


weights = st.floats(2.0**-20, 1e6, allow_nan=False, width=32)


@given(st.data(), st.integers(0, 2**31), st.integers(1, 24), st.integers(1, 20), st.booleans())
def test_icws(pair: tuple[Any, Any], data: st.DataObject, seed: int, size: int, dim: int,
              sparse: bool) -> None:  # fmt: skip
    rs, ln_cs, betas = params(seed, size, dim)
    n_docs = data.draw(st.integers(0, 5))
    cidx: list[int] = []
    indptr = [0]
    for _ in range(n_docs):
        cols = data.draw(st.lists(st.integers(0, dim - 1), unique=True, max_size=dim))
        cidx += cols
        indptr.append(len(cidx))
    logv = np.log(np.array(data.draw(st.lists(weights, min_size=len(cidx), max_size=len(cidx))),
                           dtype=np.float32))  # fmt: skip
    c = np.array(cidx, dtype=np.int64)
    ip = np.array(indptr, dtype=np.int64)
    agree(pair, "icws", c, logv, ip, rs, ln_cs, betas, sparse)
    if len(c):
        agree(pair, "icws", c - dim, logv, ip, rs, ln_cs, betas, sparse)  # numpy's negatives
        bad = c.copy()
        bad[-1] = dim + data.draw(st.integers(0, 3))
        agree(pair, "icws", bad, logv, ip, rs, ln_cs, betas, sparse)  # IndexError
        agree(pair, "icws", c, logv[:-1], ip, rs, ln_cs, betas, sparse)  # ConfigError
    agree(pair, "icws", c, logv, ip, rs, ln_cs[:, :0], betas, sparse)  # ConfigError
    agree(pair, "icws", c, logv, ip, rs.T.copy().T, ln_cs, betas, sparse)  # Fortran order


def test_icws_ties_take_the_first_feature(pair: tuple[Any, Any]) -> None:
    rs = np.ones((3, 4), dtype=np.float32)
    ln_cs = np.zeros((3, 4), dtype=np.float32)
    betas = np.full((3, 4), 0.5, dtype=np.float32)
    logv = np.zeros(3, dtype=np.float32)
    out = agree(pair, "icws", np.array([2, 0, 3]), logv, np.array([0, 3]), rs, ln_cs, betas, True)
    assert out[0, :, 0].tolist() == [2, 2, 2]
