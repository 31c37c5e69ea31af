"""Reference of the JSONL scanner (``neardup._native.jsonl``): it takes no line, so every
non-blank line goes to ``json.loads`` (the real reference), which :mod:`neardup.packed` calls
for it. Same names, arguments, result types and errors as the native scanner; its results
differ only in the lines the native one takes itself, which read exactly as ``json.loads``
reads them (tests/kernels/test_parity_jsonl.py)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from neardup._kernels._checks import check_ranges

__all__ = ["line_bounds", "row_ids", "scan_lines", "scan_lines_spans"]

U8 = npt.NDArray[np.uint8]
I64 = npt.NDArray[np.int64]

SLOW = 1
BLANK = 2


def line_bounds(data: U8, limit: int) -> tuple[I64, I64]:
    """Starts and ends (newline excluded) of the complete lines of ``data[:limit]``."""
    nl = np.flatnonzero(data[:limit] == 10)
    starts = np.concatenate(([0], nl[:-1] + 1)).astype(np.int64) if len(nl) else nl
    return starts.astype(np.int64), nl.astype(np.int64)


def row_ids(ids: U8, id_offsets: I64, id_kind: U8, rows: I64, first_line: int) -> list[str]:
    """The ids of rows ``rows`` of a scanned chunk (what ``scan_lines`` gave): row ``r``'s id
    ``ids[id_offsets[r]:id_offsets[r + 1]]`` decoded as UTF-8 (``surrogatepass``, as the
    scanner writes a lone surrogate), or its line number ``first_line + r + 1`` as a string
    when it has none (``id_kind[r] == 0``).

    Raises:
        ValueError: offsets that do not fit the kinds or the buffer, or a row out of range.
        UnicodeDecodeError: an id that is not UTF-8.
    """
    if len(id_offsets) != len(id_kind) + 1:
        raise ValueError(
            "id_offsets must have one entry more than id_kind; pass scan_lines' arrays"
        )
    r = np.asarray(rows, dtype=np.int64)
    if len(r) and (int(r.min()) < 0 or int(r.max()) >= len(id_kind)):
        raise ValueError("rows must be rows of id_kind (0 <= row < its length)")
    lo, hi = id_offsets[r], id_offsets[r + 1]
    if len(r) and not ((lo >= 0) & (lo <= hi) & (hi <= len(ids))).all():
        raise ValueError("id_offsets must rise within the ids buffer; pass scan_lines' arrays")
    raw = ids.tobytes()
    out = []
    for k, a, b in zip(r.tolist(), lo.tolist(), hi.tolist(), strict=True):
        if id_kind[k] == 0:
            out.append(str(first_line + k + 1))
        else:
            out.append(raw[a:b].decode("utf-8", "surrogatepass"))
    return out


def scan_lines(
    data: U8, starts: I64, ends: I64, id_key: U8, text_key: U8, texts: U8, ids: U8
) -> tuple[npt.NDArray[np.uint8], I64, I64, npt.NDArray[np.uint8]]:
    """Scan lines ``data[starts[k]:ends[k]]`` (no newline) of one top-level object each.

    ``texts`` and ``ids`` must each hold at least as many bytes as the lines together.
    Returns ``(status, text_offsets, id_offsets, id_kind)``: per line a status (``OK`` 0,
    ``SLOW`` 1, ``BLANK`` 2 or ``NO_TEXT`` 3), the unescaped text field of an ``OK`` line in
    ``texts[text_offsets[k]:text_offsets[k + 1]]`` and its id field (an unescaped string, or
    an integer's digits; kind 1 and 2, 0 when missing) in ``ids[...]``. This twin takes no
    line: every line is ``SLOW``, except blank ones (only ASCII whitespace, as
    ``bytes.strip``).

    Raises:
        ValueError: a line is not a range of ``data``, or a buffer is too short.
    """
    check_ranges(len(data), starts, ends)
    need = int(np.sum(ends - starts))
    for name, buf in (("texts", texts), ("ids", ids)):
        if len(buf) < need:
            raise ValueError(
                f"the {name} buffer holds {len(buf)} bytes, fewer than the {need} bytes of the "
                "lines; pass buffers at least as long as the lines together"
            )
    raw = data.tobytes()
    status = np.array(
        [BLANK if not raw[a:b].strip() else SLOW for a, b in zip(starts, ends, strict=True)],
        dtype=np.uint8,
    )
    zeros = np.zeros(len(starts) + 1, np.int64)
    return status, zeros, zeros.copy(), np.zeros(len(starts), np.uint8)


def scan_lines_spans(
    data: U8, starts: I64, ends: I64, id_key: U8, text_key: U8, texts: U8, ids: U8
) -> tuple[npt.NDArray[np.uint8], I64, I64, npt.NDArray[np.uint8], I64]:
    """:func:`scan_lines`, plus ``text_spans``: for each ``OK`` line where its text value's
    JSON string lies in ``data`` (``[k, 0]``: its opening quote, ``[k, 1]``: just after its
    closing quote; the line's only top-level text key), ``-1`` for every other line (here:
    every line)."""
    status, toff, ioff, kind = scan_lines(data, starts, ends, id_key, text_key, texts, ids)
    return status, toff, ioff, kind, np.full((len(starts), 2), -1, np.int64)
