"""Chunk rows written from one buffer of blobs (PackedBlobs) equal the per-document rows."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.sketch.setcodec import PackedBlobs, encode_sets, encode_sets_packed
from neardup.store._chunks import SLOTS, decode_chunk, encode_chunks
from neardup.store.sqlite import Store


def _reference_rows(first, keys, sketches, meta, added):
    """The rows as the per-document encoder built them (one ``bytes`` per field)."""
    from neardup.store._chunks import chunk_checksum

    rows = []
    for c, lo in enumerate(range(0, len(keys), SLOTS)):
        hi = min(len(keys), lo + SLOTS)
        notes = [] if meta is None else [b"" if m is None else m.encode() for m in meta[lo:hi]]
        lens = np.array(
            [
                [len(k) for k in keys[lo:hi]],
                [len(s) for s in sketches[lo:hi]],
                [-1] * (hi - lo)
                if meta is None
                else [-1 if m is None else len(b) for m, b in zip(meta[lo:hi], notes, strict=True)],
            ],
            dtype="<i4",
        )
        data = b"".join((lens.tobytes(), *keys[lo:hi], *sketches[lo:hi], *notes))
        rows.append((first + c, hi - lo, added, data, chunk_checksum(first + c, data)))
    return rows


_blob = st.binary(max_size=40)


@settings(max_examples=60, deadline=None)
@given(
    docs=st.lists(
        st.tuples(st.text(max_size=6), _blob, st.none() | st.text(max_size=5)),
        max_size=3 * SLOTS + 3,
    ),
    with_meta=st.booleans(),
    first=st.integers(0, 50),
)
def test_encode_chunks_packed_equals_per_document(docs, with_meta, first):
    keys = [k.encode("utf-8", "surrogatepass") for k, _, _ in docs]
    sketches = [s for _, s, _ in docs]
    meta = [m for _, _, m in docs] if with_meta else None
    want = _reference_rows(first, keys, sketches, meta, 7)
    assert encode_chunks(first, keys, sketches, meta, 7) == want
    assert encode_chunks(first, keys, PackedBlobs.of(sketches), meta, 7) == want
    for cid, n, _, data, _ in want:
        decode_chunk(cid, n, data)


@pytest.mark.parametrize("n", [0, 1, SLOTS - 1, SLOTS, SLOTS + 1, 2 * SLOTS])
def test_encode_chunks_sizes(n):
    keys = [f"k{i}".encode() for i in range(n)]
    sketches = [bytes([i % 256]) * (i % 7) for i in range(n)]
    want = _reference_rows(3, keys, sketches, None, 0)
    assert encode_chunks(3, keys, PackedBlobs.of(sketches), None, 0) == want


def test_packed_blobs_concat_index_iter():
    a = PackedBlobs.of([b"x", b"", b"yz"])
    b = PackedBlobs(b"..abc", np.array([2, 3, 5], dtype=np.int64))  # starts not at 0
    joined = PackedBlobs.concat([a, b, PackedBlobs.of([])])
    assert list(joined) == [b"x", b"", b"yz", b"a", b"bc"]
    assert len(joined) == 5 and joined.size == 6
    assert joined[-1] == b"bc" and joined[3] == b"a"
    with pytest.raises(IndexError):
        joined[5]
    assert list(b) == [b"a", b"bc"] and b.size == 3


def test_encode_sets_packed_equals_encode_sets():
    rng = np.random.default_rng(1)
    sizes = [0, 1, 5, 40]
    values = np.concatenate(
        [np.sort(rng.choice(1 << 62, s, replace=False)).astype(np.uint64) for s in sizes]
    )
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    assert list(encode_sets_packed(values, offsets)) == encode_sets(values, offsets)


def test_add_many_packed_equals_list(tmp_path):
    """The same rows whichever form the sketches come in, re-adds (a key twice) included."""
    keys = [f"d{i % 40}" for i in range(70)]  # keys 0..29 twice: the last occurrence wins
    sketches = [bytes([i]) * (i % 9 + 1) for i in range(70)]
    lookup = np.arange(70 * 4, dtype=np.int64).reshape(70, 4)
    dumps = []
    for form in (list, PackedBlobs.of):
        path = tmp_path / f"{form.__name__}.db"
        with Store.open(str(path), kind="minhash", params="minhash-0123456789abcdef") as s:
            assert s.add_many(keys[:50], form(sketches[:50]), lookup[:50]) == 40
            assert s.add_many(keys[50:], form(sketches[50:]), lookup[50:]) == 20
            assert s.get("d5") == sketches[45] and s.get("d39") == sketches[39]
            dumps.append(
                [
                    list(s._conn.execute(f"SELECT * FROM {t} ORDER BY 1"))
                    for t in ("chunks", "segs", "blocks", "gone")
                ]
            )
    assert dumps[0] != [] and _no_clock(dumps[0]) == _no_clock(dumps[1])


def _no_clock(dump):
    chunks = [r[:2] + r[3:] for r in dump[0]]  # the added time column apart
    return [chunks, *dump[1:]]
