"""Line spans of packed documents: each line's bytes and its whitespace-trimmed bytes, in one
walk over the UTF-8 buffer (numba) or with whole-buffer numpy operations (reference).

Lines end at ``\\n`` and at each document's end (a document of ``k`` newlines has ``k + 1``
lines, an empty one has one empty line). Trimming strips ASCII whitespace (tab, newline,
vertical tab, form feed, carriage return, space) from both ends.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from neardup._kernels.engine import backend_name

__all__ = ["line_spans"]

U8 = npt.NDArray[np.uint8]
I64 = npt.NDArray[np.int64]


def line_spans(buf: U8, offsets: I64) -> tuple[I64, I64, I64, I64, I64]:
    """``(starts, ends, trimmed_starts, trimmed_ends, doc)`` of every line, in document order.

    A blank line has ``trimmed_starts >= trimmed_ends``.

    Examples:
        >>> from neardup._kernels.spans import pack
        >>> p = pack(["a\\n  b \\n", "x"])
        >>> [x.tolist() for x in line_spans(p.buf, p.offsets)]
        [[0, 2, 7, 7], [1, 6, 7, 8], [0, 4, 7, 7], [1, 5, 7, 8], [0, 0, 0, 1]]
    """
    buf = np.ascontiguousarray(buf, dtype=np.uint8)
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    if backend_name() == "fast":
        from neardup._kernels.lines.fast import line_spans as fast

        n_lines = int(np.count_nonzero(buf == 10)) + len(offsets) - 1
        out: tuple[I64, I64, I64, I64, I64] = fast(buf, offsets, n_lines)
        return out
    from neardup._kernels.lines.reference import line_spans as reference

    return reference(buf, offsets)
