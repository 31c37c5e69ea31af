"""MinHasher.sketch_many_with_features: one pass, same sketches, same features on both backends."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup import MinHasher
from neardup._kernels import engine
from neardup.errors import ConfigError

texts = st.lists(
    st.text(max_size=60) | st.sampled_from(["", "a b", "Ünïcode wörds here ok"]), max_size=6
)


@settings(max_examples=60)
@given(texts)
def test_features_agree_across_backends_and_with_sketch_many(docs: list[str]) -> None:
    h = MinHasher(32)
    results = {}
    with pytest.MonkeyPatch.context() as mp:
        for backend in ("fast", "reference"):
            mp.setattr(engine, "_choice", engine.parse_backend(backend))
            results[backend] = h.sketch_many_with_features(docs)
            np.testing.assert_array_equal(results[backend][0], h.sketch_many(docs))
    for got, want in zip(results["fast"], results["reference"], strict=True):
        np.testing.assert_array_equal(got, want)


def test_features_need_xxh3_preset() -> None:
    with pytest.raises(ConfigError, match="xxh3"):
        MinHasher(preset="txtfp").sketch_many_with_features(["x"])


@settings(max_examples=60)
@given(texts)
def test_packed_sets32_equal_the_reference_composition(docs: list[str]) -> None:
    """The fused kernel's sketches and 32-bit sets equal those of the reference backend's
    features run through ``unique_per_doc32`` (and the fast backend's packed features)."""
    from neardup.packed import pack
    from neardup.sketch.sets import unique_per_doc32

    h = MinHasher(32)
    p = pack(docs)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(engine, "_choice", engine.parse_backend("fast"))
        sigs, values, offsets = h.sketch_packed_sets32(p.buf, p.offsets)
        fsigs, feats, foffs = h.sketch_packed_with_features(p.buf, p.offsets)
        fv, fo = unique_per_doc32(feats, foffs)
        mp.setattr(engine, "_choice", engine.parse_backend("reference"))
        rsigs, rfeats, roffs = h.sketch_many_with_features(docs)
        rv, ro = unique_per_doc32(rfeats, roffs)
        ref = h.sketch_packed_sets32(p.buf, p.offsets)
    assert values.dtype == np.uint32
    for got in ((sigs, values, offsets), (fsigs, fv, fo), ref):
        np.testing.assert_array_equal(got[0], rsigs)
        np.testing.assert_array_equal(got[1], rv)
        np.testing.assert_array_equal(got[2], ro)


# Pure-ASCII documents take the fused kernel's ASCII path (a byte table instead of decoding
# and the 0x110000-entry class and case tables); a document with one non-ASCII character
# takes the general path. Words up to 40 bytes reach every short-input branch of xxh3.
_ascii_word = st.text(alphabet="aZ9_x" + "BcQ", min_size=1, max_size=40)
_ascii_gap = st.text(alphabet=" .-\n\t'\x00\x7f", min_size=1, max_size=3)
ascii_docs = st.lists(
    st.lists(st.tuples(_ascii_word, _ascii_gap), max_size=25).map(
        lambda parts: "".join(w + g for w, g in parts)
    )
    | st.text(alphabet=st.characters(max_codepoint=127), max_size=80),
    max_size=6,
).map(lambda docs: docs + [d + "é" for d in docs[:1]])


@settings(max_examples=60)
@given(
    ascii_docs,
    st.sampled_from(
        [(5, "word", 128, "joined"), (3, "go", 30, "separate"), (1, "word", 7, "joined")]
    ),
)
def test_ascii_path_equals_the_reference(
    docs: list[str], params: tuple[int, str, int, str]
) -> None:
    """The fused kernel's ASCII path gives the reference backend's sketches and features, for
    any slot count (the slots are reduced four at a time, then one by one)."""
    from neardup.tokenize import ShingleTokenizer, WordTokenizer

    k, mode, num_perm, short = params
    inner = WordTokenizer(mode)  # type: ignore[arg-type]
    h = MinHasher(num_perm, tokenizer=ShingleTokenizer(k, inner, short=short))  # type: ignore[arg-type]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(engine, "_choice", engine.parse_backend("fast"))
        fast = h.sketch_many_with_features(docs)
        mp.setattr(engine, "_choice", engine.parse_backend("reference"))
        ref = h.sketch_many_with_features(docs)
    for got, want in zip(fast, ref, strict=True):
        np.testing.assert_array_equal(got, want)


class _Upper:
    """A canonicalizer that is no ``Canonicalizer`` (the per-document protocol path)."""

    config = "upper"

    def canonicalize(self, text: str) -> str:
        return text.upper()


@settings(max_examples=40)
@given(texts, st.sampled_from(["canonicalizer", "protocol"]))
def test_sketch_batch_is_every_batch_method(docs: list[str], canon: str) -> None:
    """``sketch_batch`` of texts and of the same documents packed gives ``sketch_many`` and
    ``sketch_packed_sets32``, on both backends and for a protocol canonicalizer too."""
    from neardup.packed import pack

    h = MinHasher(16, canonicalizer=_Upper() if canon == "protocol" else None)
    p = pack(docs)
    with pytest.MonkeyPatch.context() as mp:
        for backend in ("fast", "reference"):
            mp.setattr(engine, "_choice", engine.parse_backend(backend))
            rows = h.sketch_many(docs)
            sigs, values, offsets = h.sketch_packed_sets32(p.buf, p.offsets)
            np.testing.assert_array_equal(sigs, rows)
            for batch in (docs, p):
                got, sets = h.sketch_batch(batch, sets=True)
                assert sets is not None
                np.testing.assert_array_equal(got, rows)
                np.testing.assert_array_equal(sets[0], values)
                np.testing.assert_array_equal(sets[1], offsets)
                plain, none = h.sketch_batch(batch)
                assert none is None
                np.testing.assert_array_equal(plain, rows)
    assert p.texts() == docs


def test_sketch_batch_sets_need_xxh3_but_rows_do_not() -> None:
    h = MinHasher(8, preset="oph")
    with pytest.raises(ConfigError, match="xxh3"):
        h.sketch_batch(["a b c d e f"], sets=True)
    np.testing.assert_array_equal(
        h.sketch_batch(["a b c d e f"])[0], h.sketch_many(["a b c d e f"])
    )


def test_sketch_batch_narrow_gives_the_folded_slots() -> None:
    """``narrow`` hands the fused pass's 32-bit slots over as ``uint32`` (with sets; the
    public rows stay ``uint64``): the values of :func:`fold32` of those rows."""
    from neardup.packed import pack
    from neardup.sketch.minhash import fold32

    h = MinHasher(16)
    docs = ["a b c d e f g", "", "x y z w v u"]
    wide, sets = h.sketch_batch(docs, sets=True)
    narrow, nsets = h.sketch_batch(docs, sets=True, narrow=True)
    assert wide.dtype == np.uint64
    assert narrow.dtype == np.uint32
    np.testing.assert_array_equal(narrow, fold32(wide))
    np.testing.assert_array_equal(narrow, wide)
    assert sets is not None and nsets is not None
    np.testing.assert_array_equal(sets[0], nsets[0])
    p = pack(docs)
    assert h.sketch_packed_sets32(p.buf, p.offsets)[0].dtype == np.uint64
    assert h.sketch_batch(docs, narrow=True)[0].dtype == np.uint64
