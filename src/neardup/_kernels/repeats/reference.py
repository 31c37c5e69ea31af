"""numpy reference of :func:`neardup._kernels.repeats.repeat_mask` (the kernel's oracle).

It takes the common prefixes from Kasai's LCP array (``pydivsufsort.kasai``) cut at the next
separator, where the numba kernel compares the bytes itself.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

U8 = npt.NDArray[np.uint8]
B = npt.NDArray[np.bool_]
SEP = 0xFF


def repeat_mask(text: U8, sa: npt.NDArray[np.integer], min_length: int, prefix: int) -> B:
    """See :func:`neardup._kernels.repeats.repeat_mask`."""
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
