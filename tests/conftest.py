"""Shared fixtures: paths to the golden vectors and small corpora."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

# Tests compile kernels in the foreground: none may start the detached first-use compile
# (docs/engine.md, "First use"), which could outlive it. tests/test_warmup.py turns it on.
os.environ.setdefault("NEARDUP_BACKGROUND_COMPILE", "0")
# A small input would run the CLI on numpy (docs/engine.md): the suite's CLI runs, in this
# process too, keep the numba kernels under test. tests/test_cli_startup.py turns it on.
os.environ.setdefault("NEARDUP_SMALL_INPUT", "0")

GOLDEN = Path(__file__).parent / "golden"
VECTORS = GOLDEN / "vectors"


@pytest.fixture(scope="session")
def vectors_dir() -> Path:
    """The reference vectors shipped with the seeds (copied from shared/vectors)."""
    return VECTORS


def load_vectors(name: str) -> Any:
    """Load one JSON vector file from tests/golden/vectors."""
    return json.loads((VECTORS / name).read_text(encoding="utf-8"))


def _hypothesis_profile() -> None:
    from hypothesis import settings

    # Kernels compile on first use and the CI machine is shared: time is not a property here.
    settings.register_profile("neardup", deadline=None, print_blob=True)
    settings.load_profile("neardup")


_hypothesis_profile()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests that start Spark share one xdist worker (``--dist loadgroup`` in the Makefile), so
    the suite starts one JVM and one set of Python workers instead of one per xdist worker."""
    for item in items:
        path = Path(str(item.fspath))
        if path.parent.name == "spark" or "spark" in item.name:
            item.add_marker(pytest.mark.xdist_group("spark"))
