"""primestamp's SimHash API (seed 001), as a thin facade over SimHasher and HammingIndex.

The seed documents the API but not its internals; these are the readings of the spec
(``SEEDS.md`` section 2), recorded in every :meth:`SimHashFingerprint.to_dict`:

* ``bytes`` are decoded as UTF-8 with ``errors="replace"``; ``str`` is accepted too. The text
  is lowercased (``str.lower``).
* ``TokenMode.WORD``: runs of Unicode word characters (``\\w+``). ``TokenMode.NGRAM``:
  overlapping character n-grams of the whole text, spaces included; a text shorter than
  ``ngram_size`` is one gram. No features gives the fingerprint 0.
* Weighting: TF (+-1 per occurrence); bit ``i`` is 1 iff its sum is > 0 (ties give 0).
* Feature hash, as wide as ``hash_bits``: xxh3_64 (64 bits); xxh3_128, ``lo`` then ``hi``
  (128 bits); xxh3_128 with seeds 0 and 1 (256 bits); seed 0 (see ``docs/simhash.md``).
* :class:`SimHashIndex` splits codes into ``num_segments`` contiguous segments (the first
  ``bits % num_segments`` get one extra bit; at least ``bits // 64`` segments) and is exact
  for ``max_distance < num_segments``; larger distances scan every fingerprint (still exact).
  Results are sorted by (distance, insertion order).

Example (the seed's, with this module in place of ``primestamp.fingerprint.simhash``):
    >>> gen = SimHashGenerator(hash_bits=64)
    >>> fp1 = gen.generate(b"The quick brown fox jumps over the lazy dog")
    >>> fp2 = gen.generate(b"The quick brown fox leaps over the lazy dog")
    >>> 0 < fp1.hamming_distance(fp2) < 32
    True
    >>> SimHashFingerprint.from_dict(fp1.to_dict()) == fp1
    True
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Hashable, Mapping
from typing import Any

from neardup.canonicalize import Canonicalizer
from neardup.config import CanonicalConfig
from neardup.errors import ConfigError, FormatError, IncompatibleSketchError, InputError
from neardup.index.hamming import HammingIndex
from neardup.sketch.simhash import SimHash, SimHasher
from neardup.tokenize import NgramTokenizer, WordTokenizer
from neardup.types import Tokenizer

__all__ = [
    "SimHashFingerprint",
    "SimHashGenerator",
    "SimHashIndex",
    "TokenMode",
    "create_simhash_generator",
]

_VERSION = 1
_HASH_ALGORITHMS = {64: "xxh3_64", 128: "xxh3_128", 256: "xxh3_128x2"}
_LOWER = CanonicalConfig(
    normalization="none", casefold="lower", strip_bidi=False, strip_format=False
)


class TokenMode(enum.Enum):
    """How a document is split into features."""

    WORD = "word"
    NGRAM = "ngram"


def _mode(value: TokenMode | str) -> TokenMode:
    if isinstance(value, TokenMode):
        return value
    try:
        return TokenMode(value)
    except ValueError:
        raise ConfigError(f"token mode must be 'word' or 'ngram', got {value!r}") from None


def _check_bits(hash_bits: int) -> int:
    if (
        isinstance(hash_bits, bool)
        or not isinstance(hash_bits, int)
        or hash_bits not in _HASH_ALGORITHMS
    ):
        raise ConfigError(f"hash_bits must be 64, 128 or 256, got {hash_bits!r}")
    return hash_bits


def _check_distance(max_distance: int) -> int:
    if isinstance(max_distance, bool) or not isinstance(max_distance, int) or max_distance < 0:
        raise ConfigError(f"max_distance must be a non-negative integer, got {max_distance!r}")
    return max_distance


@dataclasses.dataclass(frozen=True, slots=True)
class SimHashFingerprint:
    """A primestamp SimHash fingerprint.

    Attributes:
        sketch: The underlying :class:`~neardup.sketch.simhash.SimHash` (carries the params).
        token_mode: The generator's token mode.
        ngram_size: The generator's n-gram size (meaningful in NGRAM mode).
    """

    sketch: SimHash
    token_mode: TokenMode = TokenMode.WORD
    ngram_size: int = 3

    @property
    def value(self) -> int:
        """The code as an int (bit ``i`` = ``1 << i``)."""
        return self.sketch.value

    @property
    def hash_bits(self) -> int:
        """The width: 64, 128 or 256."""
        return self.sketch.bits

    @property
    def value_hex(self) -> str:
        """The code as ``hash_bits // 4`` lowercase hex digits, most significant first."""
        return self.sketch.to_hex()

    @property
    def hash_algorithm(self) -> str:
        """The feature hash: ``xxh3_64``, ``xxh3_128`` or ``xxh3_128x2``."""
        return _HASH_ALGORITHMS[self.hash_bits]

    def _other(self, other: SimHashFingerprint) -> SimHash:
        if not isinstance(other, SimHashFingerprint):
            raise IncompatibleSketchError(
                f"cannot compare a fingerprint with a {type(other).__name__}"
            )
        return other.sketch

    def hamming_distance(self, other: SimHashFingerprint) -> int:
        """Number of differing bits.

        Raises:
            IncompatibleSketchError: Different ``hash_bits``, token mode or n-gram size.
        """
        return self.sketch.distance(self._other(other))

    def similarity(self, other: SimHashFingerprint) -> float:
        """``1 - hamming_distance / hash_bits``."""
        return self.sketch.similarity(self._other(other))

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-compatible data; :meth:`from_dict` reads it back."""
        return {
            "version": _VERSION,
            "algorithm": "simhash",
            "value_hex": self.value_hex,
            "hash_bits": self.hash_bits,
            "token_mode": self.token_mode.value,
            "ngram_size": self.ngram_size,
            "hash_algorithm": self.hash_algorithm,
            "hash_seed": 0,
            "case_folding": "lower",
            "weighting": "tf",
            "params": self.sketch.params,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SimHashFingerprint:
        """Rebuild a fingerprint from :meth:`to_dict` output.

        Raises:
            FormatError: Not a mapping, a missing or mistyped field, an unknown version, or a
                hash algorithm / params other than this implementation's.
        """
        if not isinstance(data, Mapping):
            raise FormatError(f"from_dict needs a dict, got {type(data).__name__}")
        if "value_hex" not in data or not isinstance(data["value_hex"], str):
            raise FormatError("fingerprint dict needs a 'value_hex' string")
        if data.get("version", _VERSION) != _VERSION:
            raise FormatError(f"fingerprint version {data.get('version')!r} is not supported")
        bits = data.get("hash_bits", 4 * len(data["value_hex"]))
        try:
            gen = SimHashGenerator(
                _check_bits(bits), _mode(data.get("token_mode", "word")), data.get("ngram_size", 3)
            )
        except ConfigError as exc:
            raise FormatError(f"fingerprint dict has bad parameters: {exc}") from None
        if data.get("hash_algorithm", _HASH_ALGORITHMS[bits]) != _HASH_ALGORITHMS[bits]:
            raise FormatError(
                f"fingerprint was made with hash {data['hash_algorithm']!r}, not "
                f"{_HASH_ALGORITHMS[bits]!r}; regenerate it with this implementation"
            )
        if data.get("params", gen.params) not in (gen.params, ""):
            raise FormatError("fingerprint params do not match its fields; regenerate it")
        if len(data["value_hex"]) != bits // 4:
            raise FormatError(f"value_hex must have {bits // 4} hex digits for {bits} bits")
        sketch = SimHash.from_hex(data["value_hex"], params=gen.params)
        return cls(sketch, gen.token_mode, gen.ngram_size)


class SimHashGenerator:
    """primestamp's ``SimHashGenerator``: TF-weighted SimHash of word or n-gram features.

    Raises:
        ConfigError: ``hash_bits`` not 64/128/256, an unknown mode, or a bad ``ngram_size``.

    Examples:
        >>> gen = SimHashGenerator(hash_bits=128, token_mode=TokenMode.NGRAM, ngram_size=4)
        >>> len(gen.generate("hello world").value_hex)
        32
    """

    def __init__(
        self,
        hash_bits: int = 64,
        token_mode: TokenMode | str = TokenMode.WORD,
        ngram_size: int = 3,
    ) -> None:
        self.hash_bits = _check_bits(hash_bits)
        self.token_mode = _mode(token_mode)
        tokenizer: Tokenizer = (
            NgramTokenizer(ngram_size)
            if self.token_mode is TokenMode.NGRAM
            else WordTokenizer(split_ideographs=False)  # the seed's \w+ keeps CJK runs
        )
        if self.token_mode is TokenMode.WORD:
            NgramTokenizer(ngram_size)  # validates ngram_size in both modes
        self.ngram_size = ngram_size
        self._hasher = SimHasher(
            self.hash_bits,
            tokenizer=tokenizer,
            canonicalizer=Canonicalizer(config=_LOWER),
            hash="xxh3_64" if self.hash_bits == 64 else "xxh3_128",
            seed=0,
            weighting="tf",
            empty="zero",
        )

    @property
    def params(self) -> str:
        """The params fingerprint of the underlying :class:`SimHasher`."""
        return self._hasher.params

    def generate(self, content: bytes | str) -> SimHashFingerprint:
        """Fingerprint one document (UTF-8 ``bytes``, decoded with replacement, or ``str``).

        Raises:
            InputError: ``content`` is neither bytes nor str.
        """
        if isinstance(content, bytes | bytearray | memoryview):
            content = bytes(content).decode("utf-8", errors="replace")
        if not isinstance(content, str):
            raise InputError(f"content must be bytes or str, not {type(content).__name__}")
        return SimHashFingerprint(self._hasher.sketch(content), self.token_mode, self.ngram_size)

    def is_near_duplicate(
        self, fp1: SimHashFingerprint, fp2: SimHashFingerprint, max_distance: int = 3
    ) -> bool:
        """``fp1.hamming_distance(fp2) <= max_distance``.

        Raises:
            ConfigError: ``max_distance`` is negative or not an integer.
        """
        return fp1.hamming_distance(fp2) <= _check_distance(max_distance)


def create_simhash_generator(
    hash_bits: int = 64, mode: TokenMode | str = "word", ngram_size: int = 3
) -> SimHashGenerator:
    """Factory: ``mode`` is ``"word"`` or ``"ngram"``.

    Examples:
        >>> create_simhash_generator(hash_bits=128, mode="ngram", ngram_size=4).hash_bits
        128
    """
    return SimHashGenerator(hash_bits, _mode(mode), ngram_size)


class SimHashIndex:
    """primestamp's ``SimHashIndex`` over :class:`~neardup.index.hamming.HammingIndex`.

    Examples:
        >>> gen = SimHashGenerator()
        >>> index = SimHashIndex(hash_bits=64, num_segments=4)
        >>> index.insert("a", gen.generate(b"the cat sat on the mat"))
        >>> index.find_near_duplicates(gen.generate(b"The cat sat on the mat."))
        [('a', 0)]
    """

    def __init__(self, hash_bits: int = 64, num_segments: int = 4) -> None:
        self.hash_bits = _check_bits(hash_bits)
        if isinstance(num_segments, bool) or not isinstance(num_segments, int):
            raise ConfigError(f"num_segments must be an integer, got {num_segments!r}")
        if not 1 <= num_segments <= hash_bits:
            raise ConfigError(f"num_segments must be from 1 to {hash_bits}, got {num_segments}")
        self.num_segments = num_segments
        blocks = max(num_segments, hash_bits // 64)
        self._index = HammingIndex(hash_bits, blocks - 1, blocks=blocks)

    def __len__(self) -> int:
        return len(self._index)

    def _sketch(self, fp: SimHashFingerprint) -> SimHash:
        if not isinstance(fp, SimHashFingerprint):
            raise InputError(f"expected a SimHashFingerprint, got {type(fp).__name__}")
        if fp.hash_bits != self.hash_bits:
            raise IncompatibleSketchError(
                f"a {fp.hash_bits}-bit fingerprint cannot go in a {self.hash_bits}-bit index"
            )
        return fp.sketch

    def insert(self, doc_id: Hashable, fp: SimHashFingerprint) -> None:
        """Add (or replace) ``doc_id``."""
        self._index.add(doc_id, self._sketch(fp))

    def remove(self, doc_id: Hashable) -> None:
        """Remove ``doc_id``.

        Raises:
            InputError: ``doc_id`` is not in the index.
        """
        self._index.remove(doc_id)

    def find_near_duplicates(
        self, query_fp: SimHashFingerprint, max_distance: int = 3
    ) -> list[tuple[Hashable, int]]:
        """Every indexed ``(doc_id, distance)`` within ``max_distance``, exactly.

        Sorted by distance, then insertion order; distance 0 included.

        Raises:
            ConfigError: ``max_distance`` is negative or above ``hash_bits``.
        """
        return self._index.query(self._sketch(query_fp), _check_distance(max_distance))
