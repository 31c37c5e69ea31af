"""numba kernels of :mod:`neardup._kernels.pooling` (compiled lazily, cached); the native
module ``neardup._native.pooling`` replaces them."""

from __future__ import annotations

import numba
import numpy as np

from neardup._kernels.cache import njit

__all__ = ["expand_words", "mean_pool"]


@njit(parallel=True)
def mean_pool(table, ids, offsets, skip, normalize):  # type: ignore[no-untyped-def]
    """Per-document mean of ``table[ids]`` (ids equal to ``skip`` left out), then unit length."""
    n = len(offsets) - 1
    dim = table.shape[1]
    out = np.zeros((n, dim), dtype=np.float32)
    for d in numba.prange(n):
        acc = np.zeros(dim, dtype=np.float64)
        count = 0
        for k in range(offsets[d], offsets[d + 1]):
            t = ids[k]
            if t == skip:
                continue
            count += 1
            for j in range(dim):
                acc[j] += table[t, j]
        if count == 0:
            continue
        for j in range(dim):
            acc[j] /= count
        if normalize:
            sq = 0.0
            for j in range(dim):
                sq += acc[j] * acc[j]
            if sq > 0.0:
                norm = np.sqrt(sq)
                for j in range(dim):
                    acc[j] /= norm
        for j in range(dim):
            out[d, j] = np.float32(acc[j])
    return out


@njit()
def expand_words(word_index, text_words, word_ids, word_offsets, max_length):  # type: ignore[no-untyped-def]
    """Concatenate each text's cached word tokens, at most ``max_length`` per text (-1: all)."""
    n = len(text_words) - 1
    offsets = np.zeros(n + 1, dtype=np.int64)
    for t in range(n):
        count = 0
        for k in range(text_words[t], text_words[t + 1]):
            w = word_index[k]
            count += word_offsets[w + 1] - word_offsets[w]
        if max_length >= 0 and count > max_length:
            count = max_length
        offsets[t + 1] = offsets[t] + count
    ids = np.empty(offsets[n], dtype=np.int64)
    for t in range(n):
        at = offsets[t]
        end = offsets[t + 1]
        for k in range(text_words[t], text_words[t + 1]):
            if at >= end:
                break
            w = word_index[k]
            for p in range(word_offsets[w], word_offsets[w + 1]):
                if at >= end:
                    break
                ids[at] = word_ids[p]
                at += 1
    return ids, offsets
