"""MinHash (Broder 1997, "On the resemblance and containment of documents"): MinHasher, MinHash.

:class:`MinHasher` turns documents into ``num_perm`` slot values whose agreement rate estimates
the Jaccard similarity of their feature sets; :class:`MinHash` is the immutable value. Presets:
``"xxh3"`` (default, pinned), ``"txtfp"`` (byte-exact with txtfp 0.2.2), ``"datasketch"`` and
``"datasketch-legacy"`` (datasketch 2.0.0's ``hashvalues``) and ``"oph"`` (one-permutation
hashing with optimal densification, Shrivastava 2017). The batch path runs in the minhash
kernels of :func:`neardup._kernels.engine.kernels` (the compiled core, or its numpy twin
:mod:`neardup._kernels.minhash`), which give the same bits. See ``docs/minhash.md``
for the definitions and byte layout.
"""

from __future__ import annotations

import dataclasses
import struct
from collections.abc import Iterable, Sequence
from functools import cache
from typing import Any, ClassVar, Literal, overload

import numpy as np
import numpy.typing as npt

from neardup._kernels import engine
from neardup._spans import Spans
from neardup.canonicalize import Canonicalizer, canonicalizer_id
from neardup.config import Params, check_choice, check_range
from neardup.errors import (
    ConfigError,
    FormatError,
    IncompatibleSketchError,
    InputError,
)
from neardup.packed import PackedDocs, encode_text, pack
from neardup.sketch._minhash_rows import check_empty, empty_value, feature_rows, slot_rows
from neardup.tokenize import ShingleTokenizer, WordTokenizer, token_spans
from neardup.types import CanonicalizerLike, Tokenizer

__all__ = ["FORMAT_VERSION", "PRESETS", "TXTFP_SEED", "MinHash", "MinHashConfig", "MinHasher"]

#: Version of the MinHash definitions and of the headed byte format.
FORMAT_VERSION = 1
#: txtfp's ``DEFAULT_SEED``; also the default seed of the ``xxh3`` and ``oph`` presets.
TXTFP_SEED = 0x00C0FFEE5EED
#: The presets and their scheme codes in the byte header.
PRESETS: dict[str, int] = {
    "xxh3": 1,
    "txtfp": 2,
    "datasketch": 3,
    "datasketch-legacy": 4,
    "oph": 5,
}
Preset = Literal["xxh3", "txtfp", "datasketch", "datasketch-legacy", "oph"]

_MAGIC = b"NDMH"
_HEADER = struct.Struct("<4sHHIIQ")  # magic, version, scheme, num_perm, reserved, params digest
_TXTFP_HEADER = struct.Struct("<H6x")
_MAX_PERM = 1 << 16
#: The fused kernel of each ``MinHasher._sketch`` want, and its extra arguments.
_FUSED_KERNELS = {
    "rows": "sketch_words",
    "features": "sketch_words_features",
    "sets32": "sketch_words_sets32",
}
_FUSED_EXTRA: dict[str, tuple[bool, ...]] = {"rows": (), "features": (True,), "sets32": ()}

U64 = npt.NDArray[np.uint64]
_MAX32 = np.uint64(0xFFFFFFFF)


def fold32(values: U64 | npt.NDArray[np.uint32]) -> npt.NDArray[np.uint32]:
    """32-bit fingerprint of each slot (exact for slots below 2**32, as datasketch's): what
    the LSH band keys and the unverified comparisons are made of. ``uint32`` slots are their
    own fingerprint."""
    if isinstance(values, np.ndarray) and values.dtype == np.uint32:
        return values.view(np.uint32)
    if isinstance(values, np.ndarray) and values.dtype == np.uint64 and values.ndim:
        # the two 32-bit halves of each slot, xor-ed in one pass (in either byte order)
        v = np.ascontiguousarray(values)
        halves = v.view(np.uint32).reshape(*v.shape, 2)
        folded: npt.NDArray[np.uint32] = np.bitwise_xor(halves[..., 0], halves[..., 1])
        return folded
    return ((values ^ (values >> np.uint64(32))) & _MAX32).astype(np.uint32)


@dataclasses.dataclass(frozen=True, slots=True)
class MinHashConfig(Params):
    """Parameters of a :class:`MinHasher`; their :meth:`fingerprint` travels with every sketch.

    Attributes:
        preset: The scheme: ``xxh3``, ``txtfp``, ``datasketch``, ``datasketch-legacy``, ``oph``.
        num_perm: Number of slots (hash values) per sketch.
        seed: The token-hash seed (xxh3 presets) or the permutation seed (datasketch presets).
        canonicalizer: The canonicalizer's config id (``""`` when text is not canonicalized).
        tokenizer: The tokenizer's name.
        empty: ``"sketch"`` (no features gives the empty sketch) or ``"error"``.

    Examples:
        >>> MinHashConfig(num_perm=64).fingerprint()[:8]
        'minhash-'
    """

    KIND: ClassVar[str] = "minhash"
    preset: str = "xxh3"
    num_perm: int = 128
    seed: int = TXTFP_SEED
    canonicalizer: str = "nfkc-cf-simple-bidi-fmt"
    tokenizer: str = "shingle-k=5/word-unicode"
    empty: str = "sketch"

    def __post_init__(self) -> None:
        check_choice("preset", self.preset, tuple(PRESETS))
        check_range("num_perm", self.num_perm, 1, _MAX_PERM, integer=True)
        check_range("seed", self.seed, 0, (1 << 64) - 1, integer=True)
        check_choice("empty", self.empty, ("sketch", "error"))
        if self.preset.startswith("datasketch") and self.seed >= 1 << 32:
            raise ConfigError(f"datasketch seeds must be below 2**32, got {self.seed}")

    @property
    def digest(self) -> int:
        """The 64-bit params digest stored in the byte header."""
        return int(self.fingerprint().rsplit("-", 1)[1], 16)


@cache
def _txtfp_config(num_perm: int) -> MinHashConfig:
    return MinHashConfig(
        preset="txtfp",
        num_perm=num_perm,
        seed=TXTFP_SEED,
        canonicalizer="nfkc-cf-simple-bidi-fmt",
        tokenizer="shingle-k=5/word-uax29",
        empty="error",
    )


@dataclasses.dataclass(frozen=True, slots=True, eq=False)
class MinHash:
    """An immutable MinHash sketch: ``num_perm`` slot values plus the scheme and params.

    Attributes:
        hashvalues: The slots, a read-only ``uint64`` array (datasketch's name).
        scheme: The preset that made it (one of :data:`PRESETS`).
        params: The params fingerprint (``minhash-<16 hex>``) of the :class:`MinHasher`.

    Examples:
        >>> a = MinHasher(num_perm=64).sketch("the quick brown fox jumps over the lazy dog")
        >>> a.jaccard(a), len(a), a.scheme
        (1.0, 64, 'xxh3')
        >>> MinHash.from_bytes(a.to_bytes()) == a
        True
    """

    hashvalues: U64
    scheme: str
    params: str

    def __post_init__(self) -> None:
        if self.scheme not in PRESETS:
            raise ConfigError(f"unknown MinHash scheme {self.scheme!r}; use one of {list(PRESETS)}")
        values = np.array(self.hashvalues, dtype=np.uint64, copy=True).reshape(-1)
        if not 1 <= len(values) <= _MAX_PERM:
            raise ConfigError(f"a MinHash needs 1 to {_MAX_PERM} slots, got {len(values)}")
        values.setflags(write=False)
        object.__setattr__(self, "hashvalues", values)

    def __len__(self) -> int:
        return len(self.hashvalues)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MinHash):
            return NotImplemented
        return (
            self.scheme == other.scheme
            and self.params == other.params
            and np.array_equal(self.hashvalues, other.hashvalues)
        )

    def __hash__(self) -> int:
        return hash((self.scheme, self.params, self.hashvalues.tobytes()))

    def __repr__(self) -> str:
        return f"MinHash(num_perm={len(self)}, scheme={self.scheme!r}, params={self.params!r})"

    @property
    def num_perm(self) -> int:
        """The number of slots."""
        return len(self.hashvalues)

    @property
    def is_empty(self) -> bool:
        """True for the sketch of an empty feature set (every slot at the scheme's maximum)."""
        return bool(np.all(self.hashvalues == empty_value(self.scheme)))

    def _check(self, other: MinHash, what: str) -> None:
        if not isinstance(other, MinHash):
            raise IncompatibleSketchError(
                f"cannot {what} a MinHash with a {type(other).__name__}; pass a MinHash"
            )
        if (self.scheme, self.num_perm, self.params) != (
            other.scheme,
            other.num_perm,
            other.params,
        ):
            raise IncompatibleSketchError(
                f"cannot {what} MinHash sketches made with different schemes or parameters "
                f"({self.scheme}/{self.num_perm}/{self.params} vs "
                f"{other.scheme}/{other.num_perm}/{other.params}); sketch both documents with "
                "the same MinHasher"
            )

    def jaccard(self, other: MinHash) -> float:
        """Estimated Jaccard similarity in [0, 1]: the fraction of equal slots.

        An empty sketch is similar to nothing (0.0), not even to another empty sketch.

        Raises:
            IncompatibleSketchError: Different schemes, ``num_perm`` or params.
        """
        self._check(other, "compare")
        if self.is_empty or other.is_empty:
            return 0.0
        return float(np.count_nonzero(self.hashvalues == other.hashvalues)) / self.num_perm

    def similarity(self, other: MinHash) -> float:
        """Same as :meth:`jaccard` (neardup's common comparison name)."""
        return self.jaccard(other)

    def merge(self, other: MinHash) -> MinHash:
        """Return the sketch of the union of both feature sets (elementwise minimum).

        Raises:
            IncompatibleSketchError: Different schemes or params, or ``oph`` sketches (their
                densified slots are not minima; sketch the union of the documents instead).

        Examples:
            >>> h = MinHasher(num_perm=16)
            >>> a, b = h.sketch_tokens(["x", "y"]), h.sketch_tokens(["y", "z"])
            >>> a.merge(b) == h.sketch_tokens(["x", "y", "z"])
            True
        """
        self._check(other, "merge")
        if self.scheme == "oph":
            raise IncompatibleSketchError(
                "oph sketches cannot be merged (densified slots are copies, not minima); "
                "sketch the union of the documents instead"
            )
        return MinHash(np.minimum(self.hashvalues, other.hashvalues), self.scheme, self.params)

    def to_bytes(self, *, layout: Literal["auto", "neardup", "txtfp"] = "auto") -> bytes:
        """Serialize: neardup's headed layout, or txtfp's ``MinHashSig`` layout.

        ``"neardup"``: 24-byte header (``b"NDMH"``, u16 format version, u16 scheme code, u32
        num_perm, u32 zero, u64 params digest) then ``num_perm`` little-endian u64; 8-aligned,
        so ``np.frombuffer(b, "<u8", offset=24)`` reads the slots without a copy.
        ``"txtfp"``: u16 schema 1, six zero bytes, then the little-endian u64 slots (1032 bytes
        for 128 slots; txtfp preset only). ``"auto"`` picks txtfp's layout for the txtfp preset.

        Raises:
            ConfigError: ``layout="txtfp"`` for a sketch of another preset.
        """
        if layout == "auto":
            layout = "txtfp" if self.scheme == "txtfp" else "neardup"
        body = self.hashvalues.astype("<u8").tobytes()
        if layout == "txtfp":
            if self.scheme != "txtfp":
                raise ConfigError(
                    f"the txtfp layout holds txtfp-preset sketches only, not {self.scheme!r}; "
                    "use layout='neardup'"
                )
            return _TXTFP_HEADER.pack(1) + body
        check_choice("layout", layout, ("auto", "neardup", "txtfp"))
        digest = int(self.params.rsplit("-", 1)[1], 16)
        head = _HEADER.pack(_MAGIC, FORMAT_VERSION, PRESETS[self.scheme], self.num_perm, 0, digest)
        return head + body

    @classmethod
    def from_bytes(cls, data: bytes) -> MinHash:
        """Read either layout written by :meth:`to_bytes` (detected from the first bytes).

        Raises:
            FormatError: Bad magic, unknown version or scheme, wrong length, nonzero padding.
        """
        data = bytes(data)
        if data[:4] == _MAGIC:
            if len(data) < _HEADER.size:
                raise FormatError(f"MinHash bytes too short ({len(data)} bytes) for the header")
            _, version, code, num_perm, reserved, digest = _HEADER.unpack_from(data)
            if version != FORMAT_VERSION:
                raise FormatError(
                    f"MinHash format version {version} is not supported (this neardup reads "
                    f"version {FORMAT_VERSION}); upgrade neardup or re-sketch the documents"
                )
            schemes = {v: k for k, v in PRESETS.items()}
            if code not in schemes or reserved != 0:
                raise FormatError(f"unknown MinHash scheme code {code}; the bytes are corrupt")
            if len(data) != _HEADER.size + 8 * num_perm or num_perm < 1:
                raise FormatError(
                    f"MinHash bytes have {len(data)} bytes, expected "
                    f"{_HEADER.size + 8 * num_perm} for {num_perm} slots; the data is truncated"
                )
            values = np.frombuffer(data, dtype="<u8", offset=_HEADER.size)
            return cls(values, schemes[code], f"minhash-{digest:016x}")
        if len(data) >= 16 and len(data) % 8 == 0 and data[:8] == _TXTFP_HEADER.pack(1):
            values = np.frombuffer(data, dtype="<u8", offset=8)
            return cls(values, "txtfp", _txtfp_config(len(values)).fingerprint())
        raise FormatError(
            "bytes are not a MinHash: expected the b'NDMH' header or txtfp's layout (u16 1, six "
            "zero bytes, then u64 slots); pass bytes made by MinHash.to_bytes"
        )

    def to_hex(self) -> str:
        """Lowercase hex of :meth:`to_bytes`."""
        return self.to_bytes().hex()

    @classmethod
    def from_hex(cls, text: str) -> MinHash:
        """Inverse of :meth:`to_hex`.

        Raises:
            FormatError: Not hex, or not a MinHash.
        """
        try:
            data = bytes.fromhex(text)
        except (ValueError, TypeError):
            raise FormatError("MinHash hex must be an even number of hex digits") from None
        return cls.from_bytes(data)


class MinHasher:
    """Sketch documents with MinHash.

    Args:
        num_perm: Number of slots per sketch.
        preset: ``"xxh3"`` (default), ``"txtfp"``, ``"datasketch"``, ``"datasketch-legacy"``
            or ``"oph"``; see ``docs/minhash.md``.
        tokenizer: Feature extractor (default: word 5-shingles of ``WordTokenizer("word")``).
            Not allowed with ``"txtfp"``, whose pipeline is fixed.
        canonicalizer: Applied before tokenizing (default ``Canonicalizer("txtfp")``).
        seed: Token-hash seed (default :data:`TXTFP_SEED`) or, for the datasketch presets,
            the permutation seed (default 1, as ``datasketch.MinHash``).
        empty: What a document without features gives: ``"sketch"`` (default: the empty
            sketch, every slot at the maximum, similar to nothing) or ``"error"``
            (:class:`~neardup.errors.EmptyInputError`). The txtfp preset always raises.

    Examples:
        >>> h = MinHasher(num_perm=32)
        >>> a = h.sketch("one two three four five six seven eight")
        >>> b = h.sketch("one two three four five six seven nine")
        >>> 0.0 < a.jaccard(b) < 1.0, h.sketch_many(["a b", ""]).shape
        (True, (2, 32))
    """

    __slots__ = ("_canon", "_config", "_tokenizer")

    def __init__(
        self,
        num_perm: int = 128,
        *,
        preset: Preset = "xxh3",
        tokenizer: Tokenizer | None = None,
        canonicalizer: CanonicalizerLike | None = None,
        seed: int | None = None,
        empty: Literal["sketch", "error"] = "sketch",
    ) -> None:
        check_choice("preset", preset, tuple(PRESETS))
        if preset == "txtfp":
            if tokenizer is not None or canonicalizer is not None or seed is not None:
                raise ConfigError(
                    "the txtfp preset has a fixed pipeline (txtfp canonicalizer, UAX #29 word "
                    "5-shingles, seed 0x00C0FFEE5EED); use preset='xxh3' to choose your own"
                )
            tokenizer = ShingleTokenizer(5, WordTokenizer("uax29"))
            empty = "error"
        default_seed = 1 if preset.startswith("datasketch") else TXTFP_SEED
        self._tokenizer: Tokenizer = tokenizer or ShingleTokenizer(5, WordTokenizer("word"))
        self._canon: CanonicalizerLike = canonicalizer or Canonicalizer("txtfp")
        self._config = MinHashConfig(
            preset=preset,
            num_perm=num_perm,
            seed=default_seed if seed is None else seed,
            canonicalizer=canonicalizer_id(self._canon),
            tokenizer=self._tokenizer.name,
            empty=empty,
        )

    @property
    def config(self) -> MinHashConfig:
        """The parameters (their fingerprint is each sketch's ``params``)."""
        return self._config

    @property
    def settings(self) -> MinHashConfig:
        """The parameters, as :attr:`config` (the name shared with ``Canonicalizer.settings``)."""
        return self._config

    @property
    def params(self) -> str:
        """The params fingerprint each :class:`MinHash` this hasher makes carries."""
        return self._config.fingerprint()

    @property
    def num_perm(self) -> int:
        """The number of slots per sketch."""
        return self._config.num_perm

    def __repr__(self) -> str:
        c = self._config
        return f"MinHasher({c.num_perm}, preset={c.preset!r}, tokenizer={c.tokenizer!r})"

    def _wrap(self, row: U64) -> MinHash:
        return MinHash(row, self._config.preset, self._config.fingerprint())

    def sketch(self, text: str | bytes) -> MinHash:
        """Sketch one document.

        Raises:
            EmptyInputError: No features, with ``empty="error"`` or the txtfp preset.
        """
        return self._wrap(self.sketch_many([text])[0])

    # ------------------------------------------------ the hook streams sketch through
    # (neardup.sketch.stream.MinHashStream takes a hasher and calls only these)

    @property
    def tokenizer(self) -> Tokenizer:
        """The feature extractor."""
        return self._tokenizer

    @property
    def canonicalizer(self) -> CanonicalizerLike:
        """The canonicalizer applied before tokenizing."""
        return self._canon

    def canonical_text(self, text: str | bytes) -> str:
        """The canonical form of one text, as :meth:`sketch` tokenizes it.

        Examples:
            >>> MinHasher(4).canonical_text("ＡＢＣ")
            'abc'
        """
        return self._canonical_packed([text], lower_ascii=True).texts()[0]

    def slots_of_tokens(self, inner: Spans) -> U64:
        """Slot rows of documents given as spans of the *inner* tokens (before shingling):
        the same features and kernels as :meth:`sketch_many`, without canonicalizing or
        tokenizing again, and no empty check. The minimum of the rows of consecutive pieces
        (whose spans overlap by ``k - 1`` tokens) is the row of the whole text.

        Examples:
            >>> from neardup._spans import spans_from_lists
            >>> h = MinHasher(4)
            >>> row = h.slots_of_tokens(spans_from_lists([["a", "b", "c", "d", "e"]]))
            >>> h.from_slots(row[0]) == h.sketch("a b c d e")
            True
        """
        c = self._config
        tok = self._tokenizer
        k, short = (tok.k, tok.short) if isinstance(tok, ShingleTokenizer) else (1, "joined")
        return slot_rows(inner, preset=c.preset, num_perm=c.num_perm, seed=c.seed, k=k, short=short)

    def from_slots(self, row: U64) -> MinHash:
        """The sketch of one slot row of this hasher.

        Raises:
            EmptyInputError: The row has no features, with ``empty="error"``.
        """
        rows = np.asarray(row, dtype=np.uint64).reshape(1, -1)
        c = self._config
        return self._wrap(check_empty(rows, preset=c.preset, empty=c.empty)[0])

    def sketch_many(self, texts: Sequence[str | bytes]) -> U64:
        """Sketch many documents at once (the fast path): a ``(n, num_perm)`` uint64 array.

        Raises:
            EmptyInputError: A document without features, with ``empty="error"``.
        """
        rows: U64 = self._sketch(texts, "rows")[0]
        return rows

    def sketch_many_with_features(
        self, texts: Sequence[str | bytes]
    ) -> tuple[U64, U64, npt.NDArray[np.int64]]:
        """:meth:`sketch_many`, plus the 64-bit hash of every feature (shingle) and the
        per-document feature offsets, from the same single pass (``xxh3`` preset only).

        The feature hashes identify shingles (exact set Jaccard for verification).

        Raises:
            ConfigError: another preset.
            EmptyInputError: A document without features, with ``empty="error"``.

        Examples:
            >>> sigs, feats, offsets = MinHasher(16).sketch_many_with_features(["a b c d e f"])
            >>> sigs.shape, len(feats), offsets.tolist()
            ((1, 16), 2, [0, 2])
        """
        sigs, feats, offsets = self._sketch(texts, "features")
        assert feats is not None and offsets is not None
        return sigs, feats, offsets

    def sketch_packed_with_features(
        self, buf: npt.NDArray[np.uint8], offsets: npt.NDArray[np.int64]
    ) -> tuple[U64, U64, npt.NDArray[np.int64]]:
        """:meth:`sketch_many_with_features` of documents given as one UTF-8 buffer and
        ``n + 1`` offsets (as :class:`~neardup.packed.PackedDocs` holds them): the same bits,
        without a Python string per document (canonicalization runs in the kernel over the
        buffer).

        Raises:
            ConfigError: another preset than ``xxh3``.
            EmptyInputError: A document without features, with ``empty="error"``.

        Examples:
            >>> h = MinHasher(16)
            >>> raw = "a b c d e f".encode()
            >>> buf, offs = np.frombuffer(raw, np.uint8), np.array([0, len(raw)])
            >>> sigs, _, _ = h.sketch_packed_with_features(buf, offs)
            >>> bool((sigs == h.sketch_many_with_features(["a b c d e f"])[0]).all())
            True
        """
        packed = PackedDocs(buf, np.ascontiguousarray(offsets, dtype=np.int64))
        sigs, feats, feat_offsets = self._sketch(packed, "features")
        assert feats is not None and feat_offsets is not None
        return sigs, feats, feat_offsets

    def sketch_packed_sets32(
        self, buf: npt.NDArray[np.uint8], offsets: npt.NDArray[np.int64]
    ) -> tuple[U64, npt.NDArray[np.uint32], npt.NDArray[np.int64]]:
        """:meth:`sketch_packed_with_features` with each document's features as its sorted set
        of their top 32 bits (:func:`neardup.sketch.sets.unique_per_doc32`), made in the
        sketch kernel's pass: ``(sigs, values, set_offsets)``.

        Raises:
            ConfigError: another preset than ``xxh3``.
            EmptyInputError: A document without features, with ``empty="error"``.

        Examples:
            >>> raw = "a b c d e f".encode()
            >>> buf, offs = np.frombuffer(raw, np.uint8), np.array([0, len(raw)])
            >>> sigs, values, set_offsets = MinHasher(16).sketch_packed_sets32(buf, offs)
            >>> sigs.shape, values.dtype.name, set_offsets.tolist()
            ((1, 16), 'uint32', [0, 2])
        """
        packed = PackedDocs(buf, np.ascontiguousarray(offsets, dtype=np.int64))
        sigs, values, set_offsets = self._sketch(packed, "sets32")
        assert values is not None and set_offsets is not None
        return sigs, values, set_offsets

    @overload
    def sketch_batch(
        self,
        docs: Sequence[str | bytes] | PackedDocs,
        *,
        sets: bool = False,
        narrow: Literal[False] = False,
    ) -> tuple[U64, tuple[npt.NDArray[np.uint32], npt.NDArray[np.int64]] | None]: ...

    @overload
    def sketch_batch(
        self, docs: Sequence[str | bytes] | PackedDocs, *, sets: bool = False, narrow: bool
    ) -> tuple[
        U64 | npt.NDArray[np.uint32], tuple[npt.NDArray[np.uint32], npt.NDArray[np.int64]] | None
    ]: ...

    def sketch_batch(
        self, docs: Sequence[str | bytes] | PackedDocs, *, sets: bool = False, narrow: bool = False
    ) -> tuple[
        U64 | npt.NDArray[np.uint32], tuple[npt.NDArray[np.uint32], npt.NDArray[np.int64]] | None
    ]:
        """Sketch a batch given as texts or packed (one UTF-8 buffer plus offsets, see
        :class:`~neardup._spans.PackedDocs`): the entry every batch method of this class
        goes through, in one call. With ``sets``, each document's features also come back
        as its sorted set of their top 32 bits (``(values, set_offsets)``, as
        :meth:`sketch_packed_sets32`; ``xxh3`` preset only). With ``narrow``, the sketches
        may come back as ``uint32`` (the same values: :func:`fold32` of the ``uint64`` rows)
        when the pass made them so (the fused pass with ``sets``): half the bytes for a
        caller that only folds them, as the LSH band keys do.

        Raises:
            ConfigError: ``sets`` with another preset than ``xxh3``.
            EmptyInputError: A document without features, with ``empty="error"``.

        Examples:
            >>> h = MinHasher(16)
            >>> sigs, sets = h.sketch_batch(["a b c d e f"], sets=True)
            >>> bool((sigs == h.sketch_many(["a b c d e f"])).all()), sets[1].tolist()
            (True, [0, 2])
        """
        sigs, values, set_offsets = self._sketch(docs, "sets32" if sets else "rows", narrow)
        if values is None or set_offsets is None:
            return sigs, None
        return sigs, (values, set_offsets)

    def sketch_tokens(self, tokens: Iterable[bytes | str]) -> MinHash:
        """Sketch a set of features given directly (no canonicalizer, no tokenizer).

        For the datasketch presets the result's ``hashvalues`` equal those of
        ``datasketch.MinHash(num_perm, seed)`` after ``update_batch(tokens)`` (``str`` tokens
        are UTF-8 encoded first). For ``xxh3`` and ``oph`` each token is a 1-token shingle.

        Examples:
            >>> MinHasher(num_perm=4).sketch_tokens([b"a", "b"]).num_perm
            4
        """
        items = [
            t.encode("utf-8", "surrogatepass") if isinstance(t, str) else bytes(t) for t in tokens
        ]
        c = self._config
        row = slot_rows(
            _spans_of_bytes(items), preset=c.preset, num_perm=c.num_perm, seed=c.seed, k=None
        )
        return self._wrap(check_empty(row, preset=c.preset, empty=c.empty)[0])

    # ------------------------------------------------------------------ internals

    def _sketch(
        self,
        docs: Sequence[str | bytes] | PackedDocs,
        want: Literal["rows", "features", "sets32"],
        narrow: bool = False,
    ) -> tuple[Any, npt.NDArray[Any] | None, npt.NDArray[np.int64] | None]:
        """The one batch path: the documents go down once, to be packed and canonicalized
        (:meth:`_canonical_packed`), and the canonical batch down once more, to the fused
        kernel (:meth:`_fused`) or the tokenizer and :mod:`neardup.sketch._minhash_rows`.
        ``want``: the slot rows alone, the rows with the feature hashes and their offsets,
        or the rows with each document's set of 32-bit feature hashes (xxh3 only; the fused
        pass gives those rows as ``uint32``, widened unless ``narrow``)."""
        from neardup.sketch.sets import unique_per_doc32

        c = self._config
        if want != "rows" and c.preset != "xxh3":
            raise ConfigError(f"sketch_many_with_features needs the xxh3 preset, not {c.preset!r}")
        fused = _fused_args(self._tokenizer) if c.preset == "xxh3" else None
        packed = self._canonical_packed(docs, lower_ascii=fused is None)
        if fused is not None:
            out = self._fused(_FUSED_KERNELS[want], packed, fused, *_FUSED_EXTRA[want])
        else:
            out = self._token_rows(packed, want == "rows")
        sigs: npt.NDArray[Any] = out if want == "rows" else out[0]
        check_empty(sigs, preset=c.preset, empty=c.empty)
        if not narrow and sigs.dtype != np.uint64:
            sigs = sigs.astype(np.uint64)
        if want == "rows":
            return sigs, None, None
        if want == "sets32" and fused is None:
            values, set_offsets = unique_per_doc32(out[1], out[2])
            return sigs, values, set_offsets
        return sigs, out[1], out[2]

    def _fused(
        self, kernel: str, packed: PackedDocs, fused: tuple[int, int, int, bool], *extra: bool
    ) -> Any:
        """Call the fused kernel ``kernel`` of the minhash family (tokenize, hash, shingle and
        sketch in one pass) on canonical ``packed`` documents."""
        from neardup._unicode import classes as tables

        mask, min_bytes, k, joined = fused
        c = self._config
        return getattr(engine.kernels("minhash"), kernel)(
            packed.buf,
            packed.offsets,
            tables.char_classes(),
            tables.simple_lower(),
            mask,
            min_bytes,
            k,
            joined,
            np.uint64(c.seed),
            c.num_perm,
            *extra,
        )

    def _token_rows(self, packed: PackedDocs, rows_only: bool) -> Any:
        """The slot rows (``rows_only``), else ``(rows, features, offsets)`` (xxh3), of
        canonical ``packed`` documents through the tokenizer: its inner tokens, shingled in
        :mod:`neardup.sketch._minhash_rows`, or its own spans when it does not shingle."""
        c = self._config
        tok = self._tokenizer
        if isinstance(tok, ShingleTokenizer):
            source, k, short = tok.inner, tok.k, tok.short
        else:
            source, k, short = tok, None, "joined"
        spans = token_spans(source, packed)
        if rows_only:
            return slot_rows(
                spans, preset=c.preset, num_perm=c.num_perm, seed=c.seed, k=k, short=short
            )
        return feature_rows(spans, num_perm=c.num_perm, seed=c.seed, k=k, short=short)

    def _canonical_packed(
        self, docs: Sequence[str | bytes] | PackedDocs, *, lower_ascii: bool
    ) -> PackedDocs:
        """The canonical documents, packed (``lower_ascii=False``: a fused kernel lowercases
        ASCII itself). A :class:`~neardup.canonicalize.Canonicalizer` packs and canonicalizes
        in one call; another canonicalizer is called per document."""
        if isinstance(docs, str | bytes):
            raise InputError("sketch_many takes a sequence of documents, not one str or bytes")
        if isinstance(self._canon, Canonicalizer):
            return self._canon.canonicalize_packed(docs, lower_ascii=lower_ascii)
        texts = docs.texts() if isinstance(docs, PackedDocs) else docs
        canon = self._canon.canonicalize
        return pack(
            [
                canon(t if isinstance(t, str) else encode_text(t, i).decode("utf-8"))
                for i, t in enumerate(texts)
            ]
        )


def _spans_of_bytes(items: list[bytes]) -> Spans:
    """One document whose features are ``items`` (byte strings, any content)."""
    lengths = np.fromiter((len(x) for x in items), dtype=np.int64, count=len(items))
    ends = np.cumsum(lengths)
    return Spans(
        np.frombuffer(b"".join(items), dtype=np.uint8),
        ends - lengths,
        ends,
        np.array([0, len(items)], dtype=np.int64),
    )


def _fused_args(tokenizer: Tokenizer) -> tuple[int, int, int, bool] | None:
    """(mask, min_bytes, k, joined) when the fused kernel reproduces ``tokenizer``."""
    if type(tokenizer) is ShingleTokenizer:
        inner, k = tokenizer.inner, tokenizer.k
        joined = "+sep" not in tokenizer.name.split("/", 1)[0]
    elif type(tokenizer) is WordTokenizer:
        inner, k, joined = tokenizer, 1, True
    else:
        return None
    args = inner.kernel_args if type(inner) is WordTokenizer else None
    if args is None:
        return None
    return args[0], args[1], k, joined
