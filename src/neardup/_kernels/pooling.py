"""numpy reference of the pooling kernels (:mod:`neardup.embeddings._pooling`): the oracle of
the native module ``neardup._native.pooling``, with the same names, bits and errors."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["expand_words", "mean_pool"]

F32 = npt.NDArray[np.float32]
I64 = npt.NDArray[np.int64]


def mean_pool(table: F32, ids: I64, offsets: I64, skip: int, normalize: bool) -> F32:
    """See :func:`neardup.embeddings._pooling.mean_pool`: vectorized over documents, sequential
    over each document's tokens."""
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
    """See :func:`neardup.embeddings._pooling.expand_words`."""
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
