"""Native kernels against their numpy twins: the same names, the same bits, the same errors.

As RapidFuzz tests its pure-Python fallback, every family of ``neardup._native`` is checked
against ``neardup._kernels.<family>`` on hypothesis inputs: one test per family, plus
one that the names match (a function only the native module has is a missing twin).
"""

from __future__ import annotations

import os
import subprocess
import sys
from types import ModuleType

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import native_pair
from neardup._kernels import engine

NATIVE = engine.native()
pytestmark = pytest.mark.skipif(NATIVE is None, reason="the compiled core is not built")


def pair(family: str) -> tuple[ModuleType, ModuleType]:
    """(native submodule, reference module) of ``family``."""
    native, reference = native_pair(family)
    return native, reference


@pytest.mark.parametrize("family", engine.native_families())
def test_native_and_reference_have_the_same_names(family: str) -> None:
    native, reference = pair(family)
    native_names = {n for n in dir(native) if not n.startswith("_")}
    assert native_names == set(reference.__all__)


def test_the_engine_hands_out_the_native_module() -> None:
    assert "xxh3" in engine.native_families()
    assert engine.kernels("xxh3") is NATIVE.xxh3  # type: ignore[union-attr]


def test_reference_forced_in_a_fresh_process() -> None:
    code = (
        "from neardup._kernels import engine;"
        "print(engine.kernels('xxh3').__name__, engine.native_families())"
    )
    env = {**os.environ, "NEARDUP_BACKEND": "reference"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["neardup._kernels.xxh3", "()"]


def packed_ranges(data: bytes, cuts: list[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    buf = np.frombuffer(data, dtype=np.uint8)
    bounds = sorted({0, len(data), *(c % (len(data) + 1) for c in cuts)})
    starts = np.array(bounds[:-1] or [0], dtype=np.int64)
    ends = np.array(bounds[1:] or [0], dtype=np.int64)
    return buf, starts, ends


@given(
    st.binary(max_size=700), st.lists(st.integers(0, 700), max_size=8), st.integers(0, 2**64 - 1)
)
def test_xxh3(data: bytes, cuts: list[int], seed: int) -> None:
    native, reference = pair("xxh3")
    buf, starts, ends = packed_ranges(data, cuts)
    s = np.uint64(seed)
    assert np.array_equal(
        native.xxh3_64_ranges(buf, starts, ends, s), reference.xxh3_64_ranges(buf, starts, ends, s)
    )
    for a, b in zip(
        native.xxh3_128_ranges(buf, starts, ends, s),
        reference.xxh3_128_ranges(buf, starts, ends, s),
        strict=True,
    ):
        assert np.array_equal(a, b)


def test_every_public_module_of_kernels_is_a_family() -> None:
    """``_kernels/`` holds the selector and one numpy twin per family; anything else there is
    private (a leading underscore), so a family list never picks up a helper module."""
    import pkgutil

    import neardup._kernels

    public = {m.name for m in pkgutil.iter_modules(neardup._kernels.__path__) if m.name[0] != "_"}
    assert public == {*engine.FAMILIES, "engine"}
    assert not any(m.ispkg for m in pkgutil.iter_modules(neardup._kernels.__path__))
