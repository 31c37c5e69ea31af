"""``neardup warmup``: runs every entry point once and reports what it compiled; the first-use
background compile it runs as, and the numpy backend meanwhile."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

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


# --- first use: the background compile (docs/engine.md, "First use") ------------------------

_TEXTS = [
    "the quick brown fox jumps over the lazy dog near the river bank today",
    "the quick brown fox jumps over the lazy dog near the river bank now",
    "completely different words about kernels caches and compiled code here",
    "completely different words about kernels caches and compiled code there",
    "a lone document that matches nothing else in this little corpus at all",
]

#: Seconds a child process may take before the test calls it hung. Nothing here waits for a
#: deadline: each wait is for an event (a process exit), and this bound fails only a real hang
#: (the cache's own lock wait, 900 s, is longer: a process that waited for it fails here).
_HANG = 300

#: The first call of a process, its backend, and the background compile it started (reaped
#: here: no test leaves a process behind). On SIGTERM (the test gives up on it) it kills that
#: compile's whole session first.
_RUN = """
import json, os, signal, sys
import numpy as np
from neardup._kernels import cache, engine
from neardup.cluster import components

def kill_child():
    child = engine.background_process()
    if child is not None and child.poll() is None:
        os.killpg(child.pid, signal.SIGKILL)  # its own session: the whole of it
        child.wait()

def stop(*_):
    kill_child()
    os._exit(1)

signal.signal(signal.SIGTERM, stop)
record = {}
try:
    if sys.argv[1]:  # the first call is a dedup of these texts
        from neardup import dedup
        result = dedup(json.loads(sys.argv[1]), method="minhash", threshold=0.5)
        record["clusters"] = [list(c.members) for c in result.clusters]
    record["roots"] = components(5, np.array([0, 2]), np.array([1, 3])).tolist()
except BaseException:
    kill_child()
    raise
child = engine.background_process()
record.update(
    backend=engine.backend_name(),
    child=child is not None,
    compiled=cache.compiles()["compiled"],
    loaded=cache.compiles()["loaded"],
)
print(json.dumps(record), flush=True)
if child is not None:
    print(json.dumps({"rc": child.wait()}), flush=True)
"""

#: Put on the ``PYTHONPATH`` of a background compile (``sitecustomize`` is imported at start-up):
#: its ``warmup()`` exercises the one kernel ``_RUN`` calls on every backend, so the test compiles
#: one kernel into its own cache, not the 220 of a full warmup (minutes of CPU; that warmup
#: covers every entry point is what the tests of ``warmup()`` above and below check).
_ONE_KERNEL_WARMUP = """
import numpy as np
import neardup.warmup

def _exercise():
    from neardup.cluster import components
    components(5, np.array([0, 2]), np.array([1, 3]))

neardup.warmup._exercise = _exercise
"""


def _env(root: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(NEARDUP_CACHE_DIR=str(root), NEARDUP_BACKGROUND_COMPILE="1")
    env.pop("NEARDUP_BACKEND", None)
    env.update(extra)
    return env


def _run(root: Path, texts: list[str] | None, **extra: str) -> tuple[list[dict[str, Any]], str]:
    """Run ``_RUN`` in a fresh process with cache ``root``; its records and its stderr. Returns
    when it has exited, so any background compile it started has ended too."""
    proc = subprocess.Popen(
        [sys.executable, "-c", _RUN, json.dumps(texts) if texts else ""],
        env=_env(root, **extra),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        out, err = proc.communicate(timeout=_HANG)
    finally:
        if proc.poll() is None:  # hung, or the test was interrupted: end both processes
            proc.terminate()
            try:
                proc.wait(timeout=_HANG)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    assert proc.returncode == 0, err[-3000:]
    return [json.loads(line) for line in out.splitlines()], err


def _choice(env: dict[str, str]) -> list[str]:
    """The backend a fresh process picks, and whether it started no background compile (one it
    did start is killed and reaped at once: the assertion then fails, nothing is left behind)."""
    code = (
        "import os, signal\n"
        "from neardup._kernels import engine\n"
        "name, child = engine.backend_name(), engine.background_process()\n"
        "print(name, child is None)\n"
        "if child is not None:\n"
        "    os.killpg(child.pid, signal.SIGKILL)\n"
        "    child.wait()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=_HANG,
    )
    return done.stdout.split()


def _expected(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The clusters of ``_TEXTS``, on numpy in this process (no kernel, no shared cache)."""
    from neardup import dedup

    monkeypatch.setenv("NEARDUP_BACKEND", "reference")
    return [list(c.members) for c in dedup(_TEXTS, method="minhash", threshold=0.5).clusters]


def _build_dir(root: Path) -> Path:
    from neardup._kernels import cache

    return root / "kernels" / cache.build_key()


def test_first_call_runs_on_numpy_while_one_process_compiles(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("numba")
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(_ONE_KERNEL_WARMUP)
    path = os.pathsep.join(p for p in (str(hook), os.environ.get("PYTHONPATH", "")) if p)
    root = tmp_path / "cache"  # this test's own kernel cache, empty
    build = _build_dir(root)
    first, err = _run(root, _TEXTS, PYTHONPATH=path)
    assert first[0]["backend"] == "reference"  # this call did not wait for the compile
    assert first[0]["child"] is True
    assert first[0]["compiled"] == 0
    assert first[0]["clusters"] == _expected(monkeypatch) != []
    assert first[1]["rc"] == 0, (build / "warmup.log").read_text()
    assert (build / "complete").exists()
    assert not (build / "warmup.failed").exists()
    assert "warmup:" in (build / "warmup.log").read_text()
    again, err = _run(root, None)
    assert again[0]["backend"] == "fast"
    assert again[0]["child"] is False
    assert again[0]["compiled"] == 0  # loaded what the background process compiled
    assert again[0]["loaded"] > 0
    assert again[0]["roots"] == first[0]["roots"]
    assert "background" not in err


def test_busy_lock_means_numpy_at_once_and_no_second_compile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("numba")
    from filelock import FileLock

    build = _build_dir(tmp_path)
    build.mkdir(parents=True)
    docs = tmp_path / "docs"
    docs.mkdir()
    for i, text in enumerate(_TEXTS):
        (docs / f"{i}.txt").write_text(text)
    with FileLock(str(build / ".lock")):  # as a compile under way holds it
        # both processes end while this lock is held: neither waited for it (a wait is 900 s,
        # longer than _HANG)
        done = subprocess.run(
            [sys.executable, "-m", "neardup", "dedup", str(docs), "--threshold", "0.5"],
            env=_env(tmp_path),
            capture_output=True,
            text=True,
            timeout=_HANG,
        )
        runs, _ = _run(tmp_path, _TEXTS)
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if "numpy backend" in line]
    assert len(lines) == 1 and "being compiled by another process" in lines[0]
    assert runs[0]["backend"] == "reference"
    assert runs[0]["child"] is False
    assert runs[0]["clusters"] == _expected(monkeypatch)
    assert sorted(p.name for p in build.iterdir()) == [".lock"]  # nothing compiled or started


@pytest.mark.parametrize(
    ("extra", "backend"),
    [
        ({"NEARDUP_BACKGROUND_COMPILE": "0"}, "fast"),  # compile in the foreground, as before
        ({"NEARDUP_BACKEND": "fast"}, "fast"),  # numba asked for: never numpy
        ({"NEARDUP_BACKEND": "reference"}, "reference"),
    ],
)
def test_switches_start_no_background_compile(
    tmp_path: Path, extra: dict[str, str], backend: str
) -> None:
    pytest.importorskip("numba")
    assert _choice(_env(tmp_path, **extra)) == [backend, "True"]
    assert not list(tmp_path.rglob("warmup.log"))


def test_a_failed_background_compile_hands_over_to_the_foreground(tmp_path: Path) -> None:
    pytest.importorskip("numba")
    build = _build_dir(tmp_path)
    build.mkdir(parents=True)
    (build / "warmup.failed").write_text("RuntimeError: boom\n")
    assert _choice(_env(tmp_path)) == ["fast", "True"]


def test_an_unusable_cache_directory_means_the_foreground_path(tmp_path: Path) -> None:
    pytest.importorskip("numba")
    root = tmp_path / "a-file"
    root.write_text("not a directory")
    assert _choice(_env(root)) == ["fast", "True"]  # as before: no crash, nothing started


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["--pairs"],
        ["--canonicalize", "secure"],
        ["--method", "simhash"],
        ["--method", "simhash", "--canonicalize", "secure"],
    ],
)
def test_after_warmup_a_cli_run_needs_no_new_kernel(tmp_path: Path, args: list[str]) -> None:
    """Every kernel signature the CLI's JSONL path uses is one warmup made (a gap would be
    compiled in the foreground on a user's first run, after the background compile)."""
    pytest.importorskip("numba")
    from neardup._kernels import cache

    warmup()
    path = tmp_path / "in.jsonl"
    lines = [json.dumps({"id": i, "text": f"{_TEXTS[i % 5]} ünï {i % 3}"}) for i in range(40)]
    path.write_text("\n".join(lines) + "\n")
    before = cache.compiles()
    result = CliRunner().invoke(main, ["dedup", str(path), "--threshold", "0.5", "-q", *args])
    assert result.exit_code == 0, result.output
    after = cache.compiles()
    assert after == before, "a kernel signature that warmup() does not make"


@pytest.mark.parametrize(
    "args",
    [
        ["lines", "--min-docs", "2"],
        ["lines", "--min-docs", "2", "--unit", "paragraph"],
        ["substrings", "--min-length", "8"],
    ],
)
def test_after_warmup_the_corpus_commands_need_no_new_kernel(
    tmp_path: Path, args: list[str]
) -> None:
    """``neardup lines`` and ``neardup substrings`` use only kernel signatures warmup made."""
    pytest.importorskip("numba")
    from neardup._kernels import cache

    warmup()
    path = tmp_path / "in.jsonl"
    lines = [
        json.dumps({"id": i, "text": f"{_TEXTS[i % 5]} ünï\nshared footer line\n\nlast {i}"})
        for i in range(40)
    ]
    path.write_text("\n".join(lines) + "\n")
    before = cache.compiles()
    command, *rest = args
    out = tmp_path / "out.jsonl"
    result = CliRunner().invoke(main, [command, str(path), "--output", str(out), *rest])
    assert result.exit_code == 0, result.output
    assert cache.compiles() == before, "a kernel signature that warmup() does not make"
