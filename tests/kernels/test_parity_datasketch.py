"""The datasketch family: the native kernels against their numpy twin (hashlib) on
hypothesis token lists, the same errors, and the bits of datasketch 2.0.0 itself."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from twins import same_result

from conftest import native_pair
from neardup.sketch.tokensets import permutations

SCHEMES = ("affine32", "affine64", "legacy")


def pair() -> tuple[Any, Any]:
    return native_pair("datasketch")


# tokens of every length around the one-block limit of SHA-1 (55 bytes), and longer
tokens = st.binary(max_size=130) | st.sampled_from([b"x" * n for n in (54, 55, 56, 63, 64, 65)])


@settings(max_examples=60)
@given(
    st.lists(st.lists(tokens, max_size=30), max_size=8),
    st.sampled_from(SCHEMES),
    st.integers(1, 40),
    st.integers(0, 2**32 - 1),
)
def test_sketch_sets_and_update(sets: list[list[bytes]], scheme: str, k: int, seed: int) -> None:
    native, reference = pair()
    ab = permutations(k, seed, scheme)
    got = native.sketch_sets(sets, ab[0], ab[1], scheme, False)
    same_result(got, reference.sketch_sets(sets, ab[0], ab[1], scheme, False))
    # the same of tuples, bytearrays and memoryviews
    other = tuple(
        tuple(bytearray(t) if i % 2 else memoryview(t) for i, t in enumerate(s)) for s in sets
    )
    same_result(native.sketch_sets(other, ab[0], ab[1], scheme, True), got)
    for row, s in zip(got, sets, strict=True):
        same_result(native.update(row, s[:3], ab[0], ab[1], scheme, False), row)
        same_result(
            native.update(row, [b"more", *s], ab[0], ab[1], scheme, False),
            reference.update(row, [b"more", *s], ab[0], ab[1], scheme, False),
        )
    flat = [t for s in sets for t in s]
    for wide in (False, True):
        same_result(native.sha1_tokens(flat, wide, False), reference.sha1_tokens(flat, wide, False))


class _Bytes(bytes):
    """A bytes subclass (read through the general path, not the exact-bytes run)."""


@pytest.mark.parametrize("scheme", SCHEMES)
def test_batches_across_the_chunk_size(scheme: str) -> None:
    # thousands of tokens: batches fill and flush mid-set, with one-block tokens, longer
    # ones and subclasses interleaved at every position
    native, reference = pair()
    ab = permutations(16, 5, scheme)
    data = bytes(range(256)) * 2
    sets: list[list[bytes]] = [
        [
            _Bytes(data[i % 7 : i % 7 + i % 131]) if i % 97 == 0 else data[i % 5 : i % 5 + i % 131]
            for i in range(size)
        ]
        for size in (1500, 0, 2600, 1, 1023)
    ]
    got = native.sketch_sets(sets, ab[0], ab[1], scheme, False)
    same_result(got, reference.sketch_sets(sets, ab[0], ab[1], scheme, False))
    flat = [t for s in sets for t in s]
    same_result(native.sha1_tokens(flat, True, False), reference.sha1_tokens(flat, True, False))
    texts = [[t.hex() if i % 89 else f"\ud800 é {i}" for i, t in enumerate(s)] for s in sets]
    same_result(
        native.sketch_sets(texts, ab[0], ab[1], scheme, True),
        reference.sketch_sets(texts, ab[0], ab[1], scheme, True),
    )
    # a token of the other kind after a run of one kind: the same error
    for mixed in ([["a"] * 100 + [b"b"]], [[b"a"] * 100 + ["b"]], [["a"] * 100, [b"b"]]):
        errors = []
        for mod in (native, reference):
            with pytest.raises(Exception) as info:
                mod.sketch_sets(mixed, ab[0], ab[1], scheme, True)
            errors.append((type(info.value).__name__, str(info.value)))
        assert errors[0] == errors[1]


@settings(max_examples=40)
@given(st.lists(st.lists(st.text(max_size=20), max_size=10), max_size=5), st.sampled_from(SCHEMES))
def test_str_tokens_are_their_utf8(sets: list[list[str]], scheme: str) -> None:
    native, reference = pair()
    ab = permutations(8, 1, scheme)
    as_bytes = [[t.encode("utf-8", "surrogatepass") for t in s] for s in sets]
    got = native.sketch_sets(sets, ab[0], ab[1], scheme, True)
    same_result(got, reference.sketch_sets(sets, ab[0], ab[1], scheme, True))
    same_result(got, native.sketch_sets(as_bytes, ab[0], ab[1], scheme, False))
    lone = [["\ud800 lone", "ok"]]
    same_result(
        native.sketch_sets(lone, ab[0], ab[1], scheme, True),
        reference.sketch_sets(lone, ab[0], ab[1], scheme, True),
    )


def test_datasketch_bits() -> None:
    ds = pytest.importorskip("datasketch")
    native, _ = pair()
    sets = [[f"w{i} {j}".encode() * (1 + j % 3) for j in range(i)] for i in range(12)]
    for scheme in SCHEMES:
        ab = permutations(64, 3, scheme)
        rows = native.sketch_sets(sets, ab[0], ab[1], scheme, False)
        for row, s in zip(rows, sets, strict=True):
            m = ds.MinHash(64, seed=3, scheme=scheme)
            m.update_batch(s)
            same_result(row, m.hashvalues)


@pytest.mark.parametrize("k", [128, 150, 256])
def test_wide_sketches_of_random_tokens_are_datasketchs(k: int) -> None:
    # random tokens of 0-89 bytes in sets across the batch size, at the widths the
    # registers hold (128 slots a tile, 16 a vector, the rest one by one); a bytearray now and
    # then inside a run of bytes, so that blocks padded outside a run join a hashed group
    ds = pytest.importorskip("datasketch")
    import neardup.compat.datasketch as compat

    native, reference = pair()
    rng = np.random.default_rng(k)
    toks = [rng.bytes(int(n)) for n in rng.integers(0, 90, size=5000)]
    sets: list[list[Any]] = [
        toks[a:b] for a, b in ((0, 40), (40, 1500), (1500, 1500), (1500, 5000))
    ]
    sets[3] = [bytearray(t) if i % 37 == 5 else t for i, t in enumerate(sets[3])]
    plain = [[bytes(t) for t in s] for s in sets]
    for scheme in SCHEMES:
        ab = permutations(k, 7, scheme)
        got = native.sketch_sets(sets, ab[0], ab[1], scheme, False)
        same_result(got, reference.sketch_sets(sets, ab[0], ab[1], scheme, False))
        bulk = compat.MinHash.bulk(plain, num_perm=k, seed=7, scheme=scheme)
        for row, s, m in zip(got, plain, bulk, strict=True):
            want = ds.MinHash(k, seed=7, scheme=scheme)
            want.update_batch(s)
            same_result(row, want.hashvalues)
            same_result(m.hashvalues, want.hashvalues)


def test_errors_are_the_same() -> None:
    native, reference = pair()
    ab32 = permutations(4, 1, "affine32")
    ab64 = permutations(4, 1, "affine64")
    cases = [
        lambda m: m.sketch_sets([["str"]], ab32[0], ab32[1], "affine32", False),
        lambda m: m.sketch_sets([[b"b"], ["s"]], ab32[0], ab32[1], "affine32", True),
        lambda m: m.sketch_sets([["s", 1]], ab32[0], ab32[1], "affine32", True),
        lambda m: m.sketch_sets([[1]], ab32[0], ab32[1], "affine32", False),
        lambda m: m.sketch_sets([[b"a"]], ab32[0], ab32[1], "nope", False),
        lambda m: m.sketch_sets([[b"a"]], ab64[0], ab64[1], "affine32", False),
        lambda m: m.sketch_sets([[b"a"]], ab32[0], ab32[1][:2], "affine32", False),
        lambda m: m.update(np.zeros(3, np.uint32), [b"a"], ab32[0], ab32[1], "affine32", False),
        lambda m: m.update(np.zeros(4, np.uint64), [b"a"], ab32[0], ab32[1], "affine32", False),
        lambda m: m.update(np.zeros(4, np.uint32), ["a"], ab32[0], ab32[1], "affine32", False),
        lambda m: m.sha1_tokens([b"a", "b"], False, True),
    ]
    for case in cases:
        errors = []
        for mod in (native, reference):
            with pytest.raises(Exception) as info:
                case(mod)
            errors.append((type(info.value).__name__, str(info.value)))
        assert errors[0] == errors[1]
