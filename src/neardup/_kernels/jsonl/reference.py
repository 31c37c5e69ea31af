"""Reference of :mod:`neardup._kernels.jsonl.fast`: it takes no line, so every non-blank line
goes to ``json.loads`` (the real reference), which :mod:`neardup.packed` calls for it."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

U8 = npt.NDArray[np.uint8]
I64 = npt.NDArray[np.int64]

SLOW = 1
BLANK = 2


def line_bounds(data: U8, limit: int) -> tuple[I64, I64]:
    """Starts and ends (newline excluded) of the complete lines of ``data[:limit]``."""
    nl = np.flatnonzero(data[:limit] == 10)
    starts = np.concatenate(([0], nl[:-1] + 1)).astype(np.int64) if len(nl) else nl
    return starts.astype(np.int64), nl.astype(np.int64)


def scan_lines(
    data: U8, starts: I64, ends: I64, id_key: U8, text_key: U8, texts: U8, ids: U8
) -> tuple[npt.NDArray[np.uint8], I64, I64, npt.NDArray[np.uint8]]:
    """Every line ``SLOW``, except blank ones (only ASCII whitespace, as ``bytes.strip``)."""
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
    """:func:`scan_lines`, and no text span (``-1``): no line is ``OK``."""
    status, toff, ioff, kind = scan_lines(data, starts, ends, id_key, text_key, texts, ids)
    return status, toff, ioff, kind, np.full((len(starts), 2), -1, np.int64)
