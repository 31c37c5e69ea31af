"""Mean pooling of static token vectors: documents as one flat id array + offsets (CSR).

``mean_pool(table, ids, offsets, skip=..., normalize=...)`` gives, for document ``d``, the
mean of ``table[ids[k]]`` over ``offsets[d] <= k < offsets[d + 1]`` (ids equal to ``skip``
left out), then, when ``normalize`` is true, that mean scaled to unit length. A document with
no ids left gives a zero row. Sums and the squared norm are accumulated in float64 in token
order, one document at a time; the result is cast to float32 once.

The kernels are those of :func:`neardup._kernels.engine.kernels` (``kernels("pooling")``):
the native module ``neardup._native.pooling`` and its numpy twin ``neardup._kernels.pooling``
add in the same order, so they give the same bits (tests/kernels/test_parity_pooling.py).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from neardup._kernels.engine import kernels

__all__ = ["expand_words", "mean_pool"]

F32 = npt.NDArray[np.float32]
I64 = npt.NDArray[np.int64]


def mean_pool(table: F32, ids: I64, offsets: I64, *, skip: int = -1, normalize: bool = True) -> F32:
    """Mean-pool rows of ``table`` per document (see the module docstring).

    Args:
        table: ``(vocab, dim)`` float32 token vectors.
        ids: Flat token ids of all documents, each in ``[0, vocab)``.
        offsets: ``n_docs + 1`` non-decreasing positions into ``ids``.
        skip: An id left out of every mean (the unknown token), or -1 for none.
        normalize: Scale each non-zero row to unit length.

    Returns:
        ``(n_docs, dim)`` C-contiguous float32.

    Examples:
        >>> t = np.array([[1.0, 0.0], [0.0, 1.0], [3.0, 3.0]], np.float32)
        >>> mean_pool(t, np.array([0, 1, 2, 0]), np.array([0, 2, 2, 4]), skip=2).tolist()
        [[0.7071067690849304, 0.7071067690849304], [0.0, 0.0], [1.0, 0.0]]
    """
    table = np.ascontiguousarray(table, dtype=np.float32)
    ids = np.ascontiguousarray(ids, dtype=np.int64)
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    out: F32 = kernels("pooling").mean_pool(table, ids, offsets, int(skip), bool(normalize))
    return out


def expand_words(
    word_index: I64, text_words: I64, word_ids: I64, word_offsets: I64, max_length: int
) -> tuple[I64, I64]:
    """Token ids of texts given as sequences of cached words (CSR in, CSR out).

    Text ``t`` is the words ``word_index[text_words[t]:text_words[t + 1]]``; word ``w`` is
    the tokens ``word_ids[word_offsets[w]:word_offsets[w + 1]]``. The result concatenates each
    text's words' tokens, keeping at most ``max_length`` tokens per text (-1: all).

    Returns:
        ``(ids, offsets)`` with ``len(text_words)`` offsets.

    Examples:
        >>> words, texts = np.array([1, 0, 1]), np.array([0, 2, 3])
        >>> ids, off = expand_words(words, texts, np.array([7, 8, 9]), np.array([0, 1, 3]), 2)
        >>> ids.tolist(), off.tolist()
        ([8, 9, 8, 9], [0, 2, 4])
    """
    wi, tw, ids, wo = (
        np.ascontiguousarray(a, dtype=np.int64)
        for a in (word_index, text_words, word_ids, word_offsets)
    )
    out: tuple[I64, I64] = kernels("pooling").expand_words(wi, tw, ids, wo, int(max_length))
    return out
