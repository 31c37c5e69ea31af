"""numba kernel of the canonicalizer, bit-identical to :mod:`.reference` (the standard library).

One pass over the packed documents. Per document: pure ASCII is copied (lowercased unless the
caller's tokenizer lowercases ASCII itself); text that passes the quick check of
:mod:`.tables` (no flagged code point, combining classes in canonical order) is copied as it
is (but for its ASCII letters, lowercased like a pure-ASCII document: case folding maps
A-Z to a-z whatever surrounds them); anything else is decoded, stripped, and run through
NFKC -> full case folding -> NFKC with the tables: NFKD per code point, the canonical
ordering algorithm, canonical composition (UAX #15; the Unicode Standard, chapter 3,
section 3.11). Compiled lazily into the kernel cache (:mod:`neardup._kernels.cache`);
importing this module compiles nothing.
"""

from __future__ import annotations

import numpy as np

from neardup._kernels.cache import njit
from neardup._kernels.text.fast import _decode, _encode

__all__ = ["canonicalize"]

_CHANGES = 4
_OUTSIDE = 8
_SECOND = 16


@njit()
def _grow(arr, need):  # type: ignore[no-untyped-def]
    """``arr`` itself if it holds ``need`` items, else a copy at least twice as large."""
    if need <= arr.shape[0]:
        return arr
    bigger = np.empty(max(need, 2 * arr.shape[0]), dtype=arr.dtype)
    bigger[: arr.shape[0]] = arr
    return bigger


@njit()
def _ccc(ccc, cp):  # type: ignore[no-untyped-def]
    if cp < ccc.shape[0]:
        return np.int64(ccc[cp])
    return np.int64(0)


@njit()
def _expand(src, n, dst, off, data):  # type: ignore[no-untyped-def]
    """Map every code point of ``src[:n]`` through a CSR table (empty row: itself) into
    ``dst`` (grown as needed); return (dst, length)."""
    dense = off.shape[0] - 1
    need = 0
    for i in range(n):
        cp = src[i]
        if cp < dense and off[cp + 1] > off[cp]:
            need += off[cp + 1] - off[cp]
        else:
            need += 1
    dst = _grow(dst, need)
    m = 0
    for i in range(n):
        cp = src[i]
        if cp < dense and off[cp + 1] > off[cp]:
            for j in range(off[cp], off[cp + 1]):
                dst[m] = data[j]
                m += 1
        else:
            dst[m] = cp
            m += 1
    return dst, m


@njit()
def _reorder(seq, n, ccc):  # type: ignore[no-untyped-def]
    """The canonical ordering algorithm: a stable sort by combining class of every run of
    non-starters (insertion sort; runs are short)."""
    for i in range(1, n):
        c = _ccc(ccc, seq[i])
        if c == 0:
            continue
        j = i
        while j > 0:
            p = _ccc(ccc, seq[j - 1])
            if p <= c:
                break
            seq[j], seq[j - 1] = seq[j - 1], seq[j]
            j -= 1


@njit()
def _pair(keys, vals, first, second):  # type: ignore[no-untyped-def]
    """The primary composite of (first, second), or -1."""
    key = (np.int64(first) << 21) | np.int64(second)
    lo = 0
    hi = keys.shape[0]
    while lo < hi:
        mid = (lo + hi) >> 1
        if keys[mid] < key:
            lo = mid + 1
        else:
            hi = mid
    if lo < keys.shape[0] and keys[lo] == key:
        return np.int64(vals[lo])
    return np.int64(-1)


@njit()
def _compose(seq, n, flags, ccc, keys, vals):  # type: ignore[no-untyped-def]
    """Canonical composition of ``seq[:n]`` (decomposed, canonically ordered) in place;
    return the new length. Only code points flagged SECOND can join a starter."""
    m = 0
    starter = -1
    last = np.int64(0)
    dense = ccc.shape[0]
    for i in range(n):
        cp = seq[i]
        c = np.int64(ccc[cp]) if cp < dense else np.int64(0)
        if (
            starter >= 0
            and (flags[cp] & _SECOND) != 0
            and (m - 1 == starter or (last != 0 and last < c))
        ):
            p = _pair(keys, vals, seq[starter], cp)
            if p >= 0:
                seq[starter] = p
                continue
        if c == 0:
            starter = m
        last = c
        seq[m] = cp
        m += 1
    return m


@njit()
def _nfkc(a, n, b, flags, ccc, dec_off, dec_data, keys, vals):  # type: ignore[no-untyped-def]
    """NFKC of ``a[:n]`` into ``b`` (grown as needed); return (b, length)."""
    b, m = _expand(a, n, b, dec_off, dec_data)
    _reorder(b, m, ccc)
    m = _compose(b, m, flags, ccc, keys, vals)
    return b, m


@njit()
def _copy_lower(buf, lo, hi, out, pos):  # type: ignore[no-untyped-def]
    """Copy ``buf[lo:hi]`` to ``out[pos:]`` with ASCII A-Z lowercased; return (out, pos)."""
    out = _grow(out, pos + (hi - lo))
    for i in range(lo, hi):
        ch = buf[i]
        if 0x41 <= ch <= 0x5A:
            ch += 0x20
        out[pos] = ch
        pos += 1
    return out, pos


@njit()
def _segment(  # type: ignore[no-untyped-def]
    buf, lo, hi, out, pos, a, b, flags, strip_mask, ccc, dec_off, dec_data, cf_off, cf_data,
    one_off, one_data, keys, vals,
):  # fmt: skip
    """Canonicalize the bytes ``buf[lo:hi]`` into ``out[pos:]``: decode dropping the stripped
    code points, NFKC, full case folding, NFKC, encode. Returns (out, pos, a, b), the work
    arrays grown as needed."""
    a = _grow(a, hi - lo)
    n = 0
    i = lo
    while i < hi:
        cp, step = _decode(buf, i, hi)
        i += step
        if (flags[cp] & strip_mask) == 0:
            a[n] = cp
            n += 1
    if n == 1 and a[0] < one_off.shape[0] - 1:
        # one code point alone: its canonical form is in a table
        cp = a[0]
        out = _grow(out, pos + 4 * 18)
        if one_off[cp + 1] == one_off[cp]:
            return out, _encode(out, pos, np.int64(cp)), a, b
        for j in range(one_off[cp], one_off[cp + 1]):
            pos = _encode(out, pos, np.int64(one_data[j]))
        return out, pos, a, b
    b, m = _nfkc(a, n, b, flags, ccc, dec_off, dec_data, keys, vals)
    a, n = _expand(b, m, a, cf_off, cf_data)
    b, m = _nfkc(a, n, b, flags, ccc, dec_off, dec_data, keys, vals)
    out = _grow(out, pos + 4 * m)
    for j in range(m):
        pos = _encode(out, pos, np.int64(b[j]))
    return out, pos, a, b


@njit()
def canonicalize(  # type: ignore[no-untyped-def]
    buf,
    offsets,
    flags,
    strip_mask,
    ccc,
    dec_off,
    dec_data,
    cf_off,
    cf_data,
    one_off,
    one_data,
    pair_keys,
    pair_vals,
    lower_ascii,
    fallback_from,
):
    """NFKC o casefold o NFKC of every document, after dropping the code points whose flags
    meet ``strip_mask``.

    Args:
        buf, offsets: The packed documents (UTF-8, surrogates allowed).
        flags ... pair_vals: The tables of :mod:`neardup._kernels.canonicalize.tables`.
        strip_mask: The flag bits of the code points to drop (BIDI | FORMAT for txtfp).
        lower_ascii: Lowercase the ASCII letters A-Z of the documents copied without a
            rewrite (pure ASCII, or passing the quick check): part of their canonical form.
            When False their ASCII case is kept (for a tokenizer that lowercases it itself).
        fallback_from: Documents of at least this many bytes are left to the caller.

    Returns:
        (out_buf, out_offsets, status): the canonical documents packed the same way, and per
        document 0 (copied unchanged), 1 (rewritten) or 2 (left to the caller: copied
        unchanged; over ``fallback_from`` bytes, or a code point outside the tables).
    """
    n_docs = offsets.shape[0] - 1
    out = np.empty(buf.shape[0] + 16, dtype=np.uint8)
    out_offsets = np.zeros(n_docs + 1, dtype=np.int64)
    status = np.zeros(n_docs, dtype=np.uint8)
    a = np.empty(256, dtype=np.int32)
    b = np.empty(256, dtype=np.int32)
    pos = 0
    slow_mask = np.uint8(strip_mask | _CHANGES)
    longest = 0
    for d in range(n_docs):
        longest = max(longest, offsets[d + 1] - offsets[d])
    seg_lo = np.empty(longest + 1, dtype=np.int64)
    seg_hi = np.empty(longest + 1, dtype=np.int64)
    for d in range(n_docs):
        start = offsets[d]
        end = offsets[d + 1]
        # ---- classify: ASCII, quick-check stable, or needs work
        ascii_only = True
        for i in range(start, end):
            if buf[i] >= 0x80:
                ascii_only = False
                break
        stable = True
        if not ascii_only:
            last = 0
            i = start
            while i < end:
                if buf[i] < 0x80:
                    last = 0
                    i += 1
                    continue
                cp, step = _decode(buf, i, end)
                if (flags[cp] & slow_mask) != 0:
                    stable = False
                    break
                c = _ccc(ccc, cp)
                if c != 0 and last > c:
                    stable = False
                    break
                last = c
                i += step
        if ascii_only or stable or end - start >= fallback_from:
            out = _grow(out, pos + (end - start))
            if lower_ascii and (ascii_only or stable):
                for i in range(start, end):
                    ch = buf[i]
                    if 0x41 <= ch <= 0x5A:
                        ch += 0x20
                        status[d] = 1
                    out[pos] = ch
                    pos += 1
            else:
                out[pos : pos + (end - start)] = buf[start:end]
                pos += end - start
                if not (ascii_only or stable):
                    status[d] = 2
            out_offsets[d + 1] = pos
            continue
        # ---- rewrite segment by segment. A segment starts at a "boundary" code point: ASCII,
        # or one no step changes, strips, or joins to what precedes it (no flag of slow_mask,
        # combining class 0). Nothing crosses a boundary in any of the three steps, so each
        # segment is canonicalized on its own; a segment of one boundary code point is copied
        # (ASCII lowercased).
        # Pass 1 finds the dirty segments (no array is reassigned in this loop, which keeps
        # it free of reference counting); pass 2 copies and rewrites.
        doc_pos = pos
        n_seg = 0
        seg = start
        dirty = False
        outside = False
        i = start
        while i < end:
            b0 = buf[i]
            if b0 < 0x80:
                boundary = True
                step = 1
            else:
                cp, step = _decode(buf, i, end)
                f = flags[cp]
                boundary = (f & slow_mask) == 0 and _ccc(ccc, cp) == 0
                if (f & _OUTSIDE) != 0:
                    outside = True
            if boundary:
                if dirty:
                    seg_lo[n_seg] = seg
                    seg_hi[n_seg] = i
                    n_seg += 1
                    dirty = False
                seg = i
            else:
                dirty = True
            i += step
        if dirty:
            seg_lo[n_seg] = seg
            seg_hi[n_seg] = end
            n_seg += 1
        clean_from = start
        for k in range(n_seg):
            out, pos = _copy_lower(buf, clean_from, seg_lo[k], out, pos)
            out, pos, a, b = _segment(
                buf, seg_lo[k], seg_hi[k], out, pos, a, b, flags, strip_mask, ccc, dec_off,
                dec_data, cf_off, cf_data, one_off, one_data, pair_keys, pair_vals,
            )  # fmt: skip
            clean_from = seg_hi[k]
        out, pos = _copy_lower(buf, clean_from, end, out, pos)
        if outside:  # a code point the tables do not cover: left to the caller
            pos = doc_pos
            out = _grow(out, pos + (end - start))
            out[pos : pos + (end - start)] = buf[start:end]
            pos += end - start
            status[d] = 2
        else:
            status[d] = 1
        out_offsets[d + 1] = pos
    return out[:pos].copy(), out_offsets, status
