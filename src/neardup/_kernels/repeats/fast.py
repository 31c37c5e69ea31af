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
from neardup._kernels.repeats.reference import shared_regions  # (the native module has its own)

__all__ = [
    "anchors",
    "gather",
    "regions",
    "repeat_mask",
    "scatter",
    "scatter_counts",
    "shared_regions",
    "window_mask",
]


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
def _power(base, e):  # type: ignore[no-untyped-def]
    """``base ** e`` mod ``2**64``."""
    out = np.uint64(1)
    for _ in range(e):
        out *= base
    return out


@njit()
def _hash(text, a, b):  # type: ignore[no-untyped-def]
    """The rolling polynomial hash of ``text[a:b]``."""
    base = np.uint64(_B)
    h = np.uint64(0)
    for i in range(a, b):
        h = h * base + np.uint64(text[i])
    return h


@njit()
def _chunk_buffers(w):  # type: ignore[no-untyped-def]
    """``(windows per chunk, keys, vals, suf, pre, found, since)``: the buffers of
    :func:`_chunk_keys` and :func:`_chunk_anchors` for chunks of about :data:`_CHUNK` windows
    (a multiple of ``w``)."""
    nw = max(w, (_CHUNK // w) * w)
    size = nw + w - 1  # k-grams per chunk
    keys = np.empty(size, np.uint64)  # (high hash bits | position) of the chunk's k-grams
    vals = np.empty(size, np.uint64)  # their mixed hashes
    suf = np.empty(size, np.uint64)
    pre = np.empty(size, np.uint64)
    return nw, keys, vals, suf, pre, np.empty(nw, np.int64), np.empty(nw, np.int64)


@njit()
def _chunk_keys(text, k, w, m, h, g, have, top, keys, vals, suf, pre):  # type: ignore[no-untyped-def]
    """The k-grams of a chunk of ``m`` windows: ``keys[:m + w - 1]`` (high bits of the mixed
    hash | position) and ``vals`` (the mixed hashes), the previous chunk's last ``w - 1``
    first, then the rest hashed from ``g`` on (rolling hash ``h`` of the ``k - 1`` bytes
    before ``g + k - 1``); ``pre`` and ``suf``: prefix and suffix minima of the keys over
    blocks of ``w`` (van Herk / Gil-Werman). Returns ``(h, g, have)`` for the next chunk."""
    need = m + w - 1
    base = np.uint64(_B)
    hi_mask = np.uint64(0xFFFFFFFF00000000)
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
    return h, g, have


@njit()
def _chunk_anchors(m, w, suf, pre, found, since):  # type: ignore[no-untyped-def]
    """The distinct anchors of a chunk's ``m`` windows (:func:`_chunk_keys`) into ``found``,
    in text order: ``found[j]`` is the anchor of the windows from the chunk's ``since[j]``-th
    on. Returns how many."""
    lo_mask = np.uint64(_LO)
    nf = 0
    last = np.int64(-1)
    tb = 0  # t mod w
    for t in range(m):
        key = suf[t] if tb == 0 else min(suf[t], pre[t + w - 1])  # tb == 0: one whole block
        tb += 1
        if tb == w:
            tb = 0
        a = np.int64(key & lo_mask)
        if a != last:
            found[nf] = a
            since[nf] = t
            nf += 1
            last = a
    return nf


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
    top = _power(base, k - 1)  # the weight of the byte leaving a k-gram
    cap = n // (w // 2 + 1) + 16
    pos = np.empty(cap, np.int64)
    hs = np.empty(cap, np.uint64)
    seg_lo = np.empty(cap, np.int64)
    seg_hi = np.empty(cap, np.int64)
    na = 0
    nw, keys, vals, suf, pre, found, since = _chunk_buffers(w)
    s = 0
    while s < n:
        e = s
        while e < n and text[e] != 0xFF:
            e += 1
        if e - s >= min_length:
            wins = e - s - min_length + 1
            h = _hash(text, s, s + k - 1)
            g = s  # next k-gram to hash
            have = 0  # k-grams in keys[:have]
            done = 0
            while done < wins:
                m = min(nw, wins - done)  # windows of this chunk
                h, g, have = _chunk_keys(text, k, w, m, h, g, have, top, keys, vals, suf, pre)
                first = g - have  # the position of keys[0]
                nf = _chunk_anchors(m, w, suf, pre, found, since)
                if na + nf > pos.shape[0]:
                    pos, hs, seg_lo, seg_hi = _grow(pos, hs, seg_lo, seg_hi, na + nf)
                j0 = 1 if done > 0 and found[0] == pos[na - 1] else 0  # the last chunk's last
                for j in range(j0, nf):
                    a = found[j]
                    pos[na + j - j0] = a
                    hs[na + j - j0] = vals[a - first]
                    seg_lo[na + j - j0] = s
                    seg_hi[na + j - j0] = e
                na += nf - j0
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
def scatter_counts(sub_mask, at, starts, ends, n):  # type: ignore[no-untyped-def]
    """The sub-text's mask put back at the regions' places in a text of ``n`` bytes, and the
    marked bytes of each region."""
    mask = np.zeros(n, np.bool_)
    counts = np.zeros(starts.shape[0], np.int64)
    for j in range(starts.shape[0]):
        o = at[j]
        c = 0
        for i in range(starts[j], ends[j]):
            b = sub_mask[o]
            mask[i] = b
            c += b
            o += 1
        counts[j] = c
    return mask, counts


@njit()
def scatter(sub_mask, at, starts, ends, n):  # type: ignore[no-untyped-def]
    """The sub-text's mask put back at the regions' places in a text of ``n`` bytes."""
    return scatter_counts(sub_mask, at, starts, ends, n)[0]


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


@njit(inline="always")
def _slot(table, tag, slot, mask):  # type: ignore[no-untyped-def]
    """From ``slot`` on, the first slot of an open-addressing table that holds ``tag`` or is
    empty."""
    while True:
        e = table[slot]
        if e == 0 or (e >> np.uint64(32)) == tag:
            return slot
        slot = (slot + np.uint64(1)) & mask


@njit()
def _grown(table, used, more):  # type: ignore[no-untyped-def]
    """``table``, rehashed into more slots if ``used + more`` entries would fill it over half."""
    size = table.shape[0]
    if 2 * (used + more) <= size:
        return table
    while 2 * (used + more) > size:
        size *= 2
    return _rehash(table, size)


@njit()
def _firsts(nf, vals, g0, atable, found, firsts):  # type: ignore[no-untyped-def]
    """For each of a chunk's ``nf`` anchors (``found``; ``vals[0]`` is the hash of the k-gram
    at ``g0``), the first anchor of its hash (32 bits) in the table of anchors, into
    ``firsts``; an anchor is put in when it is the first. Returns how many were put in. The
    lookups go in one loop of their own: each is a cache miss, and here the processor
    overlaps them."""
    lo_mask = np.uint64(_LO)
    sh = np.uint64(32)
    amask = np.uint64(atable.shape[0] - 1)
    added = 0
    for j in range(nf):
        a = found[j]
        tag = vals[a - g0] & lo_mask
        slot = _slot(atable, tag, tag & amask, amask)
        en = atable[slot]
        if en == 0:
            atable[slot] = (tag << sh) | np.uint64(a + 1)
            firsts[j] = a
            added += 1
        else:
            firsts[j] = np.int64(en & lo_mask) - 1
    return added


@njit()
def _windows(  # type: ignore[no-untyped-def]
    text, length, w, limit, prefix, s, p0, m, found, since, firsts, nf, hw, wtable, mask, st
):
    """The windows ``p0 .. p0 + m - 1`` of the segment starting at ``s`` (see
    :func:`window_mask`), whose ``nf`` anchors and their hashes' first occurrences are those
    of :func:`_firsts`, with their rolling hash from ``hw`` (that of the window before ``p0``,
    or of the first ``L - 1`` bytes when ``p0 == s``) and the walk's state in ``st``; returns
    the new ``hw``. The table of windows has room for ``m`` more entries: it is not grown here
    (an array assigned inside the loop costs the loop half its speed)."""
    base = np.uint64(_B)
    out_w = _power(base, length)  # the weight of the byte leaving a window
    lo_mask = np.uint64(_LO)
    sh = np.uint64(32)
    one = np.uint64(1)
    wmask = np.uint64(wtable.shape[0] - 1)
    hi, mp, mq = st[0], st[1], st[2]
    wadded = 0
    j = -1  # the anchor of window p is found[j]
    a = np.int64(-1)
    first = np.int64(-1)
    lext = -1  # the bytes equal left of a and first (at most w - 1; -1: not compared yet)
    rext = 0  # and from them on (at most length)
    for t in range(m):
        p = p0 + t
        last = text[p + length - 1]
        hw = hw * base + np.uint64(last)
        if p > s:
            hw -= np.uint64(text[p - 1]) * out_w
        if j + 1 < nf and since[j + 1] == t:
            j += 1
            a = found[j]
            first = firsts[j]
            lext = -1
        q = np.int64(-1)
        if p == mp + 1 and mq + 1 < limit and text[mq + length] == last:
            q = mq + 1
        elif first != a:
            if lext < 0:  # the bytes equal around the two anchors
                lext = 0
                while lext < w - 1 and first - 1 - lext >= 0:
                    x = text[a - 1 - lext]
                    if x == 0xFF or x != text[first - 1 - lext]:
                        break
                    lext += 1
                rext = 0
                while rext < length and a + rext < text.shape[0]:
                    x = text[a + rext]
                    if x == 0xFF or x != text[first + rext]:
                        break
                    rext += 1
            d = a - p
            if lext >= d and rext >= length - d and first - d < limit:
                q = first - d
            else:
                tag = _mix(hw) >> sh
                slot = _slot(wtable, tag, tag & wmask, wmask)
                while wtable[slot] != 0:
                    r = np.int64(wtable[slot] & lo_mask) - 1
                    same = True
                    for i in range(length):
                        if text[r + i] != text[p + i]:
                            same = False
                            break
                    if same:
                        q = r
                        break
                    slot = _slot(wtable, tag, (slot + one) & wmask, wmask)
                if q < 0 and p < limit:
                    wtable[slot] = (tag << sh) | np.uint64(p + 1)
                    wadded += 1
        if q >= 0:
            mp = p
            mq = q
            if p >= prefix:
                for b in range(max(hi, p), p + length):
                    mask[b] = True
                hi = p + length
    st[0], st[1], st[2] = hi, mp, mq
    st[4] += wadded
    return hw


@njit()
def window_mask(text, min_length, prefix):  # type: ignore[no-untyped-def]
    """The marks of :func:`repeat_mask` without a suffix array: one walk over the windows in
    text order (``len(text) < 2**32 - 1``), finding for each window an earlier equal one.

    Each window has a winnowing anchor (as in :func:`anchors`: the ``k``-gram of least key
    among its ``w = max(1, min_length // 3)``, ``k = min_length - w + 1``); equal windows
    have equal anchors at the same offset. A table of anchors keeps the first anchor seen of
    each hash (32 bits of it). A window whose anchor is not that first one compares with the
    window at the same offset from it, through the bytes equal left and right of the two
    anchors (compared once per anchor). A window not found that way is looked up in a table of
    windows (32 bits of its rolling hash and its position, bytes compared), and goes in it
    when its anchor is not the first: a window of a first anchor is found through the anchor
    table by every later equal window. Inside a repeat no lookup is needed: when window
    ``p - 1`` equals the earlier window ``q``, window ``p`` equals window ``q + 1`` exactly
    when their last bytes are equal. So the tables see one anchor per ``w / 2`` windows or so,
    and the windows of anchors that recur in another context. With ``prefix > 0`` only
    windows starting before it are copies and only windows at or after it are marked. Both
    tables are at most half full; the walk goes in chunks of :data:`_CHUNK` windows
    (:func:`_firsts`, :func:`_windows`), the tables grown before each."""
    n = text.shape[0]
    length = min_length
    mask = np.zeros(n, np.bool_)
    limit = n if prefix <= 0 else min(prefix, n)  # an earlier copy starts before it
    w = max(1, length // 3)
    k = length - w + 1
    base = np.uint64(_B)
    top = _power(base, k - 1)  # the weight of the byte leaving a k-gram
    asize = 1024
    while asize < 4 * (n // (w + 1)):  # half full at the anchors of a text without repeats
        asize *= 2
    atable = np.zeros(asize, np.uint64)
    wtable = np.zeros(1024, np.uint64)
    # hi (bytes before it are marked), window st[1] equals the earlier window st[2], the
    # entries of the two tables
    st = np.array([0, -2, -2, 0, 0], np.int64)
    nw, keys, vals, suf, pre, found, since = _chunk_buffers(w)
    firsts = np.empty(nw, np.int64)
    s = 0
    while s < n:
        e = s
        while e < n and text[e] != 0xFF:
            e += 1
        if e - s >= length:
            wins = e - s - length + 1
            hk = _hash(text, s, s + k - 1)  # of the k-gram at s, but its last byte
            hw = _hash(text, s, s + length - 1)  # of the window at s, but its last byte
            g = s  # next k-gram to hash
            have = 0  # k-grams in keys[:have]
            done = 0
            while done < wins:
                m = min(nw, wins - done)  # windows of this chunk
                hk, g, have = _chunk_keys(text, k, w, m, hk, g, have, top, keys, vals, suf, pre)
                atable = _grown(atable, st[3], m)
                wtable = _grown(wtable, st[4], m)
                nf = _chunk_anchors(m, w, suf, pre, found, since)
                added = _firsts(nf, vals, g - have, atable, found, firsts)
                st[3] += added
                hw = _windows(
                    text,
                    length,
                    w,
                    limit,
                    prefix,
                    s,
                    s + done,
                    m,
                    found,
                    since,
                    firsts,
                    nf,
                    hw,
                    wtable,
                    mask,
                    st,
                )
                done += m
        s = e + 1
    for i in range(1, n):
        if (text[i] & 0xC0) == 0x80:
            mask[i] = mask[i - 1]  # a continuation byte follows its character's lead byte
    return mask
