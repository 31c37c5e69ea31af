"""Weighted MinHash kernels: improved consistent weighted sampling (Ioffe 2010)."""

from __future__ import annotations

from types import ModuleType

from neardup._kernels import engine

__all__ = ["kernels"]


def kernels() -> ModuleType:
    """The backend ``NEARDUP_BACKEND`` selects: ``engine.kernels("weighted")``."""
    return engine.kernels("weighted")
