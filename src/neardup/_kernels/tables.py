"""Unicode lookup tables for the kernels, built from :mod:`unicodedata` and cached on disk.

Two dense tables indexed by code point (0 .. 0x10FFFF):

* :func:`char_classes` -- ``uint8`` bit flags: :data:`LETTER` (L*), :data:`DIGIT` (Nd),
  :data:`NUMBER` (Nl, No), :data:`MARK` (Mn, Mc, Me), :data:`CONNECTOR` (Pc, e.g. ``_``),
  and :data:`IDEOGRAPH` on the letters and numbers of the Han, Hiragana and Katakana blocks.
  A tokenizer's word characters are the code points whose flags meet its mask; a mask that
  includes :data:`IDEOGRAPH` makes each such character a word of its own (UAX #29 gives
  every ideograph its own word; splitting kana per character too keeps one simple rule).
* :func:`simple_lower` -- ``int32``: the Unicode *simple* lowercase mapping, one code point
  to one code point, without SpecialCasing or context (``Σ`` -> ``σ`` always, ``İ`` -> ``i``),
  as Go's ``unicode.ToLower``.

They follow the Unicode version of the running Python (14.0 on 3.11). Building them scans
every assigned code point (about 0.25 s), so they are built once per Unicode and Python
version and loaded from the disk cache of :mod:`neardup._kernels.unicode_cache` afterwards.
"""

from __future__ import annotations

import unicodedata
from functools import cache

import numpy as np
import numpy.typing as npt

from neardup._kernels.unicode_cache import cached_tables

__all__ = [
    "CONNECTOR",
    "DIGIT",
    "IDEOGRAPH",
    "LETTER",
    "MARK",
    "NUMBER",
    "UNICODE_VERSION",
    "char_classes",
    "check_table",
    "ideograph_ranges",
    "simple_lower",
]

LETTER = 1
DIGIT = 2
NUMBER = 4
MARK = 8
CONNECTOR = 16
IDEOGRAPH = 32

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

# Blocks whose letters and numbers get IDEOGRAPH: the ideographic iteration and number marks
# of CJK Symbols and Punctuation, Hiragana, Katakana (and its phonetic extensions, halfwidth
# forms and the kana supplements), the CJK Unified Ideographs with all their extensions and
# the compatibility ideographs.
_IDEOGRAPH_BLOCKS = (
    (0x3005, 0x3007),
    (0x3021, 0x3029),
    (0x3031, 0x3035),
    (0x3038, 0x303C),
    (0x3040, 0x30FF),
    (0x31F0, 0x31FF),
    (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF),
    (0xF900, 0xFAFF),
    (0xFF66, 0xFF9F),
    (0x1AFF0, 0x1B16F),
    (0x20000, 0x3FFFF),
)

# Bump when the builder below changes: it names the cache file.
_TABLES_VERSION = 2


def check_table(name: str, table: npt.NDArray[np.generic]) -> None:
    """Check that ``table`` has an entry for every code point (0x110000), as the kernels
    that index it by code point require.

    Raises:
        ValueError: it has fewer.
    """
    if len(table) < _MAX:
        raise ValueError(
            f"the {name} table has {len(table)} entries, not one per code point (0x110000); "
            "pass the table neardup._kernels builds"
        )


def ideograph_ranges() -> tuple[tuple[int, int], ...]:
    """The inclusive code point ranges whose letters and numbers get :data:`IDEOGRAPH`."""
    return _IDEOGRAPH_BLOCKS


def _build() -> dict[str, npt.NDArray[np.generic]]:
    classes = np.zeros(_MAX, dtype=np.uint8)
    lower = np.arange(_MAX, dtype=np.int32)
    category = unicodedata.category
    for block in _RANGES:
        for cp in block:
            ch = chr(cp)
            flag = _FLAGS.get(category(ch))
            if flag:
                classes[cp] = flag
            low = ch.lower()
            if low != ch:
                # Only U+0130 lowercases to more than one code point (i + U+0307); its simple
                # mapping is plain i; in general the first code point is the simple mapping.
                lower[cp] = ord(low[0])
    for lo, hi in _IDEOGRAPH_BLOCKS:
        view = classes[lo : hi + 1]
        view[(view & (LETTER | DIGIT | NUMBER)) != 0] |= IDEOGRAPH
    return {"classes": classes, "lower": lower}


@cache
def _tables() -> dict[str, npt.NDArray[np.generic]]:
    return cached_tables(
        "classes",
        _TABLES_VERSION,
        _build,
        {"classes": ("uint8", _MAX), "lower": ("int32", _MAX)},
    )


@cache
def char_classes() -> npt.NDArray[np.uint8]:
    """Return the class-flag table (read-only ``uint8`` array of 0x110000 entries)."""
    table: npt.NDArray[np.uint8] = _tables()["classes"].astype(np.uint8, copy=False)
    return table


@cache
def simple_lower() -> npt.NDArray[np.int32]:
    """Return the simple-lowercase table (read-only ``int32`` array of 0x110000 entries)."""
    table: npt.NDArray[np.int32] = _tables()["lower"].astype(np.int32, copy=False)
    return table
