"""numpy reference of the text kernels: the oracle of the native ``neardup._native.text``
(same names, bits and errors), and the fallback without the compiled core.

Written independently of the compiled kernels (per-document decoding through Python's codecs,
vectorised numpy within a document), so the parity tests compare two real implementations.
Selected with ``NEARDUP_BACKEND=reference`` or when the compiled core is missing.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from neardup._kernels._checks import check_offsets, check_ranges, check_table, check_uint8

__all__ = ["fnv1a_ranges", "tokenize_words"]

#: FNV-1a 64 (Fowler, Noll, Vo; Go's ``hash/fnv.New64a``): the offset basis and the prime,
#: the one definition the text and SimHash kernels, their references and the tests use (module
#: constants, not kernels: outside ``__all__``).
FNV64_OFFSET = 0xCBF29CE484222325
FNV64_PRIME = 0x100000001B3

U8 = npt.NDArray[np.uint8]
I64 = npt.NDArray[np.int64]
U64 = npt.NDArray[np.uint64]

_MARK = 8  # tables.MARK
_IDEOGRAPH = 32  # tables.IDEOGRAPH
_FNV_OFFSET = np.uint64(FNV64_OFFSET)
_FNV_PRIME = np.uint64(FNV64_PRIME)


def tokenize_words(
    buf: U8,
    offsets: I64,
    classes: npt.NDArray[np.uint8],
    lower: npt.NDArray[np.int32],
    mask: int,
    min_bytes: int,
    do_lower: bool,
) -> tuple[U8, I64, I64, I64]:
    """Split documents into word tokens: maximal runs of code points whose class meets
    ``mask``, each Han or kana character (with the marks after it) a word of its own when
    ``mask`` holds ``tables.IDEOGRAPH``; lowercased with ``lower`` when ``do_lower``, kept if
    at least ``min_bytes`` UTF-8 bytes long, written to a new buffer one space apart within
    a document.

    Returns:
        ``(out_buf, starts, ends, doc_offsets)``: see :class:`neardup._spans.Spans`.

    Raises:
        ValueError: the offsets do not rise within ``buf``, or a table does not cover every
            code point.
        OverflowError: ``mask`` is not a ``uint8``.
        UnicodeDecodeError: a document is not UTF-8 (lone surrogates allowed).
    """
    check_offsets(len(buf), offsets)
    check_table("classes", classes)
    check_table("lower", lower)
    check_uint8(mask)
    raw = buf.tobytes()
    parts: list[bytes] = []
    starts: list[int] = []
    ends: list[int] = []
    doc_offsets = [0]
    pos = 0
    for d in range(len(offsets) - 1):
        text = raw[int(offsets[d]) : int(offsets[d + 1])].decode("utf-8", "surrogatepass")
        cps = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        cls = classes[cps] & mask
        word = cls != 0
        mapped = lower[cps].astype(np.uint32) if do_lower else cps
        # run boundaries of word characters
        edges = np.diff(np.concatenate(([False], word, [False])).astype(np.int8))
        run_starts = np.flatnonzero(edges == 1)
        run_ends = np.flatnonzero(edges == -1)
        if mask & _IDEOGRAPH:
            run_starts, run_ends = _split_ideographs(cls, run_starts, run_ends)
        mapped_text = mapped.tobytes().decode("utf-32-le", "surrogatepass")
        first = True
        for s, e in zip(run_starts.tolist(), run_ends.tolist(), strict=True):
            tok = mapped_text[s:e].encode("utf-8", "surrogatepass")
            if len(tok) < min_bytes:
                continue
            if not first:
                parts.append(b" ")
                pos += 1
            first = False
            parts.append(tok)
            starts.append(pos)
            pos += len(tok)
            ends.append(pos)
        doc_offsets.append(len(starts))
    return (
        np.frombuffer(b"".join(parts), dtype=np.uint8).copy(),
        np.asarray(starts, dtype=np.int64),
        np.asarray(ends, dtype=np.int64),
        np.asarray(doc_offsets, dtype=np.int64),
    )


def _split_ideographs(
    cls: npt.NDArray[np.integer], run_starts: I64, run_ends: I64
) -> tuple[I64, I64]:
    """Cut word runs before every ideograph, and after an ideograph (and the combining marks
    that follow it) before anything else: each Han or kana character is a word of its own."""
    n = len(cls)
    ideo = (cls & _IDEOGRAPH) != 0
    mark = ((cls & _MARK) != 0) & ~ideo
    # the character before position i: is it part of an ideograph's word (ideograph + marks)?
    group = np.zeros(n, dtype=bool)
    if n:
        # index of the last non-mark at or before each position
        idx = np.where(~mark, np.arange(n), -1)
        last = np.maximum.accumulate(idx)
        group = np.where(last >= 0, ideo[np.maximum(last, 0)], False)
    cut = np.zeros(n, dtype=bool)
    cut[1:] = ideo[1:] | (group[:-1] & ~mark[1:])
    inside = np.zeros(n, dtype=bool)
    for s, e in zip(run_starts.tolist(), run_ends.tolist(), strict=True):
        inside[s + 1 : e] = True
    extra = np.flatnonzero(cut & inside)
    starts = np.sort(np.concatenate((run_starts, extra)))
    ends = np.sort(np.concatenate((run_ends, extra)))
    return starts, ends


def fnv1a_ranges(buf: U8, starts: I64, ends: I64) -> U64:
    """FNV-1a 64 of every byte range, vectorised over the ranges one byte column at a time.

    Raises:
        ValueError: a range is not one of ``buf``.
    """
    check_ranges(len(buf), starts, ends)
    h = np.full(len(starts), _FNV_OFFSET, dtype=np.uint64)
    lengths = ends - starts
    if len(starts) == 0:
        return h
    for j in range(int(lengths.max())):
        live = np.flatnonzero(lengths > j)
        h[live] = (h[live] ^ buf[starts[live] + j].astype(np.uint64)) * _FNV_PRIME
    return h
