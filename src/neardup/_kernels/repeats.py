"""numpy reference of the repeats kernels (:mod:`neardup.corpus._repeats`): the oracle of the
native module ``neardup._native.repeats``, with the same names, bits and errors.

It takes the common prefixes from Kasai's LCP array (``pydivsufsort.kasai``) cut at the next
separator, where the native kernel compares the bytes itself; ``window_mask`` is the same marks
over divsufsort's suffix array of the prefilter's regions, where the native kernel uses a hash
table of windows.
"""

from __future__ import annotations

import itertools

import numpy as np
import numpy.typing as npt

from neardup.errors import ConfigError

__all__ = [
    "anchors",
    "cut",
    "gather",
    "regions",
    "repeat_mask",
    "scatter",
    "scatter_counts",
    "shared_regions",
    "window_cut",
    "window_cut_in_place",
    "window_mask",
]


# Shared with the front (neardup.corpus._repeats): not a kernel, so outside __all__.
def winnow_width(min_length: int) -> int:
    """``w``, the k-grams per window of the prefilter (``k = min_length - w + 1``): a third of
    the window, so anchors are about ``2 / (w + 1)`` of the bytes and a region about
    ``1.4 * min_length`` bytes around each repeated anchor."""
    return max(2, min_length // 3)


U8 = npt.NDArray[np.uint8]
B = npt.NDArray[np.bool_]
SEP = 0xFF
#: :func:`window_mask`'s suffix array covers the whole text when the candidate regions hold
#: more than this share of it.
PREFILTER_SHARE = 0.9


def _check(min_length: int, prefix: int) -> None:
    if min_length < 1:
        raise ConfigError(f"min_length must be at least 1 byte, got {min_length}")
    if prefix < 0:
        raise ConfigError(f"prefix must be 0 (none) or a byte position, got {prefix}")


def repeat_mask(text: U8, sa: npt.NDArray[np.integer], min_length: int, prefix: int) -> B:
    """See :func:`neardup.corpus._repeats.repeat_mask`."""
    _check(min_length, prefix)
    n = len(text)
    mask = np.zeros(n, dtype=bool)
    if n < 2:
        return mask
    from neardup._extras import require_extra

    pds = require_extra("substrings", "pydivsufsort")
    arr = np.ascontiguousarray(text) if text.flags.writeable else text.copy()
    lcp = pds.kasai(arr, sa)
    sa = sa.astype(np.int64)
    idx = np.arange(n, dtype=np.int64)
    next_sep = np.minimum.accumulate(np.where(text == SEP, idx, n)[::-1])[::-1]
    room = next_sep - idx
    common = np.minimum(lcp[:-1].astype(np.int64), np.minimum(room[sa[:-1]], room[sa[1:]]))
    link = common >= min_length
    if not link.any():
        return mask
    left = np.concatenate([[False], link])
    right = np.concatenate([link, [False]])
    in_run = left | right
    members = sa[in_run]
    run_of = np.cumsum(~left[in_run]) - 1
    n_runs = int(run_of[-1]) + 1
    if prefix > 0:
        has_ref = np.zeros(n_runs, dtype=bool)
        np.logical_or.at(has_ref, run_of, members < prefix)
        marked = members[(members >= prefix) & has_ref[run_of]]
    else:
        first = np.full(n_runs, n, dtype=np.int64)
        np.minimum.at(first, run_of, members)
        marked = members[members != first[run_of]]
    delta = np.zeros(n + 1, dtype=np.int64)
    np.add.at(delta, marked, 1)
    np.add.at(delta, marked + min_length, -1)
    mask = np.cumsum(delta[:-1]) > 0
    mask[:prefix] = False
    # a continuation byte (10xxxxxx) follows the lead byte of its character
    lead = (text & 0xC0) != 0x80
    lead[0] = True
    at = np.maximum.accumulate(np.where(lead, idx, 0))
    out: B = mask[at]
    return out


def _sa_marks(text: U8, min_length: int, prefix: int) -> B:
    """:func:`repeat_mask` over divsufsort's suffix array of ``text``."""
    from neardup._extras import require_extra

    pds = require_extra("substrings", "pydivsufsort")
    arr = np.ascontiguousarray(text) if text.flags.writeable else text.copy()
    return repeat_mask(text, pds.divsufsort(arr), min_length, prefix)


def window_mask(text: U8, min_length: int, prefix: int) -> B:
    """See :func:`neardup.corpus._repeats.window_mask`: here from the suffix array of the
    candidate regions (joined by separators, in text order: the same marks as the whole
    text's), or of the whole text when they cover most of it or one straddles ``prefix``."""
    _check(min_length, prefix)
    n = len(text)
    if n <= min_length:  # one window at most, and no earlier copy of it
        return np.zeros(n, dtype=bool)
    if min_length < 2 or n >= 2**32:
        return _sa_marks(text, min_length, prefix)
    k = min_length - winnow_width(min_length) + 1
    starts, ends = regions(text, *anchors(text, min_length, k), min_length, k)
    first = int(np.searchsorted(starts, prefix)) if prefix > 0 else 0  # first region after it
    straddles = first > 0 and prefix > 0 and int(ends[first - 1]) > prefix
    if not straddles and first == len(starts):  # no repeated window at or after the prefix
        return np.zeros(n, dtype=bool)
    covered = int((ends - starts).sum()) + len(starts)
    if straddles or covered >= PREFILTER_SHARE * n:
        return _sa_marks(text, min_length, prefix)
    sub, at = gather(text, starts, ends)
    sub_prefix = int(at[first]) if prefix > 0 else 0
    return scatter(_sa_marks(sub, min_length, sub_prefix), at, starts, ends, n)


# --- the prefilter (see :func:`neardup.corpus._repeats.candidate_regions`) -------------------

_B = np.uint64(0x100000001B3)
_HI = np.uint64(0xFFFFFFFF00000000)
_LO = np.uint64(0xFFFFFFFF)
I64 = npt.NDArray[np.int64]
U64 = npt.NDArray[np.uint64]


def _mix(h: U64) -> U64:
    h = h ^ (h >> np.uint64(31))
    h = h * np.uint64(0x9E3779B97F4A7C15)
    out: U64 = h ^ (h >> np.uint64(29))
    return out


def _segments(text: U8) -> tuple[I64, I64]:
    """Starts and ends of the maximal runs without a separator."""
    sep = np.flatnonzero(text == SEP)
    starts = np.concatenate([[0], sep + 1]).astype(np.int64)
    ends = np.concatenate([sep, [len(text)]]).astype(np.int64)
    return starts, ends


def anchors(text: U8, min_length: int, k: int) -> tuple[I64, U64, I64, I64]:
    """See :func:`neardup.corpus._repeats.candidate_regions`: the winnowing anchors
    ``(positions, hashes, segment starts, segment ends)`` in text order, from whole-array
    sliding minima."""
    from numpy.lib.stride_tricks import sliding_window_view

    w = min_length - k + 1
    out: list[tuple[I64, U64, I64, I64]] = []
    for s, e in zip(*_segments(text), strict=True):
        if e - s < min_length:
            continue
        seg = text[s:e].astype(np.uint64)
        grams = sliding_window_view(seg, k)
        h = np.zeros(len(grams), np.uint64)
        for j in range(k):  # the polynomial hash of each k-gram, mod 2**64
            h = h * _B + grams[:, j]
        v = _mix(h)
        keys = (v & _HI) | np.arange(s, s + len(v), dtype=np.uint64)
        least = sliding_window_view(keys, w).min(axis=1)
        a = np.unique((least & _LO).astype(np.int64))
        out.append((a, v[a - s], np.full(len(a), s, np.int64), np.full(len(a), e, np.int64)))
    if not out:
        z = np.zeros(0, np.int64)
        return z, np.zeros(0, np.uint64), z.copy(), z.copy()
    return (
        np.concatenate([o[0] for o in out]),
        np.concatenate([o[1] for o in out]),
        np.concatenate([o[2] for o in out]),
        np.concatenate([o[3] for o in out]),
    )


def regions(
    text: U8, pos: I64, hs: U64, seg_lo: I64, seg_hi: I64, min_length: int, k: int
) -> tuple[I64, I64]:
    """See :func:`neardup.corpus._repeats.candidate_regions`: the regions of the anchors
    whose hash another anchor shares."""
    _, inverse, counts = np.unique(hs, return_inverse=True, return_counts=True)
    rep = counts[inverse] >= 2
    return _regions(text, pos[rep], seg_lo[rep], seg_hi[rep], min_length, k)


def shared_regions(
    text: U8, pos: I64, hs: U64, other: U64, min_length: int, k: int
) -> tuple[I64, I64]:
    """See :func:`neardup.corpus._repeats.shared_regions`: the regions of the anchors whose
    hash is among ``other``, each in the segment that holds it."""
    a = pos[np.isin(hs, other)]
    seps = np.flatnonzero(text == SEP)
    if not len(seps):
        return _regions(text, a, np.zeros(len(a), np.int64), np.full(len(a), len(text)),
                        min_length, k)  # fmt: skip
    i = np.searchsorted(seps, a)  # the first separator after each anchor
    s = np.where(i > 0, seps[np.maximum(i - 1, 0)] + 1, 0)
    e = np.where(i < len(seps), seps[np.minimum(i, len(seps) - 1)], len(text))
    return _regions(text, a, s, e, min_length, k)


def _regions(text: U8, a: I64, s: I64, e: I64, min_length: int, k: int) -> tuple[I64, I64]:
    """The regions of the anchors ``a`` (in text order) in their segments ``[s, e)``."""
    if not len(a):
        z = np.zeros(0, np.int64)
        return z, z.copy()
    lo = np.maximum(s, a - (min_length - k))
    hi = np.minimum(e, a + min_length)
    # whole characters: back to the lead byte, on past the continuation bytes (0b10xxxxxx)
    n = len(text)
    idx = np.arange(n, dtype=np.int64)
    cont = (text & 0xC0) == 0x80
    prev_lead = np.maximum.accumulate(np.where(cont, -1, idx))
    next_lead = np.minimum.accumulate(np.where(cont, n, idx)[::-1])[::-1]
    lo = np.where(cont[lo], np.maximum(s, prev_lead[lo]), lo)
    at_hi = np.minimum(hi, n - 1)
    hi = np.where((hi < e) & cont[at_hi], np.minimum(e, next_lead[at_hi]), hi)
    # merge: a region starts where no earlier interval reaches it
    reach = np.maximum.accumulate(hi)
    new = np.ones(len(lo), dtype=bool)
    new[1:] = lo[1:] > reach[:-1]
    firsts = np.flatnonzero(new)
    ends = np.maximum.reduceat(hi, firsts)
    return lo[firsts].astype(np.int64), ends.astype(np.int64)


def gather(text: U8, starts: I64, ends: I64) -> tuple[U8, I64]:
    """See :func:`neardup.corpus._repeats.gather`."""
    lengths = ends - starts + 1
    at = (np.cumsum(lengths) - lengths + 1).astype(np.int64)
    parts: list[U8] = []
    for a, b in zip(starts.tolist(), ends.tolist(), strict=True):
        parts += [np.array([SEP], np.uint8), text[a:b]]
    sub = np.concatenate(parts) if parts else np.zeros(0, np.uint8)
    return sub, at


def scatter_counts(sub_mask: B, at: I64, starts: I64, ends: I64, n: int) -> tuple[B, I64]:
    """See :func:`neardup.corpus._repeats.scatter_counts`."""
    mask = np.zeros(n, dtype=bool)
    counts = np.zeros(len(starts), dtype=np.int64)
    for j, (o, a, b) in enumerate(zip(at.tolist(), starts.tolist(), ends.tolist(), strict=True)):
        mask[a:b] = sub_mask[o : o + b - a]
        counts[j] = np.count_nonzero(mask[a:b])
    return mask, counts


def scatter(sub_mask: B, at: I64, starts: I64, ends: I64, n: int) -> B:
    """See :func:`neardup.corpus._repeats.scatter`."""
    return scatter_counts(sub_mask, at, starts, ends, n)[0]


def _check_cut(n_text: int, offsets: I64, at: I64, n_marks: int) -> None:
    """The documents lie in the text and their places ``at`` in the join's ``n_marks``."""
    n = len(at)
    if len(offsets) != n + 1:
        raise ValueError(f"offsets and at (plus one) differ in length ({len(offsets)} and {n + 1})")
    o, a = offsets.tolist(), at.tolist()
    for lo, hi in itertools.pairwise(o):
        if lo < 0 or hi < lo or hi > n_text:
            raise ValueError(f"byte range [{lo}, {hi}) is outside the buffer of {n_text} bytes")
    for j in range(n):
        bad = a[j] + o[j + 1] - o[j] > n_marks if a[j] >= 0 else a[j] not in (-1, -2)
        if bad:
            raise ValueError(
                f"document {j} has marks at {a[j]} of {n_marks} (-1: keep it, -2: drop "
                "it); pass the join's own positions"
            )


def window_cut(text: U8, offsets: I64, joined: U8, at: I64, min_length: int) -> tuple[U8, I64, I64]:
    """See :func:`neardup.corpus._repeats.window_cut`."""
    _check(min_length, 0)
    _check_cut(len(text), offsets, at, len(joined))
    if len(joined) >= 2**32 - 1:
        raise ValueError(
            f"window_cut takes joins below 2**32 - 1 bytes, got {len(joined)}; use cut with "
            "the join's repeat_mask"
        )
    return cut(text, offsets, window_mask(joined, min_length, 0), at)


def window_cut_in_place(text: U8, offsets: I64, at: I64, min_length: int) -> tuple[I64, I64]:
    """See :func:`neardup.corpus._repeats.window_cut_in_place`."""
    _check(min_length, 0)
    _check_cut(len(text), offsets, at, len(text))
    if len(text) >= 2**32 - 1:
        raise ValueError(
            f"window_cut_in_place takes texts below 2**32 - 1 bytes, got {len(text)}; use cut "
            "with the text's repeat_mask"
        )
    kept, kept_offsets, removed = cut(text, offsets, window_mask(text, min_length, 0), at)
    text[: len(kept)] = kept  # (kept is a new array: no overlap)
    return kept_offsets, removed


def cut(text: U8, offsets: I64, sub_mask: B, at: I64) -> tuple[U8, I64, I64]:
    """See :func:`neardup.corpus._repeats.cut`."""
    n = len(at)
    _check_cut(len(text), offsets, at, len(sub_mask))
    o, a = offsets.tolist(), at.tolist()
    parts: list[U8] = []
    removed = np.zeros(n, dtype=np.int64)
    kept_offsets = np.zeros(n + 1, dtype=np.int64)
    for j in range(n):
        doc = text[o[j] : o[j + 1]]
        if a[j] == -2:
            doc = doc[:0]
        elif a[j] >= 0:
            doc = doc[~sub_mask[a[j] : a[j] + len(doc)]]
        parts.append(doc)
        removed[j] = o[j + 1] - o[j] - len(doc)
        kept_offsets[j + 1] = kept_offsets[j] + len(doc)
    kept = np.concatenate(parts) if parts else np.zeros(0, np.uint8)
    return kept.astype(np.uint8, copy=False), kept_offsets, removed
