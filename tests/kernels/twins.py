"""Helpers of the per-family parity tests: pack documents, call a native kernel and its numpy
twin on the same arguments, and check that both give the same bits (or raise the same error)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np
import pytest

from neardup._kernels import engine

T = TypeVar("T")


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


def same_result(got: Any, want: Any) -> None:
    """``got`` equals ``want`` bit for bit: arrays of one dtype, shape and contents (floats
    compared as bits), tuples, lists and dicts element by element, other values by ``==`` and
    type."""
    if isinstance(want, np.ndarray):
        assert isinstance(got, np.ndarray), type(got)
        assert got.dtype == want.dtype, (got.dtype, want.dtype)
        assert got.shape == want.shape, (got.shape, want.shape)
        if want.dtype.kind == "f":
            assert got.tobytes() == want.tobytes(), (got, want)
        else:
            assert np.array_equal(got, want), (got, want)
    elif isinstance(want, tuple | list):
        assert type(got) is type(want) and len(got) == len(want), (got, want)
        for g, w in zip(got, want, strict=True):
            same_result(g, w)
    elif isinstance(want, dict):
        assert isinstance(got, dict) and got.keys() == want.keys(), (got, want)
        for k in want:
            same_result(got[k], want[k])
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


def agree(pair: tuple[Any, Any], name: str, *args: Any) -> Any:
    """Call ``name`` on both twins of ``pair`` (``native_pair(family)``) with copies of
    ``args``: the same result and the same changes to the copies (arrays filled in place),
    the native result returned; or the same error (class and message), then ``None``."""
    outcomes: list[tuple[str, Any]] = []
    for module in pair:
        copies = _copies(args)
        try:
            outcomes.append(("ok", (getattr(module, name)(*copies), copies)))
        except Exception as exc:  # compared below: class and message
            outcomes.append(("error", (type(exc), str(exc))))
    (kind, got), (want_kind, want) = outcomes
    assert kind == want_kind, outcomes
    if kind == "error":
        assert got == want
        return None
    same_result(got[0], want[0])
    for g, w in zip(got[1], want[1], strict=True):
        if isinstance(w, np.ndarray):
            same_result(g, w)
    return got[0]


def on_both_backends(fn: Callable[..., T], *args: Any) -> tuple[T, T]:
    """``(reference, native)``: ``fn(*args)`` under ``NEARDUP_BACKEND=reference``, then under
    the native backend (for the fronts that pick their kernels through the engine)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(engine, "_choice", engine.parse_backend("reference"))
        want = fn(*args)
        mp.setattr(engine, "_choice", engine.parse_backend("native"))
        got = fn(*args)
    return want, got
