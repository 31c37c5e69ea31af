"""[cjk] Word segmentation for Chinese, Japanese and Korean; the core falls back to bigrams.

Chinese, Japanese and Korean are written without spaces between words, so a word tokenizer
sees a whole sentence as one token and near-duplicate detection stops working. This module
offers dictionary segmenters (extra ``cjk``):

* :class:`ChineseTokenizer` -- jieba, HMM off by default (txtfp's ``CjkTokenizer``);
* :class:`JapaneseTokenizer` -- SudachiPy with the ``sudachidict_core`` dictionary;
* :class:`KoreanTokenizer` -- kiwipiepy (morphemes, as Kiwi normalizes them);

and, without any extra, :class:`CjkBigramTokenizer`: overlapping character bigrams over runs of
Han, Hiragana, Katakana and Hangul, words elsewhere (the classic CJK indexing fallback of
search engines). :func:`auto_cjk_tokenizer` picks the best one installed.

All are :class:`~neardup.types.Tokenizer`\\ s with a batch ``spans(texts)`` method, so every
sketcher takes them through :func:`neardup.tokenize.token_spans`. Whitespace pieces are dropped,
punctuation is kept (as txtfp does); nothing is lowercased except by the bigram tokenizer's
word part. Dictionaries and models load on first use, once per process, and are shared by all
instances (about 0.5 s for jieba, 1-2 s for Kiwi).
"""

from __future__ import annotations

import importlib.util
import logging
import sys
import threading
from collections.abc import Sequence
from functools import cache
from typing import Any, Literal

from neardup._extras import require_extra
from neardup._spans import Spans, spans_from_lists
from neardup.errors import ConfigError
from neardup.packed import encode_text

__all__ = [
    "ChineseTokenizer",
    "CjkBigramTokenizer",
    "JapaneseTokenizer",
    "KoreanTokenizer",
    "auto_cjk_tokenizer",
]

log = logging.getLogger(__name__)

CjkLang = Literal["zh", "ja", "ko"]

_CJK_CLASS = r"\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}\u30fc\uff70"  # + prolonged sound marks
_LOCK = threading.RLock()  # reentrant: building one model may need another (Sudachi)
_SUDACHI_LOCK = threading.Lock()
_MODELS: dict[tuple[str, ...], Any] = {}
# SudachiPy refuses longer inputs (49149 bytes); texts are cut into pieces below this.
_SUDACHI_MAX_BYTES = 32 * 1024


def _model(key: tuple[str, ...], build: Any) -> Any:
    """The heavy object under ``key``, built by ``build()`` once per process."""
    with _LOCK:
        found = _MODELS.get(key)
        if found is None:
            found = _MODELS[key] = build()
        return found


def _text(text: str | bytes, index: int = 0) -> str:
    """Validate the input like the core tokenizers do (bytes must be UTF-8)."""
    return text if isinstance(text, str) else encode_text(text, index).decode("utf-8")


@cache
def _pattern() -> Any:
    import regex

    return regex.compile(rf"(?V1)([{_CJK_CLASS}]+)|[\w--[{_CJK_CLASS}]]+")


class CjkBigramTokenizer:
    """Character bigrams over CJK runs, lowercased words elsewhere (core; no extra needed).

    A run of Han, Hiragana, Katakana or Hangul characters gives its overlapping bigrams (a run of
    one character gives that character); other text gives its runs of word characters,
    lowercased. Punctuation and spaces separate runs and are dropped.

    Examples:
        >>> CjkBigramTokenizer().tokenize("新华社北京电 GDP 增长")
        ['新华', '华社', '社北', '北京', '京电', 'gdp', '增长']
    """

    __slots__ = ()

    @property
    def name(self) -> str:
        """Stable id: ``cjk-bigram``."""
        return "cjk-bigram"

    def __repr__(self) -> str:
        return "CjkBigramTokenizer()"

    def tokenize(self, text: str) -> list[str]:
        """Return the bigrams and words of ``text``."""
        tokens: list[str] = []
        for match in _pattern().finditer(_text(text)):
            run = match.group(1)
            if run is None:
                tokens.append(match.group(0).lower())
            elif len(run) == 1:
                tokens.append(run)
            else:
                tokens.extend(run[i : i + 2] for i in range(len(run) - 1))
        return tokens

    def spans(self, texts: Sequence[str | bytes]) -> Spans:
        """Token spans for many documents (the batch form used by the sketchers)."""
        return spans_from_lists([self.tokenize(_text(t, i)) for i, t in enumerate(texts)])


class _DictionaryTokenizer:
    """Shared behavior: validation, whitespace dropping, the batch form."""

    __slots__ = ()

    @property
    def name(self) -> str:  # pragma: no cover - every subclass overrides it
        raise NotImplementedError

    def _pieces(self, text: str) -> list[str]:  # pragma: no cover - every subclass overrides it
        raise NotImplementedError

    def tokenize(self, text: str) -> list[str]:
        """Return the words of ``text``, whitespace pieces dropped, punctuation kept."""
        return [piece for piece in self._pieces(_text(text)) if piece and not piece.isspace()]

    def spans(self, texts: Sequence[str | bytes]) -> Spans:
        """Token spans for many documents (the batch form used by the sketchers)."""
        return spans_from_lists([self.tokenize(_text(t, i)) for i, t in enumerate(texts)])


def _jieba() -> Any:
    jieba = require_extra("cjk", "jieba")
    jieba.setLogLevel(logging.WARNING)
    tokenizer = jieba.Tokenizer()
    tokenizer.initialize()  # loads the dictionary now, not inside the first caller's timing
    return tokenizer


class ChineseTokenizer(_DictionaryTokenizer):
    """Chinese words by jieba (``cut`` in accurate mode), as txtfp's ``CjkTokenizer``.

    Args:
        hmm: Use jieba's HMM to join characters the dictionary does not know (off by default,
            as in txtfp: results then depend on the dictionary only).

    Examples:
        >>> ChineseTokenizer().tokenize("我来到北京清华大学。")
        ['我', '来到', '北京', '清华大学', '。']
    """

    __slots__ = ("_hmm",)

    def __init__(self, *, hmm: bool = False) -> None:
        self._hmm = bool(hmm)

    @property
    def name(self) -> str:
        """Stable id: ``cjk-jieba`` or ``cjk-jieba-hmm`` (txtfp's names)."""
        return "cjk-jieba-hmm" if self._hmm else "cjk-jieba"

    def __repr__(self) -> str:
        return f"ChineseTokenizer(hmm={self._hmm})"

    def _pieces(self, text: str) -> list[str]:
        result: list[str] = _model(("jieba",), _jieba).lcut(text, HMM=self._hmm)
        return result


def _sudachi(mode: str) -> Any:
    sudachipy = require_extra("cjk", "sudachipy")
    require_extra("cjk", "sudachidict_core")
    dictionary = _model(("sudachi-dict",), lambda: sudachipy.Dictionary(dict="core"))
    return dictionary.tokenizer(mode=getattr(sudachipy.SplitMode, mode))


def _pieces_under(text: str, max_bytes: int) -> list[str]:
    """Cut ``text`` after line breaks or sentence ends into pieces of at most ``max_bytes``."""
    if len(text) * 4 <= max_bytes or len(text.encode("utf-8")) <= max_bytes:
        return [text]
    pieces: list[str] = []
    start = 0
    while start < len(text):
        end = start
        size = 0
        cut = -1
        while end < len(text):
            size += len(text[end].encode("utf-8", "surrogatepass"))
            if size > max_bytes:
                break
            if text[end] in "\n。！？.!?":
                cut = end + 1
            end += 1
        if end < len(text) and cut > start:
            end = cut
        pieces.append(text[start:end])
        start = end
    return pieces


class JapaneseTokenizer(_DictionaryTokenizer):
    """Japanese words by SudachiPy with the ``sudachidict_core`` dictionary.

    Args:
        mode: Sudachi's split mode: ``"A"`` (shortest units), ``"B"`` or ``"C"`` (default;
            named entities and compounds kept whole).

    Texts longer than Sudachi's input limit are cut after line breaks or sentence ends.

    Examples:
        >>> JapaneseTokenizer().tokenize("東京都に住んでいます。")
        ['東京都', 'に', '住ん', 'で', 'い', 'ます', '。']
    """

    __slots__ = ("_mode",)

    def __init__(self, *, mode: Literal["A", "B", "C"] = "C") -> None:
        if mode not in ("A", "B", "C"):
            raise ConfigError(f"unknown Sudachi split mode {mode!r}; use 'A', 'B' or 'C'")
        self._mode: str = mode

    @property
    def name(self) -> str:
        """Stable id: ``cjk-sudachi-core-<mode>``."""
        return f"cjk-sudachi-core-{self._mode}"

    def __repr__(self) -> str:
        return f"JapaneseTokenizer(mode={self._mode!r})"

    def _pieces(self, text: str) -> list[str]:
        tokenizer = _model(("sudachi", self._mode), lambda: _sudachi(self._mode))
        with _SUDACHI_LOCK:  # a Sudachi tokenizer object is not safe to share between threads
            return [
                m.surface()
                for piece in _pieces_under(text, _SUDACHI_MAX_BYTES)
                for m in tokenizer.tokenize(piece)
            ]


def _kiwi() -> Any:
    kiwipiepy = require_extra("cjk", "kiwipiepy")
    return kiwipiepy.Kiwi()


class KoreanTokenizer(_DictionaryTokenizer):
    """Korean morphemes by kiwipiepy (forms as Kiwi normalizes them, e.g. ``하`` + ``세요``).

    Examples:
        >>> KoreanTokenizer().tokenize("저는 학생입니다.")
        ['저', '는', '학생', '이', 'ᆸ니다', '.']
    """

    __slots__ = ()

    @property
    def name(self) -> str:
        """Stable id: ``cjk-kiwi``."""
        return "cjk-kiwi"

    def __repr__(self) -> str:
        return "KoreanTokenizer()"

    def _pieces(self, text: str) -> list[str]:
        return [token.form for token in _model(("kiwi",), _kiwi).tokenize(text)]


_EXTRA_MODULES: dict[str, tuple[str, ...]] = {
    "zh": ("jieba",),
    "ja": ("sudachipy", "sudachidict_core"),
    "ko": ("kiwipiepy",),
}


def _installed(module: str) -> bool:
    """Whether ``module`` can be imported, without importing it."""
    if module in sys.modules:
        return sys.modules[module] is not None
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def auto_cjk_tokenizer(
    lang: CjkLang | None = None,
) -> ChineseTokenizer | JapaneseTokenizer | KoreanTokenizer | CjkBigramTokenizer:
    """The dictionary tokenizer for ``lang`` when the ``cjk`` extra is installed, else bigrams.

    Args:
        lang: ``"zh"`` (jieba), ``"ja"`` (SudachiPy) or ``"ko"`` (kiwipiepy). ``None`` means
            Chinese, as txtfp's ``CjkTokenizer`` does; for mixed or unknown languages use
            :class:`CjkBigramTokenizer` directly, which treats all three alike.

    Returns:
        A tokenizer; nothing is loaded until it first tokenizes. Its ``name`` differs between
        the dictionary and the fallback, so sketches made with one are never compared with
        sketches made with the other.

    Raises:
        ConfigError: An unknown ``lang``.

    Examples:
        >>> auto_cjk_tokenizer("ja").name in ("cjk-sudachi-core-C", "cjk-bigram")
        True
    """
    code = "zh" if lang is None else lang
    if code not in _EXTRA_MODULES:
        raise ConfigError(f"unknown CJK language {lang!r}; use 'zh', 'ja', 'ko' or None")
    if not all(_installed(m) for m in _EXTRA_MODULES[code]):
        log.info("the cjk extra is not installed; using character bigrams for %r", code)
        return CjkBigramTokenizer()
    if code == "ja":
        return JapaneseTokenizer()
    if code == "ko":
        return KoreanTokenizer()
    return ChineseTokenizer()
