"""numba kernel of :func:`neardup._kernels.repeats.repeat_mask`; the same marks as the reference."""

from __future__ import annotations

import numpy as np

from neardup._kernels.cache import njit


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
def repeat_mask(text, sa, lcp, min_length, prefix):  # type: ignore[no-untyped-def]
    n = text.shape[0]
    mask = np.zeros(n, np.bool_)
    if n < 2:
        return mask
    next_sep = np.empty(n, np.int64)
    nxt = n
    for i in range(n - 1, -1, -1):
        if text[i] == 0xFF:
            nxt = i
        next_sep[i] = nxt
    delta = np.zeros(n + 1, np.int64)
    start = -1
    for i in range(n - 1):
        a, b = sa[i], sa[i + 1]
        c = lcp[i]
        ra, rb = next_sep[a] - a, next_sep[b] - b
        if ra < c:
            c = ra
        if rb < c:
            c = rb
        if c >= min_length:
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
        mask[i] = run > 0 and i >= prefix
    return mask
