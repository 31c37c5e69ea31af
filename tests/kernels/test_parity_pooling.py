"""The native pooling kernels against their numpy twin: the same bits."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import native_pair


@settings(max_examples=100)
@given(
    st.integers(0, 2**32 - 1),
    st.integers(0, 40),
    st.integers(1, 9),
    st.integers(-1, 4),
    st.booleans(),
)
def test_mean_pool(seed: int, n: int, dim: int, skip: int, normalize: bool) -> None:
    native, reference = native_pair("pooling")
    rng = np.random.default_rng(seed)
    vocab = 6
    table = (rng.standard_normal((vocab, dim)) * 10.0 ** rng.integers(-3, 4)).astype(np.float32)
    table[rng.integers(0, vocab)] = 0.0  # a zero row: a zero mean, left unscaled
    lengths = rng.integers(0, 12, n)
    offsets = np.zeros(n + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    ids = rng.integers(-vocab, vocab, int(offsets[-1])).astype(np.int64)  # negative: from the end
    got = native.mean_pool(table, ids, offsets, skip, normalize)
    want = reference.mean_pool(table, ids, offsets, skip, normalize)
    assert (got.dtype, got.shape, got.flags.c_contiguous) == (want.dtype, want.shape, True)
    assert got.tobytes() == want.tobytes()


@settings(max_examples=100)
@given(st.integers(0, 2**32 - 1), st.integers(0, 30), st.integers(-1, 9))
def test_expand_words(seed: int, n: int, cut: int) -> None:
    native, reference = native_pair("pooling")
    rng = np.random.default_rng(seed)
    words = rng.integers(0, 5, 7)
    word_offsets = np.zeros(8, np.int64)
    np.cumsum(words, out=word_offsets[1:])
    word_ids = rng.integers(0, 100, int(word_offsets[-1])).astype(np.int64)
    text_words = np.zeros(n + 1, np.int64)
    np.cumsum(rng.integers(0, 6, n), out=text_words[1:])
    index = rng.integers(0, 7, int(text_words[-1])).astype(np.int64)
    got = native.expand_words(index, text_words, word_ids, word_offsets, cut)
    want = reference.expand_words(index, text_words, word_ids, word_offsets, cut)
    for g, w in zip(got, want, strict=True):
        assert (g.dtype, g.shape) == (w.dtype, w.shape) and g.tobytes() == w.tobytes()
