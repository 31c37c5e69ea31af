"""SHA-1 of byte spans (datasketch's ``sha1_hash32`` / ``sha1_hash64`` token hashes)."""

from __future__ import annotations

from types import ModuleType

from neardup._kernels import engine

__all__ = ["kernels"]


def kernels() -> ModuleType:
    """The backend selected by ``NEARDUP_BACKEND``: :mod:`.fast` (numba) or :mod:`.reference`."""
    if engine.backend_name() == "fast":
        from neardup._kernels.sha1 import fast

        return fast
    from neardup._kernels.sha1 import reference

    return reference
