"""Reference HyperLogLog register updates (numpy): the definition of the native twin.

A hash ``h`` of ``bits`` bits (32 for HyperLogLog, 64 for HyperLogLog++, as datasketch) goes to
register ``h & (m - 1)`` with ``m = 2**p``; its rank is ``bits - p - bit_length(h >> p) + 1``
(the position of the lowest set bit of the remaining ``bits - p`` bits, counted from the top
as datasketch does); each register keeps its maximum rank (Flajolet et al. 2007).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from neardup.errors import ConfigError

__all__ = ["registers"]

U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]
I8 = npt.NDArray[np.int8]

#: The largest precision a kernel call takes (2**30 registers per document).
MAX_P = 30


def _bit_length(x: U64) -> I64:
    """Number of significant bits of each value (0 for 0), elementwise."""
    x = np.asarray(x, dtype=np.uint64)
    out = np.zeros(x.shape, dtype=np.int64)
    for shift in (32, 16, 8, 4, 2, 1):
        s = np.uint64(shift)
        big = (x >> s) != 0
        out += np.where(big, shift, 0)
        x = np.where(big, x >> s, x)
    total: I64 = out + (x != 0)
    return total


def registers(hashes: U64, doc_offsets: I64, p: int, bits: int) -> I8:
    """``(n_docs, 2**p)`` int8 registers of each document's hashes.

    A hash wider than ``bits`` must be rejected by the caller (its rank would be <= 0; it
    wraps to int8 as ``astype`` does).

    Raises:
        ConfigError: ``p`` is not from 0 to :data:`MAX_P`, or ``bits`` not from 0 to 64.
    """
    if not (0 <= p <= MAX_P and 0 <= bits <= 64):
        raise ConfigError(
            f"p must be from 0 to {MAX_P} and bits from 0 to 64, got p={p}, bits={bits}"
        )
    m = 1 << p
    n_docs = len(doc_offsets) - 1
    out = np.zeros((n_docs, m), dtype=np.int8)
    if not len(hashes):
        return out
    h = np.asarray(hashes, dtype=np.uint64)
    idx = (h & np.uint64(m - 1)).astype(np.int64)
    rank = (bits - p) - _bit_length(h >> np.uint64(p)) + 1
    docs = np.repeat(np.arange(n_docs), np.diff(doc_offsets))
    flat = out.reshape(-1)
    np.maximum.at(flat, docs * m + idx, rank.astype(np.int8))
    return out
