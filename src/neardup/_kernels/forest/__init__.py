"""LSH Forest prefix-search kernels (Bawa, Condie and Ganesan 2005)."""

from __future__ import annotations

from types import ModuleType

from neardup._kernels import engine

__all__ = ["kernels"]


def kernels() -> ModuleType:
    """The backend ``NEARDUP_BACKEND`` selects: ``engine.kernels("forest")``."""
    return engine.kernels("forest")
