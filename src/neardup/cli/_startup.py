"""Start-up cuts that only the ``neardup`` process may make (never the library)."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

__all__ = ["NO_BLAS_METHODS", "one_blas_thread"]

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
