"""Helpers of the per-family parity tests: call a native kernel and its numpy twin on the same
arguments and check that both give the same bits (or raise the same error)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest


def same_result(got: Any, want: Any) -> None:
    """``got`` equals ``want`` bit for bit: arrays of one dtype, shape and contents (floats
    compared as bits), tuples element by element, other values by ``==`` and type."""
    if isinstance(want, np.ndarray):
        assert isinstance(got, np.ndarray), type(got)
        assert got.dtype == want.dtype, (got.dtype, want.dtype)
        assert got.shape == want.shape, (got.shape, want.shape)
        if want.dtype.kind == "f":
            assert got.tobytes() == want.tobytes(), (got, want)
        else:
            assert np.array_equal(got, want), (got, want)
    elif isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            same_result(g, w)
    else:
        assert type(got) is type(want), (type(got), type(want))
        assert got == want


def both(native: Callable[..., Any], reference: Callable[..., Any], *args: Any) -> Any:
    """Run ``reference`` then ``native`` on ``args`` (copies, so that neither sees what the
    other did to them). Both give the same result, returned, or raise the same error (class
    and message), re-raised."""
    try:
        want = reference(*_copies(args))
    except Exception as exc:  # the twin must raise the same
        with pytest.raises(type(exc)) as caught:
            native(*_copies(args))
        assert type(caught.value) is type(exc)
        assert str(caught.value) == str(exc)
        raise
    got = native(*_copies(args))
    same_result(got, want)
    return got


def _copies(args: tuple[Any, ...]) -> list[Any]:
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]
