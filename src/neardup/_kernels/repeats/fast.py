"""numba kernel of :func:`neardup._kernels.repeats.repeat_mask`; the same marks as the reference.

Kasai's LCP algorithm, cut short: in text order, the common prefix of each suffix with its
successor in the suffix array is compared only up to ``min_length`` bytes and never past a
``0xFF`` separator, starting from the previous one minus one (both cuts keep Kasai's
``h(i + 1) >= h(i) - 1``, so the comparisons stay linear), and only a link bit per adjacent
pair is kept (no LCP array, no distance-to-separator array). One walk over the suffix array
then marks the runs of links through a difference array, and a last sequential pass turns it
into the mask, each continuation byte taking its character's lead-byte decision.
"""

from __future__ import annotations

import numpy as np

from neardup._kernels.cache import njit


@njit()
def _links(text, sa, min_length):  # type: ignore[no-untyped-def]
    """``link[r]``: suffixes ``sa[r]`` and ``sa[r + 1]`` share ``min_length`` bytes before any
    separator (capped Kasai)."""
    n = text.shape[0]
    rank = np.empty(n, np.int32)
    for r in range(n):
        rank[sa[r]] = r
    link = np.zeros(n, np.bool_)
    h = 0
    for i in range(n):
        r = rank[i]
        if r == n - 1:
            h = 0
            continue
        j = sa[r + 1]
        while h < min_length and i + h < n and j + h < n:
            c = text[i + h]
            if c != text[j + h] or c == 0xFF:
                break
            h += 1
        if h >= min_length:
            link[r] = True
        if h > 0:
            h -= 1
    return link


@njit()
def _close(sa, lo, hi, prefix, min_length, delta):  # type: ignore[no-untyped-def]
    """Mark the run sa[lo..hi] (inclusive)."""
    if prefix > 0:
        ref = False
        for k in range(lo, hi + 1):
            if sa[k] < prefix:
                ref = True
                break
        if not ref:
            return
        for k in range(lo, hi + 1):
            p = sa[k]
            if p >= prefix:
                delta[p] += 1
                delta[p + min_length] -= 1
        return
    first = sa[lo]
    for k in range(lo + 1, hi + 1):
        if sa[k] < first:
            first = sa[k]
    for k in range(lo, hi + 1):
        p = sa[k]
        if p != first:
            delta[p] += 1
            delta[p + min_length] -= 1


@njit()
def repeat_mask(text, sa, min_length, prefix):  # type: ignore[no-untyped-def]
    n = text.shape[0]
    mask = np.zeros(n, np.bool_)
    if n < 2:
        return mask
    # a byte is covered by at most min_length marked windows (one starts at each position)
    link = _links(text, sa, min_length)
    delta = np.zeros(n + 1, np.int32)
    start = -1
    for i in range(n - 1):
        if link[i]:
            if start < 0:
                start = i
        elif start >= 0:
            _close(sa, start, i, prefix, min_length, delta)
            start = -1
    if start >= 0:
        _close(sa, start, n - 1, prefix, min_length, delta)
    run = 0
    for i in range(n):
        run += delta[i]
        if (text[i] & 0xC0) == 0x80 and i > 0:
            mask[i] = mask[i - 1]  # a continuation byte follows its character's lead byte
        else:
            mask[i] = run > 0 and i >= prefix
    return mask
