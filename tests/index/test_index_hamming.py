"""HammingIndex: exact against brute force (both backends), updates, persistence, bad input."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup._kernels import engine
from neardup.errors import ConfigError, FormatError, IncompatibleSketchError, InputError
from neardup.index.hamming import HammingIndex
from neardup.sketch.simhash import SimHash, SimHasher


@contextmanager
def backend(name: str) -> Iterator[None]:
    with engine.pinned(name):
        yield


def planted(seed: int, n: int, bits: int, radius: int) -> list[int]:
    """Random codes where about half are copies of earlier ones with 0..radius+1 bit flips."""
    rng = np.random.default_rng(seed)
    codes: list[int] = []
    for _ in range(n):
        if codes and rng.random() < 0.5:
            c = codes[int(rng.integers(len(codes)))]
            for b in rng.choice(bits, size=int(rng.integers(0, radius + 2)), replace=False):
                c ^= 1 << int(b)
        else:
            c = int.from_bytes(rng.bytes(bits // 8), "little")
        codes.append(c)
    return codes


def brute_pairs(codes: dict[int, int], radius: int) -> list[tuple[int, int, int]]:
    keys = sorted(codes)
    out = []
    for a, b in itertools.combinations(keys, 2):
        d = (codes[a] ^ codes[b]).bit_count()
        if d <= radius:
            out.append((a, b, d))
    return out


def brute_query(codes: dict[int, int], q: int, radius: int) -> list[tuple[int, int]]:
    hits = [(k, (c ^ q).bit_count()) for k, c in codes.items()]
    return sorted([h for h in hits if h[1] <= radius], key=lambda h: (h[1], h[0]))


@settings(max_examples=60)
@given(
    st.integers(0, 2**32),
    st.sampled_from([64, 128, 256]),
    st.integers(0, 5),
    st.integers(0, 2),
    st.integers(2, 90),
    st.sampled_from(["fast", "reference"]),
)
def test_query_and_pairs_equal_brute_force(
    seed: int, bits: int, radius: int, extra: int, n: int, kernels: str
) -> None:
    blocks = max(radius + 1, bits // 64) + extra
    codes = planted(seed, n, bits, radius)
    with backend(kernels):
        index = HammingIndex(bits, radius, blocks=blocks)
        index.add_many(list(range(n)), codes)
        live = dict(enumerate(codes))
        for k in range(0, n, 3):  # removals
            index.remove(k)
            del live[k]
        assert len(index) == len(live)
        for r in range(blocks):
            assert list(index.pairs(r)) == brute_pairs(live, r)
        for q in codes[:10]:
            for r in (0, radius, blocks - 1, blocks + 2):
                assert index.query(q, r) == brute_query(live, q, r)


@pytest.mark.parametrize("bits", [64, 128, 256])
def test_large_fast_equals_reference(bits: int) -> None:
    """Past the delta threshold (sorted tables in use), with compaction after many removals."""
    codes = planted(7, 3000, bits, 3)
    keys = [f"k{i}" for i in range(len(codes))]
    results = []
    for kernels in ("fast", "reference"):
        with backend(kernels):
            index = HammingIndex(bits, 3)
            index.add_many(keys[:2000], codes[:2000])
            for i in range(1000):
                index.add(keys[2000 + i], codes[2000 + i])
            for k in keys[::2]:
                index.remove(k)
            pairs = list(index.pairs())
            hits = [index.query(c) for c in codes[:50]]
            results.append((pairs, hits))
    assert results[0] == results[1]
    live = {i: c for i, c in enumerate(codes) if i % 2}
    want = [(f"k{a}", f"k{b}", d) for a, b, d in brute_pairs(live, 3)]
    assert results[0][0] == want
    assert len(want) > 100


def test_insertion_order_and_replacement() -> None:
    index = HammingIndex(64, 2)
    index.add("a", 0b11)
    index.add("b", 0b01)
    index.add("c", 0b11)
    assert index.query(0b11) == [("a", 0), ("c", 0), ("b", 1)]
    index.add("a", 0b11)  # replacing moves a key to the end of the insertion order
    assert index.query(0b11) == [("c", 0), ("a", 0), ("b", 1)]
    index.add_many(["d", "d"], [0b111, 0b1111])  # the last code of a repeated key wins
    assert ("d", 2) in index.query(0b11)
    assert len(index) == 4
    assert "d" in index
    assert index.keys() == ["b", "c", "a", "d"]


def test_codes_as_simhash_and_numpy_rows() -> None:
    h = SimHasher(128)
    docs = ["the cat sat on the mat", "the cat sat on the mat!", "something else entirely"]
    sketches = [h.sketch(d) for d in docs]
    index = HammingIndex(128, 3)
    index.add_many(["x", "y", "z"], h.sketch_many(docs))
    assert index.query(sketches[0])[:2] == [("x", 0), ("y", 0)]
    index.add("w", sketches[2])
    assert index.query(h.sketch_many(docs[2:])[0], 0) == [("z", 0), ("w", 0)]
    with pytest.raises(IncompatibleSketchError, match="made with"):
        index.add("v", SimHash(1, 128, SimHasher(128, seed=9).params))
    with pytest.raises(IncompatibleSketchError, match="64-bit"):
        index.query(SimHasher().sketch("x"))


def test_image_hash_ints_and_uint64_arrays() -> None:
    index = HammingIndex(64, 3)
    index.add_many([1, 2], np.array([0xFFFF_0000_0000_0000, 0xFFFF_0000_0000_0001], np.uint64))
    index.add(3, np.uint64(7))
    assert index.query(np.array([0xFFFF_0000_0000_0000], dtype=np.uint64)) == [(1, 0), (2, 1)]
    assert list(index.pairs()) == [(1, 2, 1)]


def test_persistence_round_trip() -> None:
    codes = planted(3, 800, 128, 3)
    index = HammingIndex(128, 3, blocks=5)
    index.add_many([f"d{i}" for i in range(800)], codes)
    index.add_many(list(range(10)), codes[:10])
    index.remove("d5")
    index.add("h", SimHasher(128).sketch("hello"))
    back = HammingIndex.from_bytes(index.to_bytes())
    assert (back.bits, back.radius, back.blocks, len(back)) == (128, 3, 5, len(index))
    assert back.keys() == index.keys()
    assert list(back.pairs()) == list(index.pairs())
    assert back.query(codes[7]) == index.query(codes[7])
    with pytest.raises(IncompatibleSketchError):
        back.add("other", SimHash(0, 128, SimHasher(128, seed=1).params))


def test_persistence_refuses_unsaveable_keys() -> None:
    index = HammingIndex()
    index.add(("tuple", 1), 5)
    with pytest.raises(InputError, match="str and int"):
        index.to_bytes()


@pytest.mark.parametrize(
    "mutate",
    [
        lambda b: b"",
        lambda b: b"XXXX" + b[4:],
        lambda b: b[:4] + b"\x02" + b[5:],
        lambda b: b[:-1],
        lambda b: b + b"\x00",
        lambda b: b[:6] + (96).to_bytes(2, "little") + b[8:],
        lambda b: b[:30],
    ],
)
def test_malformed_index_bytes(mutate: object) -> None:
    index = HammingIndex(64, 3)
    index.add_many(["a", "b"], [1, 2])
    data = index.to_bytes()
    with pytest.raises(FormatError):
        HammingIndex.from_bytes(mutate(data))  # type: ignore[operator]
    with pytest.raises(FormatError):
        HammingIndex.from_bytes("text")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"bits": 32}, "bits"),
        ({"radius": -1}, "radius"),
        ({"radius": 64}, "radius"),
        ({"radius": 1.5}, "radius"),
        ({"radius": 3, "blocks": 3}, "blocks"),
        ({"bits": 256, "radius": 1, "blocks": 2}, "blocks"),
        ({"blocks": 65}, "blocks"),
    ],
)
def test_bad_config(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        HammingIndex(**kwargs)  # type: ignore[arg-type]


def test_bad_codes_and_radii() -> None:
    index = HammingIndex(64, 3)
    index.add("a", 1)
    with pytest.raises(InputError, match="64 bits"):
        index.add("b", 1 << 64)
    with pytest.raises(InputError, match="64 bits"):
        index.query(-1)
    with pytest.raises(InputError, match="shape"):
        index.add_many(["x"], np.zeros((1, 2), dtype=np.uint64))
    with pytest.raises(InputError, match="negative"):
        index.add_many(["x"], np.array([-5], dtype=np.int64))
    with pytest.raises(InputError, match="unsigned"):
        index.add_many(["x"], np.array([1.0]))
    with pytest.raises(InputError, match="keys"):
        index.add_many(["x", "y"], [1])
    with pytest.raises(InputError, match="code must be"):
        index.add("x", "ff")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="one code"):
        index.query(np.zeros((2, 1), dtype=np.uint64))
    with pytest.raises(InputError, match="not in the index"):
        index.remove("missing")
    with pytest.raises(ConfigError, match="radius"):
        index.query(1, -1)
    with pytest.raises(ConfigError, match="radius"):
        index.query(1, 65)
    with pytest.raises(ConfigError, match="blocks"):
        list(index.pairs(4))
    assert index.query(1, 64) == [("a", 0)]  # beyond the blocks: an exact linear scan


def test_repeated_keys_in_a_first_bulk_add() -> None:
    """Into an empty index, the last code of a repeated key wins (and dead rows stay out)."""
    index = HammingIndex(64, 3)
    index.add_many(["a", "b", "a", "c", "b"], [0b1, 0b10, 0b111, 0b1000, 0b11])
    assert index.keys() == ["a", "c", "b"]
    assert len(index) == 3
    assert index.query(0b111, 0) == [("a", 0)]
    assert index.query(0b10, 0) == []
    assert index.query(0b11, 1) == [("b", 0), ("a", 1)]
    assert list(index.pairs(3)) == [("a", "b", 1), ("c", "b", 3)]


def test_reads_the_state_of_the_buffer_version() -> None:
    """A pickle of the index before the compiled table: row buffers longer than the rows."""
    state = HammingIndex(64, 2).__getstate__()
    del state["_codes"], state["_alive"]
    state["_codes_buf"] = np.array([[0b1011], [0b1001], [0xFF00], [0]], dtype=np.uint64)
    state["_alive_buf"] = np.array([True, True, False, False])
    state["_keys"], state["_rows"] = ["a", "b", "c"], {"a": 0, "b": 1}
    index = HammingIndex.__new__(HammingIndex)
    index.__setstate__(state)
    assert index.query(0b1011) == [("a", 0), ("b", 1)]
    assert index.keys() == ["a", "b"] and len(index) == 2
