"""HyperLogLog / HyperLogLog++: accuracy against exact counts, union, bytes, errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.errors import ConfigError, FormatError, IncompatibleSketchError, InputError
from neardup.sketch.hyperloglog import HyperLogLog, count_registers


@pytest.mark.parametrize("plus", [False, True])
@pytest.mark.parametrize("n", [0, 1, 10, 1000, 30000])
def test_count_close_to_exact(plus: bool, n: int) -> None:
    h = HyperLogLog.from_tokens([f"item-{i}" for i in range(n)] * 2, p=12, plus=plus)
    # 1.04 / sqrt(4096) = 1.6 % standard error; 5 sigma, or 1 for tiny n
    assert abs(h.count() - n) <= max(1.0, 0.08 * n)


@settings(max_examples=30)
@given(st.sets(st.text(max_size=6), max_size=40), st.sets(st.text(max_size=6), max_size=40))
def test_merge_is_union(a: set[str], b: set[str]) -> None:
    for plus in (False, True):
        ha = HyperLogLog.from_tokens(a, p=6, plus=plus)
        hb = HyperLogLog.from_tokens(b, p=6, plus=plus)
        assert ha.merge(hb) == HyperLogLog.from_tokens(a | b, p=6, plus=plus)
        assert ha.merge(hb) == hb.merge(ha)
        assert HyperLogLog.from_bytes(ha.to_bytes()) == ha


def test_batch_equals_single() -> None:
    sets = [[f"{j}-{i}" for i in range(j * 37)] for j in range(6)]
    regs = HyperLogLog.sketch_many(sets, p=8, plus=True)
    for row, s in zip(regs, sets, strict=True):
        one = HyperLogLog.from_tokens(s, p=8, plus=True)
        np.testing.assert_array_equal(row, one.registers)
    np.testing.assert_array_equal(
        count_registers(regs, plus=True),
        [HyperLogLog.from_tokens(s, p=8, plus=True).count() for s in sets],
    )


def test_errors() -> None:
    with pytest.raises(ConfigError, match="p"):
        HyperLogLog.empty(3)
    with pytest.raises(InputError, match="32-bit"):
        HyperLogLog.from_hashes(np.array([1 << 40], dtype=np.uint64), p=8)
    with pytest.raises(IncompatibleSketchError):
        HyperLogLog.empty(8).merge(HyperLogLog.empty(9))
    with pytest.raises(FormatError):
        HyperLogLog.from_bytes(b"NDHL" + b"\x01\x00\x08\x00" + b"\x00" * 5)
    with pytest.raises(InputError, match="str or bytes"):
        HyperLogLog.from_tokens([1])  # type: ignore[list-item]
    assert HyperLogLog.empty(4).is_empty and HyperLogLog.empty(4).count() == 0.0
