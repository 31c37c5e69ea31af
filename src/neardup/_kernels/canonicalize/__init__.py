"""The canonicalizer kernels: NFKC o casefold o NFKC over packed documents.

``neardup._native.canonicalize`` and :mod:`.reference` (numpy quick check + the standard
library) take the same arguments and give the same bits; :func:`run` calls the one the engine
selects (``NEARDUP_BACKEND``) with the tables of :mod:`.tables`, built from the running
Python's ``unicodedata`` (so the native kernel's Unicode is that Python's).
"""

from __future__ import annotations

from types import ModuleType

import numpy as np
import numpy.typing as npt

from neardup._kernels import engine
from neardup._kernels.canonicalize import tables as _tables
from neardup._kernels.spans import Packed

__all__ = ["BIDI", "FORMAT", "kernel", "run"]

BIDI = _tables.BIDI
FORMAT = _tables.FORMAT


def kernel() -> ModuleType:
    """The canonicalize kernel module of the selected backend."""
    return engine.kernels("canonicalize")


def run(
    packed: Packed, *, strip_mask: int, lower_ascii: bool, fallback_from: int
) -> tuple[Packed, npt.NDArray[np.uint8]]:
    """Canonicalize packed documents; return them packed again, with a status per document.

    Status 0: copied unchanged; 1: rewritten; 2: left unchanged for the caller to do with the
    standard library (documents of ``fallback_from`` bytes or more; code points the tables do
    not cover). See :func:`neardup._kernels.canonicalize.reference.canonicalize`.
    """
    t = _tables.tables()
    buf, offsets, status = kernel().canonicalize(
        packed.buf,
        packed.offsets,
        t["flags"],
        strip_mask,
        t["ccc"],
        t["dec_off"],
        t["dec_data"],
        t["cf_off"],
        t["cf_data"],
        t["one_off"],
        t["one_data"],
        t["pair_keys"],
        t["pair_vals"],
        lower_ascii,
        fallback_from,
    )
    return Packed(buf, offsets), status
