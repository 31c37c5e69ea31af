"""SimHash: Go and txtfp parity, a naive reference, backend agreement, properties, bad input."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import VECTORS, load_vectors
from neardup import Canonicalizer, NgramTokenizer, ShingleTokenizer, WordTokenizer
from neardup._kernels import engine
from neardup.errors import (
    ConfigError,
    DecodeError,
    EmptyInputError,
    FormatError,
    IncompatibleSketchError,
    InputError,
    NeardupError,
)
from neardup.sketch.simhash import TXTFP_SEED, SimHash, SimHashConfig, SimHasher
from oracles.hashing import fnv1a_64, xxh3_64, xxh3_128

GO = load_vectors("go_fingerprint_text.json")
GO_BY_ID = {c["id"]: c for c in GO["cases"]}
TXTFP = VECTORS / "txtfp"
CORPORA = sorted((TXTFP / "corpora").iterdir())
M64 = (1 << 64) - 1


@contextmanager
def backend(name: str) -> Iterator[None]:
    with engine.pinned(name):
        yield


def go_text(case: dict[str, str]) -> str:
    return bytes.fromhex(case["utf8_hex"]).decode("utf-8", "replace")


def naive(
    features: list[str],
    bits: int,
    hash_name: str,
    seed: int,
    weights: dict[str, float] | None = None,
    default: float = 1.0,
) -> int:
    """Per-feature Python SimHash: the slow reference of the documented definition."""
    sums = [0.0] * bits
    h: int
    for f in features:
        data = f.encode("utf-8")
        if hash_name == "fnv1a64":
            h = fnv1a_64(data)
        elif hash_name == "xxh3_64":
            h = xxh3_64(data, seed)
        else:
            h = xxh3_128(data, seed)
            if bits == 64:
                h &= M64
            elif bits == 256:
                h |= xxh3_128(data, (seed + 1) & M64) << 128
        w = default if weights is None else weights.get(f, default)
        for i in range(bits):
            sums[i] += w if (h >> i) & 1 else -w
    return sum(1 << i for i in range(bits) if sums[i] > 0)


# -- Go fingerprint.Compute ----------------------------------------------------------------


@pytest.mark.parametrize("case", GO["cases"], ids=lambda c: c["id"])
def test_go_preset_matches_every_vector(case: dict[str, Any]) -> None:
    code = SimHasher(preset="go").sketch(go_text(case))
    assert code.to_hex() == case["compute_hex"]
    assert code.value == int(case["compute_dec"])
    assert code.value.bit_count() == case["popcount"]


def test_go_preset_batch_equals_vectors() -> None:
    codes = SimHasher(preset="go").sketch_many([go_text(c) for c in GO["cases"]])
    assert [f"{int(x):016x}" for x in codes] == [c["compute_hex"] for c in GO["cases"]]


@pytest.mark.parametrize("pair", GO["pairs"], ids=lambda p: f"{p['a']}-{p['b']}")
def test_go_pairs_distance_and_similarity(pair: dict[str, object]) -> None:
    h = SimHasher(preset="go")
    a = h.sketch(go_text(GO_BY_ID[pair["a"]]))
    b = h.sketch(go_text(GO_BY_ID[pair["b"]]))
    assert a.distance(b) == pair["distance"]
    assert a.similarity(b) == pair["similarity"]
    assert (a.similarity(b) >= 0.85) == pair["similarity_ge_0_85"]


@pytest.mark.parametrize("row", GO["similarity_table"], ids=lambda r: str(r["distance"]))
def test_go_similarity_table(row: dict[str, object]) -> None:
    d = int(row["distance"])  # type: ignore[call-overload]
    a, b = SimHash(0), SimHash((1 << d) - 1)
    assert a.distance(b) == d
    assert a.similarity(b) == row["similarity"]
    assert (a.similarity(b) >= 0.85) == row["similarity_ge_0_85"] == (d <= 9)


def test_go_preset_documented_examples() -> None:
    h = SimHasher(preset="go")
    assert h.sketch("hello").value == 0xA430D84680AABD0B
    for empty in ("", ";.!", "a", "1 2 3"):
        assert h.sketch(empty).value == 0


# -- txtfp 0.2.2 ---------------------------------------------------------------------------


@pytest.mark.parametrize("path", CORPORA, ids=lambda p: p.name)
def test_txtfp_preset_matches_golden(path: Path) -> None:
    gold = (TXTFP / "golden" / "simhash" / f"{path.stem}_b64.bin").read_bytes()
    code = SimHasher(preset="txtfp").sketch(path.read_text("utf-8"))
    assert code.to_bytes() == gold
    assert SimHash.from_bytes(gold).value == code.value


def test_txtfp_preset_batch_matches_goldens() -> None:
    codes = SimHasher(preset="txtfp").sketch_many([p.read_text("utf-8") for p in CORPORA])
    gold = [(TXTFP / "golden" / "simhash" / f"{p.stem}_b64.bin").read_bytes() for p in CORPORA]
    assert [int(c).to_bytes(8, "little") for c in codes] == gold


@pytest.mark.parametrize("text", ["", "   ", "!!! ...", "\u200b\u200e"])
def test_txtfp_preset_refuses_empty(text: str) -> None:
    with pytest.raises(EmptyInputError, match="no tokens"):
        SimHasher(preset="txtfp").sketch(text)
    with pytest.raises(EmptyInputError, match="document 1"):
        SimHasher(preset="txtfp").sketch_many(["words here", text])


def test_txtfp_preset_config() -> None:
    cfg = SimHasher(preset="txtfp").config
    assert (cfg.canonicalizer, cfg.tokenizer, cfg.hash, cfg.seed) == (
        "nfkc-cf-simple-bidi-fmt",
        "word-uax29",
        "xxh3_128",
        TXTFP_SEED,
    )


# -- the definition, against a naive per-feature implementation ----------------------------

TEXT = st.text(st.sampled_from("ab cdé中 ΣİXyz.\n1"), max_size=40)


@settings(max_examples=40)
@given(st.lists(TEXT, max_size=5), st.sampled_from([64, 128, 256]))
def test_default_matches_naive_definition(texts: list[str], bits: int) -> None:
    h = SimHasher(bits)
    tok = ShingleTokenizer(3, WordTokenizer())
    canon = Canonicalizer("txtfp")
    want = [
        naive(tok.tokenize(canon.canonicalize(t)), bits, "xxh3_64" if bits == 64 else "xxh3_128", 0)
        for t in texts
    ]
    got = [h.sketch(t).value for t in texts]
    assert got == want


@settings(max_examples=30)
@given(
    st.lists(TEXT, min_size=1, max_size=4),
    st.dictionaries(st.sampled_from(["ab", "cdé", "xyz", "中", "1"]), st.integers(-64, 64)),
    st.integers(-8, 8),
)
def test_weights_match_naive_definition(texts: list[str], raw: dict[str, int], dflt: int) -> None:
    weights = {k: v / 8 for k, v in raw.items()}  # exact multiples of 2**-16
    h = SimHasher(
        canonicalizer=False,
        tokenizer=WordTokenizer(),
        weights=weights,
        default_weight=dflt / 4,
    )
    for t in texts:
        feats = WordTokenizer().tokenize(t)
        assert h.sketch(t).value == naive(feats, 64, "xxh3_64", 0, weights, dflt / 4)


@settings(max_examples=30)
@given(st.lists(TEXT, min_size=1, max_size=4))
def test_binary_weighting_counts_each_feature_once(texts: list[str]) -> None:
    h = SimHasher(canonicalizer=False, tokenizer=WordTokenizer(), weighting="binary")
    for t in texts:
        feats = list(dict.fromkeys(WordTokenizer().tokenize(t)))
        assert h.sketch(t).value == naive(feats, 64, "xxh3_64", 0)


def test_tf_is_occurrence_weighting() -> None:
    a = SimHasher(weighting="tf")
    b = SimHasher(weighting="occurrence")
    assert a.params == b.params
    assert SimHasher(weighting="binary").params != a.params


def test_weighting_changes_codes() -> None:
    text = "spam spam spam spam eggs ham"
    tf = SimHasher(canonicalizer=False, tokenizer=WordTokenizer()).sketch(text).value
    binary = SimHasher(canonicalizer=False, tokenizer=WordTokenizer(), weighting="binary")
    assert tf == naive(WordTokenizer().tokenize(text), 64, "xxh3_64", 0)
    assert binary.sketch(text).value == naive(["spam", "eggs", "ham"], 64, "xxh3_64", 0)


# -- backends and properties ---------------------------------------------------------------


@settings(max_examples=60)
@given(
    st.lists(st.text(max_size=60), max_size=6),
    st.sampled_from([64, 128, 256]),
    st.sampled_from(["occurrence", "binary"]),
    st.sampled_from(
        [
            None,
            NgramTokenizer(2),
            WordTokenizer("go"),
            WordTokenizer(),
            ShingleTokenizer(2, WordTokenizer("go"), short="separate"),
        ]
    ),
    st.sampled_from([None, {"ab": 2.5, "b": -1.0}]),
    st.sampled_from(["xxh3_128", None]),
)
def test_fast_equals_reference(
    texts: list[str],
    bits: int,
    weighting: str,
    tok: object,
    weights: dict[str, float] | None,
    hash_name: str | None,
) -> None:
    """Covers the fused one-pass kernel (64 bits, word features, no weights) too."""
    kwargs: dict[str, object] = {"weighting": weighting, "weights": weights, "hash": hash_name}
    if tok is not None:
        kwargs["tokenizer"] = tok
    with backend("fast"):
        fast = SimHasher(bits, **kwargs).sketch_many(texts)  # type: ignore[arg-type]
    with backend("reference"):
        ref = SimHasher(bits, **kwargs).sketch_many(texts)  # type: ignore[arg-type]
    assert fast.dtype == ref.dtype == np.uint64
    assert np.array_equal(fast, ref)


@settings(max_examples=30)
@given(st.text(max_size=200), st.text(max_size=200), st.sampled_from([64, 128, 256]))
def test_symmetry_self_similarity_determinism(a: str, b: str, bits: int) -> None:
    h = SimHasher(bits)
    x, y = h.sketch(a), h.sketch(b)
    assert x.similarity(x) == 1.0
    assert x.distance(y) == y.distance(x)
    assert x.similarity(y) == y.similarity(x)
    assert 0.0 <= x.similarity(y) <= 1.0
    assert SimHasher(bits).sketch(a) == x
    row = h.sketch_many([a])[0]
    assert np.asarray(row).astype("<u8").tobytes() == x.to_bytes()


@given(st.integers(0, (1 << 256) - 1), st.sampled_from([64, 128, 256]))
def test_serialization_round_trips(value: int, bits: int) -> None:
    code = SimHash(value & ((1 << bits) - 1), bits, SimHasher(bits).params)
    assert SimHash.from_bytes(code.to_bytes(header=True)) == code
    raw = SimHash.from_bytes(code.to_bytes(), params=code.params)
    assert raw == code
    assert SimHash.from_hex(code.to_hex(), params=code.params) == code
    assert len(code.to_hex()) == bits // 4
    assert SimHash.from_hex(code.to_hex().upper()).value == code.value


def test_word_layout_and_hex() -> None:
    code = SimHash((7 << 64) | 5, 128)
    assert code.words().tolist() == [5, 7]
    assert code.to_bytes()[:8] == (5).to_bytes(8, "little")
    assert code.to_hex() == "0000000000000007" + "0000000000000005"


def test_short_text_features_default_joined() -> None:
    h = SimHasher()
    assert h.sketch("hello world").value == naive(["hello world"], 64, "xxh3_64", 0)
    assert h.sketch("").value == 0
    assert h.sketch("x") != h.sketch("y")


# -- bad input -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"bits": 96}, "bits"),
        ({"bits": 128, "hash": "fnv1a64"}, "too narrow"),
        ({"bits": 256, "hash": "xxh3_64"}, "too narrow"),
        ({"preset": "simhash"}, "preset"),
        ({"hash": "md5"}, "hash"),
        ({"weighting": "idf"}, "weighting"),
        ({"empty": "skip"}, "empty"),
        ({"seed": -1}, "seed"),
        ({"weights": {"a": float("nan")}}, "finite"),
        ({"weights": {"a": 1e30}}, "finite"),
        ({"weights": {1: 1.0}}, "str"),
        ({"weights": {"a": "x"}}, "number"),
        ({"default_weight": 2.0}, "weights="),
        ({"tokenizer": object()}, "tokenizer"),
        ({"canonicalizer": object()}, "canonicalizer"),
        ({"preset": "go", "bits": 128}, "too narrow"),
    ],
)
def test_bad_config(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        SimHasher(**kwargs)  # type: ignore[arg-type]


def test_bad_documents() -> None:
    h = SimHasher()
    with pytest.raises(InputError, match="sequence"):
        h.sketch_many("one string")
    with pytest.raises(InputError):
        h.sketch(123)  # type: ignore[arg-type]
    with pytest.raises(DecodeError):
        h.sketch(b"\xff\xfe")
    assert h.sketch(b"caf\xc3\xa9 au lait") == h.sketch("café au lait")


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\x00" * 7,
        b"\x00" * 9,
        b"NDSH\x02\x00@\x00\x00\x00" + b"\x00" * 8,
        b"NDSH" + b"\x00" * 20,
    ],
)
def test_malformed_bytes(data: bytes) -> None:
    with pytest.raises(FormatError):
        SimHash.from_bytes(data)


def test_malformed_bytes_types_and_truncation() -> None:
    headed = SimHash(5, 64, SimHasher().params).to_bytes(header=True)
    with pytest.raises(FormatError, match="truncated"):
        SimHash.from_bytes(headed[:-1] + b"\x00\x00")
    with pytest.raises(FormatError):
        SimHash.from_bytes("00" * 8)  # type: ignore[arg-type]
    with pytest.raises(IncompatibleSketchError):
        SimHash.from_bytes(headed, params=SimHasher(preset="go").params)


@pytest.mark.parametrize("text", ["", "xyz", "0" * 15, "g" * 16, "0x" + "0" * 14, " " + "0" * 15])
def test_malformed_hex(text: str) -> None:
    with pytest.raises(FormatError):
        SimHash.from_hex(text)


def test_bad_values() -> None:
    with pytest.raises(InputError, match="fit"):
        SimHash(1 << 64)
    with pytest.raises(InputError):
        SimHash(-1)
    with pytest.raises(InputError, match="bits"):
        SimHash(0, 32)
    with pytest.raises(FormatError, match="params"):
        SimHash(0, 64, "not a fingerprint")


def test_mixing_params_or_widths_is_refused() -> None:
    go = SimHasher(preset="go").sketch("the cat sat on the mat")
    ours = SimHasher().sketch("the cat sat on the mat")
    with pytest.raises(IncompatibleSketchError, match="different parameters"):
        go.distance(ours)
    with pytest.raises(IncompatibleSketchError, match="128-bit"):
        ours.similarity(SimHasher(128).sketch("x"))
    with pytest.raises(IncompatibleSketchError):
        ours.distance(5)  # type: ignore[arg-type]
    # a code of unknown params (raw bytes) compares with anything of its width
    assert SimHash.from_bytes(go.to_bytes()).distance(ours) >= 0
    assert issubclass(IncompatibleSketchError, NeardupError)


def test_config_fingerprint_is_stable() -> None:
    cfg = SimHashConfig()
    assert cfg.fingerprint() == SimHashConfig().fingerprint()
    assert cfg.fingerprint().startswith("simhash-")
    assert SimHasher(preset="go").params != SimHasher(preset="txtfp").params
