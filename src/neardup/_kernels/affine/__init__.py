"""datasketch affine32 MinHash in uint32 lanes: ``a * fmix32(h) + b mod 2**32``, min per slot."""

from __future__ import annotations

from types import ModuleType

from neardup._kernels import engine

__all__ = ["kernels"]


def kernels() -> ModuleType:
    """The backend ``NEARDUP_BACKEND`` selects: ``engine.kernels("affine")``."""
    return engine.kernels("affine")
