"""Start-up and exit cuts that only the ``neardup`` process may make (never the library)."""

from __future__ import annotations

import atexit
import os
import sys
import threading
from collections.abc import Sequence

__all__ = ["NO_BLAS_METHODS", "end_process", "one_blas_thread"]

#: The ``dedup`` methods whose run does no linear algebra (nor do ``lines`` and ``substrings``).
NO_BLAS_METHODS = frozenset({"minhash", "exact"})


#: Variables by which a user (or a parent process) sets OpenBLAS's thread count.
_BLAS_THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")


def one_blas_thread(args: Sequence[str]) -> bool:
    """Start OpenBLAS (loaded with numpy) with one thread when the command line ``args`` (what
    follows ``neardup``) runs ``lines``, ``substrings`` or ``dedup`` with a method of
    :data:`NO_BLAS_METHODS`, numpy is not imported yet and no thread count is set; returns whether
    it did. Those kernels do no linear algebra: OpenBLAS's worker threads would only spin at
    start-up (about 0.1 CPU-s and 0.05 s of a 0.4 s run on two cores). It must run before
    the command's module is imported (which imports numpy), so the method is read from
    ``args`` here; a misread costs only that spin, never a result. The variable is inherited
    by child processes (Spark's Python workers run the same kernels)."""
    if "numpy" in sys.modules or any(v in os.environ for v in _BLAS_THREAD_VARS):
        return False
    rest = [a for a in args if a not in ("-v", "-vv", "-vvv", "--verbose")]
    command = rest[0] if rest else ""
    if command == "dedup":
        method = "minhash"
        for k, arg in enumerate(rest):
            if arg in ("--method", "-m") and k + 1 < len(rest):
                method = rest[k + 1]
            elif arg.startswith("--method="):
                method = arg.split("=", 1)[1]
            elif arg.startswith("-m") and not arg.startswith("--"):
                method = arg[2:]
        if method not in NO_BLAS_METHODS:
            return False
    elif command not in ("lines", "substrings"):
        return False
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    return True


def end_process() -> None:
    """End the process whose command succeeded without the interpreter's teardown: the exit
    functions run (logging's flush, temporary folders' removal, a coverage tool's save) and
    stdout and stderr are flushed as at a normal exit, then ``os._exit`` skips the rest: a
    last garbage collection and the freeing of every module and object, 0.05 of the 0.65 G
    instructions of a short ``neardup dedup`` (and 0.03-0.05 CPU-s after 100k documents),
    for a process that is about to end anyway. Returns (and the interpreter ends the process
    as usual) when another Python thread is still running (the interpreter would wait for
    it), or under a tracer or profiler (a debugger, coverage, ``python -m cProfile``), which
    report at the interpreter's exit. Every file the commands write is closed before they
    return (atomic writes rename a closed file), so nothing waits for that teardown."""
    if threading.active_count() > 1:
        return
    if sys.gettrace() is not None or sys.getprofile() is not None:
        return
    atexit._run_exitfuncs()
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:  # no console (pythonw)
                stream.flush()
    except (OSError, ValueError):  # a closed or broken stream: the interpreter reports it
        return
    os._exit(0)
