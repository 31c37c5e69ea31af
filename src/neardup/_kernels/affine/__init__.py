"""datasketch affine32 MinHash in uint32 lanes: ``a * fmix32(h) + b mod 2**32``, min per slot."""

from __future__ import annotations

from types import ModuleType

from neardup._kernels import engine

__all__ = ["kernels"]


def kernels() -> ModuleType:
    """The backend selected by ``NEARDUP_BACKEND``: :mod:`.fast` (numba) or :mod:`.reference`."""
    if engine.backend_name() == "fast":
        from neardup._kernels.affine import fast

        return fast
    from neardup._kernels.affine import reference

    return reference
