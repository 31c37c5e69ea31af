"""The on-disk cache of compiled numba kernels: one directory per exact build, under a file lock.

numba's own ``cache=True`` writes next to the sources (``__pycache__``) and decides freshness
from the function's own file, line and bytecode. It cannot see what else is frozen into the
machine code: module globals (numba compiles them in as constants, so a value patched before
the first compile is served to every later process), kernels inlined from other files, the
numba / llvmlite / numpy versions that generated the code. Its index is also read, changed and
rewritten without a lock, so two processes compiling the same function at once can lose each
other's entries or number two data files alike (``docs/engine.md`` tells the whole story).

Every kernel of :mod:`neardup._kernels` is made with :func:`njit`, which attaches this
module's cache instead:

* the directory is ``<root>/kernels/<build key>/<family>``: the build key hashes every source
  file of the kernel families (``_kernels/<family>/``) and of this module, the numba,
  llvmlite, numpy and Python versions, the CPU name and features numba targets, and the
  numba options that change code generation. Code built from anything else lives elsewhere
  and is never loaded;
* each entry's key adds a hash of the constant globals the kernel (and every kernel it calls)
  reads, so code compiled while a global was patched is never served when it is not;
* every function numba compiles gets a random 63-bit id (:func:`_use_random_ids`) instead of
  numba's per-process counter 1, 2, 3, ...: the id is part of each machine-code symbol, and
  with counters two processes name *different* functions alike (the sort and the argsort
  ``partition`` helper of int64 arrays, say). A process that loads entries written by both
  links each call to whichever definition it loaded first, and runs the wrong code
  (issue 16, ``docs/engine.md``). An entry that holds any counter-numbered symbol (compiled
  before this module was imported) is never saved, and one whose signature is not the one
  asked for is never loaded;
* loads, compiles and saves happen under one re-entrant file lock per build (``filelock``):
  a kernel is compiled once, by one process, while the others wait and then load it; index
  and data files are replaced atomically, so a reader never sees half of a write. A process
  that cannot get the lock neither loads nor saves: it compiles in memory;
* the first compile in a process logs one INFO line on ``neardup._kernels.cache`` (the CLI
  shows it); :func:`neardup.warmup.warmup` (``neardup warmup``) compiles everything ahead.

The root is ``NEARDUP_CACHE_DIR``, else ``$NUMBA_CACHE_DIR/neardup``, else
``$XDG_CACHE_HOME/neardup`` (``~/.cache/neardup``).
"""

from __future__ import annotations

import hashlib
import importlib
import logging
import os
import re
import sys
import threading
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

__all__ = [
    "build_key",
    "cache_root",
    "compiles",
    "kernel_dir",
    "locked",
    "njit",
    "quiet",
]

log = logging.getLogger(__name__)

_F = TypeVar("_F", bound=Callable[..., Any])
_PACKAGE = Path(__file__).resolve().parent
_PREFIX = "neardup._kernels."
#: Bump when this module changes what it stores or how entries are keyed (its bytes are in
#: the build key too).
_FORMAT = 2
#: Function ids drawn by :func:`unique_ids` lie in ``[2**62, 2**63)``; numba's own counter
#: stays far below.
_RANDOM_ID = 1 << 62
#: numba's id of a function in a mangled symbol: the Itanium ABI tag ``B<length>v<id>``.
_ID_TAG = re.compile(r"B(\d+)v(\d+)")
#: Seconds to wait for another process's compile before compiling without the disk cache.
LOCK_TIMEOUT = 900.0
#: The numba options (``numba.core.config``) that change the machine code numba generates.
_CODEGEN_OPTIONS = (
    "OPT",
    "BOUNDSCHECK",
    "FASTMATH",
    "DEBUGINFO_DEFAULT",
    "CPU_NAME",
    "CPU_FEATURES",
    "ENABLE_AVX",
    "DISABLE_INTEL_SVML",
)

_state = threading.local()
_counts = {"compiled": 0, "loaded": 0, "missed": 0, "unsaved": 0}


def cache_root() -> Path:
    """The directory that holds one subdirectory per build (see the module docstring)."""
    own = os.environ.get("NEARDUP_CACHE_DIR", "").strip()
    if own:
        return Path(own).expanduser()
    numba_dir = os.environ.get("NUMBA_CACHE_DIR", "").strip()
    if numba_dir:
        return Path(numba_dir).expanduser() / "neardup"
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "neardup"


def _keyed_sources() -> list[Path]:
    """The files whose bytes are in the build key: every kernel source and this module."""
    return [*_PACKAGE.glob("*/*.py"), *_PACKAGE.glob("fast_*.py"), _PACKAGE / "cache.py"]


@cache
def build_key() -> str:
    """Hash of everything that decides the kernels' machine code (24 hex digits).

    Covers the bytes of every ``.py`` file of the kernel families (``_kernels/<family>/``
    and ``_kernels/fast_*.py``, where every kernel lives: a change in one kernel's callee
    recompiles its callers) and of this module, its format version, the numba, llvmlite, numpy and
    Python versions, the target triple, CPU name and features numba compiles for, and
    numba's code-generation options.
    """
    import llvmlite  # type: ignore[import-untyped]
    import numba
    import numpy
    from numba.core import config
    from numba.core.registry import cpu_target

    h = hashlib.sha256()
    h.update(f"neardup-kernel-cache-{_FORMAT}".encode())
    for path in sorted(_keyed_sources()):
        h.update(path.relative_to(_PACKAGE).as_posix().encode())
        h.update(b"\0")
        h.update(path.read_bytes())
        h.update(b"\0")
    magic = cpu_target.target_context.codegen().magic_tuple()
    options = tuple(str(getattr(config, name, None)) for name in _CODEGEN_OPTIONS)
    parts = (numba.__version__, llvmlite.__version__, numpy.__version__, sys.version, magic)
    h.update(repr(parts + options).encode())
    return h.hexdigest()[:24]


def kernel_dir() -> Path:
    """This build's cache directory: ``cache_root() / "kernels" / build_key()``."""
    return cache_root() / "kernels" / build_key()


@cache
def _lock() -> Any:
    from filelock import FileLock

    root = kernel_dir()
    root.mkdir(parents=True, exist_ok=True)
    # not thread-local: the lock keeps other processes out, and a thread that compiles while
    # another thread of this process holds it (warmup, --jobs) must not wait for it
    return FileLock(str(root / ".lock"), timeout=LOCK_TIMEOUT, thread_local=False)


def _acquire() -> bool:
    """Take one level of the build lock; ``False`` when it timed out (then cache nothing)."""
    from filelock import Timeout

    try:
        _lock().acquire()
    except Timeout:
        log.warning(
            "the kernel cache %s stayed locked for %.0f s; compiling without it",
            kernel_dir(),
            LOCK_TIMEOUT,
        )
        return False
    return True


@contextmanager
def locked() -> Iterator[None]:
    """Hold the build lock (re-entrant): no other process loads or compiles meanwhile."""
    held = _acquire()
    try:
        yield
    finally:
        if held:
            _lock().release()


def compiles() -> dict[str, int]:
    """Kernels compiled, loaded from disk, looked up in vain (a miss, which may be retried
    with literal argument types), and compiled but not saved (no lock, or numbered by
    numba's counter: see :func:`_saveable`) by this process so far."""
    return dict(_counts)


def _constants(fn: Callable[..., Any], seen: set[int]) -> list[tuple[str, str]]:
    """The constant globals ``fn`` reads, and those of the kernels it calls, as (name, digest).

    numba compiles a global's value into the machine code; numba's own cache key ignores it.
    """
    from numba.core.dispatcher import Dispatcher

    out: list[tuple[str, str]] = []
    if id(fn) in seen:
        return out
    seen.add(id(fn))
    scope = getattr(fn, "__globals__", {})
    names: set[str] = set()
    stack = [fn.__code__]
    while stack:
        code = stack.pop()
        names.update(code.co_names)
        stack.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    for name in sorted(names):
        value = scope.get(name)
        if isinstance(value, types.ModuleType):
            if value.__name__.startswith(_PREFIX):  # kernels or constants as module.attribute
                for attr in sorted(names):
                    inner = getattr(value, attr, None)
                    if isinstance(inner, Dispatcher):
                        out.extend(_constants(inner.py_func, seen))
                    elif (digest := _digest(inner)) is not None:
                        out.append((f"{value.__name__}.{attr}", digest))
        elif isinstance(value, Dispatcher):
            out.extend(_constants(value.py_func, seen))
        elif (digest := _digest(value)) is not None:
            out.append((name, digest))
    return out


def _digest(value: object) -> str | None:
    """A stable text for a constant numba would freeze (``None`` for anything else)."""
    import numpy as np

    if isinstance(value, np.ndarray):
        return f"{value.dtype}{value.shape}:{hashlib.sha256(value.tobytes()).hexdigest()}"
    if isinstance(value, bool | int | float | complex | str | bytes | tuple | np.generic):
        return repr(value)
    return None


class _RandomIds:
    """Stands in for numba's ``FunctionIdentity._unique_ids`` counter: a fresh random id in
    ``[2**62, 2**63)`` per compiled function, from the OS (so forked processes differ too)."""

    def __iter__(self) -> _RandomIds:
        return self

    def __next__(self) -> int:
        import secrets  # here: a process that loads the ahead-of-time kernels never compiles

        return _RANDOM_ID | secrets.randbits(62)


def _use_random_ids() -> None:
    """Give every function numba compiles from now on a random id (see the module docstring).

    numba names each compiled function's symbol after its qualified name, argument types and
    ``FunctionIdentity.unique_id``, a counter that starts at 1 in every process. Within one
    process that is unique; across processes it is not, and the kernel cache links code of
    many processes into one. Random ids make two compiles' symbols differ (a collision among
    a million functions has odds of about 1e-7).
    """
    bytecode: Any = importlib.import_module("numba.core.bytecode")
    if not isinstance(bytecode.FunctionIdentity._unique_ids, _RandomIds):
        bytecode.FunctionIdentity._unique_ids = _RandomIds()


def _symbol_ids(names: Iterator[str]) -> Iterator[int]:
    """numba's function ids in mangled symbol ``names`` (from their ``B<n>v<id>`` ABI tags)."""
    for name in names:
        for m in _ID_TAG.finditer(name):
            tag = name[m.start(2) - 1 : m.start(2) - 1 + int(m.group(1))]
            if tag[1:].isdigit():
                yield int(tag[1:])


def _saveable(cres: Any) -> bool:
    """Whether every symbol of a compile result carries a random id (:func:`_use_random_ids`).

    A helper numba compiled before this module was imported (say, for the caller's own jitted
    code) is numbered by numba's counter and may be linked into a kernel; saved, its symbol
    could name another process's different helper. Such a kernel is compiled, not cached.
    """
    module = cres.library._final_module
    names = (g.name for part in (module.functions, module.global_variables) for g in part)
    return all(uid >= _RANDOM_ID for uid in _symbol_ids(names))


def _entry_ok(sig: Any, data: Any) -> bool:
    """Whether a cache entry (numba's reduced ``CompileResult``) is for signature ``sig`` and
    was numbered by :func:`_use_random_ids`; checked before any of its code is linked in."""
    sigutils: Any = importlib.import_module("numba.core.sigutils")
    try:
        args = tuple(sigutils.normalize_signature(sig)[0])
        fndesc, signature = data[1], data[3]
        return tuple(signature.args) == args and int(fndesc.uid) >= _RANDOM_ID
    except (AttributeError, IndexError, TypeError, ValueError):
        return False


def _install() -> type:
    """Build :class:`KernelCache` on first use (numba is imported only here)."""
    # numba's caching classes, typed Any: their protocol is numba's, not ours
    caching: Any = importlib.import_module("numba.core.caching")
    event: Any = importlib.import_module("numba.core.event")
    rtsys: Any = importlib.import_module("numba.core.runtime.nrt").rtsys

    class _Locator(caching._CacheLocator):  # type: ignore[misc]
        def __init__(self, py_func: Callable[..., Any], py_file: str) -> None:
            self._py_file = py_file
            self._lineno = py_func.__code__.co_firstlineno
            family = py_func.__module__[len(_PREFIX) :].split(".")[0]
            self._path = str(kernel_dir() / family)

        def ensure_cache_path(self) -> None:
            import tempfile  # only when compiling (never in a process that loads the AOT code)

            os.makedirs(self._path, exist_ok=True)
            tempfile.TemporaryFile(dir=self._path).close()

        def get_cache_path(self) -> str:
            return self._path

        def get_source_stamp(self) -> str:
            return build_key()

        def get_disambiguator(self) -> str:
            return str(self._lineno)

        @classmethod
        def from_function(cls, py_func: Callable[..., Any], py_file: str) -> _Locator | None:
            if not py_func.__module__.startswith(_PREFIX):
                return None
            return cls(py_func, py_file)

    class _Impl(caching.CompileResultCacheImpl):  # type: ignore[misc]
        _locator_classes = (_Locator,)

    class _KernelCache(caching.FunctionCache):  # type: ignore[misc]
        """numba's function cache, in this build's directory, keyed by constants, locked."""

        _impl_class = _Impl

        def _index_key(self, sig: Any, codegen: Any) -> tuple[Any, ...]:
            base = super()._index_key(sig, codegen)
            consts = repr(_constants(self._py_func, set())).encode()
            return (*base, hashlib.sha256(consts).hexdigest())

        def load_overload(self, sig: Any, target_context: Any) -> Any:
            # Load under the lock; on a miss keep holding it until save_overload (or the
            # compile failed, see _on_compile), so one process compiles while others wait.
            # Without the lock another process may be writing: compile in memory, no I/O.
            held = _acquire()
            if held:
                try:
                    cres = self._load_without_refresh(sig, target_context)
                except BaseException:
                    _lock().release()
                    raise
                if cres is not None:
                    _counts["loaded"] += 1
                    _lock().release()
                    return cres
            _pending().append((id(self), held))
            if not _counts["missed"] and not getattr(_state, "quiet", False):
                log.info(
                    "compiling numba kernels for this machine into %s (once per install; "
                    "`neardup warmup` does it ahead of time)",
                    kernel_dir(),
                )
            _counts["missed"] += 1
            return None

        def _load_without_refresh(self, sig: Any, target_context: Any) -> Any:
            # numba's load_overload first calls target_context.refresh(), which imports and
            # installs every lowering registry (about 0.3-0.5 CPU-s, most of a warm start).
            # Lowering is only needed to compile; loaded machine code needs the runtime's
            # symbols (NRT) linked in, and its own reload_init hooks, run by rebuild. A miss
            # compiles through numba's compiler, which refreshes the context itself.
            rtsys.initialize(target_context)
            return self._load_overload(sig, target_context)

        def _load_overload(self, sig: Any, target_context: Any) -> Any:
            # numba's, plus a check of the entry before its code is linked into the process
            if not self._enabled:
                return None
            data = self._cache_file.load(self._index_key(sig, target_context.codegen()))
            if data is None:
                return None
            if not _entry_ok(sig, data):
                log.warning(
                    "ignoring a kernel cache entry of %s that does not fit its signature",
                    self._py_func.__qualname__,
                )
                return None
            return self._impl.rebuild(target_context, data)

        def save_overload(self, sig: Any, data: Any) -> None:
            try:
                _counts["compiled"] += 1
                if _pending_held(id(self)) and _saveable(data):
                    super().save_overload(sig, data)
                else:
                    _counts["unsaved"] += 1
            finally:
                _release_pending(id(self))

    class _OnCompile(event.Listener):  # type: ignore[misc]
        def on_start(self, ev: Any) -> None:
            pass

        def on_end(self, ev: Any) -> None:
            # a failed compile (a typing attempt, a retry with literal types) never reaches
            # save_overload: release what its load_overload kept, and nothing else (inlined
            # kernels fail and retry without a load of their own)
            cache = getattr(ev.data.get("dispatcher"), "_cache", None)
            if ev.is_failed != inverted and isinstance(cache, _KernelCache):
                _release_pending(id(cache))

    # numba 0.68's Event.is_failed is inverted (True when no exception was raised); read it
    # through this probe so that a fixed numba works too. Trusting it released the lock of
    # every successful compile before its save (two processes then wrote one index at once)
    # and kept the lock of every failed typing attempt until the process ended.
    probe = event.Event("numba:compile", event.EventStatus.END, exc_details=None)
    inverted = bool(probe.is_failed)
    event.register("numba:compile", _OnCompile())
    return _KernelCache


def _pending() -> list[tuple[int, bool]]:
    """This thread's misses still holding the lock: (id of the cache, lock held), in order."""
    stack: list[tuple[int, bool]] | None = getattr(_state, "pending", None)
    if stack is None:
        stack = []
        _state.pending = stack
    return stack


def _pending_held(owner: int) -> bool:
    """Whether the latest miss of cache ``owner`` holds the lock (only then is it saved)."""
    for cache_id, held in reversed(_pending()):
        if cache_id == owner:
            return held
    return False


def _release_pending(owner: int) -> None:
    """Release the lock level kept by the latest miss of cache ``owner`` (if it has one)."""
    stack = _pending()
    for i in range(len(stack) - 1, -1, -1):
        if stack[i][0] == owner:
            _, held = stack.pop(i)
            if held:
                _lock().release()
            return


@cache
def _cache_class() -> type:
    """numba's ``FunctionCache`` subclass of this module (built on first use)."""
    return _install()


def njit(**options: Any) -> Callable[[Callable[..., Any]], Any]:
    """``numba.njit(nogil=True, **options)`` with this module's disk cache (nothing compiles here).

    Args:
        **options: numba options (``inline="always"``, ...); ``cache`` is always on.
    """

    def wrap(fn: Callable[..., Any]) -> Any:
        import numba

        _use_random_ids()
        dispatcher = numba.njit(nogil=True, **options)(fn)
        dispatcher._cache = _cache_class()(dispatcher.py_func)
        return dispatcher

    return wrap


@contextmanager
def quiet() -> Iterator[None]:
    """Do not log the first-compile message inside this block (warmup reports its own)."""
    before = getattr(_state, "quiet", False)
    _state.quiet = True
    try:
        yield
    finally:
        _state.quiet = before
