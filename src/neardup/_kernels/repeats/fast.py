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
