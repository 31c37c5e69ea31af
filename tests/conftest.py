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
# Warmups in the suite build no ahead-of-time module (tens of CPU-s each, docs/engine.md):
# tests/kernels/test_kernels_aot.py builds one and turns it on.
os.environ.setdefault("NEARDUP_AOT", "0")

GOLDEN = Path(__file__).parent / "golden"
VECTORS = GOLDEN / "vectors"


@pytest.fixture(scope="session")
def vectors_dir() -> Path:
    """The reference vectors shipped with the seeds (copied from shared/vectors)."""
    return VECTORS


def load_vectors(name: str) -> Any:
    """Load one JSON vector file from tests/golden/vectors."""
    return json.loads((VECTORS / name).read_text(encoding="utf-8"))


#: Hypothesis profiles: ``neardup`` (the default, what ``make test`` runs) scales every test's
#: ``max_examples`` by 0.35 (at least 10) to keep the suite quick on two shared cores; ``thorough``
#: (``make test-thorough``, ``pytest --hypothesis-profile=thorough``) runs three times the counts
#: written in the tests. The examples differ from run to run, so the default profile still
#: covers the written counts over a few runs.
EXAMPLE_SCALE = {"neardup": 0.35, "thorough": 3.0}


def _hypothesis_profile() -> None:
    from hypothesis import settings

    # Kernels compile on first use and the CI machine is shared: time is not a property here.
    for name in EXAMPLE_SCALE:
        settings.register_profile(name, deadline=None, print_blob=True)
    settings.load_profile("neardup")


_hypothesis_profile()


def _scale_examples(items: list[pytest.Item]) -> None:
    """Scale each hypothesis test's ``max_examples`` by the loaded profile's factor."""
    from hypothesis import settings

    scale = EXAMPLE_SCALE.get(settings.get_current_profile_name(), 1.0)
    done: set[int] = set()
    for item in items:
        fn = getattr(getattr(item, "obj", None), "__func__", getattr(item, "obj", None))
        if not getattr(fn, "is_hypothesis_test", False) or id(fn) in done:
            continue
        done.add(id(fn))
        current = fn._hypothesis_internal_use_settings  # type: ignore[union-attr]
        wanted = min(current.max_examples, 10) if scale < 1 else current.max_examples
        wanted = max(wanted, round(current.max_examples * scale))
        fn._hypothesis_internal_use_settings = settings(current, max_examples=wanted)  # type: ignore[union-attr]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Hypothesis example counts follow the profile (above). Tests that start Spark share one
    xdist worker (``--dist loadgroup`` in the Makefile), so the suite starts one JVM and one set
    of Python workers instead of one per xdist worker."""
    _scale_examples(items)
    for item in items:
        path = Path(str(item.fspath))
        if path.parent.name == "spark" or "spark" in item.name:
            item.add_marker(pytest.mark.xdist_group("spark"))
