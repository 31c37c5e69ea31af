"""Backend selection and the batch operations every sketcher calls.

Kernels live by family, ``neardup._kernels.<family>.{reference,fast}``: a numpy reference
and a numba twin with the same functions and the same bits. :func:`kernels` is the one
selector. ``NEARDUP_BACKEND`` chooses the twin: ``auto`` (default: numba when it imports, else
numpy), ``fast`` (numba, error if missing) or ``reference`` (numpy). The test suite checks
that both give the same bits.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Sequence
from functools import cache
from types import ModuleType
from typing import Literal

import numpy as np
import numpy.typing as npt

from neardup._kernels import tables
from neardup._kernels.spans import Packed, Spans, pack
from neardup.errors import ConfigError, MissingExtraError

__all__ = [
    "FAMILIES",
    "HashName",
    "backend",
    "backend_name",
    "hash_spans",
    "kernels",
    "tokenize_packed",
    "tokenize_texts",
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


def backend_name() -> str:
    """Return ``"fast"`` or ``"reference"``: the kernels in use, per ``NEARDUP_BACKEND``.

    Raises:
        ConfigError: ``NEARDUP_BACKEND`` has an unknown value.
        MissingExtraError: ``NEARDUP_BACKEND=fast`` but numba is not installed.
    """
    wanted = os.environ.get("NEARDUP_BACKEND", "auto").strip().lower() or "auto"
    if wanted not in ("auto", "fast", "reference"):
        raise ConfigError(
            f"NEARDUP_BACKEND={wanted!r} is not a backend; use auto, fast or reference"
        )
    if wanted == "reference":
        return "reference"
    if _numba_available():
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


def kernels(family: str) -> ModuleType:
    """Return the kernel module of ``family`` for the backend :func:`backend_name` selects.

    Args:
        family: One of :data:`FAMILIES` (``"minhash"``, ``"sets"``, ...).

    Returns:
        ``neardup._kernels.<family>.fast`` or ``neardup._kernels.<family>.reference``;
        importing a fast module compiles nothing (its kernels compile on first call).

    Raises:
        ConfigError: ``family`` is unknown, or ``NEARDUP_BACKEND`` has an unknown value.
        MissingExtraError: ``NEARDUP_BACKEND=fast`` but numba is not installed.

    Examples:
        >>> kernels("sets").__name__.rsplit(".", 1)[-1] in ("fast", "reference")
        True
    """
    return _module(family, backend_name())


@cache
def _module(family: str, name: str) -> ModuleType:
    if family not in FAMILIES:
        raise ConfigError(f"unknown kernel family {family!r}; use one of {', '.join(FAMILIES)}")
    return importlib.import_module(f"neardup._kernels.{family}.{name}")


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
