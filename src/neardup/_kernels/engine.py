"""Backend selection and the batch operations every sketcher calls.

Kernels live by family. The compiled core ``neardup._native`` (a Rust crate built with the
package, ``native/src/``) has one submodule per family; ``neardup._kernels.<family>``
is its numpy twin with the same names, bits and errors (tests/kernels/test_parity*.py).
:func:`kernels` is the one selector, and the choice is made once per process from
``NEARDUP_BACKEND``:

- ``native`` (the default; ``auto`` means the same): the compiled module. Without it (a source
  tree that was never built) the numpy twins run, and one warning line says so.
- ``reference``: the numpy twins (the oracle of the parity tests; slow).

(``fast``, the name of the numba backend before the native core, is read as ``native``.)
"""

from __future__ import annotations

import importlib
import logging
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import cache
from types import ModuleType
from typing import Literal

import numpy as np
import numpy.typing as npt

from neardup._spans import Spans
from neardup._unicode import classes as tables
from neardup.errors import ConfigError
from neardup.packed import PackedDocs, pack

__all__ = [
    "FAMILIES",
    "HashName",
    "backend",
    "backend_name",
    "hash_spans",
    "kernels",
    "native",
    "native_families",
    "parse_backend",
    "pinned",
    "tokenize_packed",
    "tokenize_texts",
]

HashName = Literal["fnv1a64", "xxh3_64", "xxh3_128"]
_HASHES = ("fnv1a64", "xxh3_64", "xxh3_128")

#: The kernel families: each has a numpy twin ``neardup._kernels.<family>`` and a
#: submodule of the compiled core ``neardup._native.<family>``.
FAMILIES = (
    "affine",
    "buckets",
    "canonicalize",
    "clusterjson",
    "ctph",
    "datasketch",
    "forest",
    "hamming",
    "hll",
    "idset",
    "jsonl",
    "lines",
    "lsh",
    "minhash",
    "pdq",
    "pooling",
    "repeats",
    "segments",
    "sets",
    "sha1",
    "simhash",
    "text",
    "unicode",
    "weighted",
    "xxh3",
)

_WANTED = ("auto", "native", "fast", "reference")
_log = logging.getLogger("neardup._kernels")


#: The backend this process runs, ``"native"`` or ``"reference"``: read from
#: ``NEARDUP_BACKEND`` on first use, then fixed (:func:`pinned` changes it for a block).
_choice: str | None = None


def parse_backend(value: str) -> str:
    """Map a ``NEARDUP_BACKEND`` value to ``"native"`` or ``"reference"``.

    Raises:
        ConfigError: ``value`` names no backend.
    """
    wanted = value.strip().lower() or "native"
    if wanted not in _WANTED:
        raise ConfigError(
            f"NEARDUP_BACKEND={wanted!r} is not a backend; use native (the default) or reference"
        )
    return "reference" if wanted == "reference" else "native"


def _chosen() -> str:
    global _choice
    if _choice is None:
        _choice = parse_backend(os.environ.get("NEARDUP_BACKEND", "native"))
    return _choice


@contextmanager
def pinned(name: str) -> Iterator[None]:
    """Run a block on the backend ``name`` (``native`` or ``reference``), then restore the
    process's choice: for tests and benchmarks that compare the two in one process.

    Raises:
        ConfigError: ``name`` names no backend.
    """
    global _choice
    old, _choice = _choice, parse_backend(name)
    try:
        yield
    finally:
        _choice = old


def native() -> ModuleType | None:
    """The compiled module ``neardup._native``, or ``None`` when ``NEARDUP_BACKEND=reference``
    or the extension is missing (one warning line says so). Chosen once per process, on
    first use; :func:`pinned` overrides the choice for a block.

    Raises:
        ConfigError: ``NEARDUP_BACKEND`` has an unknown value.
    """
    return _compiled(_chosen())


@cache
def _compiled(wanted: str) -> ModuleType | None:
    if wanted == "reference":
        return None
    try:
        from neardup import _native
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
    """``"native"`` or ``"reference"``: the kernels this process runs (decided once).

    Raises:
        ConfigError: ``NEARDUP_BACKEND`` has an unknown value.
    """
    return "reference" if native() is None else "native"


def kernels(family: str) -> ModuleType:
    """Return the kernel module of ``family`` for this process's backend.

    Args:
        family: One of :data:`FAMILIES` (``"minhash"``, ``"sets"``, ...).

    Returns:
        ``neardup._native.<family>``, or ``neardup._kernels.<family>`` under
        ``NEARDUP_BACKEND=reference`` or without the compiled core.

    Raises:
        ConfigError: ``family`` is unknown, or ``NEARDUP_BACKEND`` has an unknown value.

    Examples:
        >>> kernels("xxh3").__name__.rsplit(".", 1)[-1]
        'xxh3'
    """
    if family not in FAMILIES:
        raise ConfigError(f"unknown kernel family {family!r}; use one of {', '.join(FAMILIES)}")
    module: ModuleType | None = getattr(native(), family, None)
    return module if module is not None else _reference(family)


@cache
def _reference(family: str) -> ModuleType:
    return importlib.import_module(f"neardup._kernels.{family}")


def backend() -> ModuleType:
    """Return the text kernels (tokenizer, FNV-1a): ``kernels("text")``."""
    return kernels("text")


def tokenize_packed(
    packed: PackedDocs, *, mask: int, min_bytes: int = 1, lower: bool = True
) -> Spans:
    """Tokenize packed documents into word-token spans (``kernels("text").tokenize_words``)."""
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
