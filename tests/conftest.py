"""Shared fixtures: paths to the golden vectors and small corpora."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

# The suite's JVMs (the Spark session of tests/spark, `dedup --engine spark` in subprocesses)
# live for seconds to minutes: the C1 compiler alone and the serial collector halve their CPU
# (42 -> 21 CPU-s for three dedup_dataframe jobs), the results are the same.
os.environ.setdefault(
    "PYSPARK_SUBMIT_ARGS",
    '--driver-java-options "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC" pyspark-shell',
)

GOLDEN = Path(__file__).parent / "golden"


@pytest.fixture(autouse=True)
def _neardup_logger_as_it_was() -> Any:
    """Each test leaves the ``neardup`` logger as it found it: a command run in this process
    (click's runner) sets its level, handler and propagation (``-q`` raises the level to
    ERROR), which would hide later tests' records from ``caplog``."""
    import logging

    log = logging.getLogger("neardup")
    saved = (log.handlers[:], log.level, log.propagate)
    yield
    log.handlers[:], log.propagate = saved[0], saved[2]
    log.setLevel(saved[1])


def native_pair(family: str) -> tuple[Any, Any]:
    """``(neardup._native.<family>, neardup._kernels.<family>)``, for the parity
    tests (tests/kernels/test_parity*.py); skips the test when the compiled core is not built
    or lacks the family."""
    import importlib

    from neardup._kernels import engine

    compiled = engine.native()
    if compiled is None or not hasattr(compiled, family):
        pytest.skip(f"the compiled core has no {family} family", allow_module_level=True)
    reference = importlib.import_module(f"neardup._kernels.{family}")
    return getattr(compiled, family), reference


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

    # The CI machine is shared: time is not a property here.
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


#: Files whose tests share something costly to build in each process (a Spark session and its
#: JVM, a loaded model, a module fixture, a generated corpus with its digests): each group runs
#: on one xdist worker, so it is built once, not once per worker (``--dist loadgroup``, see
#: ``pytest_xdist_make_scheduler``).
ONE_WORKER_FILES = {
    "embeddings/test_embeddings_dedup.py": "models",
    "embeddings/test_embeddings_local.py": "models",
    "fuzzy/test_fuzzy_ctph.py": "fuzzy_ctph",
    "fuzzy/test_fuzzy_index.py": "fuzzy_index",
    "image/test_cropresistant.py": "cropresistant",
    "image/test_image_parity.py": "image_parity",
    "kernels/test_kernels_xxh3.py": "xxh3",
}


def xdist_group_of(nodeid: str) -> str | None:
    """The xdist group of a test id: ``spark`` for every test that starts Spark (one JVM and
    one set of Python workers for the suite), the entry of ``ONE_WORKER_FILES``, else none."""
    path, _, name = nodeid.partition("::")
    if path.startswith("tests/spark/") or "spark" in name:
        return "spark"
    return ONE_WORKER_FILES.get(path.removeprefix("tests/"))


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Hypothesis example counts follow the profile (above); the xdist groups are marked."""
    _scale_examples(items)
    for item in items:
        group = xdist_group_of(item.nodeid)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadgroup`` by test id. xdist 3.8 tells the group to its scheduler by renaming
    each marked test ``id@group``, which pytest 9.2 ignores (a node id is no longer the
    attribute xdist sets): every group was split over the workers. This scheduler takes the
    group from :func:`xdist_group_of` instead (an ``@group`` suffix, if a later xdist sets
    one again, still wins)."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadGroupScheduling

    class ByTestId(LoadGroupScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            if nodeid.rfind("@") > nodeid.rfind("]"):
                return str(super()._split_scope(nodeid))
            return xdist_group_of(nodeid) or nodeid

    return ByTestId(config, log)


def _cpu_seconds() -> dict[str, float]:
    """This process's CPU seconds, and those of its children it has waited for."""
    import resource

    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {"self": own.ru_utime + own.ru_stime, "children": kids.ru_utime + kids.ru_stime}


def pytest_sessionfinish(session: pytest.Session) -> None:
    """An xdist worker hands its CPU seconds to the controller (``pytest_testnodedown``)."""
    output = getattr(session.config, "workeroutput", None)
    if output is not None:
        output["neardup_cpu"] = _cpu_seconds()


_WORKER_CPU: dict[str, dict[str, float]] = {}


def pytest_testnodedown(node: Any, error: Any) -> None:
    cpu = getattr(node, "workeroutput", {}).get("neardup_cpu")
    if cpu is not None:
        _WORKER_CPU[node.gateway.id] = cpu


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """One line of CPU seconds per xdist worker: how evenly ``--dist loadgroup`` spread the
    suite (docs/testing.md). Children are the subprocesses a worker waited for (CLI runs,
    compiles in a child); a JVM that outlives its session is not counted."""
    if not _WORKER_CPU:
        return
    parts = [
        f"{name} {cpu['self']:.0f} + children {cpu['children']:.0f}"
        for name, cpu in sorted(_WORKER_CPU.items())
    ]
    terminalreporter.write_line("worker CPU-s: " + "; ".join(parts))


# ------------------------------------------------------------------ hostile output targets
# Output paths are tested against a read-only folder, a full disk and a FIFO. Root ignores
# file modes, so as root a read-only folder is a read-only bind mount and a full disk a small
# tmpfs filled up (both unmounted after the test); otherwise a read-only folder is mode 0555
# and the full-disk tests skip.


def _mount(*args: str) -> bool:
    import shutil
    import subprocess

    if os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    done = subprocess.run(["mount", *args], capture_output=True, timeout=30, check=False)
    return done.returncode == 0


def _umount(path: Path) -> None:
    import subprocess

    subprocess.run(["umount", "-l", str(path)], capture_output=True, timeout=30, check=False)


@pytest.fixture
def make_readonly() -> Any:
    """``make_readonly(folder)``: from now on nothing can be written in ``folder`` (nor
    created, renamed or removed in it); undone after the test."""
    mounted: list[Path] = []
    chmodded: list[Path] = []

    def make(folder: Path) -> Path:
        folder = Path(folder)
        if _mount("--bind", str(folder), str(folder)):
            mounted.append(folder)
            if not _mount("-o", "remount,ro,bind", str(folder)):
                pytest.skip("cannot remount a bind mount read-only here")
        else:
            for root, dirs, files in os.walk(folder):
                for name in files:
                    os.chmod(os.path.join(root, name), 0o444)
                for name in dirs:
                    os.chmod(os.path.join(root, name), 0o555)
            os.chmod(folder, 0o555)
            chmodded.append(folder)
            if os.access(folder, os.W_OK):
                pytest.skip("this user can write into a mode-0555 folder")
        return folder

    yield make
    for folder in reversed(mounted):
        _umount(folder)
    for folder in chmodded:
        for root, dirs, _ in os.walk(folder):
            for name in dirs:
                os.chmod(os.path.join(root, name), 0o755)
        os.chmod(folder, 0o755)


@pytest.fixture
def full_disk(tmp_path: Path) -> Any:
    """A folder on a small tmpfs with no free space left (root only; skips otherwise)."""
    where = tmp_path / "full"
    where.mkdir()
    if not _mount("-t", "tmpfs", "-o", "size=256k,mode=0755", "tmpfs", str(where)):
        pytest.skip("needs root and mount to make a full file system")
    try:
        with open(where / ".filler", "wb") as fh:
            block = b"\0" * 4096
            while True:
                fh.write(block)
                fh.flush()
    except OSError:
        pass
    yield where
    _umount(where)
