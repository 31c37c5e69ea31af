"""numba kernel of the CTPH (ssdeep) digest over a packed batch, bit-identical to the reference.

One pass per document, following libfuzzy 2.14.1's ``fuzzy_engine_step`` state machine: the
Adler-like rolling hash over a 7-byte window triggers piece boundaries for every block size
``3 * 2**i`` at once, each block size keeps a 6-bit FNV piece hash (and its "half" twin for
the truncated second part), and block sizes that can no longer be chosen are dropped.

Compiled lazily on first call with ``cache=True``; importing this module compiles nothing, and
only :func:`neardup._kernels.engine.kernels` imports it, when the fast backend is first used.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from neardup._kernels.cache import njit
from neardup._kernels.ctph.reference import B64, CTPHTable, compare, reference_digest, rolling_sums

__all__ = [
    "B64",
    "CTPHTable",
    "compare",
    "ctph_batch",
    "digest_packed",
    "reference_digest",
    "rolling_sums",
]

_B64 = np.frombuffer(
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", dtype=np.uint8
).copy()
_NUM_BLOCKHASHES = 31
_SPAMSUM_LENGTH = 64
_MIN_BLOCKSIZE = 3
_HASH_INIT = 0x27
_MASK32 = 0xFFFFFFFF


@njit()
def ctph_batch(buf, offsets, out_bi, out_p1, out_l1, out_p2, out_l2):  # type: ignore[no-untyped-def]
    """Digest documents ``buf[offsets[d]:offsets[d+1]]``.

    Writes, per document d: ``out_bi[d]`` the block size index (block size ``3 << bi``),
    ``out_p1[d, :out_l1[d]]`` the first part and ``out_p2[d, :out_l2[d]]`` the second part,
    as base64 ASCII codes.
    """
    b64 = _B64
    nbh = _NUM_BLOCKHASHES
    digest = np.zeros((nbh, _SPAMSUM_LENGTH), dtype=np.uint8)
    dindex = np.zeros(nbh, dtype=np.int64)
    bh_h = np.zeros(nbh, dtype=np.int64)
    bh_half = np.zeros(nbh, dtype=np.int64)
    halfdigest = np.zeros(nbh, dtype=np.uint8)
    window = np.zeros(7, dtype=np.int64)
    n_docs = offsets.shape[0] - 1
    for d in range(n_docs):
        start = offsets[d]
        end = offsets[d + 1]
        total = end - start
        # fuzzy_set_total_input_length: cap the number of block hashes.
        guess = 0
        while (3 << guess) * 64 < total:
            guess += 1
            if guess == nbh - 2:
                break
        bhendlimit = guess + 1
        bhstart = 0
        bhend = 1
        rollmask = 0
        reduce_border = 3 * 64
        bh_h[0] = _HASH_INIT
        bh_half[0] = _HASH_INIT
        digest[0, 0] = 0
        halfdigest[0] = 0
        dindex[0] = 0
        h1 = 0
        h2 = 0
        h3 = 0
        wn = 0
        for k in range(7):
            window[k] = 0
        for p in range(start, end):
            c = int(buf[p])
            # roll_hash
            h2 = (h2 - h1 + 7 * c) & _MASK32
            h1 = h1 + c - window[wn]
            window[wn] = c
            wn += 1
            if wn == 7:
                wn = 0
            h3 = ((h3 << 5) ^ c) & _MASK32
            horg = (h1 + h2 + h3 + 1) & _MASK32
            c6 = c & 63
            for i in range(bhstart, bhend):
                bh_h[i] = ((bh_h[i] * 19) ^ c6) & 63
                bh_half[i] = ((bh_half[i] * 19) ^ c6) & 63
            if horg == 0:
                continue
            hq = horg // 3
            if hq & rollmask:
                continue
            if horg % 3:
                continue
            hq >>= bhstart
            i = bhstart
            while True:
                if dindex[i] == 0 and bhend <= bhendlimit:
                    # fuzzy_try_fork_blockhash (the last-hash case needs > 100 GB of input)
                    bh_h[bhend] = bh_h[bhend - 1]
                    bh_half[bhend] = bh_half[bhend - 1]
                    digest[bhend, 0] = 0
                    halfdigest[bhend] = 0
                    dindex[bhend] = 0
                    bhend += 1
                digest[i, dindex[i]] = b64[bh_h[i]]
                halfdigest[i] = b64[bh_half[i]]
                if dindex[i] < _SPAMSUM_LENGTH - 1:
                    dindex[i] += 1
                    digest[i, dindex[i]] = 0
                    bh_h[i] = _HASH_INIT
                    if dindex[i] < _SPAMSUM_LENGTH // 2:
                        bh_half[i] = _HASH_INIT
                        halfdigest[i] = 0
                elif (
                    bhend - bhstart >= 2
                    and reduce_border < total
                    and dindex[bhstart + 1] >= _SPAMSUM_LENGTH // 2
                ):
                    # fuzzy_try_reduce_blockhash
                    bhstart += 1
                    reduce_border *= 2
                    rollmask = rollmask * 2 + 1
                if hq & 1:
                    break
                hq >>= 1
                i += 1
                if i >= bhend:
                    break
        # fuzzy_digest
        hroll = (h1 + h2 + h3) & _MASK32
        bi = bhstart
        while (3 << bi) * 64 < total:
            bi += 1
        if bi >= bhend:
            bi = bhend - 1
        while bi > bhstart and dindex[bi] < _SPAMSUM_LENGTH // 2:
            bi -= 1
        out_bi[d] = bi
        n1 = dindex[bi]
        for k in range(n1):
            out_p1[d, k] = digest[bi, k]
        if hroll != 0:
            out_p1[d, n1] = b64[bh_h[bi]]
            n1 += 1
        elif digest[bi, n1] != 0:
            out_p1[d, n1] = digest[bi, n1]
            n1 += 1
        out_l1[d] = n1
        n2 = 0
        if bi < bhend - 1:
            nb = bi + 1
            n2 = dindex[nb]
            if n2 > _SPAMSUM_LENGTH // 2 - 1:
                n2 = _SPAMSUM_LENGTH // 2 - 1
            for k in range(n2):
                out_p2[d, k] = digest[nb, k]
            if hroll != 0:
                out_p2[d, n2] = b64[bh_half[nb]]
                n2 += 1
            elif halfdigest[nb] != 0:
                out_p2[d, n2] = halfdigest[nb]
                n2 += 1
        elif hroll != 0:
            out_p2[d, 0] = b64[bh_h[bi]]
            n2 = 1
        out_l2[d] = n2


def digest_packed(buf: npt.NDArray[np.uint8], offsets: npt.NDArray[np.int64]) -> list[str]:
    """Return the digest of every document ``buf[offsets[i]:offsets[i+1]]``.

    Examples:
        >>> buf = np.frombuffer(b"hello", dtype=np.uint8)
        >>> digest_packed(buf, np.array([0, 0, 5], dtype=np.int64))
        ['3::', '3:iKn:p']
    """
    n_docs = offsets.shape[0] - 1
    out_bi = np.zeros(n_docs, dtype=np.int64)
    out_p1 = np.zeros((n_docs, _SPAMSUM_LENGTH), dtype=np.uint8)
    out_l1 = np.zeros(n_docs, dtype=np.int64)
    out_p2 = np.zeros((n_docs, _SPAMSUM_LENGTH // 2), dtype=np.uint8)
    out_l2 = np.zeros(n_docs, dtype=np.int64)
    ctph_batch(buf, offsets, out_bi, out_p1, out_l1, out_p2, out_l2)
    result: list[str] = []
    p1_rows = out_p1.tobytes()
    p2_rows = out_p2.tobytes()
    w1 = _SPAMSUM_LENGTH
    w2 = _SPAMSUM_LENGTH // 2
    for i, (bi, l1, l2) in enumerate(
        zip(out_bi.tolist(), out_l1.tolist(), out_l2.tolist(), strict=True)
    ):
        part1 = p1_rows[i * w1 : i * w1 + l1].decode("ascii")
        part2 = p2_rows[i * w2 : i * w2 + l2].decode("ascii")
        result.append(f"{_MIN_BLOCKSIZE << bi}:{part1}:{part2}")
    return result
