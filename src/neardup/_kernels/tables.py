"""Unicode lookup tables for the kernels, built from :mod:`unicodedata` on first use.

Two dense tables indexed by code point (0 .. 0x10FFFF):

* :func:`char_classes` -- ``uint8`` bit flags: :data:`LETTER` (L*), :data:`DIGIT` (Nd),
  :data:`NUMBER` (Nl, No), :data:`MARK` (Mn, Mc, Me), :data:`CONNECTOR` (Pc, e.g. ``_``).
  A tokenizer's word characters are the code points whose flags meet its mask.
* :func:`simple_lower` -- ``int32``: the Unicode *simple* lowercase mapping, one code point
  to one code point, without SpecialCasing or context (``Σ`` -> ``σ`` always, ``İ`` -> ``i``),
  as Go's ``unicode.ToLower``.

They follow the Unicode version of the running Python (14.0 on 3.11); building them takes
about half a second once per process. Non-ASCII text therefore takes the same fast path as
ASCII in the kernels.
"""

from __future__ import annotations

import unicodedata
from functools import cache

import numpy as np
import numpy.typing as npt

__all__ = [
    "CONNECTOR",
    "DIGIT",
    "LETTER",
    "MARK",
    "NUMBER",
    "UNICODE_VERSION",
    "char_classes",
    "simple_lower",
]

LETTER = 1
DIGIT = 2
NUMBER = 4
MARK = 8
CONNECTOR = 16

UNICODE_VERSION: str = unicodedata.unidata_version

_FLAGS = {
    "Lu": LETTER,
    "Ll": LETTER,
    "Lt": LETTER,
    "Lm": LETTER,
    "Lo": LETTER,
    "Nd": DIGIT,
    "Nl": NUMBER,
    "No": NUMBER,
    "Mn": MARK,
    "Mc": MARK,
    "Me": MARK,
    "Pc": CONNECTOR,
}

_MAX = 0x110000
# Only these ranges hold assigned characters other than private use (checked against Python's
# Unicode 14.0 data by tests/kernels/test_kernels_tables.py); the rest are Cn or Co, which
# have no flags and lowercase to themselves. Scanning only them makes the tables 3x faster.
_RANGES = (range(0, 0x40000), range(0xE0000, 0xE1000))


@cache
def char_classes() -> npt.NDArray[np.uint8]:
    """Return the class-flag table (read-only ``uint8`` array of 0x110000 entries)."""
    table = np.zeros(_MAX, dtype=np.uint8)
    category = unicodedata.category
    for block in _RANGES:
        for cp in block:
            flag = _FLAGS.get(category(chr(cp)))
            if flag:
                table[cp] = flag
    table.setflags(write=False)
    return table


@cache
def simple_lower() -> npt.NDArray[np.int32]:
    """Return the simple-lowercase table (read-only ``int32`` array of 0x110000 entries)."""
    table = np.arange(_MAX, dtype=np.int32)
    for block in _RANGES:
        for cp in block:
            ch = chr(cp)
            low = ch.lower()
            if low != ch:
                # Only U+0130 lowercases to more than one code point (i + U+0307); its simple
                # mapping is plain i; in general the first code point is the simple mapping.
                table[cp] = ord(low[0])
    table.setflags(write=False)
    return table
