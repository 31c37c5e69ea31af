"""Lookup tables of the canonicalizer kernels, derived from :mod:`unicodedata` itself.

Every table is computed from the running Python's own normalizer and case folding, so the
kernels reproduce ``unicodedata.normalize`` and ``str.casefold`` of that Python exactly:

* ``flags`` (``uint8``, one per code point): :data:`BIDI` and :data:`FORMAT` mark the code
  points the ``strip_bidi`` / ``strip_format`` options drop; :data:`CHANGES` marks those a
  canonicalization may change: not NFKC-stable on their own (``NFKC(c) != c``), not stable
  under case folding, or able to compose with a preceding character (NFKC_QC = Maybe).
  A document whose code points carry none of these flags, with its combining classes in
  canonical order, is its own canonical form (the quick check of UAX #15, section 9).
* ``ccc`` (``uint8``): the canonical combining class.
* ``dec_off``/``dec_data``: the full compatibility decomposition (NFKD) of each code point,
  as rows of a CSR table (an empty row means the code point decomposes to itself).
* ``cf_off``/``cf_data``: the full case folding (``str.casefold``), the same way.
* ``one_off``/``one_data``: the whole canonicalization (NFKC o casefold o NFKC) of each
  code point on its own, for the kernel's most common rewrite: one code point between two
  boundaries (an accented capital, a ligature, a fullwidth letter).
* ``pair_keys``/``pair_vals``: the canonical composition pairs, ``first << 21 | second``
  sorted, and the primary composite each gives (Hangul LV and LVT syllables included).

The dense tables cover code points below :data:`DENSE` (``0x40000``); above it only plane 14
(tags, variation selectors) holds characters outside private use, and none of them
decomposes, folds or has a combining class. Should a future Unicode version change that, the
builder flags such a code point :data:`OUTSIDE` and the kernels hand its document to the
standard library. :data:`SECOND` marks the second code points of the composition pairs
(the only ones the composition step looks up). The compiled core embeds these tables as
Python 3.11 builds them (``scripts/unicode_tables.py``); the numpy reference builds them
(:func:`build`); once per process either way (``kernels("unicode")``).
"""

from __future__ import annotations

import unicodedata
from functools import cache

import numpy as np
import numpy.typing as npt

__all__ = ["BIDI", "CHANGES", "DENSE", "FORMAT", "OUTSIDE", "SECOND", "tables"]

BIDI = 1
FORMAT = 2
CHANGES = 4
OUTSIDE = 8
SECOND = 16

DENSE = 0x40000
_MAX = 0x110000

# Bidi controls (Trojan Source, CVE-2021-42574) and txtfp's curated format characters; the
# canonicalize module holds the same sets as its public BIDI_CONTROLS / FORMAT_CHARACTERS
# (a test checks that they agree).
_BIDI = (*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F)
_FORMAT = (
    *range(0x200B, 0x2010),
    *range(0x2060, 0x2065),
    0x061C,
    *range(0x180B, 0x1810),
    0xFEFF,
    *range(0xFE00, 0xFE10),
    *range(0xE0100, 0xE01F0),
    0xE0001,
    *range(0xE0020, 0xE0080),
    *_BIDI,
)

_S_BASE, _L_BASE, _V_BASE, _T_BASE = 0xAC00, 0x1100, 0x1161, 0x11A7
_V_COUNT, _T_COUNT, _S_COUNT = 21, 28, 11172

Tables = dict[str, npt.NDArray[np.generic]]


def _csr(rows: dict[int, list[int]]) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int32]]:
    lengths = np.zeros(DENSE, dtype=np.int64)
    for cp, row in rows.items():
        lengths[cp] = len(row)
    off = np.zeros(DENSE + 1, dtype=np.int32)
    np.cumsum(lengths, out=off[1:])
    data = np.zeros(int(off[-1]), dtype=np.int32)
    for cp, row in rows.items():
        data[off[cp] : off[cp + 1]] = row
    return off, data


def build() -> Tables:
    """The tables from the running Python's :mod:`unicodedata` (the reference twin's)."""
    flags = np.zeros(_MAX, dtype=np.uint8)
    ccc = np.zeros(DENSE, dtype=np.uint8)
    decomp: dict[int, list[int]] = {}
    folds: dict[int, list[int]] = {}
    alone: dict[int, list[int]] = {}
    pairs: dict[int, int] = {}
    nfkc = unicodedata.normalize
    combining = unicodedata.combining
    decomposition = unicodedata.decomposition
    for cp in range(DENSE):
        ch = chr(cp)
        if 0xD800 <= cp < 0xE000:
            continue  # surrogates and private use: inert
        ccc[cp] = combining(ch)
        d = nfkc("NFKD", ch)
        if d != ch:
            decomp[cp] = [ord(x) for x in d]
        f = ch.casefold()
        if f != ch:
            folds[cp] = [ord(x) for x in f]
        if nfkc("NFKC", ch) != ch or f != ch:
            flags[cp] |= CHANGES
            canon = nfkc("NFKC", nfkc("NFKC", ch).casefold())
            if canon != ch:
                alone[cp] = [ord(x) for x in canon]
        if _S_BASE <= cp < _S_BASE + _S_COUNT:
            s = cp - _S_BASE
            if s % _T_COUNT == 0:
                first, second = (
                    _L_BASE + s // (_V_COUNT * _T_COUNT),
                    _V_BASE + (s % (_V_COUNT * _T_COUNT)) // _T_COUNT,
                )
            else:
                first, second = cp - s % _T_COUNT, _T_BASE + s % _T_COUNT
            parts = [first, second]
        else:
            mapping = decomposition(ch)
            parts = [int(h, 16) for h in mapping.split()] if mapping and mapping[0] != "<" else []
        if len(parts) == 2 and nfkc("NFC", chr(parts[0]) + chr(parts[1])) == ch:
            pairs[parts[0] << 21 | parts[1]] = cp
    for key in pairs:
        # NFKC_QC = Maybe: composes with what precedes it
        flags[key & 0x1FFFFF] |= CHANGES | SECOND
    # Above DENSE only plane 14 (tags, variation selectors) is assigned outside private use;
    # should a future Unicode version give one of them a mapping, take the slow path for it.
    for cp in range(0xE0000, 0xE1000):
        ch = chr(cp)
        if combining(ch) or nfkc("NFKD", ch) != ch or ch.casefold() != ch:
            flags[cp] |= CHANGES | OUTSIDE  # pragma: no cover - not in Unicode 14-16
    flags[list(_BIDI)] |= BIDI
    flags[list(_FORMAT)] |= FORMAT
    dec_off, dec_data = _csr(decomp)
    cf_off, cf_data = _csr(folds)
    one_off, one_data = _csr(alone)
    keys = np.array(sorted(pairs), dtype=np.int64)
    vals = np.array([pairs[k] for k in keys.tolist()], dtype=np.int32)
    return {
        "flags": flags,
        "ccc": ccc,
        "dec_off": dec_off,
        "dec_data": dec_data,
        "cf_off": cf_off,
        "cf_data": cf_data,
        "one_off": one_off,
        "one_data": one_data,
        "pair_keys": keys,
        "pair_vals": vals,
    }


@cache
def tables() -> Tables:
    """The canonicalizer tables by name (read-only arrays; built or loaded once per process)."""
    from neardup._kernels.engine import kernels

    built: Tables = kernels("unicode").tables("canonicalize")
    for arr in built.values():
        arr.setflags(write=False)
    return built
