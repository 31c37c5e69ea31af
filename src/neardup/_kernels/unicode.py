"""Reference of the Unicode tables: built from the running Python's :mod:`unicodedata`.

The compiled core embeds the same arrays (``native/src/unicode/tables.bin``, written by
``scripts/unicode_tables.py``); the parity test checks that both give the same bytes.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from neardup.errors import ConfigError

__all__ = ["FAMILIES", "tables", "unicode_version"]

#: The table families: ``classes`` (:mod:`neardup._unicode.classes`) and ``canonicalize``
#: (:mod:`neardup._unicode.canonical`).
FAMILIES = ("canonicalize", "classes")


def unicode_version() -> str:
    """The Unicode version the tables follow."""
    import unicodedata

    return unicodedata.unidata_version


def tables(family: str) -> dict[str, npt.NDArray[np.generic]]:
    """The arrays of one table family by name (read-only arrays, as the compiled core's are:
    views of the tables it embeds).

    Raises:
        ConfigError: ``family`` is not one of :data:`FAMILIES`.
    """
    if family == "classes":
        from neardup._unicode.classes import build
    elif family == "canonicalize":
        from neardup._unicode.canonical import build
    else:
        raise ConfigError(f"unknown Unicode table family {family!r}; use canonicalize or classes")
    built = build()
    for arr in built.values():
        arr.setflags(write=False)
    return built
