"""Run datasketch's own test files against ``neardup.compat.datasketch``.

``scripts/datasketch_suite`` (run by ``make test`` after the venv is built) puts datasketch's
test files for the mirrored modules (``test_minhash.py``, ``test_lean_minhash.py``,
``test_lsh.py``, ``test_lshforest.py``, ``test_lshensemble.py``, ``test_weighted_minhash.py``,
``test_hyperloglog.py``; MIT license, from the datasketch 1.7.0 source distribution, the
newest that ships them) into ``upstream/``. They run unchanged: this conftest makes
``import datasketch`` (and its submodules) resolve to ``neardup.compat.datasketch``,
provides their ``test.utils.fake_hash_func`` (not in the sdist) and stubs for the imports of
the Redis tests, and skips only the tests of storage back-ends neardup does not have (Redis,
Cassandra, MongoDB: in-memory storage only).

With ``NEARDUP_DATASKETCH_ORACLE=1`` the same files run against the real datasketch 2.0.0
instead (nothing is mapped, nothing is marked): ``tests/compat/test_datasketch_suite.py``
does that in a subprocess and checks that the tests marked ``xfail`` here are exactly the
ones datasketch 2.0.0 itself fails (1.7.0 behaviour that 2.0.0 changed).
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
import types
from collections.abc import Iterator
from pathlib import Path

import pytest

UPSTREAM = Path(__file__).parent / "upstream"
ORACLE = os.environ.get("NEARDUP_DATASKETCH_ORACLE") == "1"

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
}

#: Tests of datasketch 1.7.0 that encode behaviour datasketch 2.0.0 changed: the real
#: datasketch 2.0.0 fails them too (checked by tests/compat/test_datasketch_suite.py).
CHANGED_IN_2_0 = frozenset(
    {
        "test_lean_minhash.py::TestLeanMinHash::test_bytesize",
        "test_lean_minhash.py::TestLeanMinHash::test_init",
        "test_lshforest.py::TestMinHashLSHForest::test_get_minhash_hashvalues",
        "test_minhash.py::TestMinHash::test_byte_tokens",
    }
)


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
    return mods


def _stubs() -> dict[str, types.ModuleType]:
    """What the upstream files import besides datasketch: ``test.utils`` (upstream's
    ``fake_hash_func``), and for the skipped Redis tests ``mockredis`` and ``mock`` (the
    backport of :mod:`unittest.mock`) when they are not installed."""
    utils = types.ModuleType("test.utils")
    utils.fake_hash_func = _fake_hash_func  # type: ignore[attr-defined]
    pkg = types.ModuleType("test")
    pkg.__path__ = []  # type: ignore[attr-defined]
    pkg.utils = utils  # type: ignore[attr-defined]
    mods = {"test": pkg, "test.utils": utils}
    try:
        importlib.import_module("mockredis")
    except ImportError:
        mods["mockredis"] = types.ModuleType("mockredis")
    try:
        importlib.import_module("mock")
    except ImportError:
        mods["mock"] = importlib.import_module("unittest.mock")
    return mods


@contextlib.contextmanager
def _shimmed() -> Iterator[None]:
    """Install the shim, and restore sys.modules afterwards: the rest of the test session
    (the oracle tests) must see the real datasketch."""
    mods = _stubs() if ORACLE else {**_shim(), **_stubs()}
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


def _upstream(path: Path) -> bool:
    return path.parent == UPSTREAM and path.name.startswith("test_")


def pytest_pycollect_makemodule(module_path: Path, parent: pytest.Collector) -> pytest.Module:
    return _ShimModule.from_parent(parent, path=module_path)


@pytest.hookimpl(wrapper=True)
def pytest_collect_file(
    file_path: Path, parent: pytest.Collector
) -> Iterator[list[pytest.Collector]]:
    """No doctest collection of datasketch's files: it would import them without the shim."""
    result: list[pytest.Collector] = yield  # type: ignore[misc]
    if _upstream(file_path):
        return [c for c in result if type(c).__name__ != "DoctestModule"]  # type: ignore[return-value]
    return result  # type: ignore[return-value]


@pytest.fixture(autouse=True)
def _datasketch_is_compat() -> Iterator[None]:
    """While a suite test runs (pickle looks modules up by name), keep the shim in place."""
    with _shimmed():
        yield


def upstream_id(item: pytest.Item) -> str:
    """``file::Class::test`` of an upstream test (its node id below ``upstream/``)."""
    return item.nodeid.split("/upstream/", 1)[-1]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if not _upstream(Path(str(item.path))):
            continue
        name = item.nodeid.lower()
        skip = next((why for word, why in _SKIP_WORDS.items() if word in name), None)
        if skip:
            item.add_marker(pytest.mark.skip(reason=skip))
        elif upstream_id(item) in CHANGED_IN_2_0 and not ORACLE:
            item.add_marker(
                pytest.mark.xfail(
                    reason="datasketch 1.7.0 behaviour that 2.0.0 changed (datasketch 2.0.0 "
                    "fails it too)",
                    strict=True,
                )
            )
