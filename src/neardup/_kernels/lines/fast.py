"""numba kernel of :func:`neardup._kernels.lines.line_spans`; bit-identical to the reference."""

from __future__ import annotations

import numpy as np

from neardup._kernels.cache import njit


@njit()
def _space(c):  # type: ignore[no-untyped-def]
    return c == 32 or (9 <= c <= 13)


@njit()
def line_spans(buf, offsets, n_lines):  # type: ignore[no-untyped-def]
    starts = np.empty(n_lines, np.int64)
    ends = np.empty(n_lines, np.int64)
    tstarts = np.empty(n_lines, np.int64)
    tends = np.empty(n_lines, np.int64)
    doc = np.empty(n_lines, np.int64)
    k = 0
    for d in range(len(offsets) - 1):
        s = offsets[d]
        e_doc = offsets[d + 1]
        i = s
        while True:
            e = i
            while e < e_doc and buf[e] != 10:
                e += 1
            a = i
            while a < e and _space(buf[a]):
                a += 1
            b = e
            while b > a and _space(buf[b - 1]):
                b -= 1
            if a == e:  # blank: the reference's trimmed span is empty at the line's end
                a, b = e, e
            starts[k], ends[k], tstarts[k], tends[k], doc[k] = i, e, a, b, d
            k += 1
            if e >= e_doc:
                break
            i = e + 1
    return starts, ends, tstarts, tends, doc
