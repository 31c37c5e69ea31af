"""The canonicalizer kernels (fast and reference) equal the standard-library path exactly."""

from __future__ import annotations

import itertools
import unicodedata
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from twins import on_both_backends

from neardup import canonicalize as canon_module
from neardup._kernels import engine
from neardup._unicode import canonical as ktables
from neardup.canonicalize import BIDI_CONTROLS, FORMAT_CHARACTERS, Canonicalizer
from neardup.config import CanonicalConfig
from neardup.errors import InputTooLargeError
from neardup.packed import PackedDocs, pack

T = TypeVar("T")
TXTFP = Path(__file__).parents[1] / "golden" / "vectors" / "txtfp"


@contextmanager
def backend(name: str) -> Iterator[None]:
    with engine.pinned(name):
        yield


# Characters that exercise every branch: combining marks out of canonical order, Hangul
# syllables and conjoining jamo, compatibility characters (ligatures, fullwidth, fractions,
# circled, Greek with ypogegrammeni), case-folding expansions, bidi and format controls,
# variation selectors and tags, CJK, emoji, ASCII capitals, a lone surrogate.
SPECIAL = (
    "aAeEiIzZ \n.'"
    "\u0300\u0301\u0308\u0323\u0327\u0345\u0334\u05b0\u0e48\u1dc0\u302a\u3099"
    "\u1100\u1112\u1161\u1175\u11a8\u11c2\uac00\uac01\ud7a3\u3131"
    "\ufb01\ufb03\uff21\uff41\u00bd\u2460\u2163\u00b5\u017f\u1e9e\u00df\u0130\u0131\u03a3\u03c2"
    "\u1f80\u1f88\u1fb3\u0390\u0149\u01c5\u2126\u212b\u00c5\u0958\u0f73\u0f75\u0344\u2000"
    "\u200b\u200c\u200d\u200e\u200f\u202a\u202e\u2066\u2069\u2060\u2064\ufeff\u061c\u180b\u00ad"
    "\ufe0f\U000e0100\U000e0001\U000e0041"
    "\u4e2d\u6587\u65e5\u672c\u30c6\u30ad\u30b9\u30c8\uff83\uff9e\U0001f44d\U0001f3fd\U0001d400"
    "\u00e9\u0065\u00c7\u1ea0\u01d5\u0226"
)

# Random code points across all planes except surrogates (Python strings from the wild hold
# none; a lone surrogate is tested separately).
ANY = st.characters(exclude_categories=("Cs",))
MIXED = st.one_of(st.sampled_from(SPECIAL), ANY)
DOCS = st.lists(st.text(MIXED, max_size=30), min_size=1, max_size=8)


def stdlib(config: CanonicalConfig, docs: list[str]) -> list[str]:
    c = Canonicalizer(config=config)
    return [c.canonicalize(d) for d in docs]


@settings(max_examples=150)
@given(DOCS)
def test_kernels_equal_stdlib_txtfp(docs: list[str]) -> None:
    c = Canonicalizer()
    want = stdlib(c.settings, docs)
    ref, fast = on_both_backends(lambda: c.canonicalize_many(docs))
    assert fast == want
    assert ref == want


@settings(max_examples=40)
@given(DOCS, st.booleans(), st.booleans())
def test_kernels_equal_stdlib_strip_options(docs: list[str], bidi: bool, fmt: bool) -> None:
    config = CanonicalConfig(strip_bidi=bidi, strip_format=fmt)
    c = Canonicalizer(config=config)
    assert c.batch_kernel
    want = stdlib(config, docs)
    ref, fast = on_both_backends(lambda: c.canonicalize_many(docs))
    assert fast == want
    assert ref == want


@settings(max_examples=40)
@given(DOCS)
def test_packed_keeps_ascii_case_only_when_asked(docs: list[str]) -> None:
    c = Canonicalizer()
    ref, fast = on_both_backends(lambda: c.canonicalize_packed(docs, lower_ascii=False))
    assert np.array_equal(fast.buf, ref.buf)
    assert np.array_equal(fast.offsets, ref.offsets)
    raw = fast.buf.tobytes()
    got = [
        raw[a:b].decode("utf-8") for a, b in zip(fast.offsets[:-1], fast.offsets[1:], strict=True)
    ]
    # ASCII case is all that may differ, and only where it does not matter downstream
    assert [g.lower() for g in got] == [w.lower() for w in stdlib(c.settings, docs)]


def test_every_single_code_point_of_the_basic_planes() -> None:
    """Each code point alone, and after 'a' and before a combining mark, as one batch."""
    cps = [cp for cp in range(0x20000) if not 0xD800 <= cp < 0xE000]
    docs = [chr(cp) for cp in cps] + [f"A{chr(cp)}\u0301" for cp in cps[::7]]
    want = stdlib(CanonicalConfig(), docs)
    with backend("fast"):
        got = Canonicalizer().canonicalize_many(docs)
    bad = [
        hex(ord(d[0] if len(d) == 1 else d[1]))
        for d, g, w in zip(docs, got, want, strict=True)
        if g != w
    ]
    assert not bad


def test_txtfp_goldens_in_one_batch() -> None:
    corpora = sorted((TXTFP / "corpora").iterdir())
    texts = [p.read_text(encoding="utf-8") for p in corpora]
    goldens = [(TXTFP / "golden" / "canonical" / f"{p.stem}.txt").read_bytes() for p in corpora]
    ref, fast = on_both_backends(lambda: Canonicalizer().canonicalize_many(texts))
    assert [t.encode() for t in fast] == goldens
    assert [t.encode() for t in ref] == goldens


def test_surrogates_bytes_and_empty() -> None:
    docs: list[str | bytes] = ["x\ud800Y", "Stra\u00dfe".encode(), "", "ABC", "\u00e9A"]
    want = ["x\ud800y", "strasse", "", "abc", "\u00e9a"]
    ref, fast = on_both_backends(lambda: Canonicalizer().canonicalize_many(docs))
    assert fast == want and ref == want


def test_huge_documents_take_the_guarded_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(canon_module, "_BOUND_CHECK_FROM", 8)
    c = Canonicalizer()
    docs = ["short \u00c5", "long enough \u212b\u0301 \ufb01 text", "\ufdfa" * 40]
    with pytest.raises(InputTooLargeError, match="max_growth"):
        on_both_backends(lambda: c.canonicalize_many(docs))
    ref, fast = on_both_backends(lambda: c.canonicalize_many(docs[:2]))
    assert fast == ref == stdlib(c.settings, docs[:2])


def test_max_bytes_is_checked_in_the_batch() -> None:
    c = Canonicalizer(config=CanonicalConfig(max_bytes=10))
    with pytest.raises(InputTooLargeError, match="max_bytes"):
        c.canonicalize_many(["short", "x" * 11])
    assert c.canonicalize_many(["ÅÅÅÅÅ"]) == ["ååååå"]


def test_python_path_for_other_configs() -> None:
    for preset in ("none", "secure"):
        c = Canonicalizer(preset)
        assert c.batch_kernel is (preset == "none")
    c = Canonicalizer(config=CanonicalConfig(collapse_whitespace=True, casefold="lower"))
    docs = ["  A\u200b  b ", "ＡＢＣ"]
    assert c.canonicalize_many(docs) == stdlib(c.settings, docs)


def test_strip_sets_agree_with_the_public_ones() -> None:
    flags = ktables.tables()["flags"]
    assert set(np.flatnonzero(flags & ktables.BIDI).tolist()) == set(BIDI_CONTROLS)
    assert set(np.flatnonzero(flags & ktables.FORMAT).tolist()) == set(FORMAT_CHARACTERS)


def test_tables_are_what_unicodedata_says() -> None:
    t = ktables.tables()
    assert t["ccc"][0x0301] == unicodedata.combining("\u0301") == 230
    off, data = t["dec_off"], t["dec_data"]
    assert data[off[0xFDFA] : off[0xFDFB]].tolist() == [
        ord(x) for x in unicodedata.normalize("NFKD", "\ufdfa")
    ]
    keys = t["pair_keys"].tolist()
    assert (0x41 << 21 | 0x30A) in keys  # A + ring above -> U+00C5
    assert (0x1100 << 21 | 0x1161) in keys  # Hangul L + V -> U+AC00
    assert (0x0915 << 21 | 0x093C) not in keys  # U+0958 is a composition exclusion


# ---- the pure-ASCII shortcut of canonicalize_buffer (documents without a byte >= 0x80 skip
# the kernel): the same bits as the kernel over the whole batch, for every configuration.

ASCII_PIECES = st.sampled_from(
    ["\t", "\r\n", "\n", "\r", "  ", "   ", "\x00", "\x7f", "\x0b\x0c", "\x1b[0m", "AbC", " Z "]
)
ASCII_DOC = st.lists(st.one_of(st.characters(max_codepoint=0x7F), ASCII_PIECES), max_size=25).map(
    "".join
)
# mostly ASCII batches, sometimes with documents that need the kernel (to splice them back)
SOME_UNICODE = st.lists(
    st.one_of(ASCII_DOC, ASCII_DOC, ASCII_DOC, st.text(MIXED, max_size=20)), max_size=8
)
ALL_ASCII = st.lists(ASCII_DOC, max_size=8)
CONFIGS = [
    *(CanonicalConfig(strip_bidi=b, strip_format=f) for b in (True, False) for f in (True, False)),
    *canon_module.PRESETS.values(),
    CanonicalConfig(casefold="lower"),
    CanonicalConfig(casefold="none"),
    CanonicalConfig(normalization="nfc"),
    CanonicalConfig(collapse_whitespace=True),
    CanonicalConfig(strip_diacritics=True),
]


def _packed(docs: list[str], pad: int, readonly: bool) -> PackedDocs:
    """``docs`` packed, with ``pad`` bytes of other text before and after (offsets not from
    0, a buffer longer than the documents), read-only or writable."""
    p = pack(docs)
    junk = np.frombuffer(b"\xc3\xa9Q" * pad, dtype=np.uint8)[:pad]
    buf = np.concatenate([junk, p.buf, junk])
    if readonly:
        buf.setflags(write=False)
    return PackedDocs(buf, p.offsets + pad)


def _texts(p: PackedDocs) -> list[str]:
    raw = p.buf.tobytes()
    return [t.decode("utf-8", "surrogatepass") for t in _split(raw, p.offsets.tolist())]


def _outcome(fn: Callable[[], PackedDocs]) -> tuple[bytes, list[int], str, bool] | str:
    """What ``fn`` returns (bytes, offsets, dtype, writable), or the error it raises."""
    try:
        p = fn()
    except InputTooLargeError as exc:  # the growth guard, on the standard-library fallback
        return str(exc)
    assert p.buf.flags.c_contiguous and p.offsets.dtype == np.int64
    return p.buf.tobytes(), p.offsets.tolist(), str(p.buf.dtype), bool(p.buf.flags.writeable)


@settings(max_examples=150)
@given(
    st.one_of(ALL_ASCII, SOME_UNICODE),
    st.sampled_from(CONFIGS),
    st.booleans(),
    st.sampled_from([0, 3]),
    st.booleans(),
    st.sampled_from(["fast", "reference"]),
    st.sampled_from([1 << 20, 6]),
)
def test_ascii_shortcut_equals_the_kernel_over_the_batch(
    docs: list[str],
    config: CanonicalConfig,
    lower_ascii: bool,
    pad: int,
    readonly: bool,
    name: str,
    fallback_from: int,
) -> None:
    """Every configuration, read-only or writable buffers, offsets from 0 or not, and (with a
    small ``fallback_from``) documents the kernel leaves to the standard library."""
    c = Canonicalizer(config=config)
    packed = _packed(docs, pad, readonly)
    with backend(name), pytest.MonkeyPatch.context() as mp:
        mp.setattr(canon_module, "_BOUND_CHECK_FROM", fallback_from)
        got = _outcome(lambda: c.canonicalize_buffer(packed, lower_ascii=lower_ascii))
        if c._kernel_mask is not None:
            # the same bytes, offsets and array types (numba compiles one version per type)
            assert got == _outcome(lambda: c._kernel_batch(packed, lower_ascii, shortcut=False))
        if isinstance(got, str):
            return
    texts = [t.decode("utf-8", "surrogatepass") for t in _split(got[0], got[1])]
    expect = stdlib(config, docs)
    if lower_ascii or c._kernel_mask is None:
        assert texts == expect
    else:  # ASCII case is kept: the tokenizer lowercases it
        assert [g.lower() for g in texts] == [w.lower() for w in expect]
        assert [g for g, d in zip(texts, docs, strict=True) if d.isascii()] == [
            d for d in docs if d.isascii()
        ]


def _split(raw: bytes, bounds: list[int]) -> list[bytes]:
    return [raw[a:b] for a, b in itertools.pairwise(bounds)]


@pytest.mark.parametrize("readonly", [False, True])
def test_ascii_batch_is_returned_without_a_copy(readonly: bool) -> None:
    """A batch no document of which changes comes back as the input buffer (read-only input:
    a writable copy, the kernel's output type)."""
    docs = ["Tab\there\r\nNUL\x00 and  DEL\x7f", "", "é is already canonical", "x"]
    for lower_ascii, pad in ((False, 0), (False, 3), (True, 0)):
        packed = _packed(docs if not lower_ascii else [d.lower() for d in docs], pad, readonly)
        got = Canonicalizer().canonicalize_buffer(packed, lower_ascii=lower_ascii)
        assert np.shares_memory(got.buf, packed.buf) is not readonly
        assert got.buf.flags.writeable
        assert got.buf.tobytes() == packed.buf[pad : len(packed.buf) - pad].tobytes()
        assert got.offsets.tolist() == (packed.offsets - pad).tolist()
    changed = Canonicalizer().canonicalize_buffer(_packed(["ok", "ＡＢ", "ok"], 0, False))
    assert _texts(changed) == ["ok", "ab", "ok"]
