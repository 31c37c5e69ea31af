"""The CLI's start-up cut: OpenBLAS starts one thread for the commands that do no linear
algebra (``neardup.cli._startup.one_blas_thread``), unless the user set a count."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


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
        ("simhash", {}, "blas None"),  # not a method of NO_BLAS_METHODS: untouched
    ],
)
def test_one_blas_thread_for_the_text_kernels(
    tmp_path: Path, method: str, env: dict[str, str], want: str
) -> None:
    folder = _corpus(tmp_path)
    full = {
        k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")
    }
    full.update(env)
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


#: Modules that ``neardup dedup FILE.jsonl`` (minhash, no outputs) must not import: the other
#: commands' modules, the readers of other formats, the report writers beyond JSONL, the
#: store, Spark, images, embeddings, the service, and the progress display's dependencies.
_NOT_ON_THE_DEDUP_PATH = (
    "neardup.cli.corpus",
    "neardup.cli.eval",
    "neardup.cli.hash",
    "neardup.cli.index",
    "neardup.cli.plan",
    "neardup.cli.serve",
    "neardup.cli.spark",
    "neardup.readers",
    "neardup.report.html",
    "neardup.report.diff",
    "neardup.store",
    "neardup.spark",
    "neardup.serve",
    "neardup.image",
    "neardup.embeddings",
    "neardup.methods.image",
    "neardup.methods.embedding",
    "neardup.methods.binary",
    "neardup.methods.exact",
    "neardup.corpus.exact",
    "neardup.corpus.annotate",
    "neardup.corpus.output",
    "csv",
    "sqlite3",
    "tqdm",
    "rich",
)

_MODULES = """
import sys
from neardup.cli import main
try:
    main(sys.argv[1:], prog_name="neardup")
except SystemExit as exc:
    assert not exc.code, exc.code
print(" ".join(sorted(sys.modules)), file=sys.stderr)
"""


def test_dedup_of_a_jsonl_file_imports_only_its_path(tmp_path: Path) -> None:
    """The start-up of ``neardup dedup FILE`` is mostly imports: each module above that it
    loaded would cost start-up time on every run for nothing."""
    src = tmp_path / "in.jsonl"
    text = "the quick brown fox jumps over the lazy dog near the river bank"
    src.write_text(
        "".join(f'{{"id": "{i}", "text": "{text} {i // 2}"}}\n' for i in range(6)),
        encoding="utf-8",
    )
    done = subprocess.run(
        [sys.executable, "-c", _MODULES, "dedup", str(src), "--threshold", "0.5", "-q"],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    loaded = set(done.stderr.split())
    assert "neardup.pipeline" in loaded  # the run went through the library
    assert '"members"' in done.stdout  # and found the copies
    unwanted = sorted(
        m for m in loaded for n in _NOT_ON_THE_DEDUP_PATH if m == n or m.startswith(n + ".")
    )
    assert unwanted == []


#: A ``neardup`` process as the console script runs it, with an exit function and an object
#: that only the interpreter's teardown deletes, to see which of them ran.
_RUN = """
import atexit, sys
from neardup.cli import run

class Teardown:
    def __del__(self):
        sys.stderr.write("teardown ran\\n")

kept = Teardown()
atexit.register(lambda: sys.stderr.write("exit functions ran\\n"))
sys.argv[0] = "neardup"
run()
"""


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    # untraced: under a tracer (a coverage tool measuring subprocesses) the process exits as usual
    env = {k: v for k, v in os.environ.items() if not k.startswith("COVERAGE_PROCESS_")}
    return subprocess.run(
        [sys.executable, "-c", _RUN, *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
        env=env,
    )


def test_a_command_that_succeeds_ends_without_the_teardown(tmp_path: Path) -> None:
    """The exit functions run and the outputs are whole; the teardown is skipped."""
    src = tmp_path / "in.jsonl"
    texts = [" ".join(f"w{i // 2 * 40 + j}" for j in range(40)) + f" x{i % 2}" for i in range(200)]
    src.write_text(
        "".join(f'{{"id": "{i}", "text": "{t}"}}\n' for i, t in enumerate(texts)),
        encoding="utf-8",
    )
    out, ann, rep = tmp_path / "kept.jsonl", tmp_path / "ann.jsonl", tmp_path / "r.html"
    args = ["dedup", str(src), "--threshold", "0.8", "-o", str(out), "--annotate", str(ann)]
    done = _run(*args, "--report", str(rep))
    assert done.returncode == 0, done.stderr
    assert "exit functions ran" in done.stderr
    assert "teardown ran" not in done.stderr
    assert "neardup: 200 documents, 100 clusters" in done.stderr  # the summary, flushed
    assert len(done.stdout.splitlines()) == 100  # every cluster, flushed
    # every file written is whole: as the same command writes them in this process
    from click.testing import CliRunner

    from neardup.cli import main

    same = [tmp_path / "kept2.jsonl", tmp_path / "ann2.jsonl", tmp_path / "r2.html"]
    args = ["dedup", str(src), "--threshold", "0.8", "-o", str(same[0]), "--annotate"]
    result = CliRunner().invoke(main, [*args, str(same[1]), "--report", str(same[2])])
    assert result.exit_code == 0, result.output
    assert result.stdout == done.stdout
    assert out.read_bytes() == same[0].read_bytes() and len(out.read_bytes()) > 0
    assert ann.read_bytes() == same[1].read_bytes()
    assert len(rep.read_bytes()) == len(same[2].read_bytes()) > 0


@pytest.mark.parametrize(("args", "code"), [(["dedup", "/nonexistent"], 1), (["dedup"], 2)])
def test_a_command_that_fails_exits_as_usual(args: list[str], code: int) -> None:
    done = _run(*args)
    assert done.returncode == code
    assert "exit functions ran" in done.stderr
    assert "teardown ran" in done.stderr


def test_the_collector_is_off_for_the_start_up_only() -> None:
    """``python -m neardup`` turns the garbage collector off before its imports and back on
    (with the start-up's objects frozen) when the command's function starts."""
    probe = """
import gc
from neardup._gc import pause_for_startup

pause_for_startup()
from neardup.cli.options import errors

seen = []
command = errors(lambda: seen.append(gc.isenabled()))  # what every command wears
print(gc.isenabled(), end=" ")
command()
print(seen[0], gc.get_freeze_count() > 1000)
"""
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=600
    )
    assert done.stdout.split() == ["False", "True", "True"]


def test_a_caller_s_collector_is_left_alone() -> None:
    import gc

    from neardup._gc import resume_after_startup

    frozen = gc.get_freeze_count()  # a server started in-process by another test froze some
    gc.disable()
    try:
        resume_after_startup()  # the start-up did not pause it: nothing to resume
        assert not gc.isenabled()
    finally:
        gc.enable()
    resume_after_startup()
    assert gc.isenabled() and gc.get_freeze_count() == frozen


def test_the_collector_is_off_for_a_dedup_command_s_run() -> None:
    """In the ``neardup`` process, the collector goes off for the rest of a dedup command
    (the process ends by ``os._exit``); in any other (this test runner) it is left alone."""
    probe = """
import gc
from neardup._gc import off_for_the_command, pause_for_startup

pause_for_startup()
off_for_the_command()  # still in the start-up: nothing to do
print(gc.isenabled(), end=" ")
from neardup.cli.options import errors

seen = []
command = errors(lambda: (seen.append(gc.isenabled()), off_for_the_command()))
command()
print(seen[0], gc.isenabled())
"""
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=600
    )
    assert done.stdout.split() == ["False", "True", "False"]


def test_off_for_the_command_leaves_a_caller_s_collector_alone() -> None:
    import gc

    from neardup._gc import off_for_the_command

    off_for_the_command()  # this process did not start as neardup
    assert gc.isenabled()
