"""The CLI's start-up cut: numba's BLAS probe is skipped in the CLI process only, and undone."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("numba")


def _run(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    return done.stdout.strip()


def test_probe_skipped_without_scipy_linalg_and_linalg_still_works() -> None:
    out = _run(
        """
        import sys
        from neardup.cli._startup import skip_blas_probe, _BlasProbeFinder
        skip_blas_probe()
        skip_blas_probe()  # idempotent: one finder
        assert sum(isinstance(f, _BlasProbeFinder) for f in sys.meta_path) == 1
        import numba.np.arraymath as am, numba.np.linalg as la
        assert not any(isinstance(f, _BlasProbeFinder) for f in sys.meta_path)
        assert am._HAVE_BLAS is False
        assert "scipy.linalg" not in sys.modules
        assert la.ensure_blas is am.ensure_blas and la.ensure_blas.__name__ == "ensure_blas"
        import numba, numpy as np
        @numba.njit
        def dot(a, b):
            return np.dot(a, b)
        print(dot(np.arange(3.0), np.arange(3.0)), "scipy.linalg" in sys.modules)
        """
    )
    assert out == "5.0 True"


def test_library_import_leaves_the_probe_alone() -> None:
    out = _run(
        """
        import importlib.util, neardup, numba.np.arraymath as am
        print(am._HAVE_BLAS == (importlib.util.find_spec("scipy") is not None))
        """
    )
    assert out == "True"


def test_cli_process_does_not_import_scipy_linalg() -> None:
    out = _run(
        """
        import sys
        from neardup.cli import main
        try:
            main(["dedup", "--help"], prog_name="neardup")
        except SystemExit:
            pass
        import numba.np.arraymath
        print("scipy.linalg" in sys.modules)
        """
    )
    assert out.splitlines()[-1] == "False"


def test_coverage_import_skipped_only_for_numba_when_nothing_measures() -> None:
    out = _run(
        """
        import sys
        if "coverage" in sys.modules:  # run under coverage: numba must see it
            print("measured")
            raise SystemExit
        from neardup.cli._startup import skip_blas_probe
        skip_blas_probe()
        import numba.misc.coverage_support as support
        print(support.coverage_available, "coverage" in sys.modules)
        """
    )
    if out == "measured":
        pytest.skip("the child runs under coverage, so numba must import it")
    assert out == "False False"
