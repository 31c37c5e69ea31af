"""Start-up cuts that only the ``neardup`` process may make (never the library).

numba's ``numba.np.arraymath`` probes for BLAS when it is imported (numba 0.68:
``_HAVE_BLAS = _check_blas()``, which calls ``numba.np.linalg.ensure_blas`` and so imports
``scipy.linalg``; about 0.3 CPU-s, the largest fixed cost of a warm run). The flag it sets is read
in one place only, ``_get_inner_prod``, which picks BLAS for ``np.convolve``/``np.correlate`` of
floats. No neardup kernel calls them, so in the CLI process the probe is answered "no BLAS"
without importing scipy. Every real linear-algebra call (``np.dot``, ``np.linalg.*``) still calls
``ensure_blas`` itself, at compile time, and gets the real one: it is restored as soon as the probe
has run. A library user's process is never touched, since their own numba code may want BLAS.

A command whose whole input is small (below ``engine.small_input()``, 512 KiB unless
``NEARDUP_SMALL_INPUT`` says otherwise) runs on the numpy
twins without importing numba at all (:func:`numpy_for_small_input`): for such inputs, loading
numba and its kernels costs more than the work (same results, bit for bit).

Likewise ``numba.misc.coverage_support`` imports ``coverage`` (if installed) only to report the
lines of compiled code to a running coverage measurement. When ``coverage`` is not already
imported, nothing is measuring the CLI process, so that import is skipped (and only that one: a
later ``import coverage`` works as usual). And ``numba.core.config`` imports PyYAML (about 0.04
CPU-s) only to read a ``.numba_config.yaml`` in the working directory: without that file the
import is skipped the same way.
"""

from __future__ import annotations

import importlib.machinery
import os
import sys
from collections.abc import Iterable, Sequence
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # importlib.abc imports importlib.resources: ~0.02 CPU-s the CLI never needs
    import importlib.abc

__all__ = [
    "AOT_COMMANDS",
    "aot_for_start",
    "numpy_for_small_input",
    "one_blas_thread",
    "skip_blas_probe",
]

_ARRAYMATH = "numba.np.arraymath"
_COVERAGE_SUPPORT = "numba.misc.coverage_support"


_CONFIG = "numba.core.config"
#: numba reads this file (with PyYAML) from the working directory, if it exists.
_NUMBA_CONFIG_FILE = ".numba_config.yaml"


class _Without:
    """Runs one module with ``import <blocked>`` failing, then lets it import again (a loader:
    the import system calls ``create_module`` and ``exec_module``, no base class needed)."""

    def __init__(self, loader: importlib.abc.Loader, blocked: str) -> None:
        self._loader = loader
        self._blocked = blocked

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        sys.modules[self._blocked] = None  # type: ignore[assignment]
        try:
            self._loader.exec_module(module)
        finally:
            if sys.modules.get(self._blocked, 0) is None:
                del sys.modules[self._blocked]


class _BlasProbeFinder:
    """Answers numba's import-time BLAS probe once, then leaves the import system as it was
    (a meta path finder: the import system calls ``find_spec``)."""

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname == _COVERAGE_SUPPORT and "coverage" not in sys.modules:
            return self._without("coverage", fullname, path)  # nothing is measuring
        if (
            fullname == _CONFIG
            and "yaml" not in sys.modules
            and not os.path.exists(_NUMBA_CONFIG_FILE)
        ):
            return self._without("yaml", fullname, path)  # no config file to parse
        if fullname != _ARRAYMATH:
            return None
        sys.meta_path[:] = [finder for finder in sys.meta_path if finder is not self]
        try:
            import numba.np.linalg as linalg
        except ImportError:  # pragma: no cover - numba layout changed; probe as usual
            return None
        real = getattr(linalg, "ensure_blas", None)
        if real is None:  # pragma: no cover - numba layout changed; probe as usual
            return None

        def probe() -> None:
            # called once, by arraymath._check_blas, while arraymath executes
            linalg.ensure_blas = real
            module = sys.modules.get(_ARRAYMATH)
            if module is not None:
                module.ensure_blas = real  # type: ignore[attr-defined]
            raise ImportError("BLAS probe skipped by the neardup command line")

        linalg.ensure_blas = probe
        return None  # the normal finders import arraymath, which runs the probe

    @staticmethod
    def _without(
        blocked: str, fullname: str, path: Sequence[str] | None
    ) -> importlib.machinery.ModuleSpec | None:
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None:  # pragma: no cover - numba layout changed
            return None
        spec.loader = _Without(spec.loader, blocked)  # type: ignore[assignment]  # duck-typed
        return spec


def skip_blas_probe() -> None:
    """Make numba skip its import-time scipy.linalg probe, if numba has not made it yet."""
    if _ARRAYMATH in sys.modules:
        return
    if not any(isinstance(finder, _BlasProbeFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _BlasProbeFinder())


#: The commands whose kernels the ahead-of-time module holds (``neardup._kernels.aot.EXPORTS``):
#: ``dedup`` with these methods, and the corpus commands.
AOT_COMMANDS = frozenset({"minhash", "exact", "lines", "substrings"})


def aot_for_start(method: str) -> bool:
    """Run the command's kernels from the ahead-of-time module (``engine.use_aot``), if this
    build has one and ``method`` is in :data:`AOT_COMMANDS` (the kernels it holds); returns
    whether it does. The module's kernels release the GIL, so ``--jobs`` threads run them at
    once, and a process that loads it does not import numba (about 0.9 CPU-s less)."""
    from neardup._kernels import engine

    if method not in AOT_COMMANDS:
        return False
    return engine.use_aot()


#: Variables by which a user (or a parent process) sets OpenBLAS's thread count.
_BLAS_THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")


def one_blas_thread(args: Sequence[str]) -> bool:
    """Start OpenBLAS (loaded with numpy) with one thread when the command line ``args`` (what
    follows ``neardup``) runs ``lines``, ``substrings`` or ``dedup`` with a method of
    :data:`AOT_COMMANDS`, numpy is not imported yet and no thread count is set; returns whether
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
        if method not in AOT_COMMANDS:
            return False
    elif command not in ("lines", "substrings"):
        return False
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    return True


def numpy_for_small_input(paths: Iterable[str]) -> bool:
    """Run this process on numpy (``engine.prefer_numpy``) when the files of ``paths`` hold
    fewer than ``engine.small_input()`` bytes together; returns whether it does. Counting stops
    as soon as the sum passes the limit; stdin (``-``) or a path that cannot be read counts as
    large."""
    from neardup._kernels import engine

    limit = engine.small_input()
    if limit and _bytes_below(paths, limit):
        return engine.prefer_numpy()
    return False


def _bytes_below(paths: Iterable[str], limit: int, *, max_entries: int = 10_000) -> bool:
    """Whether the files of ``paths`` total fewer than ``limit`` bytes; a symbolic link to a
    folder, stdin or more than ``max_entries`` entries count as large."""
    total = 0
    seen = 0
    stack = [(path, True) for path in paths]
    try:
        while stack:
            path, given = stack.pop()
            seen += 1
            if path == "-" or seen > max_entries:
                return False
            if os.path.isdir(path):
                if not given and os.path.islink(path):
                    return False
                with os.scandir(path) as entries:
                    stack.extend((entry.path, False) for entry in entries)
                continue
            total += os.path.getsize(path)
            if total >= limit:
                return False
    except OSError:
        return False
    return True
