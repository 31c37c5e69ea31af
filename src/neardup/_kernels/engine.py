"""Backend selection and the batch operations every sketcher calls.

Kernels live by family. The compiled core ``neardup._native`` (a Rust crate built with the
package) has one submodule per ported family; ``neardup._kernels.<family>.reference`` is its
numpy twin with the same names, bits and errors. :func:`kernels` is the one selector, and
the choice is made once per process from ``NEARDUP_BACKEND``:

- ``native`` (default; ``auto`` is the same): the compiled module for every family it has.
  Without the extension (a source tree that was never built) the numpy twins run, and one
  line on the ``neardup._kernels`` logger says so.
- ``reference``: the numpy twins everywhere (the oracle of the parity tests).
- ``fast``: the families not yet in the native module run on numba whatever ``auto`` would
  choose (their twins ``neardup._kernels.<family>.fast``); native families stay native.

Families not yet in the native module run on numba (``fast.py``) as before: under ``auto``
or ``native`` a process that finds those kernels not yet compiled (no ``complete`` mark in
the kernel cache, :func:`kernels_ready`) does not compile them in the foreground: it starts
one detached ``neardup warmup --background`` process and runs those families on numpy
meanwhile. ``NEARDUP_BACKGROUND_COMPILE=0`` compiles in the foreground instead.
"""

from __future__ import annotations

import importlib
import logging
import os
import sys
import threading
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Literal, TypeVar

import numpy as np
import numpy.typing as npt

from neardup._kernels import tables
from neardup._kernels.spans import Packed, Spans, pack
from neardup.errors import ConfigError, MissingExtraError

if TYPE_CHECKING:  # imported where a background compile starts (not in a warm process)
    import subprocess

__all__ = [
    "FAMILIES",
    "HashName",
    "backend",
    "backend_name",
    "background_process",
    "compile_here",
    "direct",
    "hash_spans",
    "kernels",
    "kernels_ready",
    "native",
    "native_families",
    "prefer_numpy",
    "small_input",
    "tokenize_packed",
    "tokenize_texts",
    "use_aot",
]

HashName = Literal["fnv1a64", "xxh3_64", "xxh3_128"]
_HASHES = ("fnv1a64", "xxh3_64", "xxh3_128")

#: The kernel families: each is a package ``neardup._kernels.<family>`` with ``reference.py``
#: and ``fast.py``.
FAMILIES = (
    "affine",
    "buckets",
    "canonicalize",
    "ctph",
    "datasketch",
    "forest",
    "hamming",
    "hll",
    "jsonl",
    "lines",
    "lsh",
    "minhash",
    "pdq",
    "repeats",
    "sets",
    "sha1",
    "simhash",
    "text",
    "weighted",
    "xxh3",
)


_WANTED = ("auto", "native", "fast", "reference")
_log = logging.getLogger("neardup._kernels")


def _wanted() -> str:
    wanted = os.environ.get("NEARDUP_BACKEND", "auto").strip().lower() or "auto"
    if wanted not in _WANTED:
        raise ConfigError(
            f"NEARDUP_BACKEND={wanted!r} is not a backend; use native (the default) or reference"
        )
    return "native" if wanted == "auto" else wanted


@cache
def native() -> ModuleType | None:
    """The compiled module ``neardup._native``, or ``None`` (one log line says so) when
    ``NEARDUP_BACKEND=reference`` or the extension is missing. Decided once per process.

    Raises:
        ConfigError: ``NEARDUP_BACKEND`` has an unknown value.
    """
    if _wanted() == "reference":
        return None
    try:
        from neardup import _native  # type: ignore[attr-defined]
    except ImportError as exc:
        _log.warning(
            "neardup's compiled core is missing (%s), so the slower numpy kernels run; "
            "reinstall neardup (building from source needs a Rust toolchain)",
            exc,
        )
        return None
    module: ModuleType = _native
    return module


def native_families() -> tuple[str, ...]:
    """The families this process runs natively (none under ``NEARDUP_BACKEND=reference``)."""
    module = native()
    return tuple(f for f in FAMILIES if module is not None and hasattr(module, f))


def backend_name() -> str:
    """Return ``"fast"`` or ``"reference"``: the kernels of the families still on numba.

    Raises:
        ConfigError: ``NEARDUP_BACKEND`` has an unknown value.
        MissingExtraError: ``NEARDUP_BACKEND=fast`` but numba is not installed.
    """
    wanted = _wanted()
    if wanted == "native":
        wanted = "auto"
    if wanted == "reference" or (wanted == "auto" and _ready is False):
        return "reference"  # (auto: decided once, by kernels_ready or prefer_numpy)
    if _aot:
        return "fast"  # the same numba code, compiled ahead of time (use_aot)
    if _numba_available():
        if wanted == "auto" and not kernels_ready():
            return "reference"
        return "fast"
    if wanted == "fast":
        raise MissingExtraError(
            "NEARDUP_BACKEND=fast needs numba; install it with: pip install numba"
        )
    return "reference"


@cache
def _numba_available() -> bool:
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


#: The file in a build's kernel directory that says every kernel is compiled and saved.
COMPLETE = "complete"
#: The file in a build's kernel directory that says the background compile failed (its log is
#: ``warmup.log``); processes then compile in the foreground, where the error shows.
FAILED = "warmup.failed"
_OFF = ("0", "false", "no", "off")
_ready: bool | None = None
_ready_lock = threading.Lock()
_child: subprocess.Popen[bytes] | None = None
_cache_log = logging.getLogger("neardup._kernels.cache")  # the logger the CLI shows


def compile_here() -> None:
    """From now on this process compiles missing kernels itself, in the foreground (warmup)."""
    global _ready
    _ready = True


#: Under ``auto``, a command whose whole input is smaller than this (bytes) runs on the numpy
#: twins (:func:`prefer_numpy`): importing numba and loading its kernels costs about 0.6 CPU-s,
#: more than numpy spends on such an input (measured in docs/engine.md: break-even near 1 MB).
#: ``NEARDUP_SMALL_INPUT`` overrides it (bytes; ``0`` turns it off).
SMALL_INPUT = 512 * 1024


def small_input() -> int:
    """Inputs below this many bytes run on numpy (``NEARDUP_SMALL_INPUT``, else
    :data:`SMALL_INPUT`; 0: never).

    Raises:
        ConfigError: ``NEARDUP_SMALL_INPUT`` is not a whole number of bytes.
    """
    raw = os.environ.get("NEARDUP_SMALL_INPUT", "").strip()
    if not raw:
        return SMALL_INPUT
    try:
        value = int(raw)
    except ValueError:
        value = -1
    if value < 0:
        raise ConfigError(
            f"NEARDUP_SMALL_INPUT={raw!r} is not a number of bytes; use e.g. 524288, or 0 for off"
        )
    return value


def prefer_numpy() -> bool:
    """Run this process on the numpy twins, if ``NEARDUP_BACKEND`` is ``auto`` (or unset) and
    no call chose a backend yet; returns whether it does. For a caller that knows its whole
    input is small (below :func:`small_input` bytes): the answer is the same, bit for bit, and
    numba is never imported. Starts no background compile.
    """
    global _ready
    if _wanted() != "native":
        return False
    with _ready_lock:
        if _ready is None:
            _ready = False
            return True
    return False


def background_process() -> subprocess.Popen[bytes] | None:
    """The compile process this process started (:func:`kernels_ready`), if it started one."""
    return _child


def kernels_ready() -> bool:
    """Whether this process runs the numba kernels under ``NEARDUP_BACKEND=auto``.

    Decided once per process. ``True`` when the kernel cache holds this build's ``complete``
    mark, when ``NEARDUP_BACKGROUND_COMPILE`` is ``0`` (compile in the foreground on first
    use), or when an earlier background compile failed (so that its error shows). Otherwise
    ``False``, and unless another process holds the cache lock (a compile is under way), this
    process starts the one background compile (``neardup warmup --background``).
    Either way it logs one INFO line on ``neardup._kernels.cache``.
    """
    global _ready
    if _ready is None:
        with _ready_lock:
            if _ready is None:
                _ready = _decide()
    return _ready


def _decide() -> bool:
    if os.environ.get("NEARDUP_BACKGROUND_COMPILE", "1").strip().lower() in _OFF:
        return True
    try:
        return _look_and_spawn()
    except OSError as exc:  # no cache directory, no process: compile in the foreground
        _cache_log.debug("no background compile (%s); compiling in the foreground", exc)
        return True


def _look_and_spawn() -> bool:
    from neardup._kernels import cache

    where = cache.kernel_dir()
    if (where / COMPLETE).exists() or (where / FAILED).exists():
        return True
    from filelock import Timeout

    lock = cache._lock()
    try:
        lock.acquire(timeout=0)
    except Timeout:
        _cache_log.info(
            "kernels are being compiled by another process (once per install); "
            "using the numpy backend meanwhile"
        )
        return False
    try:
        if (where / COMPLETE).exists():  # finished between the first look and the lock
            return True
        _spawn(where, cache.cache_root())
    finally:
        lock.release()
    _cache_log.info(
        "compiling kernels in the background (once per install, a few minutes); "
        "using the numpy backend meanwhile"
    )
    return False


def _spawn(where: Path, root: Path) -> None:
    """Start the detached background compile; its output goes to ``<where>/warmup.log``."""
    global _child
    package = Path(__file__).resolve().parents[2]  # the directory that holds neardup/
    env = dict(os.environ)
    env["NEARDUP_CACHE_DIR"] = str(root)
    env["NEARDUP_BACKGROUND_COMPILE"] = "0"
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(package), env.get("PYTHONPATH", "")) if p)
    where.mkdir(parents=True, exist_ok=True)
    import subprocess

    with open(where / "warmup.log", "ab") as log_file:
        _child = subprocess.Popen(
            [sys.executable, "-m", "neardup", "warmup", "--background"],
            stdin=subprocess.DEVNULL,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            env=env,
            close_fds=True,
            start_new_session=True,  # outlives this process and its terminal
        )
    # reap it when it ends, so that a long-lived process does not keep a zombie
    threading.Thread(target=_child.wait, name="neardup-compile-reaper", daemon=True).start()


_aot: dict[str, ModuleType] = {}


def use_aot() -> bool:
    """Serve the kernels of :data:`neardup._kernels.aot.EXPORTS` from this build's
    ahead-of-time module, if it exists; returns whether it does. The other kernels, and any
    call whose argument types the module was not compiled for, still go to numba. For a
    process that wants to start without importing numba (the module's kernels release the
    GIL, as the JIT's do): the CLI (docs/engine.md). Under ``NEARDUP_BACKEND``
    ``auto`` or ``fast`` only, and only before a kernel module was handed out.
    """
    if _aot:
        return True
    wanted = _wanted()
    if wanted not in ("native", "fast") or _ready is False or _module.cache_info().currsize:
        return False
    from neardup._kernels import aot

    loaded = aot.load()
    if loaded:
        _aot.update(loaded)
    return bool(loaded)


def kernels(family: str) -> ModuleType:
    """Return the kernel module of ``family`` for the backend :func:`backend_name` selects.

    Args:
        family: One of :data:`FAMILIES` (``"minhash"``, ``"sets"``, ...).

    Returns:
        ``neardup._native.<family>`` for a family the compiled core has (unless
        ``NEARDUP_BACKEND=reference``), else ``neardup._kernels.<family>.fast`` (numba) or
        ``neardup._kernels.<family>.reference``; importing a fast module compiles nothing.

    Raises:
        ConfigError: ``family`` is unknown, or ``NEARDUP_BACKEND`` has an unknown value.
        MissingExtraError: ``NEARDUP_BACKEND=fast`` but numba is not installed.

    Examples:
        >>> kernels("xxh3").__name__.rsplit(".", 1)[-1]
        'xxh3'
    """
    if family not in FAMILIES:
        raise ConfigError(f"unknown kernel family {family!r}; use one of {', '.join(FAMILIES)}")
    compiled = native()
    if compiled is not None and hasattr(compiled, family):
        module: ModuleType = getattr(compiled, family)
        return module
    if _aot:
        served = _aot.get(family)
        if served is not None and backend_name() == "fast":
            return served
    return _module(family, backend_name())


@cache
def _module(family: str, name: str) -> ModuleType:
    if family not in FAMILIES:
        raise ConfigError(f"unknown kernel family {family!r}; use one of {', '.join(FAMILIES)}")
    return importlib.import_module(f"neardup._kernels.{family}.{name}")


_K = TypeVar("_K", bound=Callable[..., object])


def direct(kernel: _K, args: tuple[object, ...]) -> _K:
    """The compiled entry point of ``kernel`` for exactly the types of ``args``, else ``kernel``.

    A numba dispatcher resolves the argument types on every call (about 1 µs for a handful of
    arrays: most of a per-document call's fixed cost); the entry point of one compiled
    signature skips that. It does not check its arguments' types, so a caller takes it only
    for a call whose argument types never change (its own buffers, and inputs whose dtype,
    shape and layout it has checked) and keeps calling the dispatcher otherwise. ``kernel``
    itself comes back when it is not a numba dispatcher (the numpy twins, the ahead-of-time
    wrappers) or has not compiled those types yet (call it once first).

    Examples:
        >>> new_table = kernels("lsh").new_table
        >>> int(direct(new_table, (8, 4, 2, 2, 8))(8, 4, 2, 2, 8)[3])
        8
    """
    overloads = getattr(kernel, "overloads", None)
    typeof = getattr(kernel, "typeof_pyval", None)
    if not overloads or typeof is None:
        return kernel
    compiled = overloads.get(tuple(typeof(a) for a in args))
    return kernel if compiled is None else compiled.entry_point


def backend() -> ModuleType:
    """Return the text kernels (tokenizer, FNV-1a) selected by :func:`backend_name`."""
    return kernels("text")


def tokenize_packed(packed: Packed, *, mask: int, min_bytes: int = 1, lower: bool = True) -> Spans:
    """Tokenize packed documents into word-token spans (see :func:`fast.tokenize_words`)."""
    out, starts, ends, doc_offsets = backend().tokenize_words(
        packed.buf,
        packed.offsets,
        tables.char_classes(),
        tables.simple_lower(),
        mask,
        min_bytes,
        lower,
    )
    return Spans(out, starts, ends, doc_offsets)


def tokenize_texts(
    texts: Sequence[str | bytes], *, mask: int, min_bytes: int = 1, lower: bool = True
) -> Spans:
    """Pack ``texts`` and tokenize them (see :func:`tokenize_packed`)."""
    return tokenize_packed(pack(texts), mask=mask, min_bytes=min_bytes, lower=lower)


def hash_spans(
    spans: Spans, hash_name: str, seed: int = 0
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint64]]:
    """Hash every span's bytes; return ``(lo, hi)`` uint64 arrays.

    ``hi`` is all zeros for the 64-bit hashes. ``fnv1a64`` ignores ``seed``.
    """
    if hash_name not in _HASHES:
        raise ConfigError(f"unknown hash {hash_name!r}; use one of {', '.join(_HASHES)}")
    if hash_name == "fnv1a64":
        lo = backend().fnv1a_ranges(spans.buf, spans.starts, spans.ends)
        return lo, np.zeros_like(lo)
    seed &= (1 << 64) - 1
    xxh3 = kernels("xxh3")
    if hash_name == "xxh3_64":
        lo = xxh3.xxh3_64_ranges(spans.buf, spans.starts, spans.ends, np.uint64(seed))
        return lo, np.zeros_like(lo)
    lo, hi = xxh3.xxh3_128_ranges(spans.buf, spans.starts, spans.ends, np.uint64(seed))
    return lo, hi
