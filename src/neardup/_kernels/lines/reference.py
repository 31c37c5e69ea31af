"""numpy reference of :func:`neardup._kernels.lines.line_spans` (the oracle of the kernel)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

U8 = npt.NDArray[np.uint8]
I64 = npt.NDArray[np.int64]

_WS = np.zeros(256, dtype=bool)
_WS[[9, 10, 11, 12, 13, 32]] = True


def line_spans(buf: U8, offsets: I64) -> tuple[I64, I64, I64, I64, I64]:
    """See :func:`neardup._kernels.lines.line_spans`."""
    n_docs = len(offsets) - 1
    nl = np.flatnonzero(buf == 10)
    ends = np.concatenate([nl, offsets[1:]]).astype(np.int64)
    kinds = np.concatenate([np.zeros(len(nl), np.int8), np.ones(n_docs, np.int8)])
    docs = np.concatenate(
        [np.searchsorted(offsets[1:], nl, side="right"), np.arange(n_docs)]
    ).astype(np.int64)
    order = np.lexsort((kinds, ends, docs))
    ends, kinds, doc = ends[order], kinds[order], docs[order]
    starts = np.empty_like(ends)
    starts[0:1] = 0
    starts[1:] = ends[:-1] + (kinds[:-1] == 0)
    starts = np.maximum(starts, offsets[doc]) if len(doc) else starts
    n = len(buf)
    if n == 0:
        z = np.zeros(len(ends), np.int64)
        return starts, ends, z.copy(), z.copy(), doc
    idx = np.arange(n, dtype=np.int64)
    solid = ~_WS[buf]
    nxt = np.minimum.accumulate(np.where(solid, idx, n)[::-1])[::-1]
    prv = np.maximum.accumulate(np.where(solid, idx, -1))
    a = np.where(starts < n, nxt[np.minimum(starts, n - 1)], n)
    a = np.minimum(a, ends)
    b = np.where(ends > 0, prv[np.maximum(ends - 1, 0)] + 1, 0)
    blank = a >= ends
    a = np.where(blank, ends, a)
    b = np.where(blank, ends, np.maximum(b, a))
    return starts, ends, a, b, doc
