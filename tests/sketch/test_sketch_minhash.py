"""MinHasher and MinHash: txtfp goldens, datasketch parity, unbiased estimates, formats, errors."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup._kernels import engine
from neardup.errors import (
    ConfigError,
    EmptyInputError,
    FormatError,
    IncompatibleSketchError,
    InputError,
)
from neardup.sketch.minhash import MinHash, MinHasher
from neardup.tokenize import NgramTokenizer, ShingleTokenizer, WordTokenizer

TXTFP = Path(__file__).parents[1] / "golden" / "vectors" / "txtfp"
STEMS = sorted(p.stem for p in (TXTFP / "corpora").iterdir())
T = TypeVar("T")


@contextmanager
def backend(name: str) -> Iterator[None]:
    with engine.pinned(name):
        yield


def both(fn: Callable[[], T]) -> tuple[T, T]:
    with backend("fast"):
        fast = fn()
    with backend("reference"):
        ref = fn()
    return fast, ref


# ---------------------------------------------------------------- txtfp goldens


def test_txtfp_goldens_byte_for_byte() -> None:
    assert len(STEMS) == 6
    corpora = {p.stem: p for p in (TXTFP / "corpora").iterdir()}
    hasher = MinHasher(preset="txtfp")
    for stem in STEMS:
        golden = (TXTFP / "golden" / "minhash" / f"{stem}_h128_k5.bin").read_bytes()
        assert len(golden) == 1032
        mh = hasher.sketch(corpora[stem].read_text(encoding="utf-8"))
        assert mh.to_bytes() == golden, stem
        assert MinHash.from_bytes(golden) == mh
        assert MinHash.from_bytes(mh.to_bytes(layout="neardup")) == mh
    lorem = hasher.sketch(corpora["lorem_ipsum"].read_text(encoding="utf-8"))
    assert f"{int(lorem.hashvalues[0]):016x}" == "000cf57da4c86993"


def test_txtfp_goldens_reference_backend() -> None:
    text = (TXTFP / "corpora" / "mixed_script.txt").read_text(encoding="utf-8")
    golden = (TXTFP / "golden" / "minhash" / "mixed_script_h128_k5.bin").read_bytes()
    fast, ref = both(lambda: MinHasher(preset="txtfp").sketch(text).to_bytes())
    assert fast == ref == golden


def test_txtfp_empty_and_fixed_pipeline() -> None:
    h = MinHasher(preset="txtfp")
    for text in ("", "   ", "!!! ..."):
        with pytest.raises(EmptyInputError, match="no features"):
            h.sketch(text)
    with pytest.raises(EmptyInputError):
        h.sketch_tokens([])
    with pytest.raises(ConfigError, match="fixed pipeline"):
        MinHasher(preset="txtfp", seed=3)
    with pytest.raises(ConfigError, match="fixed pipeline"):
        MinHasher(preset="txtfp", tokenizer=WordTokenizer())


# ---------------------------------------------------------------- datasketch parity


@pytest.mark.parametrize("scheme", ["affine32", "legacy"])
def test_datasketch_parity(scheme: str) -> None:
    datasketch = pytest.importorskip("datasketch")
    preset = "datasketch" if scheme == "affine32" else "datasketch-legacy"
    rng = random.Random(20240611)
    checked = 0
    for num_perm in (1, 7, 64, 128, 256):
        hasher = MinHasher(num_perm, preset=preset)
        for _ in range(60):
            tokens = [
                bytes(rng.randrange(256) for _ in range(rng.randrange(0, 12)))
                for _ in range(rng.randrange(1, 80))
            ]
            ref = datasketch.MinHash(num_perm=num_perm, seed=1, scheme=scheme)
            ref.update_batch(tokens)
            ours = hasher.sketch_tokens(tokens)
            assert np.array_equal(ours.hashvalues, ref.hashvalues.astype(np.uint64))
            checked += 1
    # other seeds and str tokens (UTF-8 encoded, as datasketch users do by hand)
    words = ["naïve", "café", "東京", "x"]
    ref = datasketch.MinHash(num_perm=32, seed=7, scheme=scheme)
    ref.update_batch([w.encode() for w in words])
    ours = MinHasher(32, preset=preset, seed=7).sketch_tokens(words)
    assert np.array_equal(ours.hashvalues, ref.hashvalues.astype(np.uint64))
    assert checked == 300


def test_datasketch_preset_sketch_uses_tokenizer_features() -> None:
    datasketch = pytest.importorskip("datasketch")
    text = "The quick brown fox jumps over the lazy dog again and again"
    tok = ShingleTokenizer(3, WordTokenizer())
    hasher = MinHasher(64, preset="datasketch", tokenizer=tok)
    ref = datasketch.MinHash(num_perm=64, seed=1)
    ref.update_batch([s.encode() for s in tok.tokenize(text.lower())])
    assert np.array_equal(hasher.sketch(text).hashvalues, ref.hashvalues.astype(np.uint64))
    fast, slow = both(lambda: hasher.sketch_many([text, "", "a b c"]))
    assert np.array_equal(fast, slow)


# ---------------------------------------------------------------- estimator


def _pair_with_jaccard(rng: random.Random, inter: int, union: int) -> tuple[list[str], list[str]]:
    base = rng.getrandbits(48)
    shared = [f"s{base}-{i}" for i in range(inter)]
    only = union - inter
    a = shared + [f"a{base}-{i}" for i in range(only // 2)]
    b = shared + [f"b{base}-{i}" for i in range(only - only // 2)]
    return a, b


@pytest.mark.parametrize("preset", ["xxh3", "oph", "datasketch"])
@pytest.mark.parametrize("jaccard", [0.2, 0.5, 0.8])
def test_jaccard_estimate_unbiased(preset: str, jaccard: float) -> None:
    """Mean estimate over 150 independent pairs within 4 standard errors of the exact value.

    The standard error of the mean is sqrt(J (1 - J) / (num_perm * pairs)): 0.0033 at J = 0.5.
    """
    num_perm, n_pairs, union = 128, 150, 200
    rng = random.Random(f"{preset}-{jaccard}")
    hasher = MinHasher(num_perm, preset=preset)  # type: ignore[arg-type]
    inter = round(jaccard * union)
    exact = inter / union
    est = []
    for _ in range(n_pairs):
        a, b = _pair_with_jaccard(rng, inter, union)
        est.append(hasher.sketch_tokens(a).jaccard(hasher.sketch_tokens(b)))
    se = (exact * (1 - exact) / (num_perm * n_pairs)) ** 0.5
    assert abs(float(np.mean(est)) - exact) <= 4 * se


# ---------------------------------------------------------------- fast == reference

texts = st.lists(
    st.lists(st.sampled_from(list("ab cdé ΣσßİI\u200b1_.-\n東京'")), max_size=60).map("".join),
    min_size=1,
    max_size=6,
)


@settings(max_examples=20)
@given(texts)
def test_fast_equals_reference_xxh3_and_oph(docs: list[str]) -> None:
    for hasher in (
        MinHasher(16),
        MinHasher(16, tokenizer=ShingleTokenizer(3, WordTokenizer("go"), short="separate")),
        MinHasher(16, tokenizer=NgramTokenizer(4)),
        MinHasher(16, preset="oph"),
        MinHasher(9, preset="datasketch-legacy"),
    ):
        fast, ref = both(lambda h=hasher: h.sketch_many(docs))  # type: ignore[misc]
        assert np.array_equal(fast, ref)


@settings(max_examples=15)
@given(st.lists(st.binary(max_size=8), max_size=40), st.integers(1, 40))
def test_fast_equals_reference_sketch_tokens(tokens: list[bytes], num_perm: int) -> None:
    for preset in ("xxh3", "oph", "datasketch"):
        h = MinHasher(num_perm, preset=preset)  # type: ignore[arg-type]
        fast, ref = both(lambda h=h: h.sketch_tokens(tokens))  # type: ignore[misc]
        assert fast == ref


@settings(max_examples=15)
@given(st.text(max_size=200), st.text(max_size=200))
def test_properties(a: str, b: str) -> None:
    h = MinHasher(32)
    sa, sb = h.sketch(a), h.sketch(b)
    assert h.sketch(a) == sa
    assert sa.jaccard(sb) == sb.jaccard(sa)
    assert sa.jaccard(sa) == (0.0 if sa.is_empty else 1.0)
    assert MinHash.from_bytes(sa.to_bytes()) == sa
    assert MinHash.from_hex(sa.to_hex()) == sa


# ---------------------------------------------------------------- value type and errors


def test_value_type_and_layout() -> None:
    h = MinHasher(8)
    mh = h.sketch("one two three four five six")
    assert mh.hashvalues.dtype == np.uint64 and not mh.hashvalues.flags.writeable
    with pytest.raises(ValueError):
        mh.hashvalues[0] = 1
    data = mh.to_bytes()
    assert len(data) == 24 + 8 * 8 and data[:4] == b"NDMH"
    assert np.array_equal(np.frombuffer(data, "<u8", offset=24), mh.hashvalues)
    assert mh.params == h.config.fingerprint() and mh.scheme == "xxh3"
    assert hash(mh) == hash(MinHash.from_bytes(data))
    with pytest.raises(ConfigError, match="layout='neardup'"):
        mh.to_bytes(layout="txtfp")


def test_corrupt_bytes_raise_format_error() -> None:
    data = MinHasher(8).sketch("a b c d e f").to_bytes()
    bad = [
        b"",
        b"XXXX" + data[4:],
        data[:-1],
        data[:20],
        data[:4] + b"\x09\x00" + data[6:],  # unknown version
        data[:6] + b"\x63\x00" + data[8:],  # unknown scheme
        b"\x02\x00" + bytes(6) + bytes(16),  # txtfp layout with schema 2
    ]
    for blob in bad:
        with pytest.raises(FormatError):
            MinHash.from_bytes(blob)
    with pytest.raises(FormatError):
        MinHash.from_hex("zz")


def test_mixed_schemes_and_params_raise() -> None:
    text = "a b c d e f g"
    xxh3 = MinHasher(16).sketch(text)
    with pytest.raises(IncompatibleSketchError, match="same MinHasher"):
        xxh3.jaccard(MinHasher(16, preset="oph").sketch(text))
    with pytest.raises(IncompatibleSketchError):
        xxh3.jaccard(MinHasher(16, seed=5).sketch(text))
    with pytest.raises(IncompatibleSketchError):
        xxh3.merge(MinHasher(32).sketch(text))
    with pytest.raises(IncompatibleSketchError):
        xxh3.similarity(b"x")  # type: ignore[arg-type]
    oph = MinHasher(16, preset="oph").sketch(text)
    with pytest.raises(IncompatibleSketchError, match="cannot be merged"):
        oph.merge(oph)


def test_merge_is_union() -> None:
    for preset in ("xxh3", "datasketch", "datasketch-legacy"):
        h = MinHasher(32, preset=preset)  # type: ignore[arg-type]
        a, b = h.sketch_tokens(["x", "y", "z"]), h.sketch_tokens(["z", "w"])
        assert a.merge(b) == h.sketch_tokens(["x", "y", "z", "w"])


def test_empty_documents() -> None:
    h = MinHasher(16)
    out = h.sketch_many(["", "a b c d e f", "  ...  "])
    assert np.all(out[0] == np.uint64(2**32 - 1)) and np.all(out[2] == out[0])
    empty = h.sketch("")
    assert empty.is_empty and empty.jaccard(empty) == 0.0
    assert empty.jaccard(h.sketch("a b c d e f")) == 0.0
    assert MinHasher(16, preset="datasketch").sketch("").is_empty
    assert MinHasher(16, preset="oph").sketch("").is_empty
    with pytest.raises(EmptyInputError, match=r"document\(s\) 0, 2"):
        MinHasher(16, empty="error").sketch_many(["", "a b c", "..."])


def test_bad_parameters_and_inputs() -> None:
    for kwargs in ({"num_perm": 0}, {"num_perm": 1.5}, {"preset": "md5"}, {"seed": -1}):
        with pytest.raises(ConfigError):
            MinHasher(**kwargs)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="2\\*\\*32"):
        MinHasher(preset="datasketch", seed=1 << 40)
    with pytest.raises(InputError):
        MinHasher().sketch_many("not a list")
    with pytest.raises(InputError):
        MinHasher().sketch_many([b"\xff\xfe"])
    with pytest.raises(ConfigError):
        MinHash(np.zeros(0, dtype=np.uint64), "xxh3", "minhash-0000000000000000")


def test_ascii_fast_path_matches_canonicalizer() -> None:
    """Skipping the canonicalizer for ASCII text must not change any sketch."""
    from neardup.canonicalize import Canonicalizer

    class Wrapped:
        params = Canonicalizer().params

        def canonicalize(self, text: str) -> str:
            return Canonicalizer().canonicalize(text)

    docs = ["Hello WORLD, this is ASCII text with CAPS and_under 123", "Straße ÉCOLE Ünïcode"]
    plain = MinHasher(32).sketch_many(docs)
    wrapped = MinHasher(32, canonicalizer=Wrapped()).sketch_many(docs)
    assert np.array_equal(plain, wrapped)
