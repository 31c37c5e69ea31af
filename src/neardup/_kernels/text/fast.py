"""numba kernels of the batch engine, bit-identical to :mod:`neardup._kernels.text.reference`.

Every function is compiled lazily on first call with ``cache=True`` (so later processes load
the machine code from ``__pycache__``); importing this module compiles nothing. Only
:mod:`neardup._kernels.engine` imports it, and only when the fast backend is selected.
"""

from __future__ import annotations

import numpy as np

from neardup._kernels.cache import njit
from neardup._kernels.text import FNV64_OFFSET, FNV64_PRIME

__all__ = ["fnv1a_ranges", "tokenize_words"]

# tables.MARK and tables.IDEOGRAPH (a mask holding IDEOGRAPH splits Han and kana runs)
_MARK = np.uint8(8)
_IDEOGRAPH = np.uint8(32)
_FNV_OFFSET = np.uint64(FNV64_OFFSET)
_FNV_PRIME = np.uint64(FNV64_PRIME)


@njit()
def _decode(buf, i, end):  # type: ignore[no-untyped-def]
    """Decode one code point at ``buf[i]``; return (code point, byte length).

    Invalid or truncated sequences decode as U+FFFD of length 1 (a separator), as Go does.
    Surrogates (from ``surrogatepass``) decode to their code point.
    """
    b0 = np.int64(buf[i])
    if b0 < 0x80:
        return b0, 1
    if 0xC2 <= b0 < 0xE0 and i + 1 < end:
        b1 = np.int64(buf[i + 1])
        if b1 & 0xC0 == 0x80:
            return ((b0 & 0x1F) << 6) | (b1 & 0x3F), 2
    elif 0xE0 <= b0 < 0xF0 and i + 2 < end:
        b1 = np.int64(buf[i + 1])
        b2 = np.int64(buf[i + 2])
        if b1 & 0xC0 == 0x80 and b2 & 0xC0 == 0x80:
            cp = ((b0 & 0x0F) << 12) | ((b1 & 0x3F) << 6) | (b2 & 0x3F)
            if cp >= 0x800:
                return cp, 3
    elif 0xF0 <= b0 < 0xF5 and i + 3 < end:
        b1 = np.int64(buf[i + 1])
        b2 = np.int64(buf[i + 2])
        b3 = np.int64(buf[i + 3])
        if b1 & 0xC0 == 0x80 and b2 & 0xC0 == 0x80 and b3 & 0xC0 == 0x80:
            cp = ((b0 & 0x07) << 18) | ((b1 & 0x3F) << 12) | ((b2 & 0x3F) << 6) | (b3 & 0x3F)
            if 0x10000 <= cp <= 0x10FFFF:
                return cp, 4
    return 0xFFFD, 1


@njit()
def _encode(out, pos, cp):  # type: ignore[no-untyped-def]
    """Write ``cp`` as UTF-8 at ``out[pos]``; return the new position."""
    if cp < 0x80:
        out[pos] = cp
        return pos + 1
    if cp < 0x800:
        out[pos] = 0xC0 | (cp >> 6)
        out[pos + 1] = 0x80 | (cp & 0x3F)
        return pos + 2
    if cp < 0x10000:
        out[pos] = 0xE0 | (cp >> 12)
        out[pos + 1] = 0x80 | ((cp >> 6) & 0x3F)
        out[pos + 2] = 0x80 | (cp & 0x3F)
        return pos + 3
    out[pos] = 0xF0 | (cp >> 18)
    out[pos + 1] = 0x80 | ((cp >> 12) & 0x3F)
    out[pos + 2] = 0x80 | ((cp >> 6) & 0x3F)
    out[pos + 3] = 0x80 | (cp & 0x3F)
    return pos + 4


@njit()
def tokenize_words(buf, offsets, classes, lower, mask, min_bytes, do_lower):  # type: ignore[no-untyped-def]
    """Split documents into word tokens: maximal runs of code points whose class meets ``mask``.

    When ``mask`` includes ``tables.IDEOGRAPH``, each Han or kana character is a token of its
    own, together with the combining marks that follow it (UAX #29 word boundaries around
    ideographs, applied to kana as well).

    Tokens are lowercased with ``lower`` when ``do_lower``, written to a new buffer separated
    by one space within a document, and kept only if their UTF-8 length is ``>= min_bytes``.
    Positions are unsigned so that numba drops its negative-index checks on every byte.

    Returns:
        (out_buf, starts, ends, doc_offsets) -- see :class:`neardup._kernels.spans.Spans`.
    """
    n_docs = len(offsets) - 1
    n = len(buf)
    out = np.empty(2 * n + n_docs + 16, dtype=np.uint8)
    cap = n // 2 + n_docs + 1
    starts = np.empty(cap, dtype=np.int64)
    ends = np.empty(cap, dtype=np.int64)
    doc_offsets = np.zeros(n_docs + 1, dtype=np.int64)
    one = np.uint64(1)
    umask = np.uint8(mask)
    umin = np.uint64(min_bytes)
    pos = np.uint64(0)
    nt = np.uint64(0)
    for d in range(n_docs):
        i = np.uint64(offsets[d])
        end = np.uint64(offsets[d + 1])
        first_tok = nt
        in_tok = False
        tok_ideo = False
        tok_begin = np.uint64(0)
        rollback = np.uint64(0)
        while i < end:
            b = buf[i]
            if b < 0x80:  # ASCII fast path: no decoding, small hot tables
                cp = np.uint64(b)
                step = one
            else:
                icp, istep = _decode(buf, np.int64(i), np.int64(end))
                cp = np.uint64(icp)
                step = np.uint64(istep)
            cls = classes[cp] & umask
            if cls != 0:
                ideo = (cls & _IDEOGRAPH) != 0
                if in_tok and (ideo or (tok_ideo and (cls & _MARK) == 0)):
                    # an ideograph is a word of its own (with the marks that follow it)
                    in_tok = False
                    if pos - tok_begin >= umin:
                        starts[nt] = tok_begin
                        ends[nt] = pos
                        nt += one
                    else:
                        pos = rollback
                if not in_tok:
                    in_tok = True
                    tok_ideo = ideo
                    rollback = pos
                    if nt > first_tok:
                        out[pos] = 0x20
                        pos += one
                    tok_begin = pos
                if do_lower:
                    cp = np.uint64(lower[cp])
                if cp < 0x80:
                    out[pos] = cp
                    pos += one
                else:
                    pos = np.uint64(_encode(out, np.int64(pos), np.int64(cp)))
            elif in_tok:
                in_tok = False
                if pos - tok_begin >= umin:
                    starts[nt] = tok_begin
                    ends[nt] = pos
                    nt += one
                else:
                    pos = rollback
            i += step
        if in_tok:
            if pos - tok_begin >= umin:
                starts[nt] = tok_begin
                ends[nt] = pos
                nt += one
            else:
                pos = rollback
        doc_offsets[d + 1] = nt
    return out[:pos].copy(), starts[:nt].copy(), ends[:nt].copy(), doc_offsets


@njit()
def fnv1a_ranges(buf, starts, ends):  # type: ignore[no-untyped-def]
    """FNV-1a 64 of every byte range ``buf[starts[i]:ends[i]]``."""
    out = np.empty(len(starts), dtype=np.uint64)
    for j in range(len(starts)):
        h = _FNV_OFFSET
        for i in range(starts[j], ends[j]):
            h = (h ^ np.uint64(buf[i])) * _FNV_PRIME
        out[j] = h
    return out
