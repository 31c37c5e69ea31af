"""The store never crashes or lies: wrong SQLite types, flipped bytes and bad headers raise
StoreError (issue 19), and stored-set similarities stay in [0, 1]."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.errors import FormatError, InputError, StoreError
from neardup.sketch.setcodec import (
    StoredSet,
    decode_set,
    encode_sets,
    set_similarity,
)
from neardup.store import Store

KIND, PARAMS = "minhash", "minhash-0123456789abcdef"


def _store(path: Path) -> None:
    with Store.open(path, kind=KIND, params=PARAMS) as store:
        store.add_many(["a", "b"], [b"sketch-a", b"sketch-b"], np.array([[1, 2], [1, 3]]))


def _edit(path: Path, sql: str, *args: object) -> None:
    conn = sqlite3.connect(path)
    conn.execute(sql, args)
    conn.commit()
    conn.close()


def _reads(path: Path) -> None:
    with Store.open(path, kind=KIND, params=PARAMS, create=False) as store:
        store.get("a")
        store.candidates(np.array([1, 0]))
        list(store.iter_sketches())
        store.stats()


@pytest.mark.parametrize(
    ("sql", "value"),
    [
        ("UPDATE chunks SET data = ?", 10**9),  # bytes(int) would allocate 1 GB
        ("UPDATE chunks SET data = ?", "text"),
        ("UPDATE chunks SET data = ?", None),
        ("UPDATE chunks SET checksum = ?", "12"),
        ("UPDATE chunks SET checksum = ?", 1.5),
        ("UPDATE chunks SET n = ?", 7.5),
        ("UPDATE chunks SET n = ?", 99),  # more slots than a chunk has: refused
        ("UPDATE chunks SET n = ?", 1),  # the lengths no longer add up to the data
        ("UPDATE blocks SET data = ? WHERE id = (SELECT min(id) FROM blocks)", "x"),
        ("UPDATE blocks SET checksum = ? WHERE id = (SELECT min(id) FROM blocks)", 2.5),
        ("UPDATE segs SET shift = ?", "x"),
        ("UPDATE segs SET shift = ?", 99),  # out of range: refused, never decoded
        ("UPDATE segs SET doc_bits = ?", 0),
        ("UPDATE meta SET value = ? WHERE name = 'created'", b"\x00"),
        ("UPDATE meta SET value = ? WHERE name = 'stale'", "many"),
        ("UPDATE meta SET value = ? WHERE name = 'docs'", "many"),
    ],
)
def test_wrong_sqlite_types_raise_store_error(tmp_path: Path, sql: str, value: object) -> None:
    db = tmp_path / "s.db"
    _store(db)
    try:
        _edit(db, sql, value)
    except sqlite3.IntegrityError:
        pytest.skip("SQLite itself refuses this value here")
    with pytest.raises(StoreError):
        _reads(db)


def _flip(path: Path, old: bytes, new: bytes) -> None:
    """Replace bytes inside the newest chunk that holds them (checksum left as it was)."""
    conn = sqlite3.connect(path)
    cid, data = conn.execute(
        "SELECT id, data FROM chunks WHERE instr(data, ?) > 0 ORDER BY id DESC", (old,)
    ).fetchone()
    conn.execute("UPDATE chunks SET data = ? WHERE id = ?", (data.replace(old, new), cid))
    conn.commit()
    conn.close()


def test_flipped_sketch_bytes_fail_the_checksum(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    _store(db)
    _flip(db, b"sketch-a", b"sketch-A")  # one byte differs
    with (
        Store.open(db, kind=KIND, params=PARAMS) as store,
        pytest.raises(StoreError, match="checksum"),
    ):
        store.get("a")
    with Store.open(db, kind=KIND, params=PARAMS) as store, pytest.raises(StoreError):
        store.candidates(np.array([1, 0]))  # a candidate read checks it too
    with pytest.raises(StoreError, match="checksum"):
        _store(db)  # a rewrite finds the stored keys through the damaged chunk: refused
    db = tmp_path / "t.db"
    _store(db)
    _flip(db, b"ab", b"ac")  # the keys are covered too (they follow the lengths: "a", "b")
    with (
        Store.open(db, kind=KIND, params=PARAMS) as store,
        pytest.raises(StoreError, match="checksum"),
    ):
        store.get("b")


def test_damaged_schema_version_is_a_store_error(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    _store(db)
    _edit(db, "PRAGMA user_version = -3")
    with pytest.raises(StoreError, match="schema version"):
        _reads(db)


def test_keys_that_are_not_unicode_are_refused(tmp_path: Path) -> None:
    with (
        Store.open(tmp_path / "s.db", kind=KIND, params=PARAMS) as store,
        pytest.raises(InputError, match="surrogate"),
    ):
        store.add("bad\ud800", b"x", np.array([1]))


@pytest.mark.parametrize(
    "blob",
    [
        b"",
        b"S\x01",
        b"X\x01\x0c\x01\x00\x00\x00",  # unknown tag
        b"S\x01\x40\x01\x00\x00\x00",  # width 64 > 32
        b"S\x01\x0c\x00\x00\x00\x00trailing",
        b"S\x01\x0c\xff\xff\xff\x7f" + b"\x00" * 8,  # claims 2**31 values
        b"S\x01\x0c\x02\x00\x00\x00" + b"pco!" + b"\x00" * 16,  # not a pcodec stream
        b"S\x02",  # format 2 (Golomb-Rice): truncated header
        b"S\x02\x40\x01\x01\x80",  # width 64 > 32
        b"S\x02\x0c\x20\x01\x00",  # Rice parameter 32
        b"S\x02\x0c\x01\x00trailing",  # no values, yet a body
        b"S\x02\x0c\x01\xff\xff\xff\xff\x0f",  # claims 2**32 values
        b"S\x02\x0c\x01\x80\x80\x80\x80\x80\x80",  # an unterminated length
        b"S\x02\x0c\x01\x02\x00",  # two values, no unary one
        b"S\x02\x0c\x01\x01\x40\x00\x00",  # more than padding after the value
        b"S\x02\x0a\x00\x01" + b"\x00" * 128 + b"\x80",  # the value 1024 at width 10
    ],
)
def test_malformed_set_blobs_raise_format_error(blob: bytes) -> None:
    with pytest.raises(FormatError):
        decode_set(blob)


def test_unsorted_or_repeated_values_are_refused() -> None:
    from pcodec import ChunkConfig, standalone

    from neardup.sketch.setcodec import encode_sets_pcodec
    from neardup.sketch.sets import rice_encode

    values, offsets = np.array([1 << 62, 2 << 62], np.uint64), np.array([0, 2])
    good = encode_sets_pcodec(values, offsets)[0]  # format 1, as older stores hold
    head = good[:7]
    repeated = standalone.simple_compress(
        np.array([5, 0], np.uint32), ChunkConfig()
    )  # 5, 5: a repeat
    with pytest.raises(FormatError, match="sorted"):
        decode_set(head + repeated)
    assert (
        decode_set(good).values.tolist()
        == decode_set(encode_sets(values, offsets)[0]).values.tolist()
    )
    # format 2: the same repeat, Rice-coded with k = 1
    body = rice_encode(np.array([5, 0], np.uint64), np.array([2]), np.array([1]), np.array([1]))
    with pytest.raises(FormatError, match="sorted"):
        decode_set(b"S\x02\x0c\x01\x02" + body.tobytes())


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n_a=st.integers(0, 400),
    n_b=st.integers(0, 400),
    shared=st.floats(0.0, 1.0),
)
def test_stored_set_similarity_is_a_bounded_symmetric_jaccard(
    seed: int, n_a: int, n_b: int, shared: float
) -> None:
    rng = np.random.default_rng(seed)
    common = rng.integers(0, 2**64, size=int(shared * min(n_a, n_b)), dtype=np.uint64)
    a = np.unique(np.concatenate([common, rng.integers(0, 2**64, n_a, dtype=np.uint64)]))
    b = np.unique(np.concatenate([common, rng.integers(0, 2**64, n_b, dtype=np.uint64)]))
    blobs = encode_sets(np.concatenate([a, b]), np.array([0, a.size, a.size + b.size]))
    x, y = decode_set(blobs[0]), decode_set(blobs[1])
    sim = set_similarity(x, y)
    assert 0.0 <= sim <= 1.0 and sim == set_similarity(y, x)
    if a.size:
        assert set_similarity(x, x) == 1.0
    exact = np.intersect1d(a, b).size / max(1, np.union1d(a, b).size)
    # chance agreements of the cut hashes: a few per thousand values (docs/store.md)
    assert abs(sim - exact) <= 0.01 + 2 / max(1, a.size + b.size)


def test_flipped_lookup_block_bytes_fail_the_checksum(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    _store(db)
    conn = sqlite3.connect(db)
    block_id, data = conn.execute("SELECT id, data FROM blocks").fetchone()
    conn.close()
    flipped = bytes([data[0] ^ 1]) + data[1:]
    _edit(db, "UPDATE blocks SET data = ? WHERE id = ?", flipped, block_id)
    with (
        Store.open(db, kind=KIND, params=PARAMS) as store,
        pytest.raises(StoreError, match="checksum"),
    ):
        store.candidates(np.array([1, 2]))
    # a block moved to another id fails too (the id is covered)
    db = tmp_path / "t.db"
    _store(db)
    _edit(db, "UPDATE blocks SET id = id + 1")
    with (
        Store.open(db, kind=KIND, params=PARAMS) as store,
        pytest.raises(StoreError, match="checksum"),
    ):
        store.compact()


def test_similarity_of_empty_sets_is_zero() -> None:
    empty = StoredSet(np.zeros(0, np.uint32), 10)
    assert set_similarity(empty, empty) == 0.0


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 12))
def test_batched_set_similarities_equal_the_one_by_one_form(seed: int, n: int) -> None:
    from neardup.sketch.setcodec import set_similarities

    rng = np.random.default_rng(seed)
    sizes = rng.choice([0, 3, 40, 90, 200, 700, 3000], size=n)
    offsets = np.zeros(n + 1, np.int64)
    np.cumsum(sizes, out=offsets[1:])
    base = rng.integers(0, 2**64, size=int(sizes.max(initial=0)), dtype=np.uint64)
    values = np.concatenate(
        [np.sort(np.unique(base[: int(k)])) for k in sizes] or [np.zeros(0, np.uint64)]
    ).astype(np.uint64)
    decoded = [decode_set(blob) for blob in encode_sets(values, offsets)]
    a = rng.integers(0, n, size=20)
    b = rng.integers(0, n, size=20)
    got = set_similarities(decoded, a, b)
    want = [set_similarity(decoded[i], decoded[j]) for i, j in zip(a, b, strict=True)]
    assert np.allclose(got, want) and bool(np.all((got >= 0) & (got <= 1)))
