"""The native minhash family against its numpy twin: same bits, same errors (hypothesis)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from twins import agree, same_result

from conftest import native_pair
from neardup._unicode import classes as tables
from neardup.errors import ConfigError

U64 = st.integers(0, 2**64 - 1)


@pytest.fixture(scope="module")
def pair() -> tuple[Any, Any]:
    return native_pair("minhash")


def offsets_of(n: int, cuts: list[int]) -> np.ndarray:
    """``len(cuts) + 1`` documents over ``n`` items (cuts reduced into range, sorted)."""
    inner = sorted(c % (n + 1) for c in cuts)
    return np.array([0, *inner, n], dtype=np.int64)


u64_arrays = st.lists(U64, max_size=60).map(lambda v: np.array(v, dtype=np.uint64))
cuts = st.lists(st.integers(0, 1000), max_size=5)


@given(u64_arrays, cuts, st.integers(1, 6), st.booleans(), U64)
def test_combine_shingles(pair: tuple[Any, Any], toks: np.ndarray, c: list[int], k: int,
                          joined: bool, seed: int) -> None:  # fmt: skip
    agree(pair, "combine_shingles", toks, offsets_of(len(toks), c), k, joined, np.uint64(seed))


@given(st.data(), cuts, st.integers(0, 70), st.sampled_from(["minhash_double32", "minhash_double"]))
def test_double_hashing(pair: tuple[Any, Any], data: st.DataObject, c: list[int], num_perm: int,
                        name: str) -> None:  # fmt: skip
    n = data.draw(st.integers(0, 80))
    lo = np.array(data.draw(st.lists(U64, min_size=n, max_size=n)), dtype=np.uint64)
    hi = np.array(data.draw(st.lists(U64, min_size=n, max_size=n)), dtype=np.uint64)
    agree(pair, name, lo, hi, offsets_of(n, c), num_perm)


@settings(max_examples=30)
@given(st.integers(0, 3000), st.integers(100, 140))
def test_double_hashing_long_documents(pair: tuple[Any, Any], n: int, num_perm: int) -> None:
    rng = np.random.default_rng(n)
    lo = rng.integers(0, 2**64, n, dtype=np.uint64)
    hi = rng.integers(0, 2**64, n, dtype=np.uint64)
    offs = np.array([0, n // 3, n], dtype=np.int64)
    for name in ("minhash_double32", "minhash_double"):
        agree(pair, name, lo, hi, offs, num_perm)


@given(u64_arrays, cuts, st.lists(st.tuples(U64, U64), max_size=40),
       st.sampled_from(["minhash_affine32", "minhash_legacy"]))  # fmt: skip
def test_datasketch_permutations(pair: tuple[Any, Any], hv: np.ndarray, c: list[int],
                                 ab: list[tuple[int, int]], name: str) -> None:  # fmt: skip
    a = np.array([x for x, _ in ab], dtype=np.uint64)
    b = np.array([y for _, y in ab], dtype=np.uint64)
    agree(pair, name, hv, offsets_of(len(hv), c), a, b)
    if len(a):
        agree(pair, name, hv, offsets_of(len(hv), c), a, b[:-1])  # ConfigError


@given(u64_arrays, cuts, st.integers(0, 70), U64)
def test_oph(pair: tuple[Any, Any], h: np.ndarray, c: list[int], num_perm: int, seed: int) -> None:
    agree(pair, "oph", h, offsets_of(len(h), c), num_perm, np.uint64(seed))


@given(st.data(), st.integers(0, 8), st.integers(0, 40))
def test_band_keys(pair: tuple[Any, Any], data: st.DataObject, n: int, width: int) -> None:
    values = data.draw(st.lists(st.integers(0, 2**32 - 1), min_size=n * width,
                                max_size=n * width))  # fmt: skip
    sig = np.array(values, dtype=np.uint32).reshape(n, width)
    bands = data.draw(st.integers(-1, 12))
    rows = data.draw(st.integers(-1, 12))
    agree(pair, "band_keys", sig, bands, rows)
    if n > 1:
        agree(pair, "band_keys", sig[::2], bands, rows)  # strided rows


@given(st.data(), st.integers(0, 6), st.integers(0, 6), st.integers(1, 33))
def test_estimate(pair: tuple[Any, Any], data: st.DataObject, na: int, nb: int, width: int) -> None:
    small = st.integers(0, 3)  # few values: equal slots are common
    a32 = np.array(data.draw(st.lists(small, min_size=na * width, max_size=na * width)),
                   dtype=np.uint32).reshape(na, width)  # fmt: skip
    b32 = np.array(data.draw(st.lists(small, min_size=nb * width, max_size=nb * width)),
                   dtype=np.uint32).reshape(nb, width)  # fmt: skip
    m = data.draw(st.integers(0, 10))
    ai = np.array(data.draw(st.lists(st.integers(-na - 1, na), min_size=m, max_size=m)),
                  dtype=np.int64)  # fmt: skip
    bi = np.array(data.draw(st.lists(st.integers(-nb - 1, nb), min_size=m, max_size=m)),
                  dtype=np.int64)  # fmt: skip
    agree(pair, "estimate", a32, ai, b32, bi)  # out-of-range indices: the same IndexError
    ok_a = ai[(ai >= -na) & (ai < na)]
    ok_b = bi[(bi >= -nb) & (bi < nb)]
    k = min(len(ok_a), len(ok_b))
    agree(pair, "estimate", a32, ok_a[:k], b32, ok_b[:k])
    agree(pair, "estimate", a32, ok_a[:k], b32[:, :0], ok_b[:k])  # widths differ
    agree(pair, "estimate", a32, ok_a[:k], b32, ok_b[: max(k - 1, 0)] if k else ok_b[:1])


@given(st.lists(st.integers(0, 40), max_size=200), st.sampled_from([np.uint32, np.uint64]))
def test_sort_unique(pair: tuple[Any, Any], values: list[int], dtype: type) -> None:
    spread = [v * 0x01000193 for v in values]  # hash-like spread: every bucket path
    run = np.array(spread, dtype=np.uint64).astype(dtype)
    agree(pair, "sort_unique", run)
    agree(pair, "sort_unique", run.astype(np.int64))  # ConfigError
    views = [run.copy(), run.copy()]
    counts = [module.sort_unique(v[::2]) for module, v in zip(pair, views, strict=True)]
    assert counts[0] == counts[1]  # a strided view, sorted in place
    same_result(views[0], views[1])


# --------------------------------------------------------------- the fused sketch

# ASCII words and separators, Latin with accents and combining marks, Greek, Han and kana
# (each a word of its own under IDEOGRAPH), digits, connectors, and a character whose simple
# lowercase is longer in UTF-8 (U+023A -> U+2C65).
alphabet = st.sampled_from(
    [*"aZq9_ -.,\n\t'", "é", "É", "\u0301", "Σ", "ς", "İ", "漢", "字", "の", "カ", "\u023a",
     "\u3099", "٣", "Ⅻ", "\U0001d400", "\u200b", "😀"]
)  # fmt: skip
# long ASCII documents: the ASCII path scans 64-byte blocks (runs across and at block ends)
long_ascii = st.text(st.sampled_from("ab Z9_.\n"), min_size=50, max_size=300)
# long documents of ASCII words with non-ASCII characters in and between them: the ASCII
# path hands each stretch around a non-ASCII byte to the general tokenizer
pieces = st.sampled_from(["abc ", "É", "x_", " ", "漢", "\u0301", "Zz9", "\n", "ς.", "\U0001d400"])
long_mixed = st.lists(pieces, min_size=20, max_size=120).map("".join)
docs = st.lists(
    st.text(alphabet, max_size=60) | st.text(max_size=20) | long_ascii | long_mixed, max_size=6
)
masks = st.sampled_from([1 | 2 | 4 | 16, 1 | 2 | 4 | 16 | 32, 1 | 2 | 8 | 32, 1, 0xFF, 0x1FF, -1])


def packed(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    raw = [t.encode("utf-8", "surrogatepass") for t in texts]
    offs = np.zeros(len(raw) + 1, dtype=np.int64)
    np.cumsum([len(r) for r in raw], out=offs[1:])
    return np.frombuffer(b"".join(raw), dtype=np.uint8).copy(), offs


@settings(max_examples=150)
@given(docs, masks, st.integers(-1, 4), st.integers(1, 6), st.booleans(), U64,
       st.integers(0, 40))  # fmt: skip
def test_sketch_words(pair: tuple[Any, Any], texts: list[str], mask: int, min_bytes: int,
                      k: int, joined: bool, seed: int, num_perm: int) -> None:  # fmt: skip
    buf, offs = packed(texts)
    args = (buf, offs, tables.char_classes(), tables.simple_lower(), mask, min_bytes, k,
            joined, np.uint64(seed), num_perm)  # fmt: skip
    agree(pair, "sketch_words", *args)
    agree(pair, "sketch_words_features", *args, True)
    agree(pair, "sketch_words_features", *args, False)
    agree(pair, "sketch_words_sets32", *args)


def test_sketch_words_ascii_table_refused(pair: tuple[Any, Any]) -> None:
    """Tables that make an ASCII word character a mark (or lowercase it beyond ASCII) send
    ASCII documents down the general path: the same tokens either way."""
    classes = tables.char_classes().copy()
    lower = tables.simple_lower().copy()
    classes[ord("x")] |= tables.MARK
    lower[ord("Q")] = 0x2C65
    buf, offs = packed(["Quick xx fox", "QxQ 漢x", ""])
    for mask in (1 | 2 | 8 | 32, 1):
        args = (buf, offs, classes, lower, mask, 1, 2, True, np.uint64(7), 16)
        agree(pair, "sketch_words", *args)
        agree(pair, "sketch_words_sets32", *args)


def test_sketch_words_long_documents(pair: tuple[Any, Any]) -> None:
    rng = np.random.default_rng(5)
    words = ["alpha", "Beta", "gamma", "délta", "漢字", "x", "yy"]
    texts = [" ".join(rng.choice(words, size=n)) for n in (0, 1, 4, 5, 300, 2000)]
    buf, offs = packed(texts)
    for num_perm in (128, 7, 1):
        args = (buf, offs, tables.char_classes(), tables.simple_lower(), 1 | 2 | 4 | 16, 1, 5,
                True, np.uint64(0x00C0FFEE5EED), num_perm)  # fmt: skip
        agree(pair, "sketch_words", *args)
        agree(pair, "sketch_words_features", *args, True)
        agree(pair, "sketch_words_sets32", *args)


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("combine_shingles", (np.zeros(3, np.uint64), np.array([0, 3]), 0, True, np.uint64(1))),
        ("minhash_double32", (np.zeros(0, np.uint64), np.zeros(0, np.uint64), np.array([0]), -1)),
        ("minhash_double", (np.zeros(0, np.uint64), np.zeros(0, np.uint64), np.array([0]), -2)),
        ("oph", (np.zeros(1, np.uint64), np.array([0, 1]), 0, np.uint64(1))),
        ("band_keys", (np.zeros((2, 8), np.uint32), 3, 3)),
        ("band_keys", (np.zeros((2, 8), np.uint32), -1, 3)),
        ("sort_unique", ([3, 1],)),
        ("sort_unique", (np.zeros((2, 2), np.uint32),)),
    ],
)
def test_config_errors(pair: tuple[Any, Any], name: str, args: tuple[Any, ...]) -> None:
    native, reference = pair
    messages = []
    for module in (native, reference):
        with pytest.raises(ConfigError) as info:
            getattr(module, name)(*args)
        messages.append(str(info.value))
    assert messages[0] == messages[1]


@pytest.mark.parametrize(
    "bad",
    [{"k": 0}, {"num_perm": -1}, {"classes": np.zeros(10, np.uint8)}],
)
def test_sketch_words_errors(pair: tuple[Any, Any], bad: dict[str, Any]) -> None:
    buf, offs = packed(["a b c"])
    kw: dict[str, Any] = {"classes": tables.char_classes(), "k": 2, "num_perm": 8, **bad}
    args = (buf, offs, kw["classes"], tables.simple_lower(), 1, 1, kw["k"], True,
            np.uint64(0), kw["num_perm"])  # fmt: skip
    for name in ("sketch_words", "sketch_words_sets32"):
        agree(pair, name, *args)
        with pytest.raises(ConfigError):
            getattr(pair[0], name)(*args)


def test_sort_unique_read_only(pair: tuple[Any, Any]) -> None:
    run = np.array([3, 1, 3], dtype=np.uint32)
    run.setflags(write=False)
    for module in pair:
        with pytest.raises(ValueError, match="read-only"):
            module.sort_unique(run)


def test_bad_offsets_are_refused(pair: tuple[Any, Any]) -> None:
    """The native kernels check offsets before reading (the reference reads what it is given)."""
    native, _ = pair
    toks = np.zeros(4, np.uint64)
    for offs in ([], [0, 5], [2, 1], [-1, 2]):
        with pytest.raises(ValueError, match=r"offset|tok_offsets"):
            native.combine_shingles(toks, np.array(offs, dtype=np.int64), 2, True, np.uint64(0))
