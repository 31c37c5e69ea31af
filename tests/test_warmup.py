"""``neardup warmup``: runs every entry point once and reports what it compiled."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from neardup.cli import main
from neardup.warmup import warmup


def test_warmup_reference_backend_compiles_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEARDUP_BACKEND", "reference")
    report = warmup()
    assert report.backend == "reference"
    assert report.compiled == report.loaded == 0
    result = CliRunner().invoke(main, ["warmup"])
    assert result.exit_code == 0, result.output
    assert "nothing to compile" in result.output


def test_warmup_fast_backend_leaves_nothing_to_compile() -> None:
    pytest.importorskip("numba")
    warmup()  # whatever this process still had to compile or load
    again = warmup()
    assert again.backend == "fast"
    assert again.compiled == 0
    assert any(Path(again.cache_dir).rglob("*.nbc"))  # the kernels are on disk
