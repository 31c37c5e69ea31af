"""Pinned, documented, seeded hashes of bytes, one Python call per value: the tests' oracles.

The kernels (``neardup._kernels``) compute these hashes in batches; the tests compare them
with these plain implementations. Every function takes ``bytes`` and returns a non-negative
Python ``int``; byte order of multi-word results is stated per function. Values are pinned
by ``tests/golden`` so that a library upgrade can never silently change a fingerprint.

* **FNV-1a 64** (Fowler, Noll, Vo): offset basis ``0xcbf29ce484222325``, prime
  ``0x100000001b3``; for each byte ``h ^= b; h = h * prime mod 2**64``. As Go's
  ``hash/fnv.New64a``.
* **xxh3-64 / xxh3-128** (python-xxhash, XXH3 spec v0.8): 64-bit seed. The 128-bit value is
  split ``lo = v & (2**64-1)``, ``hi = v >> 64`` (XXH128_hash_t.low64 / high64).
* **MurmurHash3** (mmh3, Appleby): ``x86_32`` with a 32-bit seed (unsigned result) and
  ``x64_128`` with a 32-bit seed, split into (lo, hi) as the two little-endian u64 halves of
  the canonical 16-byte digest.
* **sha1_hash32** (datasketch): the first 4 bytes of SHA-1, read as a little-endian u32.
"""

from __future__ import annotations

import hashlib
import struct

import mmh3
import xxhash

from neardup._kernels.text import FNV64_OFFSET, FNV64_PRIME

__all__ = [
    "FNV64_OFFSET",
    "FNV64_PRIME",
    "MASK64",
    "fnv1a_64",
    "murmur3_32",
    "murmur3_128",
    "sha1_hash32",
    "xxh3_64",
    "xxh3_128",
    "xxh3_128_pair",
]

MASK64 = (1 << 64) - 1


def fnv1a_64(data: bytes) -> int:
    """FNV-1a 64-bit hash of ``data``.

    Examples:
        >>> hex(fnv1a_64(b"hello"))
        '0xa430d84680aabd0b'
        >>> fnv1a_64(b"") == FNV64_OFFSET
        True
    """
    h = FNV64_OFFSET
    for byte in data:
        h = ((h ^ byte) * FNV64_PRIME) & MASK64
    return h


def xxh3_64(data: bytes, seed: int = 0) -> int:
    """XXH3 64-bit hash with a 64-bit seed.

    Examples:
        >>> hex(xxh3_64(b"hello"))
        '0x9555e8555c62dcfd'
    """
    return int(xxhash.xxh3_64_intdigest(data, seed & MASK64))


def xxh3_128(data: bytes, seed: int = 0) -> int:
    """XXH3 128-bit hash with a 64-bit seed, as one int (high 64 bits first).

    Examples:
        >>> xxh3_128(b"hello") >> 64 == xxh3_128_pair(b"hello")[1]
        True
    """
    return int(xxhash.xxh3_128_intdigest(data, seed & MASK64))


def xxh3_128_pair(data: bytes, seed: int = 0) -> tuple[int, int]:
    """XXH3 128-bit hash split into ``(lo, hi)`` 64-bit halves (txtfp's ``hash128``).

    Examples:
        >>> lo, hi = xxh3_128_pair(b"hello")
        >>> (hi << 64) | lo == xxh3_128(b"hello")
        True
    """
    v = xxh3_128(data, seed)
    return v & MASK64, v >> 64


def murmur3_32(data: bytes, seed: int = 0) -> int:
    """MurmurHash3 x86_32, unsigned, with a 32-bit seed.

    Examples:
        >>> murmur3_32(b"hello")
        613153351
    """
    return int(mmh3.hash(data, seed & 0xFFFFFFFF, signed=False))


def murmur3_128(data: bytes, seed: int = 0) -> tuple[int, int]:
    """MurmurHash3 x64_128 with a 32-bit seed, as ``(lo, hi)`` little-endian u64 halves.

    Examples:
        >>> lo, hi = murmur3_128(b"hello")
        >>> hex(lo)
        '0xcbd8a7b341bd9b02'
    """
    digest = mmh3.hash_bytes(data, seed & 0xFFFFFFFF, x64arch=True)
    lo, hi = struct.unpack("<QQ", digest)
    return int(lo), int(hi)


def sha1_hash32(data: bytes) -> int:
    """datasketch's default token hash: the first 4 bytes of SHA-1, little-endian u32.

    Examples:
        >>> sha1_hash32(b"hello")
        499578026
    """
    return int(struct.unpack("<I", hashlib.sha1(data).digest()[:4])[0])
