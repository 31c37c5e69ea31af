"""The CLI's start-up cuts: numba's BLAS probe is skipped in the CLI process only, and undone;
a small input runs on numpy without importing numba."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("numba")


def _run(code: str, cwd: Path | None = None) -> str:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
        cwd=cwd,
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


@pytest.mark.parametrize("config_file", [False, True])
def test_yaml_import_skipped_without_a_numba_config_file(tmp_path: Path, config_file: bool) -> None:
    pytest.importorskip("yaml")
    if config_file:  # numba must read it, with PyYAML
        (tmp_path / ".numba_config.yaml").write_text("developer_mode: 0\n")
    out = _run(
        """
        import sys
        from neardup.cli._startup import skip_blas_probe
        skip_blas_probe()
        import numba.core.config as config
        had = "yaml" in sys.modules
        import yaml  # a later import works as usual
        print(config._HAVE_YAML, had, yaml.safe_load("a: 1") == {"a": 1})
        """,
        cwd=tmp_path,
    )
    assert out.split() == [str(config_file), str(config_file), "True"]


# --- small inputs run on numpy, without importing numba (docs/engine.md) -----------------

_DEDUP = """
import sys
from neardup.cli import main
try:
    main(sys.argv[1:], prog_name="neardup")
except SystemExit as exc:
    assert not exc.code, exc.code
from neardup._kernels import engine
print("backend", engine.backend_name(), "numba" in sys.modules)
"""


def _dedup(folder: Path, **env: str) -> tuple[str, list[str]]:
    full = {
        k: v for k, v in os.environ.items() if k not in ("NEARDUP_SMALL_INPUT", "NEARDUP_BACKEND")
    }
    full.update(NEARDUP_BACKGROUND_COMPILE="0", **env)
    done = subprocess.run(
        [sys.executable, "-c", _DEDUP, "dedup", str(folder), "--threshold", "0.5", "-q"],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
        env=full,
    )
    *clusters, last = done.stdout.strip().splitlines()
    return last, clusters


def _corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    words = [
        "alpha",
        "beta",
        "gamma",
        "delta",
        "epsilon",
        "zeta",
        "eta",
        "theta",
        "iota",
        "kappa",
        "lambda",
        "mu",
        "nu",
        "xi",
    ]
    for i in range(6):
        text = " ".join(words[i % 3 :] + words[: i % 3])  # three pairs of near copies
        (folder / f"{i}.txt").write_text(text + (" omicron" if i % 2 else ""))
    return folder


def test_small_input_runs_on_numpy_without_numba(tmp_path: Path) -> None:
    folder = _corpus(tmp_path)
    small, small_clusters = _dedup(folder)  # the default limit, 512 KiB
    assert small == "backend reference False"
    large, large_clusters = _dedup(folder, NEARDUP_SMALL_INPUT="10")  # 10 bytes: "large"
    assert large == "backend fast True"
    off, _ = _dedup(folder, NEARDUP_SMALL_INPUT="0")
    assert off == "backend fast True"
    assert small_clusters == large_clusters != []


def test_input_size_counting(tmp_path: Path) -> None:
    from neardup.cli._startup import _bytes_below

    folder = _corpus(tmp_path)
    total = sum(p.stat().st_size for p in folder.iterdir())
    assert _bytes_below([str(folder)], total + 1)
    assert not _bytes_below([str(folder)], total)
    assert not _bytes_below([str(folder)], total + 1, max_entries=3)
    assert not _bytes_below(["-"], 1 << 30)
    assert not _bytes_below([str(tmp_path / "missing")], 1 << 30)
    (tmp_path / "link").symlink_to(folder, target_is_directory=True)
    assert _bytes_below([str(tmp_path / "link")], 1 << 30)  # given on the command line: walked
    outer = tmp_path / "outer"
    outer.mkdir()
    (outer / "inner").symlink_to(folder, target_is_directory=True)
    assert not _bytes_below([str(outer)], 1 << 30)  # a link inside a walk: maybe a cycle


def test_small_input_setting_is_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    from neardup._kernels import engine
    from neardup.errors import ConfigError

    monkeypatch.setenv("NEARDUP_SMALL_INPUT", "1k")
    with pytest.raises(ConfigError, match="NEARDUP_SMALL_INPUT"):
        engine.small_input()
    monkeypatch.delenv("NEARDUP_SMALL_INPUT")
    assert engine.small_input() == engine.SMALL_INPUT


_BLAS = """
import os, sys
from neardup.cli import main
try:
    main(sys.argv[1:], prog_name="neardup")
except SystemExit as exc:
    assert not exc.code, exc.code
print("blas", os.environ.get("OPENBLAS_NUM_THREADS"))
"""


@pytest.mark.parametrize(
    ("method", "env", "want"),
    [
        ("minhash", {}, "blas 1"),  # no linear algebra: OpenBLAS starts one thread
        ("minhash", {"OPENBLAS_NUM_THREADS": "2"}, "blas 2"),  # the user's count is kept
        ("minhash", {"OMP_NUM_THREADS": "2"}, "blas None"),
        ("simhash", {}, "blas None"),  # not a method of the ahead-of-time module: untouched
    ],
)
def test_one_blas_thread_for_the_text_kernels(
    tmp_path: Path, method: str, env: dict[str, str], want: str
) -> None:
    folder = _corpus(tmp_path)
    full = {
        k: v
        for k, v in os.environ.items()
        if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "NEARDUP_SMALL_INPUT")
    }
    full.update(NEARDUP_BACKGROUND_COMPILE="0", NEARDUP_SMALL_INPUT="0", **env)
    args = ["dedup", str(folder), "--method", method, "--threshold", "0.5", "-q"]
    done = subprocess.run(
        [sys.executable, "-c", _BLAS, *args],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
        env=full,
    )
    assert done.stdout.strip().splitlines()[-1] == want
