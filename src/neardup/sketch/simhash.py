"""SimHash (Charikar 2002, "Similarity estimation techniques from rounding algorithms").

:class:`SimHasher` turns documents into 64, 128 or 256-bit codes whose Hamming distance tracks
the cosine distance of their weighted feature vectors; :class:`SimHash` is the immutable value.
The accumulation runs in the batch engine (the native kernel and its numpy reference, which give
the same bits). See ``docs/simhash.md`` for the presets, the feature-hash layout and the byte
formats.
"""

from __future__ import annotations

import dataclasses
import math
import re
import struct
from collections.abc import Iterable, Mapping, Sequence
from typing import ClassVar, Literal

import numpy as np
import numpy.typing as npt
import xxhash

from neardup._kernels import engine
from neardup._spans import Spans, spans_from_lists
from neardup.canonicalize import Canonicalizer, canonicalizer_id
from neardup.config import Params, check_choice, check_range
from neardup.errors import (
    ConfigError,
    EmptyInputError,
    FormatError,
    IncompatibleSketchError,
    InputError,
    InputTooLargeError,
)
from neardup.packed import PackedDocs, encode_text, pack
from neardup.tokenize import ShingleTokenizer, WordTokenizer, token_spans
from neardup.types import CanonicalizerLike, Tokenizer

__all__ = [
    "FORMAT_VERSION",
    "TXTFP_SEED",
    "WEIGHT_SCALE",
    "SimHash",
    "SimHashConfig",
    "SimHasher",
]

#: Version of the SimHash algorithm definition and of the headed byte format.
FORMAT_VERSION = 1
#: txtfp's ``DEFAULT_SEED`` (xxh3 seed of the ``"txtfp"`` preset).
TXTFP_SEED = 0x00C0FFEE5EED
#: Weights are rounded to multiples of ``1 / WEIGHT_SCALE`` and summed exactly in int64.
WEIGHT_SCALE = 1 << 16
_MAX_WEIGHT = float(1 << 24)
_MAGIC = b"NDSH"
_HEADER = struct.Struct("<4sBBHH")
_PARAMS_RE = re.compile(r"[a-z0-9_]+-[0-9a-f]{16}")
_TEXT_PREFIX = "ndsh"
_WIDTHS = (64, 128, 256)
_HASHES = ("fnv1a64", "xxh3_64", "xxh3_128")
_MASK64 = (1 << 64) - 1

U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]


@dataclasses.dataclass(frozen=True, slots=True)
class SimHashConfig(Params):
    """Parameters of a :class:`SimHasher`; their :meth:`fingerprint` travels with every code.

    Attributes:
        bits: Code width: 64, 128 or 256.
        canonicalizer: The canonicalizer's config string, or ``"none"``.
        tokenizer: The tokenizer's name (features are its tokens).
        weighting: ``"occurrence"`` (+-w per occurrence; ``"tf"`` is normalized to it) or
            ``"binary"`` (+-w once per distinct feature).
        weights: ``""`` (every feature weighs 1) or ``"xxh3-<16 hex>"``, a digest of the
            weight table and the default weight.
        hash: Feature hash: ``"fnv1a64"``, ``"xxh3_64"`` or ``"xxh3_128"``.
        seed: Seed of the xxh3 hashes (ignored by FNV-1a).
        empty: ``"zero"`` (no features gives code 0) or ``"error"`` (EmptyInputError).
        version: :data:`FORMAT_VERSION`.
    """

    KIND: ClassVar[str] = "simhash"
    bits: int = 64
    canonicalizer: str = "none"
    tokenizer: str = "word-unicode"
    weighting: str = "occurrence"
    weights: str = ""
    hash: str = "xxh3_64"
    seed: int = 0
    empty: str = "zero"
    version: int = FORMAT_VERSION

    def __post_init__(self) -> None:
        check_choice("bits", self.bits, _WIDTHS)
        check_choice("weighting", self.weighting, ("occurrence", "binary"))
        check_choice("hash", self.hash, _HASHES)
        check_choice("empty", self.empty, ("zero", "error"))
        check_range("seed", self.seed, 0, _MASK64, integer=True)
        if self.hash != "xxh3_128" and self.bits > 64:
            raise ConfigError(
                f"hash {self.hash!r} gives 64-bit feature hashes, too narrow for bits={self.bits}; "
                "use hash='xxh3_128' (or bits=64)"
            )


@dataclasses.dataclass(frozen=True, slots=True)
class SimHash:
    """An immutable SimHash code: ``value`` (bit ``i`` = ``1 << i``), ``bits`` and ``params``.

    ``params`` is the :meth:`SimHashConfig.fingerprint` of the hasher that made the code, or
    ``""`` when unknown (a code read from raw bytes or hex). Codes with two different non-empty
    params are never compared.

    Examples:
        >>> a, b = SimHash(0b1011), SimHash(0b0001)
        >>> a.distance(b), a.similarity(b)
        (2, 0.96875)
        >>> a.to_hex()
        '000000000000000b'
        >>> SimHash.from_bytes(a.to_bytes()) == a
        True
    """

    value: int
    bits: int = 64
    params: str = ""

    def __post_init__(self) -> None:
        if self.bits not in _WIDTHS:
            raise InputError(f"SimHash bits must be 64, 128 or 256, got {self.bits!r}")
        if isinstance(self.value, bool) or not isinstance(self.value, int):
            raise InputError(f"SimHash value must be an int, got {type(self.value).__name__}")
        if not 0 <= self.value < (1 << self.bits):
            raise InputError(
                f"SimHash value does not fit in {self.bits} bits; pass 0 <= value < 2**{self.bits}"
            )
        if self.params and not _PARAMS_RE.fullmatch(self.params):
            raise FormatError(
                f"SimHash params {self.params!r} is not a params fingerprint "
                "(like 'simhash-0123456789abcdef'); use SimHashConfig.fingerprint() or ''"
            )

    def _check(self, other: SimHash) -> None:
        if not isinstance(other, SimHash):
            raise IncompatibleSketchError(
                f"cannot compare a SimHash with a {type(other).__name__}; compare two SimHash codes"
            )
        if other.bits != self.bits:
            raise IncompatibleSketchError(
                f"cannot compare a {self.bits}-bit SimHash with a {other.bits}-bit one; "
                "hash both documents with the same SimHasher"
            )
        if self.params and other.params and self.params != other.params:
            raise IncompatibleSketchError(
                f"SimHash codes made with different parameters ({self.params} vs "
                f"{other.params}); hash both documents with the same SimHasher"
            )

    def distance(self, other: SimHash) -> int:
        """Hamming distance ``popcount(a ^ b)``, from 0 to ``bits``.

        Raises:
            IncompatibleSketchError: Different widths, or different non-empty params.
        """
        self._check(other)
        return (self.value ^ other.value).bit_count()

    def similarity(self, other: SimHash) -> float:
        """``1 - distance / bits``, from 0.0 to 1.0 (1.0 = identical codes).

        Examples:
            >>> SimHash(0).similarity(SimHash(0b111))
            0.953125
        """
        return 1.0 - self.distance(other) / self.bits

    def words(self) -> U64:
        """The code as ``bits // 64`` uint64 words, least significant word first.

        Examples:
            >>> SimHash(1 << 64 | 5, bits=128).words().tolist()
            [5, 1]
        """
        return np.array(
            [(self.value >> (64 * k)) & _MASK64 for k in range(self.bits // 64)], dtype=np.uint64
        )

    def to_bytes(self, *, header: bool = False) -> bytes:
        """Serialize the code.

        Args:
            header: ``False`` (default): the raw code, ``bits // 8`` bytes little-endian (for the
                txtfp preset, byte-equal to txtfp's ``SimHash64``). ``True``: the self-describing
                form ``b"NDSH"``, u8 format version, u8 0, u16 bits, u16 len(params) (all
                little-endian), the ASCII params, then the raw code.

        Examples:
            >>> SimHash(1).to_bytes().hex()
            '0100000000000000'
            >>> len(SimHash(1).to_bytes(header=True))
            18
        """
        raw = self.value.to_bytes(self.bits // 8, "little")
        if not header:
            return raw
        params = self.params.encode("ascii")
        return _HEADER.pack(_MAGIC, FORMAT_VERSION, 0, self.bits, len(params)) + params + raw

    @classmethod
    def from_bytes(cls, data: bytes, *, params: str = "") -> SimHash:
        """Read :meth:`to_bytes` output: 8, 16 or 32 raw bytes, or the headed form.

        Args:
            data: The bytes.
            params: Params fingerprint to attach to a raw code (a headed one carries its own).

        Raises:
            FormatError: Malformed or truncated data, or an unknown format version.
            IncompatibleSketchError: ``params`` differs from the params stored in the header.
        """
        if not isinstance(data, bytes | bytearray | memoryview):
            raise FormatError(f"SimHash.from_bytes needs bytes, got {type(data).__name__}")
        data = bytes(data)
        if len(data) in (8, 16, 32):
            return cls(int.from_bytes(data, "little"), len(data) * 8, params)
        if len(data) < _HEADER.size or data[:4] != _MAGIC:
            raise FormatError(
                f"{len(data)} bytes are neither a raw SimHash (8, 16 or 32 bytes) nor a headed "
                "one (starting with b'NDSH'); pass what SimHash.to_bytes() wrote"
            )
        _, version, reserved, bits, plen = _HEADER.unpack_from(data)
        if version != FORMAT_VERSION or reserved != 0:
            raise FormatError(
                f"SimHash format version {version} is not supported (this neardup reads "
                f"{FORMAT_VERSION}); upgrade neardup"
            )
        if bits not in _WIDTHS or len(data) != _HEADER.size + plen + bits // 8:
            raise FormatError("headed SimHash is truncated or has a bad width; re-serialize it")
        try:
            stored = data[_HEADER.size : _HEADER.size + plen].decode("ascii")
        except UnicodeDecodeError:
            raise FormatError("headed SimHash has non-ASCII params; re-serialize it") from None
        if params and stored and params != stored:
            raise IncompatibleSketchError(f"SimHash was made with {stored}, not {params}")
        value = int.from_bytes(data[_HEADER.size + plen :], "little")
        return cls(value, bits, stored or params)

    def to_hex(self, *, params: bool = False) -> str:
        """The code as ``bits // 4`` lowercase hex digits, most significant first.

        Args:
            params: ``False`` (default): the bare digits (the Go package's and txtfp's text
                form; they carry no params, so a code read back from them compares with a code
                of any configuration). ``True``: the self-describing text form
                ``ndsh<version>:<params>:<digits>``, which :meth:`from_hex` reads back with its
                params, so codes of different configurations are refused after a round trip.

        Examples:
            >>> SimHash(255, params="simhash-00000000000000ff").to_hex(params=True)
            'ndsh1:simhash-00000000000000ff:00000000000000ff'
            >>> SimHash.from_hex(_).params
            'simhash-00000000000000ff'
        """
        digits = f"{self.value:0{self.bits // 4}x}"
        return f"{_TEXT_PREFIX}{FORMAT_VERSION}:{self.params}:{digits}" if params else digits

    @classmethod
    def from_hex(cls, text: str, *, params: str = "") -> SimHash:
        """Parse :meth:`to_hex` output (16, 32 or 64 hex digits, any case).

        Accepts the bare digits and the ``ndsh1:<params>:<digits>`` form of
        ``to_hex(params=True)``.

        Raises:
            FormatError: Not a string of 16, 32 or 64 hex digits (after a valid prefix).
            IncompatibleSketchError: ``params`` differs from the params in the text form.

        Examples:
            >>> SimHash.from_hex("A430D84680AABD0B").value == 0xA430D84680AABD0B
            True
        """
        if not isinstance(text, str):
            raise FormatError(f"SimHash.from_hex needs a str, got {type(text).__name__}")
        if text.startswith(_TEXT_PREFIX):
            version, _, rest = text[len(_TEXT_PREFIX) :].partition(":")
            stored, sep, text = rest.partition(":")
            if version != str(FORMAT_VERSION) or not sep:
                raise FormatError(
                    f"{text[:80]!r} is not a SimHash text form this neardup reads "
                    f"(ndsh{FORMAT_VERSION}:<params>:<hex>); upgrade neardup or re-serialize it"
                )
            if stored and not _PARAMS_RE.fullmatch(stored):
                raise FormatError(f"{stored[:80]!r} is not a SimHash params fingerprint")
            if params and stored and params != stored:
                raise IncompatibleSketchError(f"SimHash was made with {stored}, not {params}")
            params = stored or params
        if len(text) not in (16, 32, 64) or not all(c in "0123456789abcdefABCDEF" for c in text):
            raise FormatError(
                f"{text[:80]!r} is not a SimHash in hex; expected 16, 32 or 64 hex digits"
            )
        return cls(int(text, 16), len(text) * 4, params)


_Weighting = Literal["occurrence", "tf", "binary"]
_Preset = Literal["go", "txtfp"]


class SimHasher:
    """Compute SimHash codes of documents.

    Presets (explicit arguments override a preset's values):
        * ``"go"`` -- the Go ``fingerprint.Compute``, bit for bit: no canonicalizer, Go word
          3-shingles (1-2 tokens are separate features), FNV-1a 64, +-1 per occurrence; no
          tokens gives code 0.
        * ``"txtfp"`` -- txtfp 0.2.2's default SimHash: txtfp canonicalizer, UAX #29 words,
          TF +-1, feature hash = low 64 bits of xxh3_128 with seed ``0x00C0FFEE5EED``; no
          tokens raises :class:`~neardup.errors.EmptyInputError`.
        * ``None`` (neardup's default) -- txtfp canonicalizer, word 3-shingles
          (``ShingleTokenizer(3, WordTokenizer())``, fewer tokens give one joined shingle),
          xxh3_64 (64 bits) or xxh3_128 (128/256 bits) with seed 0, +-1 per occurrence, code 0
          for a document without tokens.

    Feature hash layout: 64 bits use the hash's 64-bit value (``lo`` of xxh3_128); 128 bits use
    xxh3_128 ``lo`` as bits 0-63 and ``hi`` as bits 64-127; 256 bits add xxh3_128 with seed
    ``seed + 1`` (mod 2**64) as bits 128-255.

    Weights: ``weights`` maps features (as the tokenizer emits them) to finite numbers with
    ``|w| <= 2**24``; missing features weigh ``default_weight``. Weights are rounded to
    multiples of ``2**-16`` and summed exactly in int64, so both backends agree and order does
    not matter; bit ``b`` is set iff the sum of ``+w`` (bit ``b`` of the feature hash set) and
    ``-w`` (clear) is > 0. Features are matched by their first feature-hash word.

    Examples:
        >>> SimHasher(preset="go").sketch("hello").to_hex()
        'a430d84680aabd0b'
        >>> h = SimHasher()
        >>> a = h.sketch("The quick brown fox jumps over the lazy dog")
        >>> a.similarity(h.sketch("the QUICK brown fox jumps over the lazy dog!"))
        1.0
        >>> h.sketch_many(["a b c", "d e f"]).shape
        (2,)
        >>> SimHasher(128).sketch_many(["a b c"]).shape
        (1, 2)
    """

    __slots__ = (
        "_canonicalizer",
        "_config",
        "_default_q",
        "_fingerprint",
        "_fused",
        "_key_hashes",
        "_key_q",
        "_tokenizer",
    )

    def __init__(
        self,
        bits: int | None = None,
        *,
        preset: _Preset | None = None,
        tokenizer: Tokenizer | None = None,
        canonicalizer: CanonicalizerLike | Literal[False] | None = None,
        weighting: _Weighting | None = None,
        weights: Mapping[str, float] | None = None,
        default_weight: float = 1.0,
        hash: str | None = None,
        seed: int | None = None,
        empty: Literal["zero", "error"] | None = None,
    ) -> None:
        check_choice("preset", preset, (None, "go", "txtfp"))
        canon: CanonicalizerLike | None
        if preset == "go":
            canon = None
            tok: Tokenizer = ShingleTokenizer(3, WordTokenizer("go"), short="separate")
            hash_name, the_seed, the_empty = "fnv1a64", 0, "zero"
        elif preset == "txtfp":
            canon, tok = Canonicalizer("txtfp"), WordTokenizer("uax29")
            hash_name, the_seed, the_empty = "xxh3_128", TXTFP_SEED, "error"
        else:
            canon, tok = Canonicalizer("txtfp"), ShingleTokenizer(3, WordTokenizer("word"))
            hash_name = "xxh3_64" if (bits or 64) == 64 else "xxh3_128"
            the_seed, the_empty = 0, "zero"
        if canonicalizer is not None:
            canon = canonicalizer or None
        canon_id = canonicalizer_id(canon) if canon is not None else "none"
        tok = tokenizer if tokenizer is not None else tok
        if not isinstance(tok, Tokenizer):
            raise ConfigError("tokenizer needs .name and .tokenize(text); see neardup.types")
        self._canonicalizer = canon
        self._tokenizer = tok
        wmode = weighting if weighting is not None else "occurrence"
        check_choice("weighting", wmode, ("occurrence", "tf", "binary"))
        config = SimHashConfig(
            bits=bits if bits is not None else 64,
            canonicalizer=canon_id,
            tokenizer=tok.name,
            weighting="occurrence" if wmode == "tf" else wmode,
            hash=hash if hash is not None else hash_name,
            seed=seed if seed is not None else the_seed,
            empty=empty if empty is not None else the_empty,
        )
        self._config = config
        self._default_q = _quantize_one("default_weight", default_weight)
        self._key_hashes = np.zeros(0, dtype=np.uint64)
        self._key_q = np.zeros(0, dtype=np.int64)
        if weights is not None:
            self._load_weights(weights)
            digest = xxhash.xxh3_64(self._key_hashes.astype("<u8").tobytes())
            digest.update(self._key_q.astype("<i8").tobytes())
            digest.update(struct.pack("<q", self._default_q))
            config = dataclasses.replace(config, weights=f"xxh3-{digest.intdigest():016x}")
            self._config = config
        elif self._default_q != WEIGHT_SCALE:
            raise ConfigError("default_weight only applies with weights=; pass a weight table")
        self._fingerprint = config.fingerprint()
        self._fused = _fused_args(tok, config)

    @property
    def config(self) -> SimHashConfig:
        """The parameters (recorded with every code as :attr:`params`)."""
        return self._config

    @property
    def settings(self) -> SimHashConfig:
        """The parameters, as :attr:`config` (the name shared with ``Canonicalizer.settings``)."""
        return self._config

    @property
    def params(self) -> str:
        """The params fingerprint stored in every :class:`SimHash` this hasher makes."""
        return self._fingerprint

    @property
    def bits(self) -> int:
        """The code width."""
        return self._config.bits

    def __repr__(self) -> str:
        return f"SimHasher(bits={self.bits}, params={self._fingerprint!r})"

    def sketch(self, text: str | bytes) -> SimHash:
        """Return the SimHash of one document (``str``, or UTF-8 ``bytes``).

        Raises:
            EmptyInputError: No features, with ``empty="error"`` (the txtfp preset).
            InputError: Not text, or bytes that are not UTF-8.
        """
        row = self.sketch_many([text])
        words = row.reshape(1, -1)[0].tolist()
        value = sum(int(w) << (64 * k) for k, w in enumerate(words))
        return SimHash(value, self.bits, self._fingerprint)

    def sketch_many(self, texts: Iterable[str | bytes]) -> U64:
        """Return the codes of many documents (the batch path).

        Returns:
            uint64 array of shape ``(n,)`` for 64 bits, ``(n, bits // 64)`` for 128/256 bits with
            the least significant word first (so ``row.astype("<u8").tobytes()`` is the raw
            little-endian :meth:`SimHash.to_bytes`).

        Raises:
            EmptyInputError: A document has no features, with ``empty="error"``.
            InputError: ``texts`` is a single string, or a document is not text.
        """
        if isinstance(texts, str | bytes):
            raise InputError("sketch_many takes a sequence of documents; use sketch(text) for one")
        docs: Sequence[str | bytes] = texts if isinstance(texts, Sequence) else list(texts)
        canonicalizer = self._canonicalizer
        if self._fused is not None:
            if isinstance(canonicalizer, Canonicalizer) and canonicalizer.batch_kernel:
                # the fused kernel lowercases ASCII itself
                packed = canonicalizer.canonicalize_packed(docs, lower_ascii=False)
            elif canonicalizer is not None:
                packed = pack(
                    [canonicalizer.canonicalize(_as_str(d, i)) for i, d in enumerate(docs)]
                )
            else:
                packed = pack(docs)
            return self._sketch_fused(packed, self._fused)
        if isinstance(canonicalizer, Canonicalizer) and canonicalizer.batch_kernel:
            docs = canonicalizer.canonicalize_many(docs)
        elif canonicalizer is not None:
            docs = [canonicalizer.canonicalize(_as_str(d, i)) for i, d in enumerate(docs)]
        spans = token_spans(self._tokenizer, docs)
        hashes = self._feature_hashes(spans)
        doc_offsets = spans.doc_offsets
        weights = self._weights_of(hashes, doc_offsets)
        if self._config.weighting == "binary":
            hashes, weights, doc_offsets = _distinct(hashes, weights, doc_offsets)
        self._check_empty(np.diff(doc_offsets))
        codes = _accumulate(hashes, weights, doc_offsets)
        return codes[:, 0].copy() if codes.shape[1] == 1 else codes

    # ------------------------------------------------ the hook streams hash through
    # (neardup.sketch.stream.SimHashStream takes a hasher and calls only these)

    @property
    def tokenizer(self) -> Tokenizer:
        """The feature extractor."""
        return self._tokenizer

    @property
    def canonicalizer(self) -> CanonicalizerLike | None:
        """The canonicalizer applied before tokenizing (``None``: none)."""
        return self._canonicalizer

    def feature_sums(self, spans: Spans) -> tuple[I64, int, int]:
        """(per-bit sums, feature count, total absolute weight) of ONE document given as
        its feature spans; sums of consecutive parts add up (see :meth:`sums`).

        Examples:
            >>> from neardup._spans import spans_from_lists
            >>> h = SimHasher()
            >>> sums, count, _ = h.feature_sums(spans_from_lists([["a b c", "b c d"]]))
            >>> h.from_sums(sums, count) == h.sketch("a b c d")  # word 3-shingles
            True
        """
        return self._feature_sums(spans)

    def from_sums(self, sums: I64, count: int) -> SimHash:
        """The code of per-bit sums (bit ``b`` set where ``sums[b] > 0``) over ``count``
        features.

        Raises:
            EmptyInputError: ``count`` is 0, with ``empty="error"``.
        """
        self._check_empty(np.array([count], dtype=np.int64))
        packed = np.packbits(np.asarray(sums) > 0, bitorder="little").tobytes()
        return SimHash(int.from_bytes(packed, "little"), self.bits, self._fingerprint)

    def sums(self, text: str | bytes) -> I64:
        """Per-bit weighted sums of one document: bit ``b`` of :meth:`sketch` is ``sums[b] > 0``.

        ``sums[b]`` is the sum over the document's features of ``+w`` (bit ``b`` of the feature
        hash set) or ``-w`` (clear), with weights in units of ``1 / WEIGHT_SCALE`` when a weight
        table is given (else 1 per feature). Sums of consecutive parts add up, which is what the
        streaming hasher (:class:`~neardup.sketch.stream.SimHashStream`) keeps. A document
        without features gives zeros (no :class:`~neardup.errors.EmptyInputError` here).

        Raises:
            InputError: Not text, or bytes that are not UTF-8.

        Examples:
            >>> h = SimHasher()
            >>> s = h.sums("the quick brown fox jumps")
            >>> code = sum(1 << b for b in range(64) if s[b] > 0)
            >>> s.shape, code == h.sketch("the quick brown fox jumps").value
            ((64,), True)
        """
        doc = _as_str(text, 0)
        if self._canonicalizer is not None:
            doc = self._canonicalizer.canonicalize(doc)
        return self._feature_sums(token_spans(self._tokenizer, [doc]))[0]

    def _feature_sums(self, spans: Spans) -> tuple[I64, int, int]:
        """(per-bit sums, feature count, total |weight|) of ONE document's feature spans."""
        hashes = self._feature_hashes(spans)
        weights = self._weights_of(hashes, spans.doc_offsets)
        if self._config.weighting == "binary":
            hashes, weights, _ = _distinct(hashes, weights, spans.doc_offsets)
        return _bit_sums(hashes, weights), len(weights), int(np.abs(weights).sum())

    def _check_empty(self, counts: I64) -> None:
        if self._config.empty == "error" and len(counts) and not counts.all():
            first = int(np.flatnonzero(counts == 0)[0])
            raise EmptyInputError(
                f"document {first} has no tokens after canonicalization; SimHash has no value "
                "for it (skip empty documents, or use empty='zero')"
            )

    def _sketch_fused(self, packed: PackedDocs, args: tuple[int, int, int, bool]) -> U64:
        """One-pass kernel for word / word-shingle features at 64 bits, no weights."""
        from neardup._unicode import classes as tables

        mask, min_bytes, k, joined = args
        kind = _HASHES.index(self._config.hash)
        codes, counts = engine.kernels("simhash").simhash_words(
            packed.buf,
            packed.offsets,
            tables.char_classes(),
            tables.simple_lower(),
            mask,
            min_bytes,
            k,
            joined,
            kind,
            np.uint64(self._config.seed),
        )
        self._check_empty(counts)
        out: U64 = codes
        return out

    def _feature_hashes(self, spans: Spans) -> U64:
        cfg = self._config
        lo, hi = engine.hash_spans(spans, cfg.hash, cfg.seed)
        if cfg.bits == 64:
            return lo.reshape(-1, 1)
        cols = [lo, hi]
        if cfg.bits == 256:
            lo2, hi2 = engine.hash_spans(spans, "xxh3_128", (cfg.seed + 1) & _MASK64)
            cols += [lo2, hi2]
        return np.ascontiguousarray(np.stack(cols, axis=1))

    def _load_weights(self, weights: Mapping[str, float]) -> None:
        if not isinstance(weights, Mapping):
            raise ConfigError("weights must be a mapping of feature -> number")
        keys = list(weights)
        if not all(isinstance(k, str) for k in keys):
            raise ConfigError("weights keys must be str features, as the tokenizer emits them")
        q = np.array([_quantize_one(f"weight of {k!r}", weights[k]) for k in keys], dtype=np.int64)
        h = self._feature_hashes(spans_from_lists([keys]))[:, 0]
        order = np.argsort(h, kind="stable")
        h, q = h[order], q[order]
        if len(h) > 1 and (h[1:] == h[:-1]).any():
            raise ConfigError("two weights keys share a feature hash; drop one of them")
        self._key_hashes, self._key_q = h, q

    def _weights_of(self, hashes: U64, doc_offsets: I64) -> I64:
        n = len(hashes)
        if len(self._key_hashes) == 0 and self._config.weights == "":
            return np.ones(n, dtype=np.int64)
        first = hashes[:, 0]
        pos = np.minimum(np.searchsorted(self._key_hashes, first), len(self._key_hashes) - 1)
        q = np.full(n, self._default_q, dtype=np.int64)
        if len(self._key_hashes):
            hit = self._key_hashes[pos] == first
            q[hit] = self._key_q[pos[hit]]
        doc = np.repeat(np.arange(len(doc_offsets) - 1), np.diff(doc_offsets))
        bound = np.bincount(
            doc, weights=np.abs(q).astype(np.float64), minlength=len(doc_offsets) - 1
        )
        if len(bound) and bound.max() >= 2.0**61:
            raise InputTooLargeError(
                "a document's total feature weight overflows the exact sum; "
                "use smaller weights or split the document"
            )
        return q


def _fused_args(tok: Tokenizer, config: SimHashConfig) -> tuple[int, int, int, bool] | None:
    """(mask, min_bytes, k, joined) when the fused kernel reproduces these parameters."""
    if config.bits != 64 or config.weights or config.weighting != "occurrence":
        return None
    if type(tok) is ShingleTokenizer:
        inner, k = tok.inner, tok.k
        joined = "+sep" not in tok.name.split("/", 1)[0]
    elif type(tok) is WordTokenizer:
        inner, k, joined = tok, 1, True
    else:
        return None
    args = inner.kernel_args if type(inner) is WordTokenizer else None
    if args is None:
        return None
    return args[0], args[1], k, joined


def _quantize_one(name: str, value: float) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(f"{name} must be a number, got {value!r}")
    if not math.isfinite(value) or abs(value) > _MAX_WEIGHT:
        raise ConfigError(f"{name} must be finite with |w| <= 2**24, got {value!r}")
    return round(value * WEIGHT_SCALE)


def _as_str(doc: str | bytes, index: int) -> str:
    if isinstance(doc, str):
        return doc
    return encode_text(doc, index).decode("utf-8")


def _distinct(hashes: U64, weights: I64, doc_offsets: I64) -> tuple[U64, I64, I64]:
    """Keep the first occurrence of each distinct feature hash within each document."""
    n_docs = len(doc_offsets) - 1
    doc = np.repeat(np.arange(n_docs, dtype=np.uint64), np.diff(doc_offsets))
    keyed = np.concatenate((doc[:, None], hashes), axis=1)
    _, first = np.unique(keyed, axis=0, return_index=True)
    keep = np.sort(first)
    counts = np.bincount(doc[keep].astype(np.int64), minlength=n_docs)
    new_offsets = np.zeros(n_docs + 1, dtype=np.int64)
    np.cumsum(counts, out=new_offsets[1:])
    return np.ascontiguousarray(hashes[keep]), weights[keep], new_offsets


def _bit_sums(hashes: U64, weights: I64) -> I64:
    """``sum(w if bit b of h else -w)`` per code bit over all rows: ``2 * ones - total``, the
    quantity whose sign :func:`_accumulate` keeps."""
    total = int(weights.sum())
    unit = bool((weights == 1).all())
    out = np.empty(64 * hashes.shape[1], dtype=np.int64)
    one = np.uint64(1)
    for k in range(hashes.shape[1]):
        col = np.ascontiguousarray(hashes[:, k])
        for i in range(64):
            bit = (col >> np.uint64(i)) & one
            ones = int(np.count_nonzero(bit)) if unit else int(weights @ bit.astype(np.int64))
            out[64 * k + i] = 2 * ones - total
    return out


def _accumulate(hashes: U64, weights: I64, doc_offsets: I64) -> U64:
    out: U64 = engine.kernels("simhash").simhash_accumulate(hashes, weights, doc_offsets)
    return out
