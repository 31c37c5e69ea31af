"""The native hamming family agrees with its numpy reference: the same arrays (values, order,
pairs) from the functions, the same answers from ``HammingTable`` under any sequence of
operations, and the same errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import native_pair
from neardup.index.hamming import _block_bounds

native, reference = native_pair("hamming")

MASK64 = (1 << 64) - 1


def _masks(bounds: list[tuple[int, int]], words: int) -> np.ndarray:
    masks = np.zeros((len(bounds), words), dtype=np.uint64)
    for j, (s, e) in enumerate(bounds):
        for b in range(s, e):
            masks[j, b // 64] |= np.uint64(1 << (b % 64))
    return masks


@st.composite
def code_sets(draw: st.DrawFn) -> tuple[np.ndarray, list[tuple[int, int]], int]:
    """Codes of 1, 2 or 4 words (near copies of a few seeds), blocks and a radius."""
    words = draw(st.sampled_from([1, 2, 4]))
    bits = 64 * words
    radius = draw(st.integers(0, 6))
    blocks = draw(st.integers(max(radius + 1, words), min(bits, radius + 4)))
    n = draw(st.integers(0, 120))
    rng = np.random.default_rng(draw(st.integers(0, 2**32)))
    seeds = rng.integers(0, 2**64, size=(4, words), dtype=np.uint64)
    codes = seeds[rng.integers(0, 4, size=n)].copy()
    for i in range(n):
        for b in rng.choice(bits, size=int(rng.integers(0, radius + 3)), replace=False):
            codes[i, b // 64] ^= np.uint64(1 << int(b % 64))
    return codes, _block_bounds(bits, blocks), radius


@settings(max_examples=120)
@given(code_sets())
def test_functions_match_reference(case: tuple[np.ndarray, list[tuple[int, int]], int]) -> None:
    codes, bounds, radius = case
    words = codes.shape[1]
    for s, e in bounds[:3]:
        got, want = native.block_values(codes, s, e), reference.block_values(codes, s, e)
        assert got.dtype == want.dtype == np.uint64 and np.array_equal(got, want)
        (gk, go), (wk, wo) = native.block_order(codes, s, e), reference.block_order(codes, s, e)
        assert gk.dtype == np.uint64 and go.dtype == wo.dtype == np.int64
        assert np.array_equal(gk, wk) and np.array_equal(go, wo)  # both sorts are stable
    starts = np.array([s for s, _ in bounds], dtype=np.int64)
    ends = np.array([e for _, e in bounds], dtype=np.int64)
    masks = _masks(bounds, words)
    for r in (0, radius, len(bounds) - 1):
        got = native.all_pairs(codes, starts, ends, masks, r)
        want = reference.all_pairs(codes, starts, ends, masks, r)
        for g, w in zip(got, want, strict=True):
            assert g.dtype == w.dtype == np.int64
            assert np.array_equal(g, w)  # the same pairs in the same order


def test_block_values_straddle_words_and_full_width() -> None:
    rng = np.random.default_rng(3)
    codes = rng.integers(0, 2**64, size=(50, 4), dtype=np.uint64)
    for s, e in [(0, 64), (60, 70), (63, 127), (64, 128), (100, 164), (192, 256), (255, 256)]:
        assert np.array_equal(native.block_values(codes, s, e), reference.block_values(codes, s, e))
        got, want = native.block_order(codes, s, e), reference.block_order(codes, s, e)
        assert all(np.array_equal(g, w) for g, w in zip(got, want, strict=True))


_OPS = st.lists(
    st.tuples(st.sampled_from(["add", "rows", "kill", "query", "scan"]), st.integers(0, 2**31)),
    max_size=60,
)


@settings(max_examples=80)
@given(case=code_sets(), ops=_OPS)
def test_table_matches_reference(
    case: tuple[np.ndarray, list[tuple[int, int]], int], ops: list[tuple[str, int]]
) -> None:
    codes, bounds, radius = case
    words = codes.shape[1]
    if not len(codes):
        codes = np.zeros((1, words), dtype=np.uint64)
    starts = np.array([s for s, _ in bounds], dtype=np.int64)
    ends = np.array([e for _, e in bounds], dtype=np.int64)
    tables = [native.HammingTable(words, starts, ends), reference.HammingTable(words, starts, ends)]
    keys: list[Any] = []
    for op, x in ops:
        code = codes[x % len(codes)]
        if op == "add" and words == 1:
            rows = [t.add_code(int(code[0])) for t in tables]
            assert rows[0] == rows[1] == len(keys)
            keys.append(f"k{len(keys)}")
        elif op in ("add", "rows"):
            k = x % 5
            block = np.ascontiguousarray(codes[[(x + i) % len(codes) for i in range(k)]])
            alive = np.array([(x >> i) & 1 == 0 for i in range(k)], dtype=bool)
            for t in tables:
                t.add_rows(block, alive)
            keys += [f"k{len(keys) + i}" for i in range(k)]
        elif op == "kill" and keys:
            for t in tables:
                t.kill(x % len(keys))
        else:
            r = radius if op == "query" else len(bounds) + x % 3
            got, want = tables[0].query(code, r), tables[1].query(code, r)
            assert all(g.dtype == np.int64 for g in got)
            assert all(np.array_equal(g, w) for g, w in zip(got, want, strict=True))
            if words == 1:
                q = int(code[0])
                assert tables[0].query_keys(q, r, keys) == tables[1].query_keys(q, r, keys)
        assert len(tables[0]) == len(tables[1]) == len(keys)
    assert np.array_equal(tables[0].codes(), tables[1].codes())
    assert tables[0].codes().dtype == np.uint64 and tables[0].codes().shape == (len(keys), words)
    assert np.array_equal(tables[0].alive(), tables[1].alive())
    assert tables[0].alive().dtype == np.bool_


def test_query_keys_agrees_with_brute_force() -> None:
    rng = np.random.default_rng(9)
    base = rng.integers(0, 2**64, size=20, dtype=np.uint64)
    codes = [int(base[i % 20]) ^ (1 << int(b)) for i, b in enumerate(rng.integers(0, 64, 3000))]
    bounds = _block_bounds(64, 4)
    starts = np.array([s for s, _ in bounds], dtype=np.int64)
    ends = np.array([e for _, e in bounds], dtype=np.int64)
    table = native.HammingTable(1, starts, ends)
    for i, c in enumerate(codes):
        assert table.add_code(c) == i
        if i % 7 == 3:
            table.kill(i - 2)
    keys = list(range(len(codes)))
    alive = table.alive()
    for q in codes[:40]:
        for r in (0, 3, 5):
            want = sorted(((c ^ q).bit_count(), i) for i, c in enumerate(codes) if alive[i])
            assert table.query_keys(q, r, keys) == [(i, d) for d, i in want if d <= r]


def _raises_alike(call: Any) -> None:
    with pytest.raises(Exception) as got:
        call(native)
    with pytest.raises(Exception) as want:
        call(reference)
    assert type(got.value) is type(want.value)
    assert str(got.value) == str(want.value)


_STARTS = np.array([0, 16, 32, 48], dtype=np.int64)
_ENDS = np.array([16, 32, 48, 64], dtype=np.int64)


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.block_values(np.zeros((3, 1), np.uint64), 10, 80),
        lambda m: m.block_values(np.zeros((3, 2), np.uint64), 5, 5),
        lambda m: m.block_order(np.zeros((3, 1), np.uint64), -1, 3),
        lambda m: m.all_pairs(
            np.zeros((3, 1), np.uint64), _STARTS, _ENDS[:3], np.zeros((4, 1), np.uint64), 1
        ),
        lambda m: m.all_pairs(
            np.zeros((3, 1), np.uint64), _STARTS, _ENDS, np.zeros((3, 1), np.uint64), 1
        ),
        lambda m: m.HammingTable(0, _STARTS, _ENDS),
        lambda m: m.HammingTable(1, _STARTS, _ENDS + 1),
        lambda m: m.HammingTable(2, _STARTS, _ENDS).add_code(5),
        lambda m: m.HammingTable(1, _STARTS, _ENDS).add_code(-1),
        lambda m: m.HammingTable(1, _STARTS, _ENDS).add_code(1 << 64),
        lambda m: m.HammingTable(1, _STARTS, _ENDS).kill(0),
        lambda m: m.HammingTable(1, _STARTS, _ENDS).query(np.zeros(2, np.uint64), 1),
        lambda m: m.HammingTable(1, _STARTS, _ENDS).query(np.zeros(1, np.uint64), -1),
        lambda m: m.HammingTable(1, _STARTS, _ENDS).query_keys(3, -2, []),
        lambda m: m.HammingTable(2, _STARTS, _ENDS).query_keys(3, 1, []),
        lambda m: m.HammingTable(1, _STARTS, _ENDS).add_rows(
            np.zeros((2, 1), np.uint64), np.ones(3, bool)
        ),
    ],
)
def test_errors_match(call: Any) -> None:
    _raises_alike(call)


def test_native_names_are_the_reference_names() -> None:
    assert sorted(reference.__all__) == sorted(n for n in dir(native) if not n.startswith("_"))
