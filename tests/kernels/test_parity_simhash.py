"""The native simhash family agrees bit for bit with its numpy reference (and raises alike)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import native_pair
from neardup._unicode import classes as tables
from neardup.errors import ConfigError
from neardup.packed import pack

native, reference = native_pair("simhash")

MASK64 = (1 << 64) - 1


@st.composite
def grouped(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Feature hashes of 1, 2 or 4 words, weights (unit or signed) and document offsets."""
    words = draw(st.sampled_from([1, 2, 4]))
    n = draw(st.integers(0, 300))
    raw = draw(st.lists(st.integers(0, MASK64), min_size=n * words, max_size=n * words))
    hashes = np.array(raw, dtype=np.uint64).reshape(n, words)
    if draw(st.booleans()):
        weights = np.ones(n, dtype=np.int64)
    else:
        weights = np.array(
            draw(st.lists(st.integers(-(1 << 40), 1 << 40), min_size=n, max_size=n)),
            dtype=np.int64,
        )
    cuts = sorted(draw(st.lists(st.integers(0, n), max_size=8)))
    offsets = np.array([0, *cuts, n], dtype=np.int64)
    return hashes, weights, offsets


@settings(max_examples=150)
@given(grouped())
def test_accumulate_matches_reference(case: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
    hashes, weights, offsets = case
    got = native.simhash_accumulate(hashes, weights, offsets)
    want = reference.simhash_accumulate(hashes, weights, offsets)
    assert got.dtype == want.dtype == np.uint64
    assert got.shape == want.shape
    assert np.array_equal(got, want)


def test_accumulate_many_features_one_document() -> None:
    # more than 255 unit-weight features: the packed byte counters are flushed
    rng = np.random.default_rng(5)
    hashes = rng.integers(0, 2**64, size=(5000, 1), dtype=np.uint64)
    hashes[:, 0] |= np.uint64(1)  # bit 0 set everywhere: the count passes 255 exactly
    for n in (254, 255, 256, 510, 511, 5000):
        offsets = np.array([0, n], dtype=np.int64)
        weights = np.ones(n, dtype=np.int64)
        got = native.simhash_accumulate(hashes[:n], weights, offsets)
        assert np.array_equal(got, reference.simhash_accumulate(hashes[:n], weights, offsets))


# words of ASCII, Latin, Greek, Han and kana, marks, digits and punctuation between them
_PIECES = ["the", "Fox", "ÉTÉ", "Σίσυφος", "漢字", "かな", "e\u0301", "42", "İ", "Ⱥ", "x_y"]
_SEPS = [" ", "  ", ", ", "\n", "—", "!", "\t"]


@st.composite
def texts(draw: st.DrawFn) -> list[str]:
    docs = []
    for _ in range(draw(st.integers(0, 6))):
        words = draw(st.lists(st.sampled_from(_PIECES) | st.text(max_size=4), max_size=30))
        seps = draw(st.lists(st.sampled_from(_SEPS), min_size=len(words), max_size=len(words)))
        docs.append("".join(w + s for w, s in zip(words, seps, strict=True)))
    return docs


@settings(max_examples=150)
@given(
    docs=texts(),
    mask=st.sampled_from([1, 3, 7, 1 | 32, 3 | 8 | 32, 255]),
    min_bytes=st.integers(1, 3),
    k=st.integers(1, 5),
    joined=st.booleans(),
    kind=st.sampled_from([0, 1, 2]),
    seed=st.integers(0, MASK64),
)
def test_words_match_reference(
    docs: list[str], mask: int, min_bytes: int, k: int, joined: bool, kind: int, seed: int
) -> None:
    packed = pack(docs)
    args = (
        packed.buf, packed.offsets, tables.char_classes(), tables.simple_lower(),
        mask, min_bytes, k, joined, kind, np.uint64(seed),
    )  # fmt: skip
    codes, counts = native.simhash_words(*args)
    want_codes, want_counts = reference.simhash_words(*args)
    assert codes.dtype == want_codes.dtype == np.uint64
    assert counts.dtype == want_counts.dtype == np.int64
    assert np.array_equal(codes, want_codes)
    assert np.array_equal(counts, want_counts)


@pytest.mark.parametrize(("k", "kind"), [(0, 1), (-2, 1), (3, 3), (3, -1)])
def test_words_errors_match(k: int, kind: int) -> None:
    packed = pack(["a b c"])
    args = (
        packed.buf, packed.offsets, tables.char_classes(), tables.simple_lower(),
        1, 1, k, True, kind, np.uint64(0),
    )  # fmt: skip
    with pytest.raises(ConfigError) as got:
        native.simhash_words(*args)
    with pytest.raises(ConfigError) as want:
        reference.simhash_words(*args)
    assert str(got.value) == str(want.value)


def test_native_names_are_the_reference_names() -> None:
    assert sorted(reference.__all__) == sorted(n for n in dir(native) if not n.startswith("_"))


def _words_args(buf: bytes, offsets: list[int], mask: int = 1) -> tuple[object, ...]:
    return (
        np.frombuffer(buf, dtype=np.uint8), np.array(offsets, dtype=np.int64),
        tables.char_classes(), tables.simple_lower(), mask, 1, 3, True, 1, np.uint64(0),
    )  # fmt: skip


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (_words_args(b"ok \xff\xfe no", [0, 3, 8]), UnicodeDecodeError),  # not UTF-8
        (_words_args(b"caf\xc3", [0, 4]), UnicodeDecodeError),  # a truncated sequence
        (_words_args(b"a b c", [0, 5], mask=256), OverflowError),  # not a uint8 mask
        (_words_args(b"a b c", [0, 6]), ValueError),  # beyond the buffer
        (_words_args(b"a b c", [3, 1]), ValueError),  # decreasing
    ],
)
def test_words_input_errors_match(args: tuple[object, ...], error: type[Exception]) -> None:
    with pytest.raises(error) as got:
        native.simhash_words(*args)
    with pytest.raises(error) as want:
        reference.simhash_words(*args)
    assert type(got.value) is type(want.value)
    assert str(got.value) == str(want.value)


def test_words_surrogates_pass() -> None:
    """Lone surrogates (``surrogatepass`` UTF-8) are separators on both sides."""
    buf = "a b \ud800 c d".encode("utf-8", "surrogatepass")
    args = _words_args(buf, [0, len(buf)])
    got, want = native.simhash_words(*args), reference.simhash_words(*args)
    assert all(np.array_equal(g, w) for g, w in zip(got, want, strict=True))
