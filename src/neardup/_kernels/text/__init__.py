"""The text kernel family (word tokenizer, FNV-1a): ``neardup._native.text`` and its numpy
twin ``reference.py``, same names, bits and errors.

Pick one with :func:`neardup._kernels.engine.kernels` (``kernels("text")``).
"""

from __future__ import annotations

__all__ = ["FNV64_OFFSET", "FNV64_PRIME"]

#: FNV-1a 64 (Fowler, Noll, Vo; Go's ``hash/fnv.New64a``): the offset basis and the prime,
#: the one definition the text and SimHash kernels, their references and the tests use.
FNV64_OFFSET = 0xCBF29CE484222325
FNV64_PRIME = 0x100000001B3
