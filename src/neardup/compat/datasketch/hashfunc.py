"""datasketch's ``hashfunc`` module: the SHA-1 based 32- and 64-bit hashes of bytes."""

from __future__ import annotations

import hashlib

__all__ = ["sha1_hash32", "sha1_hash64"]


def sha1_hash32(data: bytes) -> int:
    """The first 4 bytes of SHA-1 of ``data``, little-endian (datasketch's default hash).

    Examples:
        >>> sha1_hash32(b"hello")
        499578026
    """
    return int.from_bytes(hashlib.sha1(data).digest()[:4], "little")


def sha1_hash64(data: bytes) -> int:
    """The first 8 bytes of SHA-1 of ``data``, little-endian."""
    return int.from_bytes(hashlib.sha1(data).digest()[:8], "little")
