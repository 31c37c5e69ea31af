"""Repeated-span marks (the core of Lee et al.'s ExactSubstr, see
:mod:`neardup.corpus.substrings`): from a suffix array (:func:`repeat_mask`: one walk over it
comparing adjacent suffixes, native, or whole-array numpy operations over Kasai's LCP array,
reference), or from a table of winnowing anchors and a hash table of windows
(:func:`window_mask`, native; its reference is the suffix array's, over the prefilter's
regions), all with the same result.

Adjacent suffixes ``sa[i]``, ``sa[i + 1]`` are linked when their common prefix, cut at the next
``0xFF`` separator, is at least ``min_length`` bytes; maximal chains of links are runs. Every
member of a run but the earliest (or, with ``prefix > 0``, every member at or after
``prefix`` in a run that also holds a member before it) marks ``min_length`` bytes. A UTF-8
continuation byte takes the mark of its character's lead byte, so characters go whole.

The prefilter of the suffix array (:func:`candidate_regions`, :func:`gather`, :func:`scatter`;
the reference's :func:`window_mask` takes it) finds the bytes that can lie in a repeated window
at all, so that it covers only them: winnowing
(Schleimer, Wilkerson and Aiken 2003) picks in every ``min_length``-byte window the ``k``-gram
of least hash; equal windows pick the same ``k``-gram at the same offset, so every window with
an equal window elsewhere holds an anchor whose hash another anchor shares. The regions around
such anchors hold every copy of every repeated window, and marking them alone (joined by
separators, in text order) gives the same marks as marking the whole text.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from neardup._kernels.engine import kernels
from neardup._kernels.repeats import winnow_width

__all__ = [
    "candidate_regions",
    "cut",
    "gather",
    "repeat_mask",
    "scatter",
    "scatter_counts",
    "shared_anchors",
    "shared_regions",
    "window_cut",
    "window_cut_in_place",
    "window_mask",
    "winnow_width",
]

U8 = npt.NDArray[np.uint8]
I64 = npt.NDArray[np.int64]
B = npt.NDArray[np.bool_]
U64 = npt.NDArray[np.uint64]

SEP = 0xFF


def repeat_mask(
    text: U8,
    sa: npt.NDArray[np.integer],
    min_length: int,
    prefix: int,
) -> B:
    """The byte mask of the marked windows (false within ``text[:prefix]``).

    Args:
        text: Documents joined by ``0xFF`` bytes.
        sa: The suffix array of ``text``.
        min_length: Window length in bytes (at least 1).
        prefix: Bytes before it only serve as reference (see above); 0 for none.

    Raises:
        ConfigError: ``min_length`` below 1 or a negative ``prefix``.

    Examples:
        >>> t = np.frombuffer(b"abcab", np.uint8)
        >>> sa = np.array([3, 0, 4, 1, 2])
        >>> repeat_mask(t, sa, 2, 0).tolist()
        [False, False, False, True, True]
    """
    out: B = kernels("repeats").repeat_mask(text, sa, min_length, prefix)
    return out


def window_mask(text: U8, min_length: int, prefix: int) -> B:
    """The marks of :func:`repeat_mask` without a suffix array (``len(text) < 2**32 - 1``).

    A window (``min_length`` bytes without a ``0xFF``) is marked when an equal window starts
    earlier (with ``prefix > 0``: before ``prefix``, and only windows at or after it are
    marked); the native kernel finds the earlier copy through the window's winnowing anchor
    or a hash table of windows, bytes compared, the reference in the suffix array of the
    prefilter's regions (:func:`candidate_regions`).

    Raises:
        ConfigError: ``min_length`` below 1 or a negative ``prefix``.

    Examples:
        >>> t = np.frombuffer(b"abcab", np.uint8)
        >>> window_mask(t, 2, 0).tolist()
        [False, False, False, True, True]
    """
    text = np.ascontiguousarray(text, dtype=np.uint8)
    out: B = kernels("repeats").window_mask(text, min_length, prefix)
    return out


def candidate_regions(text: U8, min_length: int) -> tuple[I64, I64]:
    """``(starts, ends)``: disjoint regions of ``text`` in text order, inside its documents and
    at whole UTF-8 characters, that hold every ``min_length``-byte window (without a ``0xFF``)
    whose content occurs at another position too; bytes outside them are in no repeat.

    Requires ``len(text) < 2**32`` and ``min_length >= 2``.

    Examples:
        >>> t = np.frombuffer(b"xx the cat sat\\xffa dog; the cat sat", np.uint8)
        >>> s, e = candidate_regions(t, 8)
        >>> [t[a:b].tobytes() for a, b in zip(s, e)]
        [b'x the cat sat', b'; the cat sat']
    """
    text = np.ascontiguousarray(text, dtype=np.uint8)
    k = min_length - winnow_width(min_length) + 1
    kern = kernels("repeats")
    pos, hs, lo, hi = kern.anchors(text, min_length, k)
    out: tuple[I64, I64] = kern.regions(text, pos, hs, lo, hi, min_length, k)
    return out


def shared_anchors(text: U8, min_length: int) -> tuple[I64, U64]:
    """``(positions, hashes)`` of the winnowing anchors of ``text`` (as
    :func:`candidate_regions` picks them), for :func:`shared_regions`; ``len(text) < 2**32``,
    ``min_length >= 2``."""
    text = np.ascontiguousarray(text, dtype=np.uint8)
    k = min_length - winnow_width(min_length) + 1
    pos, hs, _, _ = kernels("repeats").anchors(text, min_length, k)
    return pos, hs


def shared_regions(text: U8, pos: I64, hs: U64, other: U64, min_length: int) -> tuple[I64, I64]:
    """``(starts, ends)``: the regions of ``text`` (as :func:`candidate_regions` draws them)
    around its anchors ``(pos, hs)`` (:func:`shared_anchors`) whose hash is among ``other``,
    another text's anchor hashes. Every window of ``text`` with an equal window in the other
    text lies in them (the two hold equal anchors at the same offset), and so the regions of
    both texts, each around the anchors the other shares, hold every window the two share.

    Examples:
        >>> a = np.frombuffer(b"xx the cat sat\\xffa dog", np.uint8)
        >>> b = np.frombuffer(b"then the cat sat down", np.uint8)
        >>> pa, ha = shared_anchors(a, 8)
        >>> pb, hb = shared_anchors(b, 8)
        >>> s, e = shared_regions(a, pa, ha, hb, 8)
        >>> [a[x:y].tobytes() for x, y in zip(s, e)]
        [b'x the cat sat']
    """
    k = min_length - winnow_width(min_length) + 1
    out: tuple[I64, I64] = kernels("repeats").shared_regions(text, pos, hs, other, min_length, k)
    return out


def gather(text: U8, starts: I64, ends: I64) -> tuple[U8, I64]:
    """The regions joined, each after a ``0xFF`` separator, and where each starts in the join."""
    out: tuple[U8, I64] = kernels("repeats").gather(text, starts, ends)
    return out


def scatter(sub_mask: B, at: I64, starts: I64, ends: I64, n: int) -> B:
    """A mask over the regions' join (:func:`gather`) put back over the ``n``-byte text (false
    outside the regions)."""
    out: B = kernels("repeats").scatter(sub_mask, at, starts, ends, n)
    return out


def scatter_counts(sub_mask: B, at: I64, starts: I64, ends: I64, n: int) -> tuple[B, I64]:
    """:func:`scatter`, and how many bytes of each region are marked."""
    out: tuple[B, I64] = kernels("repeats").scatter_counts(sub_mask, at, starts, ends, n)
    return out


def cut(text: U8, offsets: I64, sub_mask: B, at: I64) -> tuple[U8, I64, I64]:
    """Each document's kept bytes, packed again, straight from a join's marks (no mask of the
    text's size in between).

    Args:
        text / offsets: The packed documents (document ``j`` is
            ``text[offsets[j] : offsets[j + 1]]``).
        sub_mask: The marks of a join of some of them (:func:`gather`, :func:`window_mask`).
        at: Per document: where its marks start in ``sub_mask``, ``-1`` to keep it whole or
            ``-2`` to drop it whole.

    Returns:
        ``(kept, kept_offsets, removed)``: document ``j``'s unmarked bytes are
        ``kept[kept_offsets[j] : kept_offsets[j + 1]]``; it lost ``removed[j]`` bytes.

    Examples:
        >>> t = np.frombuffer(b"abcdefgh", np.uint8)
        >>> marks = np.array([False, True, True, False])
        >>> kept, off, removed = cut(t, np.array([0, 2, 5, 8]), marks, np.array([-1, 1, -2]))
        >>> kept.tobytes(), off.tolist(), removed.tolist()
        (b'abe', [0, 2, 3, 3], [0, 2, 3])
    """
    out: tuple[U8, I64, I64] = kernels("repeats").cut(text, offsets, sub_mask, at)
    return out


def window_cut(text: U8, offsets: I64, joined: U8, at: I64, min_length: int) -> tuple[U8, I64, I64]:
    """:func:`cut` of the marks of :func:`window_mask` over ``joined`` (no reference prefix),
    in one call: the native kernel keeps the marks as runs, so no mask of the join's size is
    made (``len(joined) < 2**32 - 1``).

    Args:
        text / offsets: The packed documents (document ``j`` is
            ``text[offsets[j] : offsets[j + 1]]``).
        joined: A join of some of them (:func:`gather`).
        at: Per document: where it starts in ``joined``, ``-1`` to keep it whole or ``-2`` to
            drop it whole.
        min_length: Window length in bytes (at least 1).

    Returns:
        ``(kept, kept_offsets, removed)``, as :func:`cut`.

    Raises:
        ConfigError: ``min_length`` below 1.

    Examples:
        >>> t = np.frombuffer(b"the cat satthe cat sat!", np.uint8)
        >>> offsets = np.array([0, 11, 23])
        >>> joined, at = gather(t, offsets[:-1], offsets[1:])
        >>> kept, off, removed = window_cut(t, offsets, joined, at, 8)
        >>> kept.tobytes(), off.tolist(), removed.tolist()
        (b'the cat sat!', [0, 11, 12], [0, 11])
    """
    joined = np.ascontiguousarray(joined, dtype=np.uint8)
    out: tuple[U8, I64, I64] = kernels("repeats").window_cut(text, offsets, joined, at, min_length)
    return out


def window_cut_in_place(text: U8, offsets: I64, at: I64, min_length: int) -> tuple[U8, I64, I64]:
    """:func:`window_cut` of ``text`` against itself (``joined`` is ``text``), the kept bytes
    written into ``text`` from its start: no buffer of their size (``len(text) < 2**32 - 1``).
    ``text`` is overwritten; the documents must follow each other (``offsets`` never
    decreases).

    Args:
        text: The packed documents, a writable contiguous ``uint8`` array (changed).
        offsets: Document ``j`` is ``text[offsets[j] : offsets[j + 1]]``.
        at: Per document: where it starts in ``text`` (its own marks: ``offsets[j]``), ``-1``
            to keep it whole or ``-2`` to drop it whole.
        min_length: Window length in bytes (at least 1).

    Returns:
        ``(kept, kept_offsets, removed)``, as :func:`window_cut`; ``kept`` is a view of the
        start of ``text``.

    Raises:
        ConfigError: ``min_length`` below 1.

    Examples:
        >>> t = np.frombuffer(b"the cat satthe cat sat!", np.uint8).copy()
        >>> offsets = np.array([0, 11, 23])
        >>> kept, off, removed = window_cut_in_place(t, offsets, offsets[:-1], 8)
        >>> kept.tobytes(), off.tolist(), removed.tolist()
        (b'the cat sat!', [0, 11, 12], [0, 11])
    """
    kept_offsets, removed = kernels("repeats").window_cut_in_place(text, offsets, at, min_length)
    return text[: int(kept_offsets[-1])], kept_offsets, removed
