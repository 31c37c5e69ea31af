"""CTPH (ssdeep) digest reference: numpy/Python, the oracle of :mod:`neardup._kernels.ctph.fast`.

Two independent implementations give the same digests:

* ``fast`` (:mod:`neardup._kernels.ctph.fast`): a numba kernel, one pass per document, that
  follows libfuzzy 2.14.1's multi-block-size state machine.
* ``reference`` (here): Tridgell's original spamsum procedure (ssdeep <= 2.12
  ``fuzzy_hash_buf``): guess the block size from the length, hash with block sizes ``b`` and
  ``2b``, halve ``b`` while the first part is shorter than 32. The rolling hash is computed
  for every position at once with numpy; the FNV piece hashes fold in Python.

:func:`neardup._kernels.engine.kernels` picks one (``NEARDUP_BACKEND``).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["B64", "digest_packed", "reference_digest", "rolling_sums"]

#: The base64 alphabet of ssdeep digests.
B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_HASH_INIT = 0x27  # 0x28021967 mod 64: only the low 6 bits of the FNV state are ever used
_FNV_PRIME_LOW6 = 0x01000193 & 63
_SPAMSUM_LENGTH = 64
_MIN_BLOCKSIZE = 3


def rolling_sums(data: bytes) -> npt.NDArray[np.uint32]:
    """Return ssdeep's rolling hash ``h1 + h2 + h3 (mod 2**32)`` after every byte of ``data``.

    ``h1`` is the sum of the last 7 bytes, ``h2`` their sum weighted 7..1 (newest heaviest),
    ``h3`` the XOR of byte ``k`` steps back shifted left by ``5k`` (32 bits).

    Examples:
        >>> rolling_sums(b"ab").tolist()  # 97 + 679 + 97, then 195 + 1268 + 3138
        [873, 4601]
    """
    x = np.frombuffer(data, dtype=np.uint8).astype(np.uint64)
    n = x.shape[0]
    padded = np.concatenate([np.zeros(6, dtype=np.uint64), x])
    h1 = np.zeros(n, dtype=np.uint64)
    h2 = np.zeros(n, dtype=np.uint64)
    h3 = np.zeros(n, dtype=np.uint64)
    for age in range(7):
        back = padded[6 - age : 6 - age + n]
        h1 += back
        h2 += np.uint64(7 - age) * back
        h3 ^= (back << np.uint64(5 * age)) & np.uint64(0xFFFFFFFF)
    return ((h1 + h2 + h3) & np.uint64(0xFFFFFFFF)).astype(np.uint32)


def _fold(h: int, piece: bytes) -> int:
    for c in piece:
        h = ((h * _FNV_PRIME_LOW6) ^ c) & 63
    return h


def _pieces(data: bytes, triggers: npt.NDArray[np.int64], limit: int, last_nonzero: bool) -> str:
    """One digest part: a character per piece ending at a trigger; the tail joins the last."""
    out: list[str] = []
    overflow = ""  # the character written at index limit-1 once the part is full
    h = _HASH_INIT
    pos = 0
    for t in triggers.tolist():
        h = _fold(h, data[pos : t + 1])
        pos = t + 1
        if len(out) < limit - 1:
            out.append(B64[h])
            h = _HASH_INIT
        else:
            overflow = B64[h]
    h = _fold(h, data[pos:])
    if last_nonzero:
        return "".join(out) + B64[h]
    return "".join(out) + overflow


def reference_digest(data: bytes) -> str:
    """Return the ssdeep digest of ``data`` by the classic spamsum procedure (slow, exact).

    Examples:
        >>> reference_digest(b"")
        '3::'
    """
    n = len(data)
    roll = rolling_sums(data).astype(np.int64)
    last_nonzero = bool(n) and int(roll[-1]) != 0
    block_size = _MIN_BLOCKSIZE
    while block_size * _SPAMSUM_LENGTH < n:
        block_size *= 2
    while True:
        first = np.flatnonzero(roll % block_size == block_size - 1)
        if block_size > _MIN_BLOCKSIZE and len(first) < _SPAMSUM_LENGTH // 2:
            block_size //= 2
            continue
        second = np.flatnonzero(roll % (2 * block_size) == 2 * block_size - 1)
        part1 = _pieces(data, first, _SPAMSUM_LENGTH, last_nonzero)
        part2 = _pieces(data, second, _SPAMSUM_LENGTH // 2, last_nonzero)
        return f"{block_size}:{part1}:{part2}"


def digest_packed(buf: npt.NDArray[np.uint8], offsets: npt.NDArray[np.int64]) -> list[str]:
    """Return the digest of every document ``buf[offsets[i]:offsets[i+1]]``.

    Examples:
        >>> buf = np.frombuffer(b"hello", dtype=np.uint8)
        >>> digest_packed(buf, np.array([0, 0, 5], dtype=np.int64))
        ['3::', '3:iKn:p']
    """
    n_docs = offsets.shape[0] - 1
    return [reference_digest(buf[offsets[i] : offsets[i + 1]].tobytes()) for i in range(n_docs)]
