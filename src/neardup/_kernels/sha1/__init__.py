"""SHA-1 of byte spans (datasketch's ``sha1_hash32`` / ``sha1_hash64`` token hashes)."""

from __future__ import annotations

from types import ModuleType

from neardup._kernels import engine

__all__ = ["kernels"]


def kernels() -> ModuleType:
    """The backend ``NEARDUP_BACKEND`` selects: ``engine.kernels("sha1")``."""
    return engine.kernels("sha1")
