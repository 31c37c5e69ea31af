"""The datasketch-family kernels: numba and numpy twins give the same bits (sha1, affine, hll,
weighted, forest), and SHA-1 equals hashlib."""

from __future__ import annotations

import hashlib

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import native_pair
from neardup._kernels import affine as affine_ref
from neardup._kernels import forest as forest_ref
from neardup._kernels import hll as hll_ref
from neardup._kernels import sha1 as sha1_ref
from neardup._kernels import weighted as weighted_ref

affine_fast = native_pair("affine")[0]  # the compiled twin
forest_fast = native_pair("forest")[0]  # the compiled twin
hll_fast = native_pair("hll")[0]  # the compiled twin
sha1_fast = native_pair("sha1")[0]  # the compiled twin
weighted_fast = native_pair("weighted")[0]  # the compiled twin


def _spans(items: list[bytes]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    lengths = np.array([len(x) for x in items], dtype=np.int64)
    ends = np.cumsum(lengths)
    return np.frombuffer(b"".join(items), dtype=np.uint8), ends - lengths, ends


@settings(max_examples=60)
@given(st.lists(st.binary(max_size=200), max_size=20))
def test_sha1_equals_hashlib(items: list[bytes]) -> None:
    buf, s, e = _spans(items)
    want32 = [int.from_bytes(hashlib.sha1(x).digest()[:4], "little") for x in items]
    want64 = [int.from_bytes(hashlib.sha1(x).digest()[:8], "little") for x in items]
    assert sha1_fast.sha1_32(buf, s, e).tolist() == want32 == sha1_ref.sha1_32(buf, s, e).tolist()
    assert sha1_fast.sha1_64(buf, s, e).tolist() == want64 == sha1_ref.sha1_64(buf, s, e).tolist()


def test_sha1_block_boundaries() -> None:
    items = [b"x" * n for n in (0, 1, 55, 56, 63, 64, 65, 119, 120, 127, 128, 1000)]
    buf, s, e = _spans(items)
    np.testing.assert_array_equal(sha1_fast.sha1_32(buf, s, e), sha1_ref.sha1_32(buf, s, e))


@settings(max_examples=40)
@given(
    st.lists(st.integers(0, 2**32 - 1), max_size=60),
    st.lists(st.integers(0, 60), max_size=4),
    st.integers(1, 40),
)
def test_affine_backends_agree(hv: list[int], cuts: list[int], k: int) -> None:
    h = np.array(hv, dtype=np.uint32)
    offsets = np.array([0, *sorted(min(c, len(hv)) for c in cuts), len(hv)], dtype=np.int64)
    rng = np.random.default_rng(k)
    a = (rng.integers(0, 2**31, k, dtype=np.uint32) * np.uint32(2) + np.uint32(1)).astype(np.uint32)
    b = rng.integers(0, 2**32, k, dtype=np.uint64).astype(np.uint32)
    np.testing.assert_array_equal(
        affine_fast.affine32(h, offsets, a, b), affine_ref.affine32(h, offsets, a, b)
    )


@settings(max_examples=40)
@given(
    st.lists(st.integers(0, 2**64 - 1), max_size=80),
    st.integers(4, 12),
    st.sampled_from([32, 64]),
)
def test_hll_backends_agree(hashes: list[int], p: int, bits: int) -> None:
    h = np.array(hashes, dtype=np.uint64)
    if bits == 32:
        h &= np.uint64(0xFFFFFFFF)
    offsets = np.array([0, len(h) // 2, len(h)], dtype=np.int64)
    np.testing.assert_array_equal(
        hll_fast.registers(h, offsets, p, bits), hll_ref.registers(h, offsets, p, bits)
    )


def test_weighted_backends_agree() -> None:
    rng = np.random.default_rng(1)
    dim, size = 30, 24
    rs = rng.gamma(2, 1, (size, dim)).astype(np.float32)
    ln_cs = np.log(rng.gamma(2, 1, (size, dim))).astype(np.float32)
    betas = rng.uniform(0, 1, (size, dim)).astype(np.float32)
    x = (rng.random((12, dim)) * (rng.random((12, dim)) < 0.4)).astype(np.float32)
    x[3] = 0
    rows, cols = np.nonzero(x)
    indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=len(x)))])
    logv = np.log(x[rows, cols])
    for sparse in (True, False):
        args = (cols.astype(np.int64), logv, indptr.astype(np.int64), rs, ln_cs, betas, sparse)
        np.testing.assert_array_equal(weighted_fast.icws(*args), weighted_ref.icws(*args))


def test_forest_backends_agree() -> None:
    rng = np.random.default_rng(2)
    n, trees, k = 300, 4, 6
    sig = rng.integers(0, 4, (n, trees * k), dtype=np.uint32)  # many shared prefixes
    vals = np.empty((trees, n, k), dtype=np.uint32)
    order = np.empty((trees, n), dtype=np.int64)
    for t in range(trees):
        part = sig[:, t * k : (t + 1) * k]
        order[t] = np.lexsort(part.T[::-1])
        vals[t] = part[order[t]]
    live = np.ones(n, dtype=np.uint8)
    live[::7] = 0
    q = np.ascontiguousarray(sig[:25].reshape(25, trees, k))
    for topk in (1, 5, 50):
        got = forest_fast.query(vals, order, live, q, topk)
        want = forest_ref.query(vals, order, live, q, topk)
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])
