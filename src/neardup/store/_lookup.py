"""Validation and flattening of the lookup keys given to the store (private helpers)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from neardup._kernels.engine import kernels
from neardup.errors import InputError
from neardup.sketch.setcodec import PackedBlobs

__all__ = [
    "KEY_BAND",
    "Lookup",
    "band_rows",
    "blob",
    "fold",
    "folded_rows",
    "key_folds",
    "pairs",
    "triples",
]

Lookup = npt.NDArray[np.integer] | Sequence[npt.NDArray[np.integer]]
"""Lookup keys of a batch: an ``(n, n_bands)`` array, or one ``(m_i, 2)`` array of
``(band, value)`` rows per document."""


def int64(array: npt.ArrayLike, what: str) -> npt.NDArray[np.int64]:
    """Return ``array`` as int64; unsigned 64-bit values keep their bit pattern."""
    arr = np.asarray(array)
    if arr.size == 0 and arr.dtype.kind == "f":
        arr = arr.astype(np.int64)  # an empty list becomes float64 under np.asarray
    if arr.dtype.kind not in "iu":
        raise InputError(
            f"{what} must be an integer array (int64 or uint64), got dtype {arr.dtype}; "
            "pass the lookup keys as computed by the index (e.g. np.int64 band hashes)"
        )
    if arr.dtype == np.uint64:
        return np.ascontiguousarray(arr).view(np.int64)
    return arr.astype(np.int64, copy=False)


def pairs(array: npt.ArrayLike, what: str) -> npt.NDArray[np.int64]:
    """Return an ``(m, 2)`` array of (band, value) rows from a 1-D row or a pairs array."""
    arr = int64(array, what)
    if arr.ndim == 1:
        return np.stack([np.arange(arr.shape[0], dtype=np.int64), arr], axis=1)
    if arr.ndim == 2 and arr.shape[1] == 2:
        return arr
    raise InputError(
        f"{what} must be a 1-D array of band values (band = position) or an (m, 2) array "
        f"of (band, value) rows, got shape {arr.shape}"
    )


def band_rows(lookup: npt.ArrayLike, n: int) -> npt.NDArray[np.int64]:
    """``lookup`` as an ``(n, n_bands)`` int64 array, or an ``InputError`` saying its shape."""
    arr = int64(lookup, "lookup")
    if arr.ndim != 2 or arr.shape[0] != n:
        raise InputError(
            f"lookup must have shape (n_documents, n_bands) = ({n}, ...), got {arr.shape}; "
            "give one row of band values per document"
        )
    return arr


def triples(
    lookup: Lookup, n: int
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Flatten a batch's lookup keys to (document index, band, value) arrays.

    Examples:
        >>> [a.tolist() for a in triples(np.array([[5, 6], [7, 8]]), 2)]
        [[0, 0, 1, 1], [0, 1, 0, 1], [5, 6, 7, 8]]
        >>> [a.tolist() for a in triples([np.array([[3, 9]]), np.zeros((0, 2), int)], 2)]
        [[0], [3], [9]]
    """
    if isinstance(lookup, np.ndarray):
        arr = band_rows(lookup, n)
        n_bands = arr.shape[1]
        docs = np.repeat(np.arange(n, dtype=np.int64), n_bands)
        bands = np.tile(np.arange(n_bands, dtype=np.int64), n)
        return docs, bands, arr.reshape(-1)
    if len(lookup) != n:
        raise InputError(
            f"lookup has {len(lookup)} entries for {n} documents; give one per document"
        )
    parts = [pairs(row, f"lookup[{i}]") for i, row in enumerate(lookup)]
    if not parts:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    docs = np.repeat(np.arange(n, dtype=np.int64), [p.shape[0] for p in parts])
    stacked = np.concatenate(parts, axis=0)
    return docs, stacked[:, 0], stacked[:, 1]


def folded_rows(
    lookup: Lookup, n: int
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64] | int]:
    """The folded lookup keys of a batch, document by document, and which document each
    belongs to: an index array, or, for an ``(n, n_bands)`` array, the ``n_bands`` keys each
    document has (no index array built: :func:`fold` broadcasts the bands over the rows).

    Examples:
        >>> k, per = folded_rows(np.array([[7, 7], [7, 8]]), 2)
        >>> per, k.tolist() == fold(np.array([0, 1, 0, 1]), np.array([7, 7, 7, 8])).tolist()
        (2, True)
    """
    if isinstance(lookup, np.ndarray):
        arr = band_rows(lookup, n)
        per_doc = int(arr.shape[1])
        return fold(np.arange(per_doc, dtype=np.int64), arr).reshape(-1), per_doc
    docs, bands, values = triples(lookup, n)
    return fold(bands, values), docs


def blob(sketch: object, index: int) -> bytes:
    if type(sketch) is bytes:
        return sketch
    if isinstance(sketch, bytes | bytearray | memoryview):
        return bytes(sketch)
    raise InputError(
        f"sketch {index} is a {type(sketch).__name__}, not bytes; store the sketch's to_bytes()"
    )


_M1 = np.uint64(0x9E3779B97F4A7C15)
_M2 = np.uint64(0xC2B2AE3D27D4EB4F)
_M3 = np.uint64(0xBF58476D1CE4E5B9)


def fold(bands: npt.NDArray[np.int64], values: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """Mix each ``(band, value)`` into one 32-bit signed lookup key (stored in 4 bytes);
    ``bands`` broadcasts against ``values`` (one band per column of a 2-D array).

    A splitmix64-style finalizer of ``value * M1 + band * M2``; distinct pairs collide with
    probability about ``2**-32``, which only adds a rare false candidate (candidates are
    verified). Deterministic and platform-independent (wrapping uint64 arithmetic).

    Examples:
        >>> fold(np.array([0, 1]), np.array([7, 7])).tolist()
        [-1478730901, 835073148]
    """
    v = values.astype(np.int64, copy=False).view(np.uint64)
    b = bands.astype(np.int64, copy=False).view(np.uint64)
    with np.errstate(over="ignore"):  # in place after the first product: one array
        h = np.multiply(v, _M1, out=np.empty(np.broadcast_shapes(v.shape, b.shape), np.uint64))
        h += b * _M2
        h ^= h >> np.uint64(29)
        h *= _M3
        h ^= h >> np.uint64(32)
        # the low 32 bits as a signed value: (x ^ 2**31) - 2**31 on the masked bits
        h &= np.uint64(0xFFFFFFFF)
        h ^= np.uint64(0x80000000)
        out = h.view(np.int64)
        out -= 0x80000000
    return out


KEY_BAND = -1
"""The band of the document-key entries (schema 4): each document's xxh3-64 of its key, folded
with this band, is one more lookup entry, which finds a document by key without a per-document
row (callers' bands are non-negative; a chance equality with a caller's folded key only adds a
verified false candidate)."""


def key_folds(keys: Sequence[bytes] | PackedBlobs) -> npt.NDArray[np.int64]:
    """The folded lookup entries of UTF-8 document keys (see :data:`KEY_BAND`); the keys
    may come packed in one buffer (then hashed in one kernel call, with no Python per key).

    Examples:
        >>> a, b = key_folds([b"a", b"b"]).tolist()
        >>> packed = PackedBlobs.of([b"a"])
        >>> a != b and key_folds([b"a"]).tolist() == [a] == key_folds(packed).tolist()
        True
    """
    packed = keys if isinstance(keys, PackedBlobs) else PackedBlobs.of(keys)
    buf = np.frombuffer(packed.data, dtype=np.uint8)
    hashes = kernels("xxh3").xxh3_64_ranges(
        buf, packed.starts[:-1], packed.starts[1:], np.uint64(0)
    )
    return fold(np.full(len(packed), KEY_BAND, dtype=np.int64), hashes.view(np.int64))
