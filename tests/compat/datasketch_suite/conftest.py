"""Run datasketch's own test files against ``neardup.compat.datasketch``.

datasketch's test files (``test_minhash.py``, ``test_lean_minhash.py``, ``test_lsh.py``,
``test_lshforest.py``, ``test_lshensemble.py``, ``test_weighted_minhash.py``,
``test_hyperloglog.py`` from github.com/ekzhu/datasketch, MIT license) placed in this
directory run unchanged: this conftest makes ``import datasketch`` (and its submodules)
resolve to ``neardup.compat.datasketch``, provides their ``test.utils.fake_hash_func``, and
skips only the tests of storage back-ends neardup does not have (Redis, Cassandra, MongoDB:
in-memory storage only) and of the GPU mode (no CUDA here). ``scripts/datasketch_suite``
copies the files from a datasketch checkout.
"""

from __future__ import annotations

import contextlib
import importlib
import sys
import types
from collections.abc import Iterator
from pathlib import Path

import pytest

_MODULES = (
    "b_bit_minhash",
    "hashfunc",
    "hyperloglog",
    "lean_minhash",
    "lsh",
    "lshensemble",
    "lshensemble_partition",
    "lshforest",
    "minhash",
    "storage",
    "weighted_minhash",
)
_SKIP_WORDS = {
    "redis": "Redis storage: neardup.compat.datasketch keeps indexes in memory only",
    "cassandra": "Cassandra storage: neardup.compat.datasketch keeps indexes in memory only",
    "mongo": "MongoDB storage: neardup.compat.datasketch keeps indexes in memory only",
    "gpu": "GPU mode: neardup runs on the CPU",
}


def _fake_hash_func(data: object) -> object:
    return data


_fake_hash_func.__module__ = "test.utils"  # picklable by reference, as upstream's
_fake_hash_func.__name__ = _fake_hash_func.__qualname__ = "fake_hash_func"


def _shim() -> dict[str, types.ModuleType]:
    """The sys.modules entries that make datasketch's test files import the compat package."""
    mods: dict[str, types.ModuleType] = {
        "datasketch": importlib.import_module("neardup.compat.datasketch")
    }
    for name in _MODULES:
        mods[f"datasketch.{name}"] = importlib.import_module(f"neardup.compat.datasketch.{name}")
    utils = types.ModuleType("test.utils")
    utils.fake_hash_func = _fake_hash_func  # type: ignore[attr-defined]
    pkg = types.ModuleType("test")
    pkg.__path__ = []  # type: ignore[attr-defined]
    pkg.utils = utils  # type: ignore[attr-defined]
    mods["test"] = pkg
    mods["test.utils"] = utils
    try:
        importlib.import_module("mockredis")
    except ImportError:  # only the skipped Redis tests use it
        mods["mockredis"] = types.ModuleType("mockredis")
    return mods


@contextlib.contextmanager
def _shimmed() -> Iterator[None]:
    """Install the shim, and restore sys.modules afterwards: the rest of the test session
    (the oracle tests) must see the real datasketch."""
    mods = _shim()
    saved = {name: sys.modules.get(name) for name in mods}
    sys.modules.update(mods)
    try:
        yield
    finally:
        for name, old in saved.items():
            if old is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = old


class _ShimModule(pytest.Module):
    """A test module imported with ``datasketch`` mapped to the compat package."""

    def _getobj(self) -> types.ModuleType:
        with _shimmed():
            return super()._getobj()  # type: ignore[no-any-return]


def pytest_pycollect_makemodule(module_path: Path, parent: pytest.Collector) -> pytest.Module:
    return _ShimModule.from_parent(parent, path=module_path)


@pytest.hookimpl(wrapper=True)
def pytest_collect_file(
    file_path: Path, parent: pytest.Collector
) -> Iterator[list[pytest.Collector]]:
    """No doctest collection of datasketch's files: it would import them without the shim."""
    result: list[pytest.Collector] = yield  # type: ignore[misc]
    if file_path.parent == Path(__file__).parent and file_path.name.startswith("test_"):
        return [c for c in result if type(c).__name__ != "DoctestModule"]  # type: ignore[return-value]
    return result  # type: ignore[return-value]


@pytest.fixture(autouse=True)
def _datasketch_is_compat() -> Iterator[None]:
    """While a suite test runs (pickle looks modules up by name), keep the shim in place."""
    with _shimmed():
        yield


#: Tests of datasketch's repository snapshot (1.10.0) that encode behaviour datasketch 2.0.0
#: changed (the affine32 default, explicit schemes): the real datasketch 2.0.0 fails them too.
_CHANGED_IN_2_0 = {
    "test_lean_minhash.py::TestLeanMinHash::test_bytesize",
    "test_lean_minhash.py::TestLeanMinHash::test_init",
    "test_lshforest.py::TestMinHashLSHForest::test_get_minhash_hashvalues",
    "test_minhash.py::TestMinHash::test_byte_tokens",
}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if "datasketch_suite" not in str(item.path):
            continue
        if any(item.nodeid.endswith(t) for t in _CHANGED_IN_2_0):
            item.add_marker(
                pytest.mark.xfail(
                    reason="datasketch 1.10 behaviour changed in 2.0.0 (fails on datasketch "
                    "2.0.0 itself)",
                    strict=False,
                )
            )
        name = item.nodeid.lower()
        for word, reason in _SKIP_WORDS.items():
            if word in name:
                item.add_marker(pytest.mark.skip(reason=reason))
                break
