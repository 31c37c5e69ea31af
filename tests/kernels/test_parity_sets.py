"""The native sets family against its numpy twin: same bits, same errors, on hypothesis inputs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from twins import both, same

from conftest import native_pair
from neardup.errors import ConfigError

I64 = np.int64
U64 = np.uint64

small = st.integers(0, 40)
wide = st.integers(0, 2**64 - 1) | small.map(lambda x: x << 32)


def csr(docs: list[list[int]], dtype: type = np.uint64) -> tuple[np.ndarray, np.ndarray]:
    values: np.ndarray = np.array([v for d in docs for v in d], dtype=dtype)
    offsets = np.cumsum([0] + [len(d) for d in docs]).astype(I64)
    return values, offsets


@given(st.lists(st.lists(wide, max_size=30), max_size=8))
def test_unique_per_doc(docs: list[list[int]]) -> None:
    native, reference = native_pair("sets")
    values, offsets = csr(docs)
    both(native.unique_per_doc, reference.unique_per_doc, values, offsets)
    both(native.unique_per_doc32, reference.unique_per_doc32, values, offsets)


@given(
    st.lists(st.lists(small, max_size=30), min_size=1, max_size=8),
    st.sampled_from([np.uint32, np.uint64]),
    st.data(),
)
def test_intersections(docs: list[list[int]], dtype: type, data: st.DataObject) -> None:
    native, reference = native_pair("sets")
    # sorted runs, with repeats allowed (a merge counts the smaller count of each value)
    values, offsets = csr([sorted(d) for d in docs], dtype)
    n = len(docs)
    k = data.draw(st.integers(0, 12))
    a = np.array(data.draw(st.lists(st.integers(0, n - 1), min_size=k, max_size=k)), I64)
    b = np.array(data.draw(st.lists(st.integers(0, n - 1), min_size=k, max_size=k)), I64)
    got = both(native.intersections, reference.intersections, values, offsets, a, b)
    for x, y, c in zip(a.tolist(), b.tolist(), got.tolist(), strict=True):
        p, q = sorted(docs[x]), sorted(docs[y])
        assert c == sum(min(p.count(v), q.count(v)) for v in set(p))


@given(st.integers(0, 30), st.lists(st.tuples(st.integers(0, 29), st.integers(0, 29)), max_size=60))
def test_components(n: int, edges: list[tuple[int, int]]) -> None:
    native, reference = native_pair("sets")
    edges = [(a % n, b % n) for a, b in edges] if n else []
    a = np.array([e[0] for e in edges], I64)
    b = np.array([e[1] for e in edges], I64)
    both(native.components, reference.components, n, a, b)


@given(
    st.lists(st.tuples(st.integers(0, 5), st.integers(0, 30)), max_size=60),
    st.integers(-1, 8),
    st.integers(-1, 3),
    st.integers(1, 3),
)
def test_bucket_pairs(buckets: list[tuple[int, int]], cap: int, radius: int, words: int) -> None:
    native, reference = native_pair("sets")
    buckets = sorted(buckets, key=lambda kv: kv[0])  # keys sorted, items in any order
    keys = np.array([k for k, _ in buckets], dtype=U64)
    items = np.array([i for _, i in buckets], dtype=I64)
    # codes by position (an item repeated in a bucket may carry other codes)
    rng = np.random.default_rng(len(buckets))
    codes = rng.integers(0, 8, size=(len(keys), words)).astype(U64)
    if radius < 0:
        codes = np.zeros((0, 1), dtype=U64)
    both(native.bucket_pairs, reference.bucket_pairs, keys, items, codes, I64(cap), I64(radius))


@given(st.lists(st.tuples(st.integers(0, 9), st.integers(-5, 2**40)), max_size=80))
def test_unique_pairs(pairs: list[tuple[int, int]]) -> None:
    native, reference = native_pair("sets")
    a = np.array([p[0] for p in pairs], dtype=I64)
    b = np.array([p[1] for p in pairs], dtype=I64)
    both(native.unique_pairs, reference.unique_pairs, a, b, I64(10))


@given(
    st.integers(1, 30),
    st.lists(
        st.tuples(st.integers(0, 29), st.integers(0, 29), st.sampled_from([0.5, 0.7, 0.9, 1.0])),
        max_size=60,
    ),
)
def test_center(n: int, raw: list[tuple[int, int, float]]) -> None:
    native, reference = native_pair("sets")
    edges = [(a % n, b % n, s) for a, b, s in raw]  # self pairs too: the pass skips them
    i = np.array([e[0] for e in edges], dtype=I64)
    j = np.array([e[1] for e in edges], dtype=I64)
    sim = np.array([e[2] for e in edges], dtype=np.float64)
    indptr, nbr, edge = both(native.center_adjacency, reference.center_adjacency, n, i, j)
    both(native.center_pass, reference.center_pass, indptr, nbr, edge, sim)


@given(
    st.lists(st.tuples(st.integers(0, 40), st.lists(st.integers(0, 5000), max_size=40)), max_size=6)
)
def test_rice_encode_decode(docs: list[tuple[int, list[int]]]) -> None:
    native, reference = native_pair("sets")
    deltas = np.array([d for _, ds in docs for d in ds], dtype=U64)
    counts = np.array([len(ds) for _, ds in docs], dtype=I64)
    k = np.array([kk for kk, _ in docs], dtype=I64)
    bits = [len(ds) * (kk + 1) + sum(d >> kk for d in ds) for kk, ds in docs]
    nbytes = np.array([(b + 7) // 8 for b in bits], dtype=I64)
    body = both(native.rice_encode, reference.rice_encode, deltas, counts, k, nbytes)
    starts = np.concatenate(([0], np.cumsum(nbytes))).astype(I64)
    both(native.rice_decode, reference.rice_decode, body, starts, counts, k)


@given(st.binary(max_size=40), st.data())
def test_rice_decode_damaged(body: bytes, data: st.DataObject) -> None:
    """Any bytes decode the same way on both twins: the low parts read, the blobs flagged."""
    native, reference = native_pair("sets")
    raw = np.frombuffer(body, dtype=np.uint8)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(body)), max_size=4)))
    starts = np.array([0, *cuts, len(body)], dtype=I64)
    blobs = len(starts) - 1
    counts = np.array(data.draw(st.lists(st.integers(0, 6), min_size=blobs, max_size=blobs)), I64)
    k = np.array(data.draw(st.lists(st.integers(0, 63), min_size=blobs, max_size=blobs)), I64)
    both(native.rice_decode, reference.rice_decode, raw, starts, counts, k)


@given(
    st.lists(st.lists(st.integers(0, 2**64 - 1), max_size=300), max_size=6),
    st.sampled_from([0, 40, 54]),
    st.integers(1, 16),
    st.integers(16, 32),
)
def test_rice_sets(docs: list[list[int]], shift: int, margin: int, max_width: int) -> None:
    native, reference = native_pair("sets")
    values, offsets = csr([sorted({v >> shift for v in d}) for d in docs])
    both(native.rice_sets, reference.rice_sets, values, offsets, margin, max_width)


@given(
    st.lists(st.lists(st.integers(0, 2**32 - 1), max_size=300), max_size=6),
    st.sampled_from([0, 8, 22]),
    st.integers(1, 16),
    st.integers(16, 32),
)
def test_rice_sets32(docs: list[list[int]], shift: int, margin: int, max_width: int) -> None:
    native, reference = native_pair("sets")
    values, offsets = csr([sorted({v >> shift for v in d}) for d in docs], np.uint32)
    both(native.rice_sets32, reference.rice_sets32, values, offsets, margin, max_width)
    wide = values.astype(U64) << U64(32)  # the same blobs as the widened values'
    same(
        lambda: native.rice_sets32(values, offsets, margin, max_width),
        lambda: native.rice_sets(wide, offsets, margin, max_width),
    )


def test_rice_sets_long_unary_parts() -> None:
    native, reference = native_pair("sets")
    for gap in (31, 32, 33, 64, 200, 5000):
        values = np.array([*(i << 46 for i in range(200)), (199 + 2 * gap) << 46], dtype=U64)
        offsets = np.array([0, len(values)], dtype=I64)
        both(native.rice_sets, reference.rice_sets, values, offsets, 10, 32)


def _raises(native: object, reference: object, name: str, *args: object) -> None:
    with pytest.raises(ConfigError):
        both(getattr(native, name), getattr(reference, name), *args)


def test_the_same_errors() -> None:
    native, reference = native_pair("sets")
    v = np.array([1, 2, 3], dtype=U64)
    e = np.empty(0, dtype=I64)
    for offsets in ([0, 2], [1, 3], [0, 3, 2, 3], []):
        o = np.array(offsets, dtype=I64)
        _raises(native, reference, "unique_per_doc", v, o)
        _raises(native, reference, "unique_per_doc32", v, o)
        _raises(native, reference, "intersections", v, o, e, e)
        _raises(native, reference, "rice_sets", v, o, 10, 32)
    o = np.array([0, 1, 3], dtype=I64)
    _raises(native, reference, "intersections", v, o, np.array([0, 2], I64), np.array([0, 0], I64))
    _raises(native, reference, "intersections", v, o, np.array([0], I64), np.array([-1], I64))
    _raises(native, reference, "intersections", v, o, np.array([0], I64), e)
    _raises(native, reference, "rice_sets", v[::-1].copy(), o, 10, 32)
    _raises(native, reference, "rice_sets32", v.astype(np.uint32)[::-1].copy(), o, 10, 32)
    _raises(native, reference, "rice_sets32", v.astype(np.uint32), np.array([0, 4], I64), 10, 32)
    _raises(native, reference, "intersections", v[::-1].copy(), o, e, e)
    for margin, width in ((0, 32), (11, 10), (10, 33)):
        _raises(native, reference, "rice_sets", v, o, margin, width)
        _raises(native, reference, "rice_sets32", v.astype(np.uint32), o, margin, width)
    _raises(native, reference, "components", 3, np.array([0, 3], I64), np.array([1, 1], I64))
    _raises(native, reference, "components", -1, e, e)
    _raises(native, reference, "components", 3, np.array([0], I64), e)
    _raises(native, reference, "unique_pairs", np.array([0, 5], I64), np.array([0, 0], I64), I64(5))
    _raises(native, reference, "center_adjacency", 2, np.array([0], I64), np.array([2], I64))
    f = np.array([0.5])
    for indptr, nbr, edge in (
        ([0, 1], [0], [1]),
        ([0, 2], [0], [0]),
        ([0, 1], [1], [0]),
        ([0, 1], [0], [0, 0]),
    ):
        args = (np.array(indptr, I64), np.array(nbr, I64), np.array(edge, I64), f)
        _raises(native, reference, "center_pass", *args)
    keys = np.array([2, 1], dtype=U64)
    items = np.array([0, 1], dtype=I64)
    codes = np.zeros((1, 1), dtype=U64)
    _raises(native, reference, "bucket_pairs", keys, items, codes, I64(4), I64(-1))
    _raises(native, reference, "bucket_pairs", keys[::-1].copy(), items, codes, I64(4), I64(1))
    _raises(native, reference, "bucket_pairs", keys[:1].copy(), items, codes, I64(4), I64(-1))
    d = np.array([5, 1], dtype=U64)
    one = np.array([1], I64)
    for counts, k, nbytes in (([2], [1], [0]), ([1], [1], [1]), ([2], [64], [9]), ([-1], [1], [1])):
        enc = (d, np.array(counts, I64), np.array(k, I64), np.array(nbytes, I64))
        _raises(native, reference, "rice_encode", *enc)
    _raises(native, reference, "rice_encode", d, np.array([2], I64), one, np.array([1, 1], I64))
    body = np.array([204], dtype=np.uint8)
    for starts, counts, k in (([0, 2], [2], [1]), ([0], [2], [1]), ([0, 1], [2], [-1])):
        dec = (body, np.array(starts, I64), np.array(counts, I64), np.array(k, I64))
        _raises(native, reference, "rice_decode", *dec)
