"""The canonicalize family: the native kernel against its twin (the standard library's
``unicodedata.normalize`` and ``str.casefold``), bit for bit and error for error."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from twins import packed, same

from conftest import native_pair
from neardup._unicode import canonical as ktables

# Every branch of the kernel: combining marks out of canonical order, Hangul syllables and
# conjoining jamo, compatibility characters, case-folding expansions, bidi and format
# controls, variation selectors and tags, CJK and its compatibility ideographs, astral
# letters, ASCII capitals, characters that compose only with what precedes them.
SPECIAL = (
    "aAeEiIzZ \n.'"
    "\u0300\u0301\u0308\u0323\u0327\u0345\u0334\u05b0\u0e48\u1dc0\u302a\u3099\u0f71\u0f72"
    "\u1100\u1112\u1161\u1175\u11a8\u11c2\uac00\uac01\ud7a3\u3131\u115f\u1160"
    "\ufb01\ufb03\uff21\uff41\u00bd\u2460\u2163\u00b5\u017f\u1e9e\u00df\u0130\u0131\u03a3\u03c2"
    "\u1f80\u1f88\u1fb3\u0390\u0149\u01c5\u2126\u212b\u00c5\u0958\u0f73\u0f75\u0344\u2000"
    "\u200b\u200c\u200d\u200e\u200f\u202a\u202e\u2066\u2069\u2060\u2064\ufeff\u061c\u180b\u00ad"
    "\ufe0f\U000e0100\U000e0001\U000e0041\uf900\ufa10\U0002f800\u0cbf\u0cd5\u0b47\u0b3e"
    "\u4e2d\u6587\u30c6\u30ad\uff83\uff9e\U0001f44d\U0001f3fd\U0001d400\U0001d15e\U000104b0"
    "\u00e9\u0065\u00c7\u1ea0\u01d5\u0226\u0387\u037e\u1fee\u0340\u0341\u0343"
)
CHARS = st.one_of(st.sampled_from(SPECIAL), st.characters(exclude_categories=("Cs",)))
DOCS = st.lists(
    st.text(CHARS, max_size=30) | st.sampled_from(["\ud800x\udfff\u0301", "A\u0301\ud800"]),
    max_size=8,
)
STRIP = st.sampled_from([0, ktables.BIDI, ktables.FORMAT, ktables.BIDI | ktables.FORMAT])
FALLBACK = st.sampled_from([1 << 40, 1 << 20]) | st.integers(0, 40)


def args(buf: np.ndarray, offsets: np.ndarray, strip: int, lower: bool, fallback: int) -> tuple:
    t = ktables.tables()
    return (
        buf, offsets, t["flags"], strip, t["ccc"], t["dec_off"], t["dec_data"], t["cf_off"],
        t["cf_data"], t["one_off"], t["one_data"], t["pair_keys"], t["pair_vals"], lower,
        fallback,
    )  # fmt: skip


@settings(max_examples=500)
@given(DOCS, STRIP, st.booleans(), FALLBACK)
def test_canonicalize(docs: list[str], strip: int, lower: bool, fallback: int) -> None:
    native, reference = native_pair("canonicalize")
    buf, offsets = packed([d.encode("utf-8", "surrogatepass") for d in docs])
    a = args(buf, offsets, strip, lower, fallback)
    same(lambda: native.canonicalize(*a), lambda: reference.canonicalize(*a))


@settings(max_examples=150)
@given(st.lists(st.text(st.characters(), min_size=1, max_size=4), min_size=1, max_size=40))
def test_canonicalize_every_plane(chars: list[str]) -> None:
    """Any code points, one or a few per document (the one-code-point table's path)."""
    native, reference = native_pair("canonicalize")
    buf, offsets = packed([c.encode("utf-8", "surrogatepass") for c in chars])
    a = args(buf, offsets, ktables.BIDI | ktables.FORMAT, True, 1 << 20)
    same(lambda: native.canonicalize(*a), lambda: reference.canonicalize(*a))


@settings(max_examples=200)
@given(
    st.lists(
        st.binary(max_size=10)
        | st.sampled_from([b"\xc3\xa9\xff", b"A\xcc", b"\xed\xa0\x80", b"\xef\xac\x81\x80"]),
        max_size=6,
    ),
    st.booleans(),
    st.sampled_from([1 << 20, 0, 3]),
)
def test_canonicalize_on_any_bytes(docs: list[bytes], lower: bool, fallback: int) -> None:
    """Bytes that are not UTF-8 raise the codec's own error, for the same document."""
    native, reference = native_pair("canonicalize")
    buf, offsets = packed(docs)
    a = args(buf, offsets, ktables.BIDI, lower, fallback)
    same(lambda: native.canonicalize(*a), lambda: reference.canonicalize(*a))


@settings(max_examples=100)
@given(st.binary(max_size=12), st.lists(st.integers(-3, 15), max_size=5), st.integers(-9, 300))
def test_canonicalize_errors(data: bytes, offsets: list[int], strip: int) -> None:
    native, reference = native_pair("canonicalize")
    a = args(np.frombuffer(data, np.uint8), np.array(offsets, np.int64), strip, True, 1 << 20)
    same(lambda: native.canonicalize(*a), lambda: reference.canonicalize(*a))


def test_short_flags_and_pair_tables_are_refused() -> None:
    native, reference = native_pair("canonicalize")
    buf, offsets = packed([b"abc"])
    a = list(args(buf, offsets, 0, True, 1 << 20))
    for k, table in ((2, a[2][:5]), (12, a[12][:-1])):
        bad = tuple(table if i == k else x for i, x in enumerate(a))
        same(lambda b=bad: native.canonicalize(*b), lambda b=bad: reference.canonicalize(*b))
