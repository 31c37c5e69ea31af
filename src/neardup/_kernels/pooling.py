"""Mean pooling of static token vectors: documents as one flat id array + offsets (CSR).

``mean_pool(table, ids, offsets, skip, normalize)`` gives, for document ``d``, the mean of
``table[ids[k]]`` over ``offsets[d] <= k < offsets[d + 1]`` (ids equal to ``skip`` left out),
then, when ``normalize`` is true, that mean scaled to unit length. A document with no ids
left gives a zero row. Sums and the squared norm are accumulated in float64 in token order,
one document at a time; the result is cast to float32 once.

The numba kernel (:mod:`neardup._kernels.fast_pooling`) and the numpy reference below add
in the same order, so they give the same bits; the test suite checks it.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

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
    from neardup._kernels.engine import backend_name

    table = np.ascontiguousarray(table, dtype=np.float32)
    ids = np.ascontiguousarray(ids, dtype=np.int64)
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    if backend_name() == "fast":
        from neardup._kernels.fast_pooling import mean_pool as fast

        out: F32 = fast(table, ids, offsets, np.int64(skip), bool(normalize))
        return out
    return _mean_pool_reference(table, ids, offsets, skip, normalize)


def _mean_pool_reference(table: F32, ids: I64, offsets: I64, skip: int, normalize: bool) -> F32:
    """The numpy oracle: vectorized over documents, sequential over each document's tokens."""
    n = len(offsets) - 1
    dim = table.shape[1]
    acc = np.zeros((n, dim), dtype=np.float64)
    count = np.zeros(n, dtype=np.int64)
    lengths = np.diff(offsets)
    starts = offsets[:-1]
    longest = int(lengths.max()) if n else 0
    for k in range(longest):
        live = np.flatnonzero(lengths > k)
        tok = ids[starts[live] + k]
        keep = tok != skip
        live, tok = live[keep], tok[keep]
        acc[live] += table[tok]
        count[live] += 1
    has = count > 0
    acc[has] /= count[has, None]
    if normalize:
        sq = np.zeros(n, dtype=np.float64)
        for j in range(dim):
            sq += acc[:, j] * acc[:, j]
        nz = sq > 0.0
        acc[nz] /= np.sqrt(sq[nz])[:, None]
    return np.ascontiguousarray(acc.astype(np.float32))


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
    from neardup._kernels.engine import backend_name

    wi, tw, ids, wo = (
        np.ascontiguousarray(a, dtype=np.int64)
        for a in (word_index, text_words, word_ids, word_offsets)
    )
    if backend_name() == "fast":
        from neardup._kernels.fast_pooling import expand_words as fast

        result: tuple[I64, I64] = fast(wi, tw, ids, wo, np.int64(max_length))
        return result
    return _expand_words_reference(wi, tw, ids, wo, max_length)


def _expand_words_reference(
    word_index: I64, text_words: I64, word_ids: I64, word_offsets: I64, max_length: int
) -> tuple[I64, I64]:
    n = len(text_words) - 1
    lens = np.diff(word_offsets)[word_index]
    starts = word_offsets[:-1][word_index]
    total = int(lens.sum())
    pos_in_flat = np.arange(total, dtype=np.int64)
    word_start_flat = np.zeros(len(lens) + 1, dtype=np.int64)
    np.cumsum(lens, out=word_start_flat[1:])
    src = np.repeat(starts - word_start_flat[:-1], lens) + pos_in_flat
    ids = word_ids[src]
    text_of_word = np.repeat(np.arange(n, dtype=np.int64), np.diff(text_words))
    text_of_tok = np.repeat(text_of_word, lens)
    per_text = np.bincount(text_of_tok, minlength=n).astype(np.int64)
    text_start = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(per_text, out=text_start[1:])
    if max_length >= 0:
        rank = pos_in_flat - text_start[:-1][text_of_tok]
        keep = rank < max_length
        ids = ids[keep]
        per_text = np.minimum(per_text, max_length)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(per_text, out=offsets[1:])
    return np.ascontiguousarray(ids), offsets
