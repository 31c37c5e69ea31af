"""numba kernel of :func:`neardup._kernels.repeats.repeat_mask`; the same marks as the reference.

Four linear passes, two of them sequential, and no LCP array:

1. ``phi[sa[r]] = sa[r + 1]``: each suffix's successor in suffix order, indexed by text
   position (Karkkainen, Manzini and Puglisi 2009, "Permuted Longest-Common-Prefix Array").
2. In text order, the common prefix of each suffix and its successor (Kasai's
   ``h(i + 1) >= h(i) - 1``, so comparisons stay linear), compared only up to ``min_length``
   bytes and never past a ``0xFF`` separator (both cuts keep the inequality); only a link bit
   is kept. Walking ``phi`` in text order reads the text near the previous comparison, where
   Kasai's rank array reads it at random.
3. In suffix order, runs of links; each marked member sets a start bit at its position.
4. In text order, a byte is marked when a start bit lies less than ``min_length`` before it;
   each continuation byte takes its character's lead-byte decision.
"""

from __future__ import annotations

import numpy as np

from neardup._kernels.cache import njit


@njit()
def _links(text, sa, min_length):  # type: ignore[no-untyped-def]
    """``link[p]``: the suffix at ``p`` and its successor in suffix order share
    ``min_length`` bytes before any separator."""
    n = text.shape[0]
    phi = np.empty(n, np.int32)
    for r in range(n - 1):
        phi[sa[r]] = sa[r + 1]
    phi[sa[n - 1]] = -1
    link = np.zeros(n, np.bool_)
    h = 0
    for i in range(n):
        j = phi[i]
        if j < 0:
            h = 0
            continue
        while h < min_length and i + h < n and j + h < n:
            c = text[i + h]
            if c != text[j + h] or c == 0xFF:
                break
            h += 1
        if h >= min_length:
            link[i] = True
        if h > 0:
            h -= 1
    return link


@njit()
def _close(sa, lo, hi, prefix, starts):  # type: ignore[no-untyped-def]
    """Mark the run sa[lo..hi] (inclusive): every member but the earliest, or with
    ``prefix > 0`` every member at or after it when the run has one before it."""
    if prefix > 0:
        ref = False
        for k in range(lo, hi + 1):
            if sa[k] < prefix:
                ref = True
                break
        if not ref:
            return
        for k in range(lo, hi + 1):
            if sa[k] >= prefix:
                starts[sa[k]] = True
        return
    first = sa[lo]
    for k in range(lo + 1, hi + 1):
        if sa[k] < first:
            first = sa[k]
    for k in range(lo, hi + 1):
        if sa[k] != first:
            starts[sa[k]] = True


@njit()
def repeat_mask(text, sa, min_length, prefix):  # type: ignore[no-untyped-def]
    n = text.shape[0]
    mask = np.zeros(n, np.bool_)
    if n < 2:
        return mask
    link = _links(text, sa, min_length)
    starts = np.zeros(n, np.bool_)
    start = -1
    for i in range(n - 1):
        if link[sa[i]]:
            if start < 0:
                start = i
        elif start >= 0:
            _close(sa, start, i, prefix, starts)
            start = -1
    if start >= 0:
        _close(sa, start, n - 1, prefix, starts)
    last = -min_length - 1
    for i in range(n):
        if starts[i]:
            last = i
        if (text[i] & 0xC0) == 0x80 and i > 0:
            mask[i] = mask[i - 1]  # a continuation byte follows its character's lead byte
        else:
            mask[i] = i - last < min_length and i >= prefix
    return mask


# --- the prefilter: winnowing anchors, repeated anchors, candidate regions ---------------------

_B = 0x100000001B3  # the rolling hash's base (odd)
_LO = 0xFFFFFFFF


@njit(inline="always")
def _mix(h):  # type: ignore[no-untyped-def]
    h ^= h >> np.uint64(31)
    h *= np.uint64(0x9E3779B97F4A7C15)
    h ^= h >> np.uint64(29)
    return h


#: Windows per chunk of the anchor pass (rounded down to a multiple of ``w``).
_CHUNK = 1 << 16


@njit()
def _grow(pos, hs, seg_lo, seg_hi, need):  # type: ignore[no-untyped-def]
    m = pos.shape[0]
    c = max(2 * m, need)
    p2 = np.empty(c, np.int64)
    h2 = np.empty(c, np.uint64)
    lo2 = np.empty(c, np.int64)
    hi2 = np.empty(c, np.int64)
    p2[:m] = pos
    h2[:m] = hs
    lo2[:m] = seg_lo
    hi2[:m] = seg_hi
    return p2, h2, lo2, hi2


@njit()
def anchors(text, min_length, k):  # type: ignore[no-untyped-def]
    """Winnowing anchors: in every ``min_length``-byte window without a separator, the
    ``k``-gram of least key (high 32 bits of its mixed hash, then position: the leftmost least)
    among the window's ``w = min_length - k + 1`` k-grams. Returns ``(positions, hashes,
    segment starts, segment ends)`` of the distinct anchors in text order.

    Each segment goes in chunks of about :data:`_CHUNK` windows: one loop hashes the chunk's
    k-grams (rolling hash), one takes prefix and suffix minima over blocks of ``w`` (van Herk /
    Gil-Werman: each window's least is one ``min`` of the two), one emits each window's anchor
    when it differs from the last into a chunk-local list, appended to the result after the
    chunk (so the hot loops never grow an array); ``len(text) < 2**32``."""
    n = text.shape[0]
    w = min_length - k + 1
    base = np.uint64(_B)
    top = np.uint64(1)  # base ** (k - 1)
    for _ in range(k - 1):
        top *= base
    hi_mask = np.uint64(0xFFFFFFFF00000000)
    lo_mask = np.uint64(_LO)
    cap = n // (w // 2 + 1) + 16
    pos = np.empty(cap, np.int64)
    hs = np.empty(cap, np.uint64)
    seg_lo = np.empty(cap, np.int64)
    seg_hi = np.empty(cap, np.int64)
    na = 0
    nw = max(w, (_CHUNK // w) * w)  # windows per chunk, a multiple of w
    size = nw + w - 1  # k-grams per chunk
    keys = np.empty(size, np.uint64)  # (high hash bits | position) of the chunk's k-grams
    vals = np.empty(size, np.uint64)  # their mixed hashes
    suf = np.empty(size, np.uint64)
    pre = np.empty(size, np.uint64)
    found = np.empty(nw, np.int64)
    s = 0
    while s < n:
        e = s
        while e < n and text[e] != 0xFF:
            e += 1
        if e - s >= min_length:
            wins = e - s - min_length + 1
            h = np.uint64(0)
            for i in range(s, s + k - 1):
                h = h * base + np.uint64(text[i])
            g = s  # next k-gram to hash
            have = 0  # k-grams in keys[:have]
            last = np.int64(-1)
            done = 0
            while done < wins:
                m = min(nw, wins - done)  # windows of this chunk
                need = m + w - 1
                if have > 0:  # the previous chunk's last w - 1 k-grams start this one
                    for j in range(w - 1):
                        keys[j] = keys[have - w + 1 + j]
                        vals[j] = vals[have - w + 1 + j]
                    have = w - 1
                while have < need:
                    h = h * base + np.uint64(text[g + k - 1])
                    v = _mix(h)
                    vals[have] = v
                    keys[have] = (v & hi_mask) | np.uint64(g)
                    h -= np.uint64(text[g]) * top
                    g += 1
                    have += 1
                for b0 in range(0, need, w):
                    b1 = min(b0 + w, need)
                    c = keys[b0]
                    pre[b0] = c
                    for j in range(b0 + 1, b1):
                        c = min(c, keys[j])
                        pre[j] = c
                    c = keys[b1 - 1]
                    suf[b1 - 1] = c
                    for j in range(b1 - 2, b0 - 1, -1):
                        c = min(c, keys[j])
                        suf[j] = c
                first = g - have  # the position of keys[0]
                nf = 0
                tb = 0  # t mod w
                for t in range(m):
                    # tb == 0: the window is one whole block
                    key = suf[t] if tb == 0 else min(suf[t], pre[t + w - 1])
                    tb += 1
                    if tb == w:
                        tb = 0
                    a = np.int64(key & lo_mask)
                    if a != last:
                        found[nf] = a
                        nf += 1
                        last = a
                if na + nf > pos.shape[0]:
                    pos, hs, seg_lo, seg_hi = _grow(pos, hs, seg_lo, seg_hi, na + nf)
                for j in range(nf):
                    a = found[j]
                    pos[na + j] = a
                    hs[na + j] = vals[a - first]
                    seg_lo[na + j] = s
                    seg_hi[na + j] = e
                na += nf
                done += m
        s = e + 1
    return pos[:na], hs[:na], seg_lo[:na], seg_hi[:na]


@njit()
def regions(text, pos, hs, seg_lo, seg_hi, min_length, k):  # type: ignore[no-untyped-def]
    """``(starts, ends)`` of the candidate regions: the union of ``[a - (min_length - k),
    a + min_length)`` over every anchor ``a`` whose hash is some other anchor's too, cut to
    its document and widened to whole UTF-8 characters; disjoint, in text order."""
    m = pos.shape[0]
    rep = np.zeros(m, np.bool_)
    if m >= 2**31 - 1:  # more anchors than the int32 table holds: sort
        order = np.argsort(hs)
        for j in range(1, m):
            if hs[order[j]] == hs[order[j - 1]]:
                rep[order[j]] = True
                rep[order[j - 1]] = True
    elif m > 1:  # an open-addressing table of the first anchor of each hash (index + 1)
        size = 1
        while size < 2 * m:
            size *= 2
        smask = np.uint64(size - 1)
        table = np.zeros(size, np.int32)
        for j in range(m):
            slot = np.int64(hs[j] & smask)
            while True:
                i = table[slot] - 1
                if i < 0:
                    table[slot] = j + 1
                    break
                if hs[i] == hs[j]:
                    rep[i] = True
                    rep[j] = True
                    break
                slot = (slot + 1) & (size - 1)
    starts = np.empty(m, np.int64)
    ends = np.empty(m, np.int64)
    nr = 0
    for j in range(m):
        if not rep[j]:
            continue
        a = pos[j]
        lo = max(seg_lo[j], a - (min_length - k))
        hi = min(seg_hi[j], a + min_length)
        while lo > seg_lo[j] and (text[lo] & 0xC0) == 0x80:
            lo -= 1
        while hi < seg_hi[j] and (text[hi] & 0xC0) == 0x80:
            hi += 1
        if nr > 0 and lo <= ends[nr - 1]:
            if hi > ends[nr - 1]:
                ends[nr - 1] = hi
        else:
            starts[nr] = lo
            ends[nr] = hi
            nr += 1
    return starts[:nr], ends[:nr]


@njit()
def gather(text, starts, ends):  # type: ignore[no-untyped-def]
    """The regions, each after a separator: ``(sub-text, where each region starts in it)``."""
    total = 0
    for j in range(starts.shape[0]):
        total += ends[j] - starts[j] + 1
    sub = np.empty(total, np.uint8)
    at = np.empty(starts.shape[0], np.int64)
    o = 0
    for j in range(starts.shape[0]):
        sub[o] = 0xFF
        o += 1
        at[j] = o
        for i in range(starts[j], ends[j]):
            sub[o] = text[i]
            o += 1
    return sub, at


@njit()
def scatter(sub_mask, at, starts, ends, n):  # type: ignore[no-untyped-def]
    """The sub-text's mask put back at the regions' places in a text of ``n`` bytes."""
    mask = np.zeros(n, np.bool_)
    for j in range(starts.shape[0]):
        o = at[j]
        for i in range(starts[j], ends[j]):
            mask[i] = sub_mask[o]
            o += 1
    return mask


# --- the marks from a hash table of windows (no suffix array) ----------------------------------


@njit()
def _rehash(table, size):  # type: ignore[no-untyped-def]
    """The window table moved into ``size`` slots (an entry's home slot is its tag's low bits)."""
    out = np.zeros(size, np.uint64)
    smask = np.uint64(size - 1)
    for e in table:
        if e != 0:
            slot = (e >> np.uint64(32)) & smask
            while out[slot] != 0:
                slot = (slot + np.uint64(1)) & smask
            out[slot] = e
    return out


@njit()
def window_mask(text, min_length, prefix):  # type: ignore[no-untyped-def]
    """The marks of :func:`repeat_mask` without a suffix array: one walk over the windows in
    text order with a hash table holding one earlier occurrence of every distinct window seen
    (``len(text) < 2**32 - 1``).

    A window goes in the table (32 bits of its mixed rolling hash and its position, open
    addressing, at most half full) when no equal window is there; a window equal to one in
    the table (bytes compared, so a hash collision never marks) has an earlier copy and is
    marked. Inside a repeat no lookup is needed: when window ``p - 1`` equals the earlier
    window ``q``, window ``p`` equals window ``q + 1`` exactly when their last bytes
    (``text[p + min_length - 1]``, ``text[q + min_length]``) are equal. With ``prefix > 0``
    only windows starting before it go in the table and only windows at or after it are
    marked."""
    n = text.shape[0]
    mask = np.zeros(n, np.bool_)
    limit = n if prefix <= 0 else min(prefix, n)  # windows starting before it go in the table
    count = 0
    run = 0
    for i in range(n):
        if text[i] == 0xFF:
            run = 0
        else:
            run += 1
            if run >= min_length and i - min_length + 1 < limit:
                count += 1
    size = 1024  # the table grows when half full; most windows of the regions repeat
    while size < count // 2:
        size *= 2
    table = np.zeros(size, np.uint64)
    smask = np.uint64(size - 1)
    used = 0
    base = np.uint64(_B)
    out_w = np.uint64(1)  # base ** min_length, the weight of the byte leaving the window
    for _ in range(min_length):
        out_w *= base
    h = np.uint64(0)
    run = 0
    hi = 0  # bytes before it are marked already
    mp = -2  # window mp equals the earlier window mq
    mq = -2
    for i in range(n):
        c = text[i]
        if c == 0xFF:
            run = 0
            h = np.uint64(0)
            continue
        h = h * base + np.uint64(c)
        run += 1
        if run > min_length:
            h -= np.uint64(text[i - min_length]) * out_w
        if run < min_length:
            continue
        p = i - min_length + 1
        q = -1
        if p == mp + 1 and text[mq + min_length] == c and mq + 1 < limit:
            q = mq + 1
        else:
            tag = _mix(h) >> np.uint64(32)
            slot = tag & smask
            while True:
                e = table[slot]
                if e == 0:
                    break
                if (e >> np.uint64(32)) == tag:
                    r = int(e & np.uint64(_LO)) - 1
                    same = True
                    for j in range(min_length):
                        if text[r + j] != text[p + j]:
                            same = False
                            break
                    if same:
                        q = r
                        break
                slot = (slot + np.uint64(1)) & smask
            if q < 0 and p < limit:
                table[slot] = (tag << np.uint64(32)) | np.uint64(p + 1)
                used += 1
                if 2 * used > size:
                    size *= 2
                    table = _rehash(table, size)
                    smask = np.uint64(size - 1)
        if q >= 0:
            mp = p
            mq = q
            if p >= prefix:
                for b in range(max(hi, p), p + min_length):
                    mask[b] = True
                hi = p + min_length
    for i in range(1, n):
        if (text[i] & 0xC0) == 0x80:
            mask[i] = mask[i - 1]  # a continuation byte follows its character's lead byte
    return mask
