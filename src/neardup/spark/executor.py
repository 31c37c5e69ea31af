"""The steps that run inside Spark executors: Arrow batches in, Arrow batches out.

Pure functions of pyarrow record batches and numpy arrays (no Spark session needed), so they
are tested directly and shipped to executors by reference. They call the same
:class:`~neardup.methods.Method` objects as the local engine (``sketch``, ``lookup_keys``) and
the same verification kernels (:func:`neardup._kernels.sets.jaccard_pairs`, popcount), which is
what makes the Spark clusters equal the local ones.

Verification data per document (the ``data`` binary column):

==========  ============================================================================
kind        bytes
==========  ============================================================================
jaccard     MinHash with ``verify=True``: the sorted unique 64-bit shingle hashes
estimate    MinHash with ``verify=False``: the 32-bit folded signature (``num_perm`` words)
hamming     SimHash: the code's 64-bit words (``bits / 64`` of them)
==========  ============================================================================
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import numpy.typing as npt

from neardup.errors import ConfigError, InputTooLargeError
from neardup.io import Document

if TYPE_CHECKING:
    import pyarrow as pa

    from neardup.methods import Method

__all__ = [
    "SKETCH_CHUNK",
    "Kind",
    "accepted",
    "method_kind",
    "sketch_arrays",
    "sketch_batches",
    "verify_batches",
]

#: Documents sketched per call of ``Method.sketch`` inside an executor.
SKETCH_CHUNK = 1024
#: Largest byte buffer of one Arrow binary column (32-bit offsets).
_MAX_BUFFER = 2**31 - 1

Kind = Literal["jaccard", "estimate", "hamming"]
U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]


def method_kind(method: Method) -> Kind:
    """How candidate pairs of ``method`` are verified (see the module docstring).

    Raises:
        ConfigError: the method has no Spark engine (only MinHash and SimHash do).

    Examples:
        >>> from neardup.methods import make_method
        >>> method_kind(make_method("simhash")), method_kind(make_method("minhash"))
        ('hamming', 'jaccard')
    """
    from neardup.methods import MinHashMethod, SimHashMethod

    if isinstance(method, MinHashMethod):
        return "jaccard" if method._verify else "estimate"
    if isinstance(method, SimHashMethod):
        return "hamming"
    raise ConfigError(
        f"method {method.name!r} has no Spark engine; use minhash or simhash "
        "(or the local engine for the others)"
    )


def sketch_arrays(
    method: Method, texts: Sequence[str], *, drop_empty: bool = False
) -> tuple[U64, I64, bytes, I64]:
    """Sketch one chunk of texts: bucket keys and verification bytes, both as CSR.

    Args:
        method: A MinHash or SimHash method (the same object the local engine uses).
        texts: The documents' texts.
        drop_empty: Give documents whose shingle set is empty no bucket keys (MinHash with
            verification and a threshold above 0: their exact Jaccard with anything is 0).

    Returns:
        ``(keys, key_offsets, data, data_offsets)``: the 64-bit bucket keys of document ``i``
        are ``keys[key_offsets[i]:key_offsets[i + 1]]``; its verification bytes are
        ``data[data_offsets[i]:data_offsets[i + 1]]``.

    Examples:
        >>> from neardup.methods import make_method
        >>> keys, ko, data, do = sketch_arrays(make_method("simhash"), ["a b c", "d e f"])
        >>> ko.tolist(), do.tolist()
        ([0, 7, 14], [0, 8, 16])
    """
    from neardup.index.lsh import _fold

    kind = method_kind(method)
    docs = [Document(str(i), t) for i, t in enumerate(texts)]
    payload: Any = method.sketch(docs)
    n = len(docs)
    key_matrix = np.ascontiguousarray(method.lookup_keys(payload), dtype=np.uint64)
    per_doc = np.full(n, key_matrix.shape[1] if n else 0, dtype=np.int64)
    if kind == "jaccard":
        values, offsets = payload[1]
        values = np.ascontiguousarray(values, dtype=np.uint64)
        data = values.tobytes()
        data_offsets = np.asarray(offsets, dtype=np.int64) * 8
        if drop_empty:
            per_doc[np.diff(offsets) == 0] = 0
    elif kind == "estimate":
        folded = np.ascontiguousarray(_fold(payload[0]))
        data = folded.tobytes()
        data_offsets = np.arange(n + 1, dtype=np.int64) * folded.shape[1] * 4
    else:
        codes = np.ascontiguousarray(payload, dtype=np.uint64).reshape(n, -1)
        data = codes.tobytes()
        data_offsets = np.arange(n + 1, dtype=np.int64) * codes.shape[1] * 8
    key_offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(per_doc, out=key_offsets[1:])
    keep = np.repeat(per_doc > 0, key_matrix.shape[1]) if n else np.zeros(0, dtype=bool)
    keys: U64 = key_matrix.ravel()[keep]
    return keys, key_offsets, data, data_offsets


def _binary_array(data: bytes, offsets: I64) -> pa.Array:
    import pyarrow as pa

    if len(data) > _MAX_BUFFER:
        raise InputTooLargeError(
            f"one batch of sketches needs {len(data)} bytes, over Arrow's 2 GiB; lower "
            "spark.sql.execution.arrow.maxRecordsPerBatch or split the largest documents"
        )
    n = len(offsets) - 1
    return pa.Array.from_buffers(
        pa.binary(), n, [None, pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(data)]
    )


def sketch_batches(
    batches: Iterator[pa.RecordBatch],
    *,
    method: str,
    threshold: float,
    options: Mapping[str, Any],
    drop_empty: bool = False,
) -> Iterator[pa.RecordBatch]:
    """``mapInArrow`` step: ``(id, text)`` batches to ``(id, keys array<bigint>, data binary)``.

    The method is rebuilt in the executor by :func:`~neardup.methods.make_method` from its
    name, threshold and options (methods pickle without their index, which ``lookup_keys``
    needs). Keys are the unsigned 64-bit bucket keys reinterpreted as signed (Spark has no
    unsigned type); equality, which is all that grouping needs, is unchanged.

    Args:
        batches: Record batches with columns ``id`` and ``text`` (no nulls).
        method: The method name (``minhash``, ``simhash``...).
        threshold: Its similarity threshold.
        options: Its options (``num_perm``, ``verify``, ``bits``...).
        drop_empty: See :func:`sketch_arrays`.
    """
    import pyarrow as pa

    from neardup.methods import make_method

    m = make_method(method, threshold, **options)
    for batch in batches:
        ids = batch.column("id")
        texts = batch.column("text").to_pylist()
        for start in range(0, max(len(texts), 1), SKETCH_CHUNK):
            chunk = texts[start : start + SKETCH_CHUNK]
            if not chunk:
                break
            keys, key_offsets, data, data_offsets = sketch_arrays(m, chunk, drop_empty=drop_empty)
            key_list = pa.ListArray.from_arrays(
                pa.array(key_offsets.astype(np.int32)), pa.array(keys.view(np.int64))
            )
            yield pa.RecordBatch.from_arrays(
                [ids.slice(start, len(chunk)), key_list, _binary_array(data, data_offsets)],
                names=["id", "keys", "data"],
            )


def _csr(arr: pa.Array, itemsize: int) -> tuple[npt.NDArray[Any], I64]:
    """Values and per-row offsets (in items) of a binary Arrow array, copied and aligned."""
    import pyarrow as pa

    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    arr = arr.cast(pa.large_binary())
    bufs = arr.buffers()
    off = np.frombuffer(bufs[1], dtype=np.int64)[arr.offset : arr.offset + len(arr) + 1]
    raw = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None else np.zeros(0, np.uint8)
    lo, hi = (int(off[0]), int(off[-1])) if len(off) else (0, 0)
    dtype = {8: np.uint64, 4: np.uint32}[itemsize]
    values = raw[lo:hi].copy().view(dtype)
    return values, (off - lo) // itemsize


def accepted(
    kind: Kind,
    data_a: pa.Array,
    data_b: pa.Array,
    *,
    threshold: float,
    radius: int = 0,
    bits: int = 64,
) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.float64]]:
    """Verify candidate pairs from their documents' verification bytes.

    The rules are the local engine's: ``jaccard`` accepts an exact Jaccard of the shingle-hash
    sets ``>= threshold``; ``estimate`` accepts the fraction of equal folded signature slots
    ``>= threshold``; ``hamming`` accepts ``popcount(a ^ b) <= radius``.

    Returns:
        ``(ok, similarity)`` per pair; for ``hamming`` the similarity is ``1 - d / bits``.

    Examples:
        >>> import pyarrow as pa
        >>> a = pa.array([np.array([1, 2, 3], np.uint64).tobytes()], pa.binary())
        >>> b = pa.array([np.array([2, 3, 4], np.uint64).tobytes()], pa.binary())
        >>> ok, sim = accepted("jaccard", a, b, threshold=0.5)
        >>> ok.tolist(), sim.tolist()
        ([True], [0.5])
    """
    from neardup._kernels.sets import jaccard_pairs

    n = len(data_a)
    if kind == "jaccard":
        va, oa = _csr(data_a, 8)
        vb, ob = _csr(data_b, 8)
        values = np.concatenate((va, vb))
        offsets = np.concatenate((oa, ob[1:] + oa[-1])) if n else np.zeros(1, np.int64)
        idx = np.arange(n, dtype=np.int64)
        sims = jaccard_pairs(values, offsets, idx, idx + n)
        return sims >= threshold, sims
    if kind == "estimate":
        va, oa = _csr(data_a, 4)
        vb, _ = _csr(data_b, 4)
        width = int(oa[1] - oa[0]) if n else 1
        eq = va.reshape(n, width) == vb.reshape(n, width)
        est = np.count_nonzero(eq, axis=1) / width
        return est >= threshold, est.astype(np.float64)
    va, oa = _csr(data_a, 8)
    vb, _ = _csr(data_b, 8)
    words = int(oa[1] - oa[0]) if n else 1
    d = np.bitwise_count(va.reshape(n, words) ^ vb.reshape(n, words)).sum(axis=1, dtype=np.int64)
    limit = min(radius, bits - 1)  # the local HammingIndex caps the radius the same way
    return d <= limit, 1.0 - d / bits


def verify_batches(
    batches: Iterator[pa.RecordBatch],
    *,
    kind: Kind,
    threshold: float,
    radius: int = 0,
    bits: int = 64,
) -> Iterator[pa.RecordBatch]:
    """``mapInArrow`` step: ``(a, b, da, db)`` candidate batches to accepted
    ``(a, b, similarity)`` rows (see :func:`accepted`)."""
    import pyarrow as pa

    for batch in batches:
        ok, sims = accepted(
            kind,
            batch.column("da"),
            batch.column("db"),
            threshold=threshold,
            radius=radius,
            bits=bits,
        )
        mask = pa.array(ok)
        yield pa.RecordBatch.from_arrays(
            [
                batch.column("a").filter(mask),
                batch.column("b").filter(mask),
                pa.array(sims[ok], pa.float64()),
            ],
            names=["a", "b", "similarity"],
        )
