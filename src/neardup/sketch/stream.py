"""Streaming fingerprinters: feed a document in chunks, get exactly the one-shot sketch.

:class:`MinHashStream` and :class:`SimHashStream` take a hasher (:func:`open_stream` picks
the right one) and give ``update(chunk)``, ``digest()`` and ``reset()`` (txtfp's streaming
fingerprinters, spec section 4.8). They call only the hashers' public streaming hook
(``tokenizer``, ``canonicalizer``, ``canonical_text`` / ``slots_of_tokens`` / ``from_slots``
on :class:`~neardup.sketch.minhash.MinHasher`, ``feature_sums`` / ``from_sums`` on
:class:`~neardup.sketch.simhash.SimHasher`); the hashers do not import this module.
``digest()`` equals ``sketch(whole_text)`` for every way of cutting the text into chunks.

How memory stays bounded: decoded text is buffered until it passes ``piece_chars`` code points;
it is then cut into pieces of about that size, each ending just before an ASCII whitespace
character. For the supported pipelines (the
:class:`~neardup.canonicalize.Canonicalizer`, word tokenizers and their shingles)
canonicalization and tokenization never look across such a cut, so the piece is canonicalized
and tokenized on its own. The last ``k - 1`` tokens are carried into the next piece so every
shingle is counted exactly once; MinHash keeps the elementwise minimum of the pieces' slots
(a set function), SimHash the per-bit sums (:meth:`SimHasher.sums
<neardup.sketch.simhash.SimHasher.sums>`). Other pipelines are streamed by buffering the whole
text up to ``max_bytes`` (:attr:`MinHashStream.bounded` is then False). See
``docs/streaming.md``.
"""

from __future__ import annotations

import codecs
import logging
from collections.abc import Callable
from os import PathLike
from typing import Literal, overload

import numpy as np
import numpy.typing as npt
import regex

from neardup._spans import Spans, shingle_spans
from neardup.canonicalize import Canonicalizer
from neardup.errors import ConfigError, DecodeError, InputError, InputTooLargeError
from neardup.sketch.minhash import MinHash, MinHasher
from neardup.sketch.simhash import SimHash, SimHasher
from neardup.tokenize import ShingleTokenizer, WordTokenizer, token_spans
from neardup.types import Tokenizer

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_PIECE_CHARS",
    "HASH_FILE_METHODS",
    "MinHashStream",
    "SimHashStream",
    "hash_file",
    "open_stream",
]

log = logging.getLogger(__name__)

#: txtfp's streaming cap: 16 MiB of text not yet cut into pieces (exactly 16 MiB is allowed).
DEFAULT_MAX_BYTES = 16 * 1024 * 1024
#: Held text is cut into pieces of about this many code points (peak memory is a small
#: multiple of it: canonicalizing and tokenizing a piece take ~30 bytes per code point).
DEFAULT_PIECE_CHARS = 1 << 16
#: The methods :func:`hash_file` accepts (as ``neardup hash --method``).
HASH_FILE_METHODS = ("minhash", "simhash", "simhash-go")
_ASCII_SPACE = " \t\n\r\x0b\x0c"
#: Where held text may be cut: before an ASCII whitespace whose run is followed by a
#: character that is not a combining mark or a format character. A canonicalizer that trims
#: leading whitespace would otherwise move such a mark from the space onto the next word
#: (``"a \u0300b"``); and whitespace at the end of the held text waits for its next character.
_CUT_PATTERN = r"[ \t\n\r\x0b\x0c](?=[ \t\n\r\x0b\x0c]*[^ \t\n\r\x0b\x0c\p{M}\p{Cf}])"
_CUT = regex.compile(_CUT_PATTERN)
_CUT_LAST = regex.compile(_CUT_PATTERN, flags=regex.REVERSE)
_READ_SIZE = 1 << 20
_MAX_TOTAL_WEIGHT = 2**61
I64 = npt.NDArray[np.int64]
U64 = npt.NDArray[np.uint64]


def _utf8_len(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def _valid_prefix(pending: bytes) -> bool:
    """Whether ``pending`` (an incomplete UTF-8 sequence) can still become a valid one
    (CPython's decoder lets a surrogate prefix such as ``ED A0`` wait for more bytes)."""
    if len(pending) < 2:
        return True
    second = pending[1]
    lead = pending[0]
    low, high = {
        0xE0: (0xA0, 0xBF),
        0xED: (0x80, 0x9F),
        0xF0: (0x90, 0xBF),
        0xF4: (0x80, 0x8F),
    }.get(lead, (0x80, 0xBF))
    return low <= second <= high


def _split_tokenizer(tokenizer: Tokenizer) -> tuple[Tokenizer, int, str]:
    """(inner tokenizer, k, short) of a tokenizer: a shingler's parts, or (it, 1, joined)."""
    if isinstance(tokenizer, ShingleTokenizer):
        return tokenizer.inner, tokenizer.k, tokenizer.short
    return tokenizer, 1, "joined"


def _cuttable(canonicalizer: object, tokenizer: Tokenizer) -> bool:
    """Whether text may be cut at ASCII whitespace for this pipeline (see the module doc).

    Not with the confusable skeleton (the ``secure`` preset): it maps look-alike capitals to
    Latin ones by what the whole text holds (``ΑΣ`` alone is ``aʃ``, but in ``ΑΣ σοφος``,
    Greek by its ``φ``, it folds to ``ao``), so a piece does not canonicalize as it does in
    the whole text; such a stream buffers the text instead."""
    inner, _, _ = _split_tokenizer(tokenizer)
    if type(tokenizer) not in (ShingleTokenizer, WordTokenizer) or type(inner) is not WordTokenizer:
        return False
    if canonicalizer is None:
        return True
    return type(canonicalizer) is Canonicalizer and not canonicalizer.settings.confusables


def _prepend(carry: list[str], spans: Spans) -> Spans:
    """One document's token spans with the ``carry`` tokens put in front (space-separated)."""
    if not carry:
        return spans
    head = " ".join(carry).encode("utf-8", "surrogatepass") + b" "
    lengths = [len(t.encode("utf-8", "surrogatepass")) for t in carry]
    starts = np.cumsum([0, *[n + 1 for n in lengths[:-1]]], dtype=np.int64)
    ends = starts + np.asarray(lengths, dtype=np.int64)
    buf = np.concatenate((np.frombuffer(head, dtype=np.uint8), spans.buf))
    shift = len(head)
    return Spans(
        buf,
        np.concatenate((starts, spans.starts + shift)),
        np.concatenate((ends, spans.ends + shift)),
        np.array([0, len(carry) + len(spans.starts)], dtype=np.int64),
    )


def _tail(spans: Spans, n: int) -> list[str]:
    """The last ``n`` tokens of a one-document span set, as strings."""
    if n <= 0:
        return []
    raw = spans.buf
    return [
        raw[s:e].tobytes().decode("utf-8", "surrogatepass")
        for s, e in zip(spans.starts[-n:].tolist(), spans.ends[-n:].tolist(), strict=True)
    ]


class _Stream:
    """The shared part: UTF-8 carry-over, the cap, cutting pieces, the token carry."""

    def __init__(
        self,
        canonicalize: Callable[[str], str] | None,
        tokenizer: Tokenizer,
        bounded: bool,
        max_bytes: int,
        piece_chars: int,
    ) -> None:
        for name, value in (("max_bytes", max_bytes), ("piece_chars", piece_chars)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"{name} must be a positive integer, got {value!r}")
        self._canonicalize = canonicalize
        self._inner, self._k, self._short = _split_tokenizer(tokenizer)
        self._bounded = bounded
        self._max_bytes = max_bytes
        self._piece_chars = piece_chars
        self.reset()

    @property
    def bounded(self) -> bool:
        """True when memory stays bounded (pieces are sketched as they come); False when this
        pipeline is streamed by buffering the whole text (then at most ``max_bytes``)."""
        return self._bounded

    @property
    def max_bytes(self) -> int:
        """The cap on the UTF-8 bytes of text held but not yet cut into pieces."""
        return self._max_bytes

    @property
    def pending_bytes(self) -> int:
        """UTF-8 bytes of text held now (counted against ``max_bytes``; an incomplete UTF-8
        sequence carried from a bytes chunk is not counted)."""
        return self._pending

    def reset(self) -> None:
        """Forget everything fed so far; the stream is as new."""
        self._decoder = codecs.getincrementaldecoder("utf-8")("strict")
        self._parts: list[str] = []
        self._pending = 0
        self._space = False  # an ASCII space past the start of the held text
        self._hold = 0  # no cut is tried before this many bytes are held (see _cut)
        self._carry: list[str] = []
        self._started = False
        self._clear()

    def update(self, chunk: str | bytes) -> None:
        """Feed the next chunk of the document (``str``, or UTF-8 ``bytes``; they may be mixed).

        A UTF-8 sequence cut at the end of a bytes chunk is held until the next chunk. An
        update that fails leaves the stream as it was before it.

        Raises:
            DecodeError: An invalid UTF-8 sequence, or a ``str`` chunk arriving while a UTF-8
                sequence from the previous bytes chunk is incomplete.
            InputTooLargeError: The held text would pass ``max_bytes``.
            InputError: ``chunk`` is neither ``str`` nor bytes.
        """
        state = self._decoder.getstate()
        if isinstance(chunk, str):
            if state[0] and chunk:
                raise DecodeError(
                    "a str chunk arrived while a UTF-8 sequence from the previous bytes chunk "
                    f"was incomplete ({state[0].hex()}); finish the sequence with bytes first"
                )
            text = chunk
            size = _utf8_len(text)
        elif isinstance(chunk, bytes | bytearray | memoryview):
            data = bytes(chunk)
            try:
                text = self._decoder.decode(data)
            except UnicodeDecodeError as exc:
                self._decoder.setstate(state)
                raise DecodeError(
                    f"the stream is not valid UTF-8 ({exc.reason} in this chunk); decode it "
                    "yourself with the right encoding and pass str chunks"
                ) from None
            held = self._decoder.getstate()[0]
            if not _valid_prefix(held):
                self._decoder.setstate(state)
                raise DecodeError(
                    f"the stream is not valid UTF-8 (bytes {held.hex()} start no valid "
                    "sequence); decode it yourself with the right encoding and pass str chunks"
                )
            size = len(state[0]) + len(data) - len(held)
        else:
            raise InputError(
                f"update() takes str or bytes, got {type(chunk).__name__}; pass text chunks"
            )
        if self._pending + size > self._max_bytes:
            self._decoder.setstate(state)
            raise InputTooLargeError(
                f"the stream would hold {self._pending + size} bytes of uncut text, over "
                f"max_bytes={self._max_bytes}"
                + (
                    "; feed smaller chunks, or raise max_bytes"
                    if self._bounded
                    else " (this pipeline is streamed by buffering the whole text); raise "
                    "max_bytes or use a word tokenizer"
                )
            )
        if not text:
            return
        self._parts.append(text)
        self._pending += size
        space = max(text.rfind(c) for c in _ASCII_SPACE)
        if space > 0 or (space == 0 and len(self._parts) > 1):
            self._space = True
        if self._bounded and self._space and self._pending > max(self._piece_chars, self._hold):
            self._cut()

    def _cut(self) -> None:
        """Feed pieces of about ``piece_chars`` code points, each ending just before an ASCII
        whitespace character (:data:`_CUT_PATTERN`); keep the rest."""
        text = "".join(self._parts)
        start, size = 0, self._piece_chars
        while len(text) - start > size:
            cut = self._last_cut(text, start, start + size + 1)
            if cut is None:  # no cut in this window: take the first one after it
                cut = self._first_cut(text, start + size)
                if cut is None:
                    break
            self._feed(text[start:cut])
            start = cut
        rest = text[start:]
        self._parts = [rest]
        self._pending = _utf8_len(rest)
        self._space = _CUT.search(rest, 1) is not None
        # held text that has no cut yet waits until it doubles, so that small updates do not
        # rescan it each time (linear, not quadratic)
        self._hold = 2 * self._pending if start == 0 else 0

    @staticmethod
    def _last_cut(text: str, start: int, end: int) -> int | None:
        found = _CUT_LAST.search(text, start + 1, end)
        return None if found is None else found.start()

    @staticmethod
    def _first_cut(text: str, pos: int) -> int | None:
        found = _CUT.search(text, pos)
        return None if found is None else found.start()

    def _tokens(self, text: str) -> Spans:
        canon = self._canonicalize(text) if self._canonicalize is not None else text
        return _prepend(self._carry, token_spans(self._inner, [canon]))

    def _feed(self, piece: str) -> None:
        spans = self._tokens(piece)
        n = len(spans.starts)
        if n >= self._k:
            self._absorb(spans)
            self._started = True
            self._carry = _tail(spans, self._k - 1)
        else:
            self._carry = _tail(spans, n)

    def _check_complete(self) -> None:
        held = self._decoder.getstate()[0]
        if held:
            raise DecodeError(
                f"the stream ends inside a UTF-8 sequence ({held.hex()}); the input is "
                "truncated or not UTF-8"
            )

    def _final(self) -> tuple[Spans | None, Spans | None]:
        """For the text held now, without changing the state: (the tokens still to absorb
        when some were absorbed and they hold a new window, else None; the whole document's
        tokens when nothing was absorbed yet, else None)."""
        self._check_complete()
        spans = self._tokens("".join(self._parts))
        if self._started:
            return (spans if len(spans.starts) >= self._k else None), None
        return None, spans

    def _whole(self) -> str:
        self._check_complete()
        return "".join(self._parts)

    def _clear(self) -> None:
        raise NotImplementedError

    def _absorb(self, tokens: Spans) -> None:
        """Count the complete ``k``-windows of ``tokens`` (at least ``k`` of them)."""
        raise NotImplementedError


class MinHashStream(_Stream):
    """A MinHash fed in chunks (``MinHashStream(hasher)`` or :func:`open_stream`):
    ``update(chunk)``, then ``digest()``.

    Examples:
        >>> h = MinHasher(num_perm=16)
        >>> s = MinHashStream(h)
        >>> for chunk in (b"the quick br", b"own fox jumps over the lazy d\\xc3", b"\\xb6g"):
        ...     s.update(chunk)
        >>> s.digest() == h.sketch("the quick brown fox jumps over the lazy dög")
        True
    """

    def __init__(
        self,
        hasher: MinHasher,
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
        piece_chars: int = DEFAULT_PIECE_CHARS,
    ) -> None:
        self._hasher = hasher
        tok = hasher.tokenizer
        canon = hasher.canonicalizer
        bounded = hasher.config.preset != "oph" and _cuttable(canon, tok)
        super().__init__(hasher.canonical_text, tok, bounded, max_bytes, piece_chars)

    def _clear(self) -> None:
        self._row: U64 | None = None

    def _absorb(self, tokens: Spans) -> None:
        row = self._hasher.slots_of_tokens(tokens)[0]
        self._row = row if self._row is None else np.minimum(self._row, row)

    def digest(self) -> MinHash:
        """The sketch of everything fed so far (the stream stays usable; more may follow).

        Raises:
            DecodeError: The text ends inside a UTF-8 sequence.
            EmptyInputError: No features, with ``empty="error"`` or the txtfp preset.
        """
        h = self._hasher
        if not self._bounded:
            return h.sketch(self._whole())
        rest, whole = self._final()
        if whole is not None:
            row = h.slots_of_tokens(whole)[0]
        else:
            assert self._row is not None
            row = self._row
            if rest is not None:
                row = np.minimum(row, h.slots_of_tokens(rest)[0])
        return h.from_slots(row)


class SimHashStream(_Stream):
    """A SimHash fed in chunks (``SimHashStream(hasher)`` or :func:`open_stream`):
    ``update(chunk)``, then ``digest()``.

    Examples:
        >>> h = SimHasher(preset="go")
        >>> s = SimHashStream(h)
        >>> for chunk in ("Hello wo", b"rld, hello ", "world"):
        ...     s.update(chunk)
        >>> s.digest() == h.sketch("Hello world, hello world")
        True
    """

    def __init__(
        self,
        hasher: SimHasher,
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
        piece_chars: int = DEFAULT_PIECE_CHARS,
    ) -> None:
        self._hasher = hasher
        canon = hasher.canonicalizer
        tok = hasher.tokenizer
        bounded = hasher.config.weighting != "binary" and _cuttable(canon, tok)
        super().__init__(
            canon.canonicalize if canon is not None else None,
            tok,
            bounded,
            max_bytes,
            piece_chars,
        )

    def _clear(self) -> None:
        self._sums = np.zeros(self._hasher.bits, dtype=np.int64)
        self._count = 0
        self._weight = 0

    def _add(self, features: Spans) -> tuple[I64, int, int]:
        sums, count, weight = self._hasher.feature_sums(features)
        if self._weight + weight >= _MAX_TOTAL_WEIGHT:
            raise InputTooLargeError(
                "the document's total feature weight overflows the exact sum; "
                "use smaller weights or split the document"
            )
        return self._sums + sums, self._count + count, self._weight + weight

    def _absorb(self, tokens: Spans) -> None:
        self._sums, self._count, self._weight = self._add(shingle_spans(tokens, self._k))

    def digest(self) -> SimHash:
        """The code of everything fed so far (the stream stays usable; more may follow).

        Raises:
            DecodeError: The text ends inside a UTF-8 sequence.
            EmptyInputError: No features, with ``empty="error"`` (the txtfp preset).
        """
        h = self._hasher
        if not self._bounded:
            return h.sketch(self._whole())
        rest, whole = self._final()
        if whole is not None:
            sums, count, _ = self._add(shingle_spans(whole, self._k, short=self._short))
        elif rest is not None:
            sums, count, _ = self._add(shingle_spans(rest, self._k))
        else:
            sums, count = self._sums, self._count
        return h.from_sums(sums, count)


@overload
def open_stream(
    hasher: MinHasher, *, max_bytes: int = ..., piece_chars: int = ...
) -> MinHashStream: ...
@overload
def open_stream(
    hasher: SimHasher, *, max_bytes: int = ..., piece_chars: int = ...
) -> SimHashStream: ...
def open_stream(
    hasher: MinHasher | SimHasher,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    piece_chars: int = DEFAULT_PIECE_CHARS,
) -> MinHashStream | SimHashStream:
    """A stream for ``hasher``: ``update(chunk)`` with str or bytes chunks, then ``digest()``,
    equal to ``hasher.sketch`` of the whole text.

    Args:
        hasher: A :class:`~neardup.sketch.minhash.MinHasher` or
            :class:`~neardup.sketch.simhash.SimHasher`.
        max_bytes: Cap on the UTF-8 bytes of text held but not yet cut into pieces.
        piece_chars: Held text is cut into pieces of about this many code points.

    Raises:
        ConfigError: ``hasher`` is neither.

    Examples:
        >>> s = open_stream(MinHasher(num_perm=8))
        >>> s.update("one two three four five six")
        >>> s.digest() == MinHasher(num_perm=8).sketch("one two three four five six")
        True
        >>> s = open_stream(SimHasher())
        >>> s.update(b"one two thr"); s.update("ee four")
        >>> s.digest() == SimHasher().sketch("one two three four")
        True
    """
    if isinstance(hasher, MinHasher):
        return MinHashStream(hasher, max_bytes=max_bytes, piece_chars=piece_chars)
    if isinstance(hasher, SimHasher):
        return SimHashStream(hasher, max_bytes=max_bytes, piece_chars=piece_chars)
    raise ConfigError(f"open_stream takes a MinHasher or a SimHasher, not {type(hasher).__name__}")


def hash_file(
    path: str | PathLike[str],
    method: str,
    *,
    errors: Literal["replace", "strict"] = "replace",
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> str:
    """The fingerprint of a text file as ``neardup hash --method METHOD`` prints it, streamed
    in 1 MiB chunks so memory stays flat however large the file is.

    Args:
        path: The file (read as UTF-8 bytes; no newline translation).
        method: ``"minhash"`` (:meth:`MinHash.to_hex` of ``MinHasher()``), ``"simhash"``
            (``SimHasher()``) or ``"simhash-go"`` (``SimHasher(preset="go")``).
        errors: ``"replace"`` (as ``neardup hash``: invalid UTF-8 becomes U+FFFD, with a
            logged warning) or ``"strict"`` (:class:`~neardup.errors.DecodeError`).
        max_bytes: The stream's cap on text held but not yet cut (see :class:`MinHashStream`).

    Returns:
        The lowercase hex fingerprint.

    Raises:
        ConfigError: An unknown ``method``.
        InputError: The file cannot be read.
        DecodeError: Invalid UTF-8 with ``errors="strict"``.
        InputTooLargeError: More than ``max_bytes`` of text without an ASCII whitespace.

    Examples:
        >>> import pathlib, tempfile
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "a.txt"
        >>> _ = p.write_text("hello world")
        >>> hash_file(p, "simhash-go") == SimHasher(preset="go").sketch("hello world").to_hex()
        True
    """
    stream: MinHashStream | SimHashStream
    if method == "minhash":
        stream = MinHashStream(MinHasher(), max_bytes=max_bytes)
    elif method in ("simhash", "simhash-go"):
        preset: Literal["go"] | None = "go" if method == "simhash-go" else None
        stream = SimHashStream(SimHasher(preset=preset), max_bytes=max_bytes)
    else:
        raise ConfigError(f"hash_file method must be one of {', '.join(HASH_FILE_METHODS)}")
    if errors not in ("replace", "strict"):
        raise ConfigError(f"errors must be 'replace' or 'strict', got {errors!r}")
    lenient = codecs.getincrementaldecoder("utf-8")("replace")
    strict: codecs.IncrementalDecoder | None = codecs.getincrementaldecoder("utf-8")("strict")
    try:
        with open(path, "rb") as fh:
            while chunk := fh.read(_READ_SIZE):
                if errors == "strict":
                    stream.update(chunk)
                    continue
                if strict is not None:
                    try:
                        strict.decode(chunk)
                    except UnicodeDecodeError:
                        log.warning(
                            "%s is not valid UTF-8; undecodable bytes replaced by U+FFFD", path
                        )
                        strict = None
                stream.update(lenient.decode(chunk))
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from exc
    if errors == "replace":
        if strict is not None and strict.getstate()[0]:
            log.warning("%s is not valid UTF-8; undecodable bytes replaced by U+FFFD", path)
        stream.update(lenient.decode(b"", final=True))
    return stream.digest().to_hex()
