"""Per-call add + query on the hash-table indexes: exact against brute force on both backends,
the same hits as the batch paths, and every index pickles and round-trips through bytes."""

from __future__ import annotations

import pickle
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup._kernels import engine
from neardup.errors import FormatError
from neardup.index.hamming import HammingIndex
from neardup.index.lsh import LSHIndex
from neardup.sketch.minhash import MinHash, MinHasher

_MAX64 = np.uint64(0xFFFFFFFFFFFFFFFF)


@contextmanager
def backend(name: str) -> Iterator[None]:
    with engine.pinned(name):
        yield


def _fold(v: np.ndarray) -> np.ndarray:
    return (v ^ (v >> np.uint64(32))) & np.uint64(0xFFFFFFFF)


def _lsh_brute(
    live: dict[int, np.ndarray], order: list[int], q: np.ndarray, index: LSHIndex
) -> list[tuple[int, float]]:
    """Keys sharing a band (same slots in the same band) with q, by estimate then order."""
    if (q == _MAX64).all():
        return []
    b, r = index.bands, index.rows
    fq = _fold(q)
    hits = []
    for key in order:
        fv = _fold(live[key])
        if (live[key] == _MAX64).all():
            continue
        if any((fv[j * r : (j + 1) * r] == fq[j * r : (j + 1) * r]).all() for j in range(b)):
            hits.append((key, float((fv == fq).mean())))
    return sorted(hits, key=lambda kv: (-kv[1], order.index(kv[0])))


@settings(max_examples=25, deadline=None)
@given(
    picks=st.lists(st.integers(0, 5), min_size=1, max_size=30),
    edits=st.lists(st.tuples(st.integers(0, 29), st.integers(0, 31)), max_size=40),
    removes=st.lists(st.integers(0, 29), max_size=6),
    empty=st.booleans(),
)
def test_lsh_per_call_equals_brute_force(
    picks: list[int], edits: list[tuple[int, int]], removes: list[int], empty: bool
) -> None:
    rng = np.random.default_rng(len(picks))
    base = rng.integers(0, 1 << 40, size=(6, 32), dtype=np.uint64)
    sigs = base[picks].copy()
    for i, c in edits:
        if i < len(sigs):
            sigs[i, c] = np.uint64(c + 7)
    if empty:
        sigs[0] = _MAX64
    mhs = [MinHash(row, "xxh3", "p") for row in sigs]
    for name in ("reference", "fast"):
        with backend(name):
            index = LSHIndex(threshold=0.5, num_perm=32, bands=8, rows=4)
            live: dict[int, np.ndarray] = {}
            order: list[int] = []
            for key, mh in enumerate(mhs):
                index.add(key, mh)
                live[key] = mh.hashvalues
                order.append(key)
                assert index.query(mh) == _lsh_brute(live, order, mh.hashvalues, index)
            for key in removes:
                if key in live:
                    index.remove(key)
                    del live[key]
                    order.remove(key)
            batch = index.query_many(sigs)
            for q, mh in enumerate(mhs):
                want = _lsh_brute(live, order, mh.hashvalues, index)
                assert index.query(mh) == want
                assert batch[q] == want


def _add_then(
    index: Any, op: int, key: int, sketch: object, value: object, live: dict[Any, Any],
    order: list[Any],
) -> Any:  # fmt: skip
    """``index.add(key, sketch)``, then a reader picked by ``op``: 1 removes the key, 2
    pickles the index, 3 round-trips it through bytes (the index to use next is returned)."""
    index.add(key, sketch)
    live[key] = value
    order.append(key)
    if op == 1:
        index.remove(key)
        del live[key]
        order.remove(key)
    elif op == 2:
        index = pickle.loads(pickle.dumps(index))
    elif op == 3:
        index = type(index).from_bytes(index.to_bytes())
    return index


@settings(max_examples=4, deadline=None)
@given(ops=st.lists(st.integers(0, 5), min_size=70, max_size=90))
def test_lsh_deferred_add_is_filed_by_every_reader(ops: list[int]) -> None:
    """``add`` files its sketch at the next read: whatever reads next (a query, that grows
    the table on the way; remove of the key just added; pickle; bytes; another add; pairs)
    sees it, against brute force on both backends."""
    rng = np.random.default_rng(len(ops))
    base = rng.integers(0, 1 << 40, size=(12, 32), dtype=np.uint64)
    sigs = base[rng.integers(0, 12, size=len(ops))]
    sigs[:, 0] = np.arange(len(ops), dtype=np.uint64)  # one slot differs: distinct sketches
    mhs = [MinHash(row, "xxh3", "p") for row in sigs]
    for name in ("reference", "fast"):
        with backend(name):
            index = LSHIndex(threshold=0.5, num_perm=32, bands=8, rows=4)
            live: dict[int, np.ndarray] = {}
            order: list[int] = []
            for key, (op, mh) in enumerate(zip(ops, mhs, strict=True)):
                index = _add_then(index, op, key, mh, mh.hashvalues, live, order)
                if op == 4:
                    n_pairs = sum(1 for _ in index.pairs())
                    assert n_pairs == len(
                        {
                            (a, b)
                            for a in order
                            for b in order
                            if a < b and _lsh_brute({a: live[a]}, [a], live[b], index)
                        }
                    )
                if op != 5:  # 5: the next add comes first
                    assert index.query(mh) == _lsh_brute(live, order, mh.hashvalues, index)
            assert len(index) == len(live)
            for mh in mhs[::7]:
                assert index.query(mh) == _lsh_brute(live, order, mh.hashvalues, index)


def test_lsh_add_then_query_past_the_output_buffer() -> None:
    """Many copies of one sketch: the fused add + query of the same sketch outgrows the hit
    buffer (64) and the table; a query of another sketch after an add; vs brute force."""
    rng = np.random.default_rng(3)
    base = rng.integers(0, 1 << 40, size=32, dtype=np.uint64)
    other = rng.integers(0, 1 << 40, size=32, dtype=np.uint64)
    for name in ("reference", "fast"):
        with backend(name):
            index = LSHIndex(threshold=0.5, num_perm=32, bands=8, rows=4)
            live: dict[int, np.ndarray] = {}
            order: list[int] = []
            for key in range(150):
                row = base.copy()
                row[key % 32] = np.uint64(key)  # all share most bands
                mh = MinHash(row, "xxh3", "p")
                index.add(key, mh)
                live[key] = row
                order.append(key)
                q = mh if key % 5 else MinHash(other, "xxh3", "p")
                assert index.query(q) == _lsh_brute(live, order, q.hashvalues, index)
            assert len(index.query(MinHash(base, "xxh3", "p"))) == 150


def test_growth_keeps_every_hit() -> None:
    """Per-call adds through many growths of the rows and the table (the entries extended,
    the slots rehashed: the index's storage grows in chunks, nothing outside refers to it).
    Every hit stays as brute force finds it."""
    rng = np.random.default_rng(11)
    base = rng.integers(0, 1 << 40, size=(40, 32), dtype=np.uint64)
    codes = [int(x) for x in rng.integers(0, 1 << 62, size=40)]
    lsh = LSHIndex(threshold=0.5, num_perm=32, bands=8, rows=4)
    ham = HammingIndex(64, radius=3)
    live: dict[int, np.ndarray] = {}
    live_codes: dict[int, int] = {}
    order: list[int] = []
    for key in range(600):
        row = base[key % 40].copy()
        row[key % 32] = np.uint64(key)
        code = codes[key % 40] ^ (1 << (key % 64))
        lsh.add(key, MinHash(row, "xxh3", "p"))
        ham.add(key, code)
        live[key], live_codes[key] = row, code
        order.append(key)
        if key % 97 == 0:
            q = MinHash(row, "xxh3", "p")
            assert lsh.query(q) == _lsh_brute(live, order, row, lsh)
            assert ham.query(code) == _ham_brute(live_codes, order, code, 3)
    for key in range(0, 600, 37):
        assert lsh.query(MinHash(live[key], "xxh3", "p")) == _lsh_brute(live, order, live[key], lsh)
        assert ham.query(live_codes[key]) == _ham_brute(live_codes, order, live_codes[key], 3)


def _ham_brute(
    live: dict[int, int], order: list[int], q: int, radius: int
) -> list[tuple[int, int]]:
    hits = [(k, (live[k] ^ q).bit_count()) for k in order if (live[k] ^ q).bit_count() <= radius]
    return sorted(hits, key=lambda kd: (kd[1], order.index(kd[0])))


@settings(max_examples=25, deadline=None)
@given(
    bits=st.sampled_from([64, 128]),
    seeds=st.lists(st.integers(0, 3), min_size=1, max_size=25),
    flips=st.lists(st.lists(st.integers(0, 127), max_size=4), min_size=25, max_size=25),
    replace=st.lists(st.integers(0, 24), max_size=4),
)
def test_hamming_per_call_equals_brute_force(
    bits: int, seeds: list[int], flips: list[list[int]], replace: list[int]
) -> None:
    rng = np.random.default_rng(bits)
    base = [int(x) for x in rng.integers(0, 1 << 62, size=4)]
    base = [(b << (bits - 62)) | b for b in base]
    codes = []
    for i, s in enumerate(seeds):
        c = base[s]
        for f in flips[i]:
            c ^= 1 << (f % bits)
        codes.append(c)
    for name in ("reference", "fast"):
        with backend(name):
            index = HammingIndex(bits, radius=3)
            live: dict[int, int] = {}
            order: list[int] = []
            for key, c in enumerate(codes):
                index.add(key, c)
                live[key] = c
                order.append(key)
                assert index.query(c) == _ham_brute(live, order, c, 3)
            for key in replace:  # replacing moves a key to the end
                if key in live:
                    index.add(key, codes[0])
                    live[key] = codes[0]
                    order.remove(key)
                    order.append(key)
            for c in codes:
                assert index.query(c) == _ham_brute(live, order, c, 3)


@settings(max_examples=6, deadline=None)
@given(ops=st.lists(st.integers(0, 8), min_size=60, max_size=90))
def test_hamming_deferred_add_is_filed_by_every_reader(ops: list[int]) -> None:
    """``add`` of a 64-bit int files the code at the next read: a query of it (fused), of
    another code, remove, replace, add_many, pickle, bytes, keys, pairs; vs brute force on
    both backends (the table and row buffers grow on the way)."""
    rng = np.random.default_rng(len(ops))
    base = [int(x) for x in rng.integers(0, 1 << 63, size=6, dtype=np.int64)]
    codes = [base[i % 6] ^ (1 << int(b)) ^ (1 << int(c)) for i, (b, c) in
             enumerate(rng.integers(0, 64, size=(len(ops), 2)))]  # fmt: skip
    for name in ("reference", "fast"):
        with backend(name):
            index = HammingIndex(64, radius=3)
            live: dict[int, int] = {}
            order: list[int] = []

            for key, (op, c) in enumerate(zip(ops, codes, strict=True)):
                index = _add_then(index, op, key, c, c, live, order)
                if op == 4:
                    assert index.keys() == order
                    want = {
                        (a, b) for i, a in enumerate(order) for b in order[i + 1 :]
                        if (live[a] ^ live[b]).bit_count() <= 3
                    }  # fmt: skip
                    assert {(a, b) for a, b, _ in index.pairs()} == want
                elif op == 5 and order:  # replace an older key (moves it to the end)
                    old = order[0]
                    index.add(old, c)
                    live[old] = c
                    order.remove(old)
                    order.append(old)
                elif op == 6:
                    index.add_many([f"m{key}"], [c ^ 1])
                    live[f"m{key}"] = c ^ 1  # type: ignore[index]
                    order.append(f"m{key}")  # type: ignore[arg-type]
                if op == 7:
                    q = codes[0]  # another code than the one just added
                    assert index.query(q) == _ham_brute(live, order, q, 3)
                elif op != 8:  # 8: the next add comes first
                    assert index.query(c) == _ham_brute(live, order, c, 3)
            assert len(index) == len(live)
            for c in codes[::9]:
                assert index.query(c) == _ham_brute(live, order, c, 3)


@settings(max_examples=10, deadline=None)
@given(
    picks=st.lists(st.integers(0, 3), min_size=2, max_size=40),
    removes=st.lists(st.integers(0, 39), min_size=1, max_size=12),
    flush_at=st.integers(0, 40),
)
def test_hamming_tail_remove_and_flush(picks: list[int], removes: list[int], flush_at: int) -> None:
    """Codes added one at a time stay in the Python tail: removing older tail rows (single
    and shared buckets), a bulk read that moves the tail into the table half-way, and
    queries over table + tail equal brute force on both backends."""
    rng = np.random.default_rng(len(picks))
    base = [0] + [int(x) for x in rng.integers(0, 1 << 63, size=3, dtype=np.int64)]
    codes = [
        base[p] ^ (1 << int(b)) for p, b in zip(picks, rng.integers(0, 64, len(picks)), strict=True)
    ]
    for name in ("reference", "fast"):
        with backend(name):
            index = HammingIndex(64, radius=3)
            live: dict[int, int] = {}
            order: list[int] = []
            for key, c in enumerate(codes):
                if key == flush_at:
                    assert index.keys() == order  # a read of the rows
                    list(index.pairs())  # moves the tail into the table
                index.add(key, c)
                live[key] = c
                order.append(key)
                gone = removes[key % len(removes)] % (key + 1) if removes else -1
                if gone in live and key % 3 == 2:  # an older tail row, or this one
                    index.remove(gone)
                    del live[gone]
                    order.remove(gone)
                assert index.query(c) == _ham_brute(live, order, c, 3)
                assert index.query(codes[0]) == _ham_brute(live, order, codes[0], 3)
            assert len(index) == len(live)
            assert sorted(index.keys()) == sorted(order)
            copy = HammingIndex.from_bytes(index.to_bytes())
            for c in codes[::3]:
                assert copy.query(c) == index.query(c) == _ham_brute(live, order, c, 3)


def _lsh_index() -> LSHIndex:
    h = MinHasher(64)
    texts = ["a b c d e f g h i j k l", "a b c d e f g h i j k m", "p q r s", "x"]
    index = LSHIndex(threshold=0.5, num_perm=64)
    for i, t in enumerate(texts):
        index.add(f"d{i}", h.sketch(t))
    index.remove("d2")
    index.add_many(["d4", "d5"], h.sketch_many(texts[:2]))
    return index


def test_lsh_pickles_and_round_trips_bytes() -> None:
    index = _lsh_index()
    h = MinHasher(64)
    q = h.sketch("a b c d e f g h i j k l")
    for copy in (pickle.loads(pickle.dumps(index)), LSHIndex.from_bytes(index.to_bytes())):
        assert copy.query(q) == index.query(q)
        assert list(copy.pairs()) == list(index.pairs())
        assert len(copy) == len(index) and copy.plan.bands == index.plan.bands
        copy.add("d9", q)  # the copy keeps working and does not share state
        assert "d9" not in index and ("d9", 1.0) in copy.query(q)
    with pytest.raises(FormatError, match="NDLS"):
        LSHIndex.from_bytes(b"nope")
    with pytest.raises(FormatError, match="truncated"):
        LSHIndex.from_bytes(index.to_bytes()[:-3])


def test_hamming_pickles() -> None:
    index = HammingIndex(64, radius=2)
    index.add_many(["a", "b", "c"], [0b1011, 0b1001, 0xFF00])
    index.remove("c")
    copy = pickle.loads(pickle.dumps(index))
    assert copy.query(0b1011) == index.query(0b1011) == [("a", 0), ("b", 1)]
    copy.remove("b")  # a removal must reach the copy's own tables
    assert copy.query(0b1011) == [("a", 0)] and index.query(0b1011)[1] == ("b", 1)
    assert HammingIndex.from_bytes(copy.to_bytes()).query(0b1011) == [("a", 0)]
