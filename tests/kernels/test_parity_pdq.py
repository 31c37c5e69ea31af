"""The native PDQ kernels against their numpy twin: the same float32 bits."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from twins import same_result

from conftest import native_pair


def test_constants_and_geometry() -> None:
    native, reference = native_pair("pdq")
    assert native.MIN_HASHABLE_DIM == reference.MIN_HASHABLE_DIM
    same_result(native.dct_matrix(), reference.dct_matrix())
    assert not native.dct_matrix().flags.writeable
    for old in (*range(0, 300), 1000, 4032, 10_000):
        assert native.jarosz_window(old) == reference.jarosz_window(old)
        same_result(native.decimation_indices(old), reference.decimation_indices(old))
    for old, new in ((100, 16), (7, -2), (-5, 3), (50, 0)):
        same_result(native.decimation_indices(old, new), reference.decimation_indices(old, new))
        if new:
            assert native.jarosz_window(old, new) == reference.jarosz_window(old, new)
    with pytest.raises(ZeroDivisionError) as want:
        reference.jarosz_window(10, 0)
    with pytest.raises(ZeroDivisionError) as got:
        native.jarosz_window(10, 0)
    assert str(got.value) == str(want.value)


SIZES = st.one_of(st.integers(1, 20), st.integers(60, 70), st.integers(100, 300))


@settings(max_examples=60)
@given(
    st.integers(0, 2**32 - 1),
    SIZES,
    SIZES,
    st.sampled_from([3, 4]),
    st.sampled_from(["noise", "blocks", "flat"]),
    st.booleans(),
)
def test_pdq_rgb_and_float(
    seed: int, h: int, w: int, channels: int, kind: str, strided: bool
) -> None:
    native, reference = native_pair("pdq")
    rng = np.random.default_rng(seed)
    if kind == "noise":
        rgb = rng.integers(0, 256, (h, w, channels), dtype=np.uint8)
    elif kind == "blocks":  # smooth regions: sums that cancel, quality near the thresholds
        small = rng.integers(0, 256, (4, 4, channels), dtype=np.uint8)
        rgb = np.ascontiguousarray(
            np.repeat(np.repeat(small, -(-h // 4), axis=0), -(-w // 4), axis=1)[:h, :w]
        )
    else:
        rgb = np.full((h, w, channels), rng.integers(0, 256), np.uint8)
    if strided:  # a view: every other column of a wider image, read-only
        wide = np.repeat(rgb, 2, axis=1)
        wide.setflags(write=False)
        rgb = wide[:, ::2]
    same_result(native.luma_rgb(rgb), reference.luma_rgb(rgb))
    got, want = native.pdq_rgb(rgb), reference.pdq_rgb(rgb)
    same_result(got[0], want[0])
    assert type(got[1]) is int and got[1] == want[1]
    luma = reference.luma_rgb(rgb)
    for x in (luma, luma[:, ::-1], luma.astype(np.float64)):
        got, want = native.pdq_float(x), reference.pdq_float(x)
        same_result(got[0], want[0])
        assert got[1] == want[1]


def test_the_64_square_is_taken_as_it_is() -> None:
    native, reference = native_pair("pdq")
    luma = np.random.default_rng(1).random((64, 64)).astype(np.float32) * 255
    got, want = native.pdq_float(luma), reference.pdq_float(luma)
    same_result(got[0], want[0])
    assert got[1] == want[1]
