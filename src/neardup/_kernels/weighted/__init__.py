"""Weighted MinHash kernels: improved consistent weighted sampling (Ioffe 2010)."""

from __future__ import annotations

from types import ModuleType

from neardup._kernels import engine

__all__ = ["kernels"]


def kernels() -> ModuleType:
    """The backend selected by ``NEARDUP_BACKEND``: :mod:`.fast` (numba) or :mod:`.reference`."""
    if engine.backend_name() == "fast":
        from neardup._kernels.weighted import fast

        return fast
    from neardup._kernels.weighted import reference

    return reference
