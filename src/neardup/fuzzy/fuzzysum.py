"""FuzzySum: Nick Johnson's dual fuzzy MD5 (seed 002), Java-exact, and a repaired variant.

The legacy algorithm ("Making MD5 Fuzzy Redux", Tally-Ho's ``FuzzySum.getSums``) reduces a
text to ASCII words, turns the distance between neighbouring words into numbers averaged
over windows of 10 words, and hashes two overlapping runs of those window values with MD5.
Two texts are "similar" when any of the four cross-equalities of their sums holds.
:func:`legacy_fuzzysum` reproduces the Java bit for bit, quirks included (see
``docs/fuzzy.md``): windows close at *absolute* word indexes, so one word inserted at the
front breaks all four equalities.

:func:`fuzzysum` is the repaired algorithm the post meant: windows end at *content anchors*
(words whose hash is 0 modulo ``window``), words are Unicode-aware, and the two sums are
"all windows but the last" and "all windows but the first", so an edit confined to the
first (or last) window leaves one cross-equality intact.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import re
import unicodedata
from typing import ClassVar

import regex
import xxhash

from neardup.config import Params, check_range
from neardup.errors import DecodeError, FormatError, InputError, InputTooLargeError

__all__ = [
    "DEFAULT_MAX_CHARS",
    "FuzzySumParams",
    "fuzzysum",
    "fuzzysum_similar",
    "legacy_fuzzysum",
    "legacy_preimages",
]

#: Default cap on the length of a text (in characters) given to the FuzzySum functions.
DEFAULT_MAX_CHARS = 64 * 1024 * 1024

_SLOP = 3
_SAMPLE_SIZE = 10
_MD5_EMPTY = "d41d8cd98f00b204e9800998ecf8427e"

# Java's stripTags (assumed, see SEEDS.md 3.4), then the ASCII-only [^\w\s] of java.util.regex.
_TAG_RE = re.compile(r"<[^>]*>")
_NON_WORD_RE = re.compile(r"[^A-Za-z0-9_ \t\n\x0b\f\r]+")
_JAVA_SPACE_RE = re.compile(r"[ \t\n\x0b\f\r]+")
_JAVA_SPACE = " \t\n\x0b\f\r"
_HEX32_RE = re.compile(r"[0-9a-f]{32}")

# Unicode-aware words of the repaired variant: each ideograph / kana / Thai-Lao-Khmer-Myanmar
# letter is its own word (those scripts do not separate words by spaces); any other run of
# word characters (letters, marks, digits, connectors) is one word.
_SPACELESS = r"\p{Han}\p{Hiragana}\p{Katakana}\p{Thai}\p{Lao}\p{Khmer}\p{Myanmar}"
_WORD_RE = regex.compile(rf"[{_SPACELESS}]|[\w--[{_SPACELESS}]]+", regex.VERSION1)


def _md5(text: str) -> str:
    return hashlib.md5(text.encode("utf-8"), usedforsecurity=False).hexdigest()


def _as_text(text: str | bytes, max_chars: int) -> str:
    """Return ``text`` as str (bytes are decoded as strict UTF-8), enforcing the size cap."""
    if isinstance(text, bytes | bytearray | memoryview):
        raw = bytes(text)
        if len(raw) > 4 * max_chars:
            raise InputTooLargeError(
                f"text of {len(raw)} bytes exceeds the FuzzySum cap of {max_chars} characters; "
                "raise max_chars or split the text"
            )
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DecodeError(
                f"FuzzySum needs text, but the bytes are not valid UTF-8 ({exc}); "
                "decode them yourself or hash them with ctph() instead"
            ) from exc
    if not isinstance(text, str):
        raise InputError(f"FuzzySum needs a str or UTF-8 bytes, got {type(text).__name__}")
    if len(text) > max_chars:
        raise InputTooLargeError(
            f"text of {len(text)} characters exceeds the FuzzySum cap of {max_chars}; "
            "raise max_chars or split the text"
        )
    return text


# --------------------------------------------------------------------------- legacy (Java)


def _java_clean(text: str) -> str:
    """``stripTags(text).toLowerCase().replaceAll("[^\\w\\s]", "").trim()`` in the en-US locale.

    Python's ``str.lower`` is locale-independent and agrees with Java's root-locale mapping on
    every character that can survive the ASCII filter (``İ`` -> ``i`` + U+0307, ``K`` -> ``k``).
    """
    lowered = _TAG_RE.sub("", text).lower()
    return _NON_WORD_RE.sub("", lowered).strip(_JAVA_SPACE)


def _java_word_sum(word: str) -> int:
    if len(word) == 1:
        return ord(word) & 0xFFFF  # quirk: a 1-letter word is its raw code, not scaled
    total = 0
    for prev, cur in itertools.pairwise(word):
        total += abs(ord(cur) - ord(prev))
    return _SLOP * total // len(word)


def _java_preimage(words: list[str], start: int, end: int) -> str:
    """``calculateFuzzyMd5``'s builder: the exact string the Java passes to MD5."""
    parts: list[str] = []
    acc = 0
    sums = [_java_word_sum(w) for w in words]
    for i in range(start + 1, end + 1):
        acc += abs(sums[i] - sums[i - 1]) // _SLOP
        if i % _SAMPLE_SIZE == 0:  # quirk: windows close at the absolute index
            if parts:
                parts.append("\n")
            parts.append(str(acc // _SAMPLE_SIZE))
            acc = 0
    if acc != 0:
        # quirk: "\n" even when nothing precedes, and the divisor is end+1-(start % 10)
        parts.append("\n")
        parts.append(str(acc // (end + 1 - start % _SAMPLE_SIZE)))
    return "".join(parts)


def legacy_preimages(text: str | bytes, *, max_chars: int = DEFAULT_MAX_CHARS) -> list[str]:
    """Return the strings the Java FuzzySum passes to MD5, in call order.

    One string for the short-text path (whose MD5 is used for both sums), otherwise two.

    Args:
        text: The text (str, or bytes decoded as strict UTF-8).
        max_chars: Cap on the text length in characters.

    Returns:
        The MD5 preimages.

    Raises:
        InputTooLargeError: The text is longer than ``max_chars``.
        DecodeError: Bytes that are not valid UTF-8.
        InputError: Neither str nor bytes.

    Examples:
        >>> legacy_preimages("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo")
        ['\\n2', '0']
        >>> legacy_preimages("<p>Hello <b>World</b></p>")
        ['hello world']
    """
    cleaned = _java_clean(_as_text(text, max_chars))
    if len(cleaned) < _SAMPLE_SIZE * 1.5:
        return [cleaned]
    words = _JAVA_SPACE_RE.split(cleaned)
    half = _SAMPLE_SIZE // 2
    return [
        _java_preimage(words, 0, len(words) - 1 - half),
        _java_preimage(words, half, len(words) - 1),
    ]


def legacy_fuzzysum(text: str | bytes, *, max_chars: int = DEFAULT_MAX_CHARS) -> tuple[str, str]:
    """Return the two FuzzySum checksums exactly as the seed's Java ``getSums`` computes them.

    Locale-independent (the Java's en-US behaviour). Every quirk is kept: texts of at least
    15 characters with 6 or fewer words give ``md5("")`` twice, and all non-ASCII characters
    are deleted (which glues neighbours: ``one\\u00a0two`` is one word).

    Args:
        text: The text (str, or bytes decoded as strict UTF-8).
        max_chars: Cap on the text length in characters.

    Returns:
        ``(sum1, sum2)``, lowercase 32-digit hex MD5s.

    Raises:
        InputTooLargeError: The text is longer than ``max_chars``.
        DecodeError: Bytes that are not valid UTF-8.
        InputError: Neither str nor bytes.

    Examples:
        >>> legacy_fuzzysum("<p>Hello <b>World</b></p>")
        ('5eb63bbbe01eeed093cb22bb8f5acdc3', '5eb63bbbe01eeed093cb22bb8f5acdc3')
    """
    pre = legacy_preimages(text, max_chars=max_chars)
    if len(pre) == 1:
        digest = _md5(pre[0])
        return digest, digest
    return _md5(pre[0]), _md5(pre[1])


def _check_sums(sums: object, name: str) -> tuple[str, str]:
    if not (isinstance(sums, tuple | list) and len(sums) == 2):
        raise FormatError(f"{name} must be a pair (sum1, sum2) of MD5 hex strings, got {sums!r}")
    out: list[str] = []
    for value in sums:
        if not (isinstance(value, str) and _HEX32_RE.fullmatch(value.lower())):
            raise FormatError(
                f"{name} holds {value!r}, which is not a 32-digit hex MD5; "
                "pass the pair returned by get_sums()/fuzzysum()"
            )
        out.append(value.lower())
    return out[0], out[1]


def fuzzysum_similar(a: tuple[str, str], b: tuple[str, str]) -> bool:
    """Return True iff any of the four cross-equalities ``a[i] == b[j]`` holds.

    The rule is the same for the legacy and the repaired sums (never mix the two kinds).

    Args:
        a: The sums of the first text.
        b: The sums of the second text.

    Returns:
        Whether the texts count as similar.

    Raises:
        FormatError: A pair is not two 32-digit hex strings.

    Examples:
        >>> x = legacy_fuzzysum("alpha bravo charlie delta echo foxtrot")
        >>> y = legacy_fuzzysum("one two three four five six")
        >>> fuzzysum_similar(x, y)  # the six-word quirk: both are md5("")
        True
    """
    a1, a2 = _check_sums(a, "a")
    b1, b2 = _check_sums(b, "b")
    return a1 in (b1, b2) or a2 in (b1, b2)


# --------------------------------------------------------------------------- repaired


@dataclasses.dataclass(frozen=True, slots=True)
class FuzzySumParams(Params):
    """Parameters of the repaired :func:`fuzzysum`.

    Attributes:
        window: Mean window length in words: a word is an anchor (it closes a window) when
            its xxh3-64 hash is 0 modulo ``window``.
        slop: Word values and distances are divided by this (the Java's ``SLOP``).
        quantum: A window's value is its mean word distance divided by this: larger values
            let more edits inside a window go unnoticed.
        strip_tags: Remove ``<...>`` tags first, as the legacy algorithm does.
        max_chars: Cap on the text length in characters (InputTooLargeError above it).
    """

    KIND: ClassVar[str] = "fuzzysum"
    window: int = 8
    slop: int = 3
    quantum: int = 4
    strip_tags: bool = True
    max_chars: int = DEFAULT_MAX_CHARS

    def __post_init__(self) -> None:
        check_range("window", self.window, 2, 4096, integer=True)
        check_range("slop", self.slop, 1, 1000, integer=True)
        check_range("quantum", self.quantum, 1, 1_000_000, integer=True)
        check_range("max_chars", self.max_chars, 1, 2**40, integer=True)


def _words(text: str, params: FuzzySumParams) -> list[str]:
    if params.strip_tags:
        text = _TAG_RE.sub(" ", text)  # unlike the Java, a tag separates words
    text = unicodedata.normalize("NFKC", text).casefold()
    words: list[str] = _WORD_RE.findall(text)
    return words


def _word_value(word: str, slop: int) -> int:
    # Mean absolute code point step, scaled as the Java does, for every length (a one-letter
    # word has no steps and is worth 0, instead of the Java's raw character code).
    total = 0
    for prev, cur in itertools.pairwise(word):
        total += abs(ord(cur) - ord(prev))
    return slop * total // len(word)


def _windows(words: list[str], params: FuzzySumParams) -> list[str]:
    """One line per window: the anchor's hash and the mean quantized word distance."""
    lines: list[str] = []
    acc = 0
    count = 0
    prev_value = 0
    for i, word in enumerate(words):
        value = _word_value(word, params.slop)
        if count:
            acc += abs(value - prev_value) // params.slop
        prev_value = value
        count += 1
        key = xxhash.xxh3_64_intdigest(word.encode("utf-8"))
        if key % params.window == 0 or i == len(words) - 1:
            lines.append(f"{key & 0xFFFFFFFF:08x}:{acc // (count * params.quantum)}")
            acc = 0
            count = 0
    return lines


def fuzzysum(text: str | bytes, *, params: FuzzySumParams | None = None) -> tuple[str, str]:
    """Return the repaired dual fuzzy MD5 of ``text`` (not compatible with the legacy sums).

    Words are NFKC-casefolded Unicode words (each CJK / kana / Thai character is a word).
    A window ends at every anchor word (hash 0 modulo ``params.window``) and at the last word;
    its value is the anchor's hash with the mean distance between the window's neighbouring
    words, divided by ``params.quantum``. ``sum1`` is the MD5 of all windows but the last,
    ``sum2`` of all windows but the first. Compare with :func:`fuzzysum_similar`.

    Texts with fewer than two windows hash their normalized word sequence exactly (both sums
    equal); a text without words gives ``md5("")`` twice.

    Args:
        text: The text (str, or bytes decoded as strict UTF-8).
        params: Window length, tag stripping and the size cap.

    Returns:
        ``(sum1, sum2)``, lowercase 32-digit hex MD5s.

    Raises:
        InputTooLargeError: The text is longer than ``params.max_chars``.
        DecodeError: Bytes that are not valid UTF-8.
        InputError: Neither str nor bytes.

    Examples:
        >>> a = fuzzysum("the old keeper climbed the spiral stairs every evening at six and "
        ...              "read his folded newspaper by the lamp while the boats came home")
        >>> b = fuzzysum("yesterday the old keeper climbed the spiral stairs every evening at "
        ...              "six and read his folded newspaper by the lamp while the boats came home")
        >>> fuzzysum_similar(a, b)
        True
    """
    params = params or FuzzySumParams()
    words = _words(_as_text(text, params.max_chars), params)
    if not words:
        return _MD5_EMPTY, _MD5_EMPTY
    lines = _windows(words, params)
    if len(lines) < 2:
        digest = _md5(" ".join(words))
        return digest, digest
    return _md5("\n".join(lines[:-1])), _md5("\n".join(lines[1:]))
