"""The text family: the native tokenizer and FNV-1a against their numpy twins, bit for bit and
error for error (tests/kernels/test_parity.py checks the names)."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from twins import packed, same

from conftest import native_pair
from neardup._unicode import classes as tables

# Word characters of every kind, marks (after ideographs too), Han, kana, Hangul, capitals
# whose simple lowercase grows or shrinks in UTF-8 (U+023A, U+2C6F, U+0130), and separators.
SPECIAL = (
    "aAzZ09_ -.'\n\u00e9\u00c9\u0130\u0131\u03a3\u03c2\u023a\u2c6f\u1e9e\u212a\u01c5"
    "\u0300\u0301\u3099\u20dd\u0660\u2163\u00bd\u4e2d\u6587\u65e5\u672c\u3005\u30c6\u30fc"
    "\uff83\uff9e\uac00\u1100\U00020000\U0001b000\U0001f44d\U0001d400\u200b\u00a0\ufeff"
)
CHARS = st.one_of(st.sampled_from(SPECIAL), st.characters(exclude_categories=("Cs",)))
DOCS = st.lists(
    st.text(CHARS, max_size=40) | st.sampled_from(["\ud800x\udfff", "a\x00b", "\U0010ffff"]),
    max_size=8,
)
MASKS = st.sampled_from(
    [
        tables.LETTER | tables.DIGIT,
        tables.LETTER | tables.DIGIT | tables.NUMBER | tables.MARK | tables.CONNECTOR,
        0x3F,
        tables.LETTER | tables.MARK | tables.IDEOGRAPH,
        tables.LETTER,
        0,
    ]
) | st.integers(0, 255)


@settings(max_examples=400)
@given(DOCS, MASKS, st.integers(-1, 5), st.booleans())
def test_tokenize_words(docs: list[str], mask: int, min_bytes: int, lower: bool) -> None:
    native, reference = native_pair("text")
    buf, offsets = packed([d.encode("utf-8", "surrogatepass") for d in docs])
    args = (buf, offsets, tables.char_classes(), tables.simple_lower(), mask, min_bytes, lower)
    same(lambda: native.tokenize_words(*args), lambda: reference.tokenize_words(*args))


@settings(max_examples=150)
@given(st.lists(st.text(st.sampled_from("xXmMab 日\u0301\u00e9"), max_size=20), max_size=6))
def test_tokenize_words_odd_tables(docs: list[str]) -> None:
    """Tables no Unicode version has: an ASCII ideograph and an ASCII mark, a capital that
    lowercases outside ASCII."""
    native, reference = native_pair("text")
    classes = tables.char_classes().copy()
    classes[ord("x")] = tables.LETTER | tables.IDEOGRAPH
    classes[ord("m")] = tables.MARK
    lower = tables.simple_lower().copy()
    lower[ord("X")] = 0xE9
    buf, offsets = packed([d.encode() for d in docs])
    for mask in (0x3F, tables.LETTER | tables.MARK):
        for do_lower in (True, False):
            args = (buf, offsets, classes, lower, mask, 1, do_lower)
            same(
                lambda a=args: native.tokenize_words(*a),
                lambda a=args: reference.tokenize_words(*a),
            )


@settings(max_examples=200)
@given(
    st.lists(
        st.binary(max_size=12)
        | st.sampled_from([b"ok \xff", b"\xc3", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xe0\x80"]),
        max_size=6,
    ),
    MASKS,
)
def test_tokenize_words_on_any_bytes(docs: list[bytes], mask: int) -> None:
    """Bytes that are not UTF-8 raise the codec's own error, for the same document."""
    native, reference = native_pair("text")
    buf, offsets = packed(docs)
    args = (buf, offsets, tables.char_classes(), tables.simple_lower(), mask, 1, True)
    same(lambda: native.tokenize_words(*args), lambda: reference.tokenize_words(*args))


@settings(max_examples=150)
@given(
    st.binary(max_size=20),
    st.lists(st.integers(-3, 25), max_size=5),
    st.integers(-300, 300),
)
def test_tokenize_words_errors(data: bytes, offsets: list[int], mask: int) -> None:
    native, reference = native_pair("text")
    buf = np.frombuffer(data, np.uint8)
    o = np.array(offsets, np.int64)
    args = (buf, o, tables.char_classes(), tables.simple_lower(), mask, 1, True)
    same(lambda: native.tokenize_words(*args), lambda: reference.tokenize_words(*args))


def test_short_tables_are_refused() -> None:
    native, reference = native_pair("text")
    buf, offsets = packed([b"abc"])
    args = (buf, offsets, tables.char_classes()[:100], tables.simple_lower(), 1, 1, True)
    same(lambda: native.tokenize_words(*args), lambda: reference.tokenize_words(*args))


@settings(max_examples=200)
@given(
    st.binary(max_size=300),
    st.lists(st.tuples(st.integers(-2, 310), st.integers(-2, 310)), max_size=10),
    st.booleans(),
)
def test_fnv1a_ranges(data: bytes, ranges: list[tuple[int, int]], valid: bool) -> None:
    native, reference = native_pair("text")
    buf = np.frombuffer(data, np.uint8)
    if valid:  # mostly ranges of the buffer, sometimes anything
        ranges = [tuple(sorted((a % (len(data) + 1), b % (len(data) + 1)))) for a, b in ranges]
    starts = np.array([a for a, _ in ranges], np.int64)
    ends = np.array([b for _, b in ranges], np.int64)
    same(
        lambda: native.fnv1a_ranges(buf, starts, ends),
        lambda: reference.fnv1a_ranges(buf, starts, ends),
    )


def test_fnv1a_ranges_lengths_differ() -> None:
    native, reference = native_pair("text")
    buf = np.zeros(4, np.uint8)
    starts, ends = np.zeros(2, np.int64), np.ones(1, np.int64)
    same(
        lambda: native.fnv1a_ranges(buf, starts, ends),
        lambda: reference.fnv1a_ranges(buf, starts, ends),
    )


def test_the_text_path_imports_no_numba() -> None:
    """Reading JSONL, canonicalizing, tokenizing and hashing (the front of the default dedup
    path) run on the native families without importing numba."""
    native_pair("text")
    code = (
        "import sys, tempfile, pathlib\n"
        "from neardup._kernels import engine\n"
        "from neardup.canonicalize import Canonicalizer\n"
        "from neardup.packed import read_jsonl_packed\n"
        "p = pathlib.Path(tempfile.mkdtemp()) / 'a.jsonl'\n"
        'p.write_text(\'{"id": 1, "text": "Ça va? \\\\u00c9t\\u00e9 ﬁn"}\\n\', \'utf-8\')\n'
        "(batch,) = read_jsonl_packed(p)\n"
        "canon = Canonicalizer().canonicalize_packed(batch)\n"
        "spans = engine.tokenize_packed(canon, mask=3)\n"
        "engine.hash_spans(spans, 'fnv1a64')\n"
        "print(spans.to_lists(), 'numba' in sys.modules)\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("]] ")[-1].strip() == "False", out.stdout
    assert "ça" in out.stdout and "été" in out.stdout and "fin" in out.stdout
