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

import importlib
import sys
import types

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


def _install_shim() -> None:
    compat = importlib.import_module("neardup.compat.datasketch")
    sys.modules["datasketch"] = compat
    for name in _MODULES:
        sys.modules[f"datasketch.{name}"] = importlib.import_module(
            f"neardup.compat.datasketch.{name}"
        )
    utils = types.ModuleType("test.utils")

    def fake_hash_func(data: object) -> object:
        return data

    fake_hash_func.__module__ = "test.utils"  # picklable by reference, as upstream's
    fake_hash_func.__qualname__ = "fake_hash_func"
    utils.fake_hash_func = fake_hash_func
    pkg = sys.modules.get("test")
    if pkg is None or not hasattr(pkg, "__path__"):
        pkg = types.ModuleType("test")
        pkg.__path__ = []  # type: ignore[attr-defined]
        sys.modules["test"] = pkg
    pkg.utils = utils  # type: ignore[attr-defined]
    sys.modules["test.utils"] = utils
    if "mockredis" not in sys.modules:
        try:
            importlib.import_module("mockredis")
        except ImportError:  # only the skipped Redis tests use it
            sys.modules["mockredis"] = types.ModuleType("mockredis")


#: Tests of datasketch's repository snapshot (1.10.0) that encode behaviour datasketch 2.0.0
#: changed (the affine32 default, explicit schemes): the real datasketch 2.0.0 fails them too.
_CHANGED_IN_2_0 = {
    "test_lean_minhash.py::TestLeanMinHash::test_bytesize",
    "test_lean_minhash.py::TestLeanMinHash::test_init",
    "test_lshforest.py::TestMinHashLSHForest::test_get_minhash_hashvalues",
    "test_minhash.py::TestMinHash::test_byte_tokens",
}

_install_shim()


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
