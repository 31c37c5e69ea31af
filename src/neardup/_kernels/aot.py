"""Ahead-of-time compiled kernels of the CLI's default path: one extension module per build,
loaded without importing numba.

``import numba`` and loading its cached kernels cost about 0.9 CPU-s of a warm ``neardup dedup``
process (docs/engine.md), more than the work on a few thousand pages. :func:`build` (run by
``neardup warmup`` after the JIT kernels are compiled) compiles the kernels of
:data:`EXPORTS` with ``numba.pycc`` into one CPython extension module, one export per
signature the JIT compiled, and records each export's argument types in a manifest;
:func:`load` imports that module with numpy alone (about 0.02 CPU-s) and wraps each kernel
in a guard that passes a call to the compiled code only when every argument has exactly the
type of that export (dtype, dimensions, layout, alignment, writability, scalar kind: what
numba's own dispatch would compile for), and to the JIT kernel otherwise. The machine code is
numba's, from the same sources, so the results are the same bits.

The module is keyed by :func:`light_key`: a hash of everything in the JIT cache's build key
(:func:`neardup._kernels.cache.build_key`) that can be read without importing numba (every
kernel source and this module, the Python, numpy, numba and llvmlite versions, the numba
options set in the environment, the CPU model and flags) and its manifest records the build
key it was compiled under. It is written into ``<root>/kernels/aot/<light key>/``: the module
is built in a temporary directory there, checked to import in a fresh process, moved into
place, and only then is the manifest written (atomically, last), so a reader finds a complete
module or none. A failed build (no C compiler, say) writes nothing; processes load the JIT
kernels as before.

The exported wrappers release the GIL around the compiled call, as the JIT's ``nogil`` kernels
do (``numba.pycc`` has no option for it: :func:`_releasing_the_gil` sets the flag for the
build), so ``--jobs`` threads run the module's kernels at once and the CLI uses the module
whatever ``--jobs`` is (``neardup.cli._startup``). ``NEARDUP_AOT=0`` turns both the build and
the loading off.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.machinery
import importlib.util
import json
import logging
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

__all__ = ["EXPORTS", "aot_dir", "build", "calls", "enabled", "light_key", "load"]

log = logging.getLogger(__name__)

#: The kernels compiled ahead of time: what ``neardup dedup`` runs on JSONL with the default
#: method (minhash), and on text files: the fused sketches, the band keys and the bucket walk
#: with its set profiles, union-find; and what the corpus commands run (``dedup --method
#: exact``: the XXH3-128 digests; ``neardup lines``: the line spans, the unit counts' hash
#: table, the kept text and the JSON strings of rewritten records; ``neardup substrings``: the
#: window table, the gather of its documents and the scatter that counts each one's marked
#: bytes). Every other kernel is served by the JIT cache; the JSONL scanner and the
#: canonicalizer are native (``neardup._native``).
EXPORTS: dict[str, tuple[str, ...]] = {
    "buckets": ("bucket_pairs_verified", "set_profiles"),
    "lines": (
        "json_strings",
        "kept_json",
        "kept_text",
        "line_spans",
        "table_add",
        "table_lookup",
        "table_rehash",
    ),
    "minhash": ("band_keys", "sketch_words_features", "sketch_words_sets32"),
    "repeats": ("gather", "scatter_counts", "window_mask"),
    # components: the clusters of a bucket walk split over threads (--jobs); unique_per_doc32:
    # the sets of documents read from text files (not JSONL); intersections: the exact
    # Jaccard of `neardup compare` and of --annotate's transitive duplicates
    "sets": ("components", "intersections", "unique_per_doc32"),
    "xxh3": ("xxh3_128_ranges", "xxh3_64_ranges"),
}
#: Bump when what :func:`build` writes changes (this module's bytes are in the key too).
#: 2: the exported wrappers release the GIL (as the JIT's ``nogil`` kernels do).
_FORMAT = 2
_MANIFEST = "manifest.json"
#: numba options read from the environment that change the machine code (see
#: ``neardup._kernels.cache._CODEGEN_OPTIONS``); a ``.numba_config.yaml`` turns AOT off.
_NUMBA_ENV = (
    "NUMBA_OPT",
    "NUMBA_BOUNDSCHECK",
    "NUMBA_FASTMATH",
    "NUMBA_DEBUGINFO",
    "NUMBA_CPU_NAME",
    "NUMBA_CPU_FEATURES",
    "NUMBA_ENABLE_AVX",
    "NUMBA_DISABLE_INTEL_SVML",
)

Spec = tuple[Any, ...]
_calls = {"aot": 0, "jit": 0}


def calls() -> dict[str, int]:
    """Calls of the guarded kernels so far: served by the ahead-of-time code (``aot``), or
    handed to the JIT kernel because an argument type did not fit (``jit``)."""
    return dict(_calls)


def enabled() -> bool:
    """Whether ahead-of-time kernels may be built and loaded (``NEARDUP_AOT``, default on;
    off when numba would read a ``.numba_config.yaml`` that the key cannot see)."""
    if os.environ.get("NEARDUP_AOT", "1").strip().lower() in ("0", "false", "no", "off"):
        return False
    return not os.path.exists(".numba_config.yaml")


def _package_file(package: str, name: str) -> bytes:
    spec = importlib.util.find_spec(package)
    if spec is None or spec.origin is None:
        return b"-"
    path = Path(spec.origin).parent / name
    try:
        return path.read_bytes()
    except OSError:
        return b"-"


def _cpu() -> bytes:
    """The CPU model and its flags (the code is compiled for this CPU)."""
    try:
        with open("/proc/cpuinfo", "rb") as f:
            text = f.read(1 << 16)
    except OSError:  # not Linux: the platform's own names (the slower import)
        import platform

        return f"{platform.machine()} {platform.processor()}".encode()
    first = text.split(b"\n\n", 1)[0]
    keep = (b"vendor_id", b"model name", b"flags", b"cpu family", b"model\t")
    lines = [line for line in first.splitlines() if line.startswith(keep)]
    return os.uname().machine.encode() + b"\n" + b"\n".join(lines)


@cache
def light_key() -> str:
    """The key of this build's ahead-of-time module, computed without importing numba
    (24 hex digits; see the module docstring)."""
    from neardup._kernels import cache as kcache

    h = hashlib.sha256()
    h.update(f"neardup-aot-{_FORMAT}".encode())
    root = Path(__file__).resolve().parent
    # warmup.py's calls pick the signatures exported: a new one is a new module
    warmup = root.parent / "warmup.py"
    for path in sorted({*kcache._keyed_sources(), Path(__file__).resolve(), warmup}):
        h.update(Path(os.path.relpath(path, root)).as_posix().encode() + b"\0")
        h.update(path.read_bytes() + b"\0")
    h.update(sys.version.encode() + b"\0" + np.__version__.encode() + b"\0")
    h.update(_package_file("numba", "_version.py") + b"\0")
    h.update(_package_file("llvmlite", "_version.py") + b"\0")
    h.update(repr([(k, os.environ.get(k)) for k in _NUMBA_ENV]).encode())
    h.update(_cpu())
    return h.hexdigest()[:24]


def aot_dir() -> Path:
    """Where this build's module and manifest live: ``<root>/kernels/aot/<light key>``."""
    from neardup._kernels import cache as kcache

    return kcache.cache_root() / "kernels" / "aot" / light_key()


def _module_name() -> str:
    return f"_neardup_aot_{light_key()}"


# ---------------------------------------------------------------- argument specs and guards


def _spec(ty: Any) -> Spec | None:
    """The argument spec of numba type ``ty``, or ``None`` when it has none (no export)."""
    from numba.core import types

    if isinstance(ty, types.Array):
        if ty.layout not in ("C", "F", "A") or not ty.aligned:
            return None
        return ("a", str(np.dtype(ty.dtype.name)), ty.ndim, ty.layout, not ty.mutable)
    if isinstance(ty, types.Boolean):
        return ("s", "bool")
    if isinstance(ty, types.Integer | types.Float) and not isinstance(ty, types.Literal):
        return ("s", ty.name)
    return None


_SCALARS: dict[str, tuple[type, ...]] = {
    "bool": (bool, np.bool_),
    "int64": (int, np.int64),
    "float64": (float, np.float64),
}


def _fits(value: object, spec: Spec) -> bool:
    """Whether numba would type ``value`` as ``spec`` (so the export computes what the JIT
    kernel would)."""
    if spec[0] == "a":
        if type(value) is not np.ndarray:
            return False
        flags = value.flags
        if value.dtype != spec[1] or value.ndim != spec[2] or not flags.aligned:
            return False
        if not spec[4] and not flags.writeable:
            return False
        layout = "C" if flags.c_contiguous else "F" if flags.f_contiguous else "A"
        return bool(spec[3] == "A" or layout == spec[3])
    kinds = _SCALARS.get(spec[1])
    if kinds is None:
        return bool(type(value) is np.dtype(spec[1]).type)
    if type(value) not in kinds:
        return False
    if type(value) is int:  # numba types a Python int outside int64 as uint64
        return -(1 << 63) <= value < (1 << 63)
    return True


def _guarded(
    family: str, name: str, variants: Sequence[tuple[Callable[..., Any], Sequence[Spec]]]
) -> Callable[..., Any]:
    """One kernel: the first export whose argument specs all fit, else the JIT kernel."""

    def call(*args: object) -> Any:
        for fn, specs in variants:
            if len(args) == len(specs) and all(map(_fits, args, specs)):
                _calls["aot"] += 1
                return fn(*args)
        _calls["jit"] += 1
        jit = importlib.import_module(f"neardup._kernels.{family}.fast")
        return getattr(jit, name)(*args)

    call.__name__ = call.__qualname__ = name
    call.__module__ = f"neardup._kernels.{family}.aot"
    return call


class _Family(ModuleType):
    """A family's ahead-of-time kernels; any other name comes from its JIT module."""

    def __getattr__(self, attr: str) -> Any:
        family = self.__name__.split(".")[2]
        return getattr(importlib.import_module(f"neardup._kernels.{family}.fast"), attr)


# ---------------------------------------------------------------------------------- loading


def _import(path: Path, name: str) -> ModuleType:
    loader = importlib.machinery.ExtensionFileLoader(name, str(path))
    spec = importlib.util.spec_from_loader(name, loader)
    if spec is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def load() -> dict[str, ModuleType] | None:
    """This build's ahead-of-time kernels, one module per family of :data:`EXPORTS`, or
    ``None`` when there is no complete module for this build (or ``NEARDUP_AOT=0``)."""
    if not enabled():
        return None
    where = aot_dir()
    try:
        manifest = json.loads((where / _MANIFEST).read_text())
        if manifest.get("format") != _FORMAT or manifest.get("name") != _module_name():
            return None
        native = _import(where / manifest["file"], manifest["name"])
        grouped: dict[tuple[str, str], list[tuple[Callable[..., Any], list[Spec]]]] = {}
        for entry in manifest["exports"]:
            fn = getattr(native, entry["symbol"])
            specs = [tuple(s) for s in entry["args"]]
            grouped.setdefault((entry["family"], entry["function"]), []).append((fn, specs))
    except (OSError, ValueError, KeyError, TypeError, AttributeError, ImportError) as exc:
        log.debug("no ahead-of-time kernels in %s (%s)", where, exc)
        return None
    families: dict[str, ModuleType] = {}
    for (family, name), variants in sorted(grouped.items()):
        module = families.setdefault(family, _Family(f"neardup._kernels.{family}.aot"))
        setattr(module, name, _guarded(family, name, variants))
    return families


# --------------------------------------------------------------------------------- building


def build() -> str | None:
    """Compile the kernels of :data:`EXPORTS` ahead of time for this build, unless they are
    already; returns ``None`` when the module is in place, else why it is not (one line).

    Call it in a process that ran every kernel's real signatures on the numba backend (as
    :func:`neardup.warmup.warmup` does): it exports each signature the JIT compiled.
    """
    if not enabled():
        return "NEARDUP_AOT=0"
    where = aot_dir()
    if (where / _MANIFEST).exists():
        return None
    try:
        return _build(where)
    except Exception as exc:  # a failed build (no C compiler, ...) only means "use the JIT"
        lines = str(exc).strip().splitlines()
        return f"{type(exc).__name__}: {lines[-1] if lines else 'no message'}"


def _exports() -> list[tuple[str, str, str, Any, Callable[..., Any], list[Spec]]]:
    out = []
    for family, names in EXPORTS.items():
        jit = importlib.import_module(f"neardup._kernels.{family}.fast")
        for name in names:
            dispatcher = getattr(jit, name)
            for i, sig in enumerate(dispatcher.signatures):
                cres = dispatcher.overloads[sig]
                found = [_spec(t) for t in cres.signature.args]
                specs = [s for s in found if s is not None]
                if len(specs) < len(found):
                    continue  # an argument type the guard cannot check: JIT only
                symbol = f"{family}__{name}__{i}"
                out.append((symbol, family, name, cres.signature, dispatcher.py_func, specs))
    return out


@contextlib.contextmanager
def _releasing_the_gil() -> Iterator[None]:
    """Make ``numba.pycc`` compile its exports as ``njit(nogil=True)`` compiles the JIT's: the
    Python wrapper of each export releases the GIL around the compiled call, so that
    ``--jobs`` threads run the module's kernels at once. pycc has no option for it: its
    compiler makes one ``Flags()`` for all exports, and here that is a ``Flags`` with
    ``release_gil`` set (the flag ``nogil=True`` sets), for this build only."""
    compiler: Any = importlib.import_module("numba.pycc.compiler")
    plain = compiler.Flags

    def nogil_flags() -> Any:
        flags = plain()
        flags.release_gil = True
        return flags

    compiler.Flags = nogil_flags
    try:
        yield
    finally:
        compiler.Flags = plain


def _build(where: Path) -> str | None:
    import shutil
    import subprocess
    import tempfile
    import warnings

    from neardup._kernels import cache as kcache

    exports = _exports()
    if not exports:
        return "no kernel signatures to export (run the kernels first)"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numba.pycc's pending-deprecation warning
        pycc: Any = importlib.import_module("numba.pycc")

    name = _module_name()
    where.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".build-", dir=where.parent))
    try:
        cc = pycc.CC(name)
        cc.output_dir = str(tmp)
        cc.target_cpu = "host"
        cc.verbose = False
        for symbol, _family, _name, signature, py_func, _specs in exports:
            cc.export(symbol, signature)(py_func)
        with warnings.catch_warnings(), _releasing_the_gil():
            warnings.simplefilter("ignore")
            cc.compile()
        built = Path(cc.output_dir) / cc.output_file
        file_name = f"{name}.so"
        check = (
            "import importlib.machinery as m, importlib.util as u, sys\n"
            "l = m.ExtensionFileLoader(sys.argv[1], sys.argv[2])\n"
            "l.exec_module(u.module_from_spec(u.spec_from_loader(sys.argv[1], l)))\n"
        )
        done = subprocess.run(
            [sys.executable, "-c", check, name, str(built)],
            capture_output=True,
            timeout=120,
            check=False,
        )
        if done.returncode != 0:
            tail = done.stderr.decode(errors="replace").strip().splitlines()[-1:]
            return f"the built module does not import: {tail}"
        manifest = {
            "format": _FORMAT,
            "name": name,
            "file": file_name,
            "build_key": kcache.build_key(),
            "exports": [
                {"symbol": s, "family": f, "function": n, "args": specs}
                for s, f, n, _sig, _fn, specs in exports
            ],
        }
        final = tmp / "final"
        final.mkdir()
        os.replace(built, final / file_name)
        (final / _MANIFEST).write_text(json.dumps(manifest, indent=1))
        try:
            os.replace(final, where)  # one rename: the directory appears complete or not at all
        except OSError:
            if (where / _MANIFEST).exists():  # another process published the same build
                return None
            raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return None
