"""Backend selection and the batch operations every sketcher calls.

``NEARDUP_BACKEND`` chooses the kernels: ``auto`` (default: numba when it imports, else
numpy), ``fast`` (numba, error if missing) or ``reference`` (numpy). Both give the same bits;
the test suite checks it.
"""

from __future__ import annotations

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
    "HashName",
    "backend",
    "backend_name",
    "hash_spans",
    "tokenize_packed",
    "tokenize_texts",
]

HashName = Literal["fnv1a64", "xxh3_64", "xxh3_128"]
_HASHES = ("fnv1a64", "xxh3_64", "xxh3_128")


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


def backend() -> ModuleType:
    """Return the kernel module selected by :func:`backend_name`."""
    if backend_name() == "fast":
        from neardup._kernels import fast

        return fast
    from neardup._kernels import reference

    return reference


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
    if backend_name() == "fast":
        from neardup._kernels import xxh3

        if hash_name == "xxh3_64":
            lo = xxh3.xxh3_64_ranges(spans.buf, spans.starts, spans.ends, np.uint64(seed))
            return lo, np.zeros_like(lo)
        lo, hi = xxh3.xxh3_128_ranges(spans.buf, spans.starts, spans.ends, np.uint64(seed))
        return lo, hi
    return _xxh3_python(spans, hash_name, seed)


def _xxh3_python(
    spans: Spans, hash_name: str, seed: int
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint64]]:
    import xxhash

    raw = spans.buf.tobytes()
    n = len(spans.starts)
    lo = np.empty(n, dtype=np.uint64)
    hi = np.zeros(n, dtype=np.uint64)
    pairs = zip(spans.starts.tolist(), spans.ends.tolist(), strict=True)
    if hash_name == "xxh3_64":
        for i, (s, e) in enumerate(pairs):
            lo[i] = xxhash.xxh3_64_intdigest(raw[s:e], seed)
    else:
        mask = (1 << 64) - 1
        for i, (s, e) in enumerate(pairs):
            v = xxhash.xxh3_128_intdigest(raw[s:e], seed)
            lo[i] = v & mask
            hi[i] = v >> 64
    return lo, hi
