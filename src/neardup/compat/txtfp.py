"""txtfp 0.2.2's defaults, byte for byte (seed 004): thin adapters over the core presets.

* :func:`canonicalize` -- ``Canonicalizer::default()`` (config ``nfkc-cf-simple-bidi-fmt``).
* :func:`minhash` -- ``MinHashFingerprinter<_, 128>`` over UAX #29 word 5-shingles;
  ``minhash(text).to_bytes(layout="txtfp")`` is txtfp's 1032-byte ``MinHashSig`` layout.
* :func:`simhash` -- ``SimHashFingerprinter`` (UAX #29 words, TF); ``to_bytes()`` is txtfp's
  8 little-endian bytes.
* :func:`config_hash` -- txtfp's ``config_hash`` (xxh3_64 of ``canon|tokenizer|algo``).

Empty input, or input without tokens, raises :class:`~neardup.errors.EmptyInputError`, as
txtfp's ``InvalidInput`` (unlike the Go package, which returns 0).
"""

from __future__ import annotations

from functools import cache

import xxhash

from neardup.canonicalize import Canonicalizer
from neardup.sketch.minhash import MinHash, MinHasher
from neardup.sketch.simhash import SimHash, SimHasher

__all__ = [
    "FORMAT_VERSION",
    "SCHEMA_VERSION",
    "canonicalize",
    "config_hash",
    "minhash",
    "simhash",
]

#: txtfp's ``FORMAT_VERSION`` and ``SCHEMA_VERSION`` (both 1 in 0.2.2).
FORMAT_VERSION = 1
SCHEMA_VERSION = 1


@cache
def _canonicalizer() -> Canonicalizer:
    return Canonicalizer("txtfp")


@cache
def _minhasher() -> MinHasher:
    return MinHasher(128, preset="txtfp")


@cache
def _simhasher() -> SimHasher:
    return SimHasher(preset="txtfp")


def canonicalize(text: str) -> str:
    """txtfp's default canonical form.

    Examples:
        >>> canonicalize("ＡＢＣ\\u200b Straße")
        'abc strasse'
    """
    return _canonicalizer().canonicalize(text)


def minhash(text: str) -> MinHash:
    """txtfp's default 128-slot MinHash (``to_bytes(layout="txtfp")`` gives its 1032 bytes).

    Examples:
        >>> len(minhash("the quick brown fox jumps over the lazy dog").to_bytes(layout="txtfp"))
        1032
    """
    return _minhasher().sketch(text)


def simhash(text: str) -> SimHash:
    """txtfp's default 64-bit SimHash (``to_bytes()`` gives its 8 little-endian bytes).

    Examples:
        >>> len(simhash("the quick brown fox").to_bytes())
        8
    """
    return _simhasher().sketch(text)


def config_hash(canonical_config: str, tokenizer_name: str, algo_cfg: str) -> int:
    """txtfp's ``config_hash``: xxh3_64 (seed 0) of ``canon + "|" + tokenizer + "|" + algo``.

    Examples:
        >>> hex(config_hash("nfkc-cf-simple-bidi-fmt", "word-uax29", "h128-mmh3"))
        '0xfdcb1c70a47c7649'
    """
    data = f"{canonical_config}|{tokenizer_name}|{algo_cfg}".encode()
    return int(xxhash.xxh3_64_intdigest(data))
