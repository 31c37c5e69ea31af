"""The native hll family against its numpy twin: same bits, same errors (hypothesis)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from twins import agree

from conftest import native_pair


@pytest.fixture(scope="module")
def pair() -> tuple[Any, Any]:
    return native_pair("hll")


def offsets_of(n: int, cuts: list[int]) -> np.ndarray:
    inner = sorted(c % (n + 1) for c in cuts)
    return np.array([0, *inner, n], dtype=np.int64)


cuts = st.lists(st.integers(0, 1000), max_size=5)


@given(st.data(), cuts, st.integers(0, 12), st.sampled_from([32, 64]))
def test_registers(pair: tuple[Any, Any], data: st.DataObject, c: list[int], p: int,
                   bits: int) -> None:  # fmt: skip
    top = 2**bits - 1
    # mostly hashes of the sketch's width, some wider (ranks <= 0 wrap to int8 in both)
    values = data.draw(st.lists(st.integers(0, top) | st.integers(0, 2**64 - 1), max_size=80))
    h = np.array(values, dtype=np.uint64)
    agree(pair, "registers", h, offsets_of(len(h), c), p, bits)


@pytest.mark.parametrize(("p", "bits"), [(-1, 32), (31, 64), (4, 65), (4, -1)])
def test_registers_config_errors(pair: tuple[Any, Any], p: int, bits: int) -> None:
    from neardup.errors import ConfigError

    h = np.array([1, 2], dtype=np.uint64)
    assert agree(pair, "registers", h, np.array([0, 2]), p, bits) is None
    with pytest.raises(ConfigError):
        pair[0].registers(h, np.array([0, 2]), p, bits)
