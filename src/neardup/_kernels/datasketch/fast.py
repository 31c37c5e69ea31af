"""No numba kernels for this family: the numpy twin serves the ``fast`` backend."""

from __future__ import annotations

from neardup._kernels.datasketch.reference import sha1_tokens, sketch_sets, update

__all__ = ["sha1_tokens", "sketch_sets", "update"]
