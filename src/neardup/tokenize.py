"""Tokenizers: words (Go rules, Unicode \\w, UAX #29), character n-grams, graphemes, shingles.

Each tokenizer has ``tokenize(text) -> list[str]`` (the :class:`~neardup.types.Tokenizer`
Protocol) and a batch form, ``spans(texts)``, that returns token byte ranges over one packed
buffer (:class:`~neardup._spans.Spans`). The word and n-gram tokenizers run in the
batch engine's kernels; UAX #29 and grapheme segmentation use the ``regex`` package.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any, Literal

import numpy as np

from neardup._kernels import engine
from neardup._spans import Spans, shingle_spans, spans_from_lists
from neardup._unicode import classes as tables
from neardup.errors import ConfigError, InputError
from neardup.packed import PackedDocs, encode_text, pack
from neardup.types import Tokenizer

__all__ = [
    "GraphemeTokenizer",
    "NgramTokenizer",
    "ShingleTokenizer",
    "WordTokenizer",
    "token_spans",
]

WordMode = Literal["go", "word", "uax29"]

# Word-character masks of the kernel modes.
_MASKS: dict[str, int] = {
    # Go fingerprint: unicode.IsLetter || unicode.IsDigit (Nd only).
    "go": tables.LETTER | tables.DIGIT,
    # Unicode \w: letters, all numbers, combining marks and connector punctuation; Han and
    # kana characters are words of their own (IDEOGRAPH; see WordTokenizer).
    "word": tables.LETTER
    | tables.DIGIT
    | tables.NUMBER
    | tables.MARK
    | tables.CONNECTOR
    | tables.IDEOGRAPH,
}
_MIN_BYTES = {"go": 2, "word": 1}


@cache
def _patterns() -> tuple[Any, Any]:
    """The UAX #29 word-boundary and grapheme patterns (``regex`` imported on first use)."""
    import regex

    return regex.compile(r"(?wV1)\b"), regex.compile(r"\X")


def _as_text(text: object) -> str:
    if isinstance(text, str):
        return text
    if isinstance(text, bytes | bytearray | memoryview):
        return encode_text(bytes(text)).decode("utf-8")
    raise InputError(f"expected str or UTF-8 bytes, got {type(text).__name__}")


class WordTokenizer:
    """Split text into words.

    Modes:
        * ``"go"`` -- the Go ``fingerprint`` package exactly: maximal runs of letters (L*) and
          decimal digits (Nd), lowercased per code point with the simple mapping (``İ`` -> ``i``,
          ``Σ`` -> ``σ``), tokens shorter than 2 UTF-8 *bytes* dropped.
        * ``"word"`` (default) -- runs of Unicode word characters (letters, numbers, combining
          marks, ``_``), simple-lowercased, all kept; each Han, Hiragana or Katakana character
          is a word of its own with the combining marks after it (UAX #29 gives each
          ideograph its own word; kana are split the same way, so Chinese and Japanese text
          has word shingles without a dictionary). ``split_ideographs=False`` keeps such runs
          whole, as a ``\\w+`` regex does. The fastest mode.
        * ``"uax29"`` -- UAX #29 word segments containing a letter or number, as txtfp's
          ``WordTokenizer`` (``don't`` and ``3.14`` stay whole); not lowercased (canonicalize
          first). Unicode data of the ``regex`` package.

    Args:
        mode: ``"go"``, ``"word"`` or ``"uax29"``.
        split_ideographs: In ``"word"`` mode, make each Han or kana character its own word
            (default). Ignored by the other modes (``"go"`` keeps Go's runs; ``"uax29"``
            follows UAX #29).

    Examples:
        >>> WordTokenizer(mode="go").tokenize("İstanbul: a ½ ΣΟΦΟΣ")
        ['istanbul', 'σοφοσ']
        >>> WordTokenizer().tokenize("東京タワー abc")
        ['東', '京', 'タ', 'ワ', 'ー', 'abc']
        >>> WordTokenizer(split_ideographs=False).tokenize("東京タワー abc")
        ['東京タワー', 'abc']
        >>> WordTokenizer(mode="uax29").tokenize("don't stop 3.14!")
        ["don't", 'stop', '3.14']
    """

    __slots__ = ("_mode", "_split")

    def __init__(self, mode: WordMode = "word", *, split_ideographs: bool = True) -> None:
        if mode not in ("go", "word", "uax29"):
            raise ConfigError(f"unknown word mode {mode!r}; use 'go', 'word' or 'uax29'")
        self._mode: str = mode
        self._split = bool(split_ideographs) and mode == "word"

    @property
    def split_ideographs(self) -> bool:
        """Whether each Han or kana character is a word of its own (``"word"`` mode)."""
        return self._split

    @property
    def kernel_args(self) -> tuple[int, int] | None:
        """``(mask, min_bytes)`` of the word kernels for this tokenizer (``None``: uax29).

        ``mask`` holds the :mod:`neardup._unicode.classes` class flags of word characters
        (with ``IDEOGRAPH`` when Han and kana are split); tokens shorter than ``min_bytes``
        UTF-8 bytes are dropped.
        """
        if self._mode == "uax29":
            return None
        mask = _MASKS[self._mode]
        if self._mode == "word" and not self._split:
            mask &= ~tables.IDEOGRAPH
        return mask, _MIN_BYTES[self._mode]

    @property
    def mode(self) -> str:
        """The mode: ``go``, ``word`` or ``uax29``."""
        return self._mode

    @property
    def name(self) -> str:
        """Stable id: ``word-go``, ``word-unicode`` (``word-unicode-runs`` without splitting
        ideographs) or ``word-uax29`` (txtfp's name)."""
        if self._mode == "word" and not self._split:
            return "word-unicode-runs"
        return {"go": "word-go", "word": "word-unicode", "uax29": "word-uax29"}[self._mode]

    def __repr__(self) -> str:
        if self._mode == "word" and not self._split:
            return "WordTokenizer(mode='word', split_ideographs=False)"
        return f"WordTokenizer(mode={self._mode!r})"

    def tokenize(self, text: str) -> list[str]:
        """Return the words of ``text``."""
        if self._mode == "uax29":
            return _uax29_words(_as_text(text))
        return self.spans([text]).to_lists()[0]

    def spans(self, texts: Sequence[str | bytes]) -> Spans:
        """Tokenize many documents at once into token spans (the batch path)."""
        args = self.kernel_args
        if args is None:
            return spans_from_lists([_uax29_words(_as_text(t)) for t in texts])
        return engine.tokenize_texts(texts, mask=args[0], min_bytes=args[1])


def _uax29_words(text: str) -> list[str]:
    return [seg for seg in _patterns()[0].split(text) if seg and any(ch.isalnum() for ch in seg)]


class NgramTokenizer:
    """Overlapping character n-grams (code points, spaces included).

    A text shorter than ``n`` code points gives one gram of the whole text; empty text gives
    none.

    Examples:
        >>> NgramTokenizer(3).tokenize("abcd")
        ['abc', 'bcd']
        >>> NgramTokenizer(3).tokenize("ab")
        ['ab']
    """

    __slots__ = ("_n",)

    def __init__(self, n: int = 3) -> None:
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 1024:
            raise ConfigError(f"n-gram size must be an integer from 1 to 1024, got {n!r}")
        self._n = n

    @property
    def n(self) -> int:
        """The gram size in code points."""
        return self._n

    @property
    def name(self) -> str:
        """Stable id: ``ngram-n=<n>``."""
        return f"ngram-n={self._n}"

    def __repr__(self) -> str:
        return f"NgramTokenizer({self._n})"

    def tokenize(self, text: str) -> list[str]:
        """Return the character n-grams of ``text``."""
        return self.spans([text]).to_lists()[0]

    def spans(self, texts: Sequence[str | bytes]) -> Spans:
        """N-gram spans over the packed documents themselves (no copy of the text)."""
        packed = pack(texts)
        buf = packed.buf
        # code point starts: every byte that is not a UTF-8 continuation byte
        lead = np.flatnonzero((buf & 0xC0) != 0x80).astype(np.int64)
        doc_first = np.searchsorted(lead, packed.offsets)  # index into lead per doc boundary
        n_cp = np.diff(doc_first)
        counts = np.where(n_cp >= self._n, n_cp - self._n + 1, (n_cp > 0).astype(np.int64))
        doc_offsets = np.zeros(len(counts) + 1, dtype=np.int64)
        np.cumsum(counts, out=doc_offsets[1:])
        total = int(doc_offsets[-1])
        first = np.repeat(doc_first[:-1], counts) + (
            np.arange(total, dtype=np.int64) - np.repeat(doc_offsets[:-1], counts)
        )
        last_plus = np.minimum(first + self._n, np.repeat(doc_first[1:], counts))
        bounds = np.concatenate((lead, [len(buf)])).astype(np.int64)
        # a gram ends where the next code point starts, or at its document's end
        return Spans(buf, bounds[first], bounds[last_plus], doc_offsets)


class GraphemeTokenizer:
    """Extended grapheme clusters (UAX #29), spaces included, as txtfp's ``GraphemeTokenizer``.

    Examples:
        >>> [len(g) for g in GraphemeTokenizer().tokenize("e\\u0301!")]
        [2, 1]
    """

    __slots__ = ()

    @property
    def name(self) -> str:
        """Stable id: ``grapheme-uax29``."""
        return "grapheme-uax29"

    def __repr__(self) -> str:
        return "GraphemeTokenizer()"

    def tokenize(self, text: str) -> list[str]:
        """Return the grapheme clusters of ``text``."""
        return list(_patterns()[1].findall(_as_text(text)))

    def spans(self, texts: Sequence[str | bytes]) -> Spans:
        """Grapheme spans for many documents."""
        return spans_from_lists([self.tokenize(_as_text(t)) for t in texts])


class ShingleTokenizer:
    """Windows of ``k`` consecutive tokens of an inner tokenizer, joined by one space.

    Args:
        k: Window size.
        inner: The tokenizer whose tokens are shingled (default ``WordTokenizer()``).
        short: A text with fewer than ``k`` tokens gives ``"joined"`` one shingle of all its
            tokens (txtfp) or ``"separate"`` each token on its own (Go ``fingerprint``).

    Examples:
        >>> ShingleTokenizer(2).tokenize("a b c")
        ['a b', 'b c']
        >>> ShingleTokenizer(3, WordTokenizer("go"), short="separate").tokenize("hello world")
        ['hello', 'world']
    """

    __slots__ = ("_inner", "_k", "_short")

    def __init__(
        self,
        k: int = 5,
        inner: Tokenizer | None = None,
        *,
        short: Literal["joined", "separate"] = "joined",
    ) -> None:
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= 1024:
            raise ConfigError(f"shingle size k must be an integer from 1 to 1024, got {k!r}")
        if short not in ("joined", "separate"):
            raise ConfigError(f"short must be 'joined' or 'separate', got {short!r}")
        self._k = k
        self._inner: Tokenizer = inner if inner is not None else WordTokenizer()
        self._short: str = short

    @property
    def k(self) -> int:
        """The window size."""
        return self._k

    @property
    def short(self) -> str:
        """What a text with fewer than ``k`` tokens gives: ``"joined"`` or ``"separate"``."""
        return self._short

    @property
    def inner(self) -> Tokenizer:
        """The tokenizer whose tokens are shingled."""
        return self._inner

    @property
    def name(self) -> str:
        """Stable id: ``shingle-k=<k>/<inner>`` (txtfp's form); ``+sep`` marks short="separate"."""
        suffix = "+sep" if self._short == "separate" else ""
        return f"shingle-k={self._k}{suffix}/{self._inner.name}"

    def __repr__(self) -> str:
        return f"ShingleTokenizer({self._k}, {self._inner!r}, short={self._short!r})"

    def tokenize(self, text: str) -> list[str]:
        """Return the shingles of ``text``."""
        return self.spans([text]).to_lists()[0]

    def spans(self, texts: Sequence[str | bytes]) -> Spans:
        """Shingle spans for many documents (contiguous in the inner token buffer)."""
        return shingle_spans(token_spans(self._inner, texts), self._k, short=self._short)


def token_spans(tokenizer: Tokenizer, texts: Sequence[str | bytes] | PackedDocs) -> Spans:
    """Token spans of ``texts`` for any tokenizer: its batch path if it has one, else its lists.
    ``texts`` may come packed (:class:`~neardup._spans.PackedDocs`), as a canonicalizer's
    batch returns them.

    Examples:
        >>> token_spans(WordTokenizer(), ["Hi there", ""]).to_lists()
        [['hi', 'there'], []]
    """
    if isinstance(texts, PackedDocs):
        texts = texts.texts()
    batch = getattr(tokenizer, "spans", None)
    if callable(batch):
        result = batch(texts)
        if isinstance(result, Spans):
            return result
    return spans_from_lists([tokenizer.tokenize(_as_text(t)) for t in texts])
