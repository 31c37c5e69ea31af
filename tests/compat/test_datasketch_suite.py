"""datasketch's own test suite (in ``datasketch_suite/upstream``) is there, and its expected
failures are exactly the tests that the real datasketch 2.0.0 fails: the suite runs against
datasketch itself in a subprocess, the oracle of the ``xfail`` marks."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

_SUITE = Path(__file__).parent / "datasketch_suite"
_FILES = (
    "test_minhash.py",
    "test_lean_minhash.py",
    "test_lsh.py",
    "test_lshforest.py",
    "test_lshensemble.py",
    "test_weighted_minhash.py",
    "test_hyperloglog.py",
)


def _conftest() -> object:
    spec = importlib.util.spec_from_file_location("_ds_suite_conftest", _SUITE / "conftest.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_upstream_suite_is_present() -> None:
    missing = [f for f in _FILES if not (_SUITE / "upstream" / f).is_file()]
    assert not missing, (
        f"datasketch's tests {missing} are missing from {_SUITE / 'upstream'}; run "
        "scripts/datasketch_suite (make test does it once after building the venv)"
    )
    assert (_SUITE / "upstream" / "LICENSE.datasketch").is_file()


def test_expected_failures_are_what_datasketch_itself_fails(tmp_path: Path) -> None:
    pytest.importorskip("datasketch")
    if not (_SUITE / "upstream" / _FILES[0]).is_file():
        pytest.fail("datasketch's tests are missing; run scripts/datasketch_suite")
    report = tmp_path / "oracle.xml"
    env = {**os.environ, "NEARDUP_DATASKETCH_ORACLE": "1"}
    env.pop("COV_CORE_SOURCE", None)  # no coverage of the subprocess
    proc = subprocess.run(
        [
            sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider",
            "-o", "addopts=", "--junitxml", str(report), str(_SUITE / "upstream"),
        ],
        cwd=_SUITE.parents[2], env=env, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert report.is_file(), proc.stdout[-2000:] + proc.stderr[-2000:]
    failed, passed = set(), 0
    for case in ET.parse(report).iter("testcase"):
        # classname: tests.compat.datasketch_suite.upstream.<module>.<Class>
        module, cls = case.get("classname", "").split(".")[-2:]
        name = f"{module}.py::{cls}::{case.get('name', '')}"
        if case.find("failure") is not None or case.find("error") is not None:
            failed.add(name)
        elif case.find("skipped") is None:
            passed += 1
    expected = _conftest().CHANGED_IN_2_0  # type: ignore[attr-defined]
    assert failed == set(expected), proc.stdout[-3000:]
    assert passed >= 90, proc.stdout[-3000:]
