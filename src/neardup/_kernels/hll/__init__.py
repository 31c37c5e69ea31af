"""HyperLogLog register kernels (Flajolet et al. 2007; Heule, Nunkesser and Hall 2013)."""

from __future__ import annotations

from types import ModuleType

from neardup._kernels import engine

__all__ = ["kernels"]


def kernels() -> ModuleType:
    """The backend ``NEARDUP_BACKEND`` selects: ``engine.kernels("hll")``."""
    return engine.kernels("hll")
