"""Repeated-span marks from a suffix array (the core of Lee et al.'s ExactSubstr, see
:mod:`neardup.corpus.substrings`): one walk over the suffix array comparing adjacent suffixes
(numba), or whole-array numpy operations over Kasai's LCP array (reference), with the same
result.

Adjacent suffixes ``sa[i]``, ``sa[i + 1]`` are linked when their common prefix, cut at the next
``0xFF`` separator, is at least ``min_length`` bytes; maximal chains of links are runs. Every
member of a run but the earliest (or, with ``prefix > 0``, every member at or after
``prefix`` in a run that also holds a member before it) marks ``min_length`` bytes. A UTF-8
continuation byte takes the mark of its character's lead byte, so characters go whole.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from neardup._kernels.engine import backend_name

__all__ = ["repeat_mask"]

U8 = npt.NDArray[np.uint8]
I64 = npt.NDArray[np.int64]
B = npt.NDArray[np.bool_]

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
        min_length: Window length in bytes.
        prefix: Bytes before it only serve as reference (see above); 0 for none.

    Examples:
        >>> t = np.frombuffer(b"abcab", np.uint8)
        >>> sa = np.array([3, 0, 4, 1, 2])
        >>> repeat_mask(t, sa, 2, 0).tolist()
        [False, False, False, True, True]
    """
    if backend_name() == "fast":
        from neardup._kernels.repeats.fast import repeat_mask as fast

        out: B = fast(text, sa, min_length, prefix)
        return out
    from neardup._kernels.repeats.reference import repeat_mask as reference

    return reference(text, sa, min_length, prefix)
