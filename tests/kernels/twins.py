"""Helpers of the parity tests: packing documents, and comparing a native kernel's result
(or error) with its twin's."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest


def packed(docs: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
    lengths = [len(d) for d in docs]
    offsets = np.zeros(len(docs) + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return np.frombuffer(b"".join(docs), np.uint8), offsets


def same(native: Callable[[], Any], reference: Callable[[], Any]) -> None:
    """Both give the same arrays (values and dtypes), or raise the same error."""
    try:
        want = reference()
    except Exception as exc:  # any error of the twin must be the native's too
        with pytest.raises(type(exc)) as got:
            native()
        assert type(got.value) is type(exc)
        assert str(got.value) == str(exc)
        return
    got = native()
    if isinstance(want, np.ndarray):
        got, want = (got,), (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype
        assert g.shape == w.shape
        np.testing.assert_array_equal(g, w)
