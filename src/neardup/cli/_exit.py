"""The end of a ``neardup`` process: once every output is flushed, the process ends at once.

Python's own shutdown frees every object and module one by one, and a run that loaded numba
and its kernels holds many (LLVM modules, type caches, the compiled dispatchers): about 0.2
CPU-s of a 100k-document ``neardup dedup`` run goes to that teardown, while the operating
system takes the whole address space back in a fraction of it. :func:`exit_now` flushes the
two output streams and the log handlers, then calls :func:`os._exit` with status 0.

It does so only in a real ``neardup`` process: it returns (and the process ends as usual)
when ``sys.stdout`` or ``sys.stderr`` is not the process's own (click's test runner, pytest's
capture, a program that called the command in-process), when ``coverage`` is loaded (it saves
its data at exit), when a thread that is not a daemon still runs, when a stream cannot be
flushed (a closed pipe: Python's shutdown reports it as before), when the process is not the
``neardup`` command itself (a script that calls :func:`neardup.cli.main`), or when the
environment sets ``NEARDUP_FAST_EXIT=0`` (``1`` ends any such process early, for tests).
"""

from __future__ import annotations

import logging
import os
import sys
import threading

__all__ = ["exit_now"]


def _others_running() -> bool:
    main = threading.main_thread()
    return any(t is not main and not t.daemon and t.is_alive() for t in threading.enumerate())


def _is_the_command() -> bool:
    """Whether this process is ``neardup`` (the console script or ``python -m neardup``), not
    a program that called the command's function."""
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    name = os.path.basename(sys.argv[0]) if sys.argv else ""
    return name in ("neardup", "neardup.exe") or getattr(spec, "name", "") == "neardup.__main__"


def exit_now() -> None:
    """End this process with status 0 if it is a plain ``neardup`` run (see the module)."""
    wanted = os.environ.get("NEARDUP_FAST_EXIT", "")
    if wanted == "0" or (wanted != "1" and not _is_the_command()):
        return
    out, err = sys.stdout, sys.stderr
    if out is not sys.__stdout__ or err is not sys.__stderr__ or out is None or err is None:
        return
    if "coverage" in sys.modules or _others_running():
        return
    try:
        out.flush()
        err.flush()
    except (OSError, ValueError):
        return  # a closed pipe or stream: the usual shutdown reports it
    logging.shutdown()
    os._exit(0)
