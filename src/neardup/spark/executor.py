"""The steps that run inside Spark executors: Arrow batches in, Arrow batches out.

Pure functions of pyarrow record batches and numpy arrays (no Spark session needed), so they
are tested directly and shipped to executors by reference. They call the same
:class:`~neardup.methods.Method` objects as the local engine (``sketch``, ``lookup_keys``) and
the same kernels (:func:`~neardup._kernels.sets.jaccard_pairs`, popcount, union-find), which is
what makes the Spark clusters equal the local ones.

Every shuffled frame has the rows ``(dest int, kind tinyint, blob binary)`` (:data:`ROWS`): a
blob (:mod:`neardup.spark.blobs`) carries all the arrays that one task sends to one
destination task. A document is known by its *ref*, ``partition << 32 | row``: the input
partition that sketched it and its row there.

==========  ======================================================================
kind        blob
==========  ======================================================================
KEYS        bucket keys and the refs of their documents (sketch -> bucket step)
DATA        documents' refs, ids, verification bytes and offsets: all of a chunk (sketch ->
            forward step), or those another task's pairs need (forward -> verify step)
PAIRS       candidate pairs ``(home, other)`` (:func:`home_side`; bucket -> forward step)
NEEDS       refs of documents that are the other end of a pair (bucket -> forward step)
FORWARD     pairs with the ids and verification bytes of their home document (forward ->
            verify step)
ACCEPTED    the ids of verified pairs and their similarities (forward -> verify step): pairs
            whose two documents' data is in the same task are verified there
IDS         hashes of ids and the ids, routed by hash (sketch -> bucket step), where
            duplicate ids are found
==========  ======================================================================

Verification bytes per document:

==========  ============================================================================
kind        bytes
==========  ============================================================================
jaccard     MinHash with ``verify=True``: the sorted unique 64-bit shingle hashes
estimate    MinHash with ``verify=False``: the 32-bit folded signature (``num_perm`` words)
hamming     SimHash: the code's 64-bit words (``bits / 64`` of them)
==========  ============================================================================
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import numpy.typing as npt

from neardup.errors import ConfigError, InputError, InputTooLargeError
from neardup.io import Document
from neardup.spark.blobs import ids_from_arrow, ids_to_arrow, pack, take_ids, take_rows, unpack

if TYPE_CHECKING:
    import pyarrow as pa

    from neardup.methods import Method

__all__ = [
    "ACCEPTED",
    "DATA",
    "DUPLICATE_IDS",
    "FORWARD",
    "IDS",
    "KEYS",
    "NEEDS",
    "NULL_IDS",
    "NULL_TEXT",
    "PAIRS",
    "ROWS",
    "Kind",
    "bucket_step",
    "components_step",
    "duplicate_ids",
    "forward_step",
    "home_side",
    "method_kind",
    "similarities",
    "sketch_arrays",
    "sketch_step",
    "verify_step",
]

#: How the errors raised in executors start (the driver re-raises them as InputError).
NULL_TEXT = "null texts:"
NULL_IDS = "null ids:"
DUPLICATE_IDS = "duplicate ids:"
#: Schema of every shuffled frame.
ROWS = "dest int, kind tinyint, blob binary"
KEYS, DATA, PAIRS, FORWARD, NEEDS, ACCEPTED, IDS = 0, 1, 2, 3, 4, 5, 6
#: Target size of one blob, and about the most bytes of blobs in one Arrow batch / 4: a
#: Spark row is built in one JVM byte buffer, so a pair-heavy task must not make one huge
#: value.
BLOB_BYTES = 16 << 20
#: Most documents, and most text bytes, sketched per call of ``Method.sketch``.
SKETCH_DOCS = 8192
SKETCH_BYTES = 32 << 20

Kind = Literal["jaccard", "estimate", "hamming"]
U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]
_ITEM: dict[str, np.dtype[Any]] = {
    "jaccard": np.dtype("<u8"),
    "estimate": np.dtype("<u4"),
    "hamming": np.dtype("<u8"),
}


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
    docs = [Document("", t) for t in texts]
    payload: Any = method.sketch(docs)
    n = len(docs)
    key_matrix = np.ascontiguousarray(method.lookup_keys(payload), dtype=np.uint64)
    per_doc = np.full(n, key_matrix.shape[1] if n else 0, dtype=np.int64)
    if kind == "jaccard":
        values, offsets = payload[1]
        data = np.ascontiguousarray(values, dtype="<u8").tobytes()
        data_offsets = np.asarray(offsets, dtype=np.int64) * 8
        if drop_empty:
            per_doc[np.diff(offsets) == 0] = 0
    elif kind == "estimate":
        folded = np.ascontiguousarray(_fold(payload[0]), dtype="<u4")
        data = folded.tobytes()
        data_offsets = np.arange(n + 1, dtype=np.int64) * folded.shape[1] * 4
    else:
        codes = np.ascontiguousarray(payload, dtype="<u8").reshape(n, -1)
        data = codes.tobytes()
        data_offsets = np.arange(n + 1, dtype=np.int64) * codes.shape[1] * 8
    key_offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(per_doc, out=key_offsets[1:])
    keep = np.repeat(per_doc > 0, key_matrix.shape[1]) if n else np.zeros(0, dtype=bool)
    keys: U64 = key_matrix.ravel()[keep]
    return keys, key_offsets, data, data_offsets


def _partition_id(partition: int | None) -> int:
    if partition is not None:
        return partition
    from pyspark import TaskContext

    ctx = TaskContext.get()
    return ctx.partitionId() if ctx is not None else 0


def _rows(dests: list[int], kinds: list[int], blobs: list[bytes]) -> Iterator[pa.RecordBatch]:
    """The rows, in Arrow batches of about ``4 * BLOB_BYTES`` at most."""
    import pyarrow as pa

    start, size = 0, 0
    for k, blob in enumerate(blobs):
        size += len(blob)
        if size >= 4 * BLOB_BYTES or k == len(blobs) - 1:
            yield pa.RecordBatch.from_arrays(
                [
                    pa.array(dests[start : k + 1], pa.int32()),
                    pa.array(kinds[start : k + 1], pa.int8()),
                    pa.array(blobs[start : k + 1], pa.binary()),
                ],
                names=["dest", "kind", "blob"],
            )
            start, size = k + 1, 0


def _pieces(positions: I64, cost: I64) -> Iterator[I64]:
    """``positions`` cut into consecutive runs of about ``BLOB_BYTES`` (``cost`` per row),
    at least one row each."""
    if not len(positions):
        return
    before = np.cumsum(cost) - cost
    piece = before // BLOB_BYTES
    cuts = [*np.flatnonzero(np.r_[True, piece[1:] != piece[:-1]]).tolist(), len(positions)]
    for lo, hi in itertools.pairwise(cuts):
        yield positions[lo:hi]


def _by_target(targets: I64) -> Iterator[tuple[int, I64]]:
    """``(target, positions)`` for each distinct target, in target order."""
    if not len(targets):
        return
    order = np.argsort(targets, kind="stable")
    ordered = targets[order]
    cuts = [*np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]]).tolist(), len(order)]
    for lo, hi in itertools.pairwise(cuts):
        yield int(ordered[lo]), order[lo:hi]


def _route(
    targets: I64, dest_table: Sequence[int], kind: int, arrays: Sequence[npt.NDArray[Any]]
) -> tuple[list[int], list[int], list[bytes]]:
    """Blobs of about ``BLOB_BYTES`` for each target task: the rows of ``arrays`` whose
    target is that task."""
    dests: list[int] = []
    blobs: list[bytes] = []
    width = sum(arr.dtype.itemsize for arr in arrays)
    for target, sel in _by_target(targets):
        for piece in _pieces(sel, np.full(len(sel), width, dtype=np.int64)):
            dests.append(dest_table[target])
            blobs.append(pack(*(arr[piece] for arr in arrays)))
    return dests, [kind] * len(dests), blobs


def _id_hashes(parts: list[npt.NDArray[Any]]) -> U64:
    """A 64-bit hash of every id (xxh3 of a string id's UTF-8 bytes; a mix of an integer)."""
    if len(parts) == 1:
        with np.errstate(over="ignore"):
            x = parts[0].astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
            return x ^ (x >> np.uint64(29))
    from neardup._kernels.engine import hash_spans
    from neardup._kernels.spans import Spans

    data, off = parts
    spans = Spans(data, off[:-1].copy(), off[1:].copy(), np.array([0, len(off) - 1]))
    lo, _ = hash_spans(spans, "xxh3_64")
    return lo


def duplicate_ids(blobs: list[bytes], string_ids: bool, limit: int = 3) -> list[Any]:
    """Up to ``limit`` ids that occur more than once among IDS blobs (hash, then bytes).

    Examples:
        >>> ids = [np.array([5, 7, 5])]
        >>> duplicate_ids([pack(_id_hashes(ids), *ids)], string_ids=False)
        [5]
    """
    if not blobs:
        return []
    parts = [unpack(b) for b in blobs]
    hashes = np.concatenate([p[0] for p in parts])
    ids = _concat_ids([p[1:] for p in parts])
    order = np.argsort(hashes, kind="stable")
    same = np.flatnonzero(hashes[order][1:] == hashes[order][:-1])
    if not len(same):
        return []
    values = ids_to_arrow(ids).to_pylist()
    found: list[Any] = []
    for k in same.tolist():
        a, b = values[order[k]], values[order[k + 1]]
        if a == b and a not in found:  # equal hashes of different ids are collisions
            found.append(a)
            if len(found) == limit:
                break
    return found


def _chunks(texts: pa.Array) -> Iterator[tuple[int, int]]:
    """``(start, stop)`` runs of at most SKETCH_DOCS documents and about SKETCH_BYTES of text."""
    import pyarrow as pa

    n = len(texts)
    arr = texts.cast(pa.large_string())
    off = np.frombuffer(arr.buffers()[1], dtype=np.int64)[arr.offset : arr.offset + n + 1]
    start = 0
    while start < n:
        limit = int(off[start]) + SKETCH_BYTES
        stop = int(np.searchsorted(off, limit, side="right")) - 1
        stop = min(max(stop, start + 1), start + SKETCH_DOCS, n)
        yield start, stop
        start = stop


def sketch_step(
    batches: Iterator[pa.RecordBatch],
    *,
    method: str,
    threshold: float,
    options: Mapping[str, Any],
    dest_table: Sequence[int],
    drop_empty: bool = False,
    on_null: str = "fail",
    nulls: Any = None,
    check_ids: bool = False,
    partition: int | None = None,
) -> Iterator[pa.RecordBatch]:
    """``mapInArrow`` step: ``(id, text)`` batches to KEYS and DATA rows.

    The method is rebuilt in the executor by :func:`~neardup.methods.make_method` from its
    name, threshold and options. Each key goes to task ``key % len(dest_table)`` (keys are
    hashes, so this spreads them evenly); the DATA rows go to task
    ``partition % len(dest_table)``.

    Args:
        batches: Record batches with columns ``id`` and ``text`` (no nulls).
        method: The method name (``minhash``, ``simhash``...).
        threshold: Its similarity threshold.
        options: Its options (``num_perm``, ``verify``, ``bits``...).
        dest_table: ``dest`` value that Spark's hash partitioning sends to each task.
        drop_empty: See :func:`sketch_arrays`.
        on_null: ``"fail"``: a null text raises InputError; ``"skip"``: rows with a null text
            are left out and counted in ``nulls``.
        nulls: A Spark accumulator for the skipped rows, or None.
        check_ids: Also send every id, routed by its hash, to the bucket step, which
            raises InputError on duplicates (:func:`bucket_step`).
        partition: This input partition's number (default: the Spark task's).

    Raises:
        InputError: a null id, or a null text with ``on_null="fail"`` (the messages start
            with :data:`NULL_IDS` and :data:`NULL_TEXT`, which the driver recognizes).
        InputTooLargeError: more than 2**32 documents in one input partition.
    """
    import pyarrow.compute as pc

    from neardup.methods import make_method

    pid = _partition_id(partition)
    tasks = len(dest_table)
    m = make_method(method, threshold, **options)
    kind = method_kind(m)
    row = 0
    for batch in batches:
        if batch.column("id").null_count:
            raise InputError(f"{NULL_IDS} {batch.column('id').null_count} in partition {pid}")
        if batch.column("text").null_count:
            missing = batch.column("text").null_count
            if on_null != "skip":
                raise InputError(f"{NULL_TEXT} {missing} in one batch of partition {pid}")
            if nulls is not None:
                nulls.add(missing)
            batch = batch.filter(pc.is_valid(batch.column("text")))
        ids, texts = batch.column("id"), batch.column("text")
        for start, stop in _chunks(texts):
            n = stop - start
            if row + n > 2**32:
                raise InputTooLargeError(
                    "over 2**32 documents in one Spark partition; repartition the input"
                )
            keys, key_offsets, data, data_offsets = sketch_arrays(
                m, texts.slice(start, n).to_pylist(), drop_empty=drop_empty
            )
            refs = (np.int64(pid) << np.int64(32)) | (row + np.arange(n, dtype=np.int64))
            key_refs = np.repeat(refs, np.diff(key_offsets))
            arrays: tuple[npt.NDArray[Any], ...] = (keys, key_refs)
            if kind == "hamming":  # the bucket step filters pairs by distance: codes go along
                codes = np.frombuffer(data, dtype="<u8").reshape(n, -1)
                arrays += (np.repeat(codes, np.diff(key_offsets), axis=0).ravel(),)
            targets = (keys % np.uint64(tasks)).astype(np.int64)
            dests, kinds, blobs = _route(targets, dest_table, KEYS, arrays)
            if check_ids:
                id_parts = ids_from_arrow(ids.slice(start, n))
                hashes = _id_hashes(id_parts)
                more = _route(
                    (hashes % np.uint64(tasks)).astype(np.int64),
                    dest_table,
                    IDS,
                    (hashes, np.arange(n, dtype=np.int64)),
                )
                for dest, blob in zip(more[0], more[2], strict=True):
                    sel = unpack(blob)[1]
                    dests.append(dest)
                    kinds.append(IDS)
                    blobs.append(pack(hashes[sel], *take_ids(id_parts, sel)))
            dests.append(dest_table[pid % tasks])
            kinds.append(DATA)
            blobs.append(
                pack(
                    refs,
                    *ids_from_arrow(ids.slice(start, n)),
                    np.frombuffer(data, dtype=np.uint8),
                    data_offsets,
                )
            )
            yield from _rows(dests, kinds, blobs)
            row += n


@dataclass
class _Docs:
    """The documents of the DATA blobs a task received: refs, ids, verification CSR."""

    refs: I64
    ids: list[npt.NDArray[Any]]
    data: npt.NDArray[np.uint8]
    offsets: I64

    @classmethod
    def from_blobs(cls, blobs: list[bytes], string_ids: bool) -> _Docs:
        chunks = [unpack(b) for b in blobs]
        if not chunks:
            empty: list[npt.NDArray[Any]] = (
                [np.zeros(0, np.uint8), np.zeros(1, np.int64)]
                if string_ids
                else [np.zeros(0, np.int64)]
            )
            return cls(np.zeros(0, np.int64), empty, np.zeros(0, np.uint8), np.zeros(1, np.int64))
        offsets: list[I64] = []
        base = 0
        for c in chunks:
            offsets.append(c[-1] + base if not offsets else c[-1][1:] + base)
            base += len(c[-2])
        return cls(
            np.concatenate([c[0] for c in chunks]),
            _concat_ids([c[1:-2] for c in chunks]),
            np.concatenate([c[-2] for c in chunks]),
            np.concatenate(offsets),
        )

    def rows_of(self, refs: I64) -> I64:
        """Row of each ref (they must all be here)."""
        order = self.__dict__.get("_order")
        if order is None:
            order = self.__dict__["_order"] = np.argsort(self.refs)
        sorted_refs = self.refs[order]
        pos = np.searchsorted(sorted_refs, refs)
        if len(refs) and (
            pos.max(initial=0) >= len(sorted_refs) or not np.array_equal(sorted_refs[pos], refs)
        ):
            raise AssertionError("a candidate pair names a document this task did not receive")
        rows: I64 = order[pos]
        return rows

    def sizes(self, rows: I64) -> I64:
        """About the bytes that the documents at ``rows`` add to a blob."""
        size: I64 = self.offsets[rows + 1] - self.offsets[rows] + 32
        if len(self.ids) == 2:
            size += self.ids[1][rows + 1] - self.ids[1][rows]
        return size

    def blobs(self, rows: I64) -> Iterator[bytes]:
        """DATA blobs (about ``BLOB_BYTES`` each) of the documents at ``rows``."""
        for piece in _pieces(rows, self.sizes(rows)):
            yield pack(
                self.refs[piece],
                *take_ids(self.ids, piece),
                *take_rows(self.data, self.offsets, piece),
            )


def _concat_ids(parts: list[list[npt.NDArray[Any]]]) -> list[npt.NDArray[Any]]:
    if len(parts[0]) == 1:
        return [np.concatenate([p[0] for p in parts])]
    datas, offs, base = [], [], 0
    for k, (data, off) in enumerate(parts):
        datas.append(data)
        offs.append(off + base if k == 0 else off[1:] + base)
        base += len(data)
    return [np.concatenate(datas), np.concatenate(offs)]


def _split(batches: Iterator[pa.RecordBatch]) -> dict[int, list[bytes]]:
    """The blobs of a task's input rows, by kind."""
    out: dict[int, list[bytes]] = {
        k: [] for k in (KEYS, DATA, PAIRS, FORWARD, NEEDS, ACCEPTED, IDS)
    }
    for batch in batches:
        kinds = batch.column("kind").to_numpy(zero_copy_only=False)
        blobs = batch.column("blob")
        for k, blob in zip(kinds.tolist(), blobs, strict=True):
            out[k].append(blob.as_buffer())
    return out


def bucket_step(
    batches: Iterator[pa.RecordBatch],
    *,
    max_bucket: int,
    dest_table: Sequence[int],
    oversized: Any = None,
    largest: Any = None,
    string_ids: bool = True,
    radius: int = -1,
) -> Iterator[pa.RecordBatch]:
    """``mapInArrow`` step: KEYS rows to PAIRS rows (:func:`~neardup._kernels.sets.bucket_pairs`).

    All documents sharing a key are in this task (keys are routed by value). Pairs are
    de-duplicated here, then each goes to the task that holds its home document's data, and
    the refs of the other ends (NEEDS) go to the tasks that hold theirs.
    ``oversized`` and ``largest`` are Spark accumulators (sum, max) for the bucket-cap
    warning, or None. SimHash KEYS carry the documents' codes: with ``radius >= 0`` only
    pairs within that distance leave this step (the verify step's rule, applied before the
    pairs are materialized).

    Raises:
        InputError: IDS rows show an id twice (the message starts with
            :data:`DUPLICATE_IDS`, then the ``repr`` of up to 3 of them).
    """
    from neardup._kernels.sets import bucket_pairs, sorted_unique, unique_pairs

    blobs = _split(batches)
    twice = duplicate_ids(blobs[IDS], string_ids)
    if twice:
        raise InputError(f"{DUPLICATE_IDS} {', '.join(map(repr, twice))}")
    parts = [unpack(b) for b in blobs[KEYS]]
    if not parts:
        return
    keys = np.concatenate([p[0] for p in parts])
    # dense numbers in ref order: pairs then de-duplicate by a counting sort
    refs, dense = np.unique(np.concatenate([p[1] for p in parts]), return_inverse=True)
    codes = (
        np.concatenate([p[2] for p in parts]).reshape(len(keys), -1) if len(parts[0]) > 2 else None
    )
    a, b, over, big = bucket_pairs(keys, dense, max_bucket, codes=codes, radius=radius)
    if over and oversized is not None and largest is not None:
        oversized.add(over)
        largest.add(big)
    if not len(a):
        return
    a, b = unique_pairs(a, b, len(refs))
    home, other = home_side(refs[a], refs[b])
    tasks = len(dest_table)
    home_task, other_task = (home >> np.int64(32)) % tasks, (other >> np.int64(32)) % tasks
    dests, kinds, out = _route(home_task, dest_table, PAIRS, (home, other))
    # the forward step verifies pairs whose two ends are in the same task without NEEDS
    needed = sorted_unique(other[home_task != other_task])
    more = _route((needed >> np.int64(32)) % tasks, dest_table, NEEDS, (needed,))
    yield from _rows(dests + more[0], kinds + more[1], out + more[2])


def home_side(a: I64, b: I64) -> tuple[I64, I64]:
    """Each pair as ``(home, other)``: the end whose task verifies it is the other one, and
    the home end's data travels there. A hash of the pair picks the home, so that the work
    spreads over the tasks evenly (``a < b`` would send most pairs to the first partitions).

    Examples:
        >>> home, other = home_side(np.array([1, 1]), np.array([2, 2]))
        >>> home.tolist() == other.tolist()[::-1] or home.tolist() == [1, 1]
        True
    """
    with np.errstate(over="ignore"):
        mix = (a.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)) ^ b.astype(np.uint64)
        mix *= np.uint64(0xBF58476D1CE4E5B9)
    flip = (mix >> np.uint64(63)).astype(bool)
    return np.where(flip, b, a), np.where(flip, a, b)


def forward_step(
    batches: Iterator[pa.RecordBatch],
    *,
    dest_table: Sequence[int],
    string_ids: bool,
    rule: Mapping[str, Any],
) -> Iterator[pa.RecordBatch]:
    """``mapInArrow`` step: PAIRS, NEEDS and DATA rows to FORWARD and DATA rows.

    This task has the data of every pair's home document. It removes pairs repeated across
    bucket tasks, then sends each pair, with the id and verification bytes of its home
    document (once per destination), to the task that verifies it: the one that holds the
    other document's data. It also sends that task the data of the documents it holds that
    some pair needs as its other end, and only those (most documents of a large corpus have
    no candidate pair). Pairs whose other document is in this task too are verified here by
    ``rule`` (the keyword arguments of :func:`similarities`), and only their result moves.
    """
    from neardup._kernels.sets import sorted_unique, unique_pairs

    blobs = _split(batches)
    if not blobs[PAIRS] and not blobs[NEEDS]:
        return
    docs = _Docs.from_blobs(blobs[DATA], string_ids)
    tasks = len(dest_table)
    dests: list[int] = []
    kinds: list[int] = []
    out: list[bytes] = []
    if blobs[NEEDS]:
        needed = sorted_unique(np.concatenate([unpack(b)[0] for b in blobs[NEEDS]]))
        rows = docs.rows_of(needed)
        for target, sel in _by_target((needed >> np.int64(32)) % tasks):
            for blob in docs.blobs(rows[sel]):
                dests.append(dest_table[target])
                kinds.append(DATA)
                out.append(blob)
    if blobs[PAIRS]:
        parts = [unpack(b) for b in blobs[PAIRS]]
        rows, b = unique_pairs(
            docs.rows_of(np.concatenate([p[0] for p in parts])),
            np.concatenate([p[1] for p in parts]),
            len(docs.refs),
        )
        targets = (b >> np.int64(32)) % tasks
        here = targets == (docs.refs[rows] >> np.int64(32)) % tasks
        if here.any():
            near = docs.rows_of(b[here])
            ok, sims = similarities(
                rule["kind"], docs.data, docs.offsets, rows[here], near, **rule["args"]
            )
            mine, theirs, score = rows[here][ok], near[ok], sims[ok]
            cost = docs.sizes(mine) + docs.sizes(theirs)
            for piece in _pieces(np.arange(len(mine)), cost):
                out.append(
                    pack(
                        *take_ids(docs.ids, mine[piece]),
                        *take_ids(docs.ids, theirs[piece]),
                        score[piece],
                    )
                )
                dests.append(dest_table[int(targets[here][0])])
                kinds.append(ACCEPTED)
            rows, b, targets = rows[~here], b[~here], targets[~here]
        for target, sel in _by_target(targets):
            sel = sel[np.argsort(rows[sel], kind="stable")]  # each home's pairs together
            home = rows[sel]
            first = np.r_[True, home[1:] != home[:-1]]
            cost = 16 + np.where(first, docs.sizes(home), 0)
            for piece in _pieces(sel, cost):
                uniq, local = np.unique(rows[piece], return_inverse=True)
                out.append(
                    pack(
                        *take_ids(docs.ids, uniq),
                        *take_rows(docs.data, docs.offsets, uniq),
                        local.astype(np.int64),
                        b[piece],
                    )
                )
                dests.append(dest_table[target])
                kinds.append(FORWARD)
    yield from _rows(dests, kinds, out)


def similarities(
    kind: Kind,
    data: npt.NDArray[np.uint8],
    offsets: I64,
    a: I64,
    b: I64,
    *,
    threshold: float,
    radius: int = 0,
    bits: int = 64,
) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.float64]]:
    """Verify pairs ``(a[k], b[k])`` of documents whose verification bytes are
    ``data[offsets[i]:offsets[i + 1]]``.

    The rules are the local engine's: ``jaccard`` accepts an exact Jaccard of the shingle-hash
    sets ``>= threshold``; ``estimate`` accepts the fraction of equal folded signature slots
    ``>= threshold``; ``hamming`` accepts ``popcount(a ^ b) <= radius``.

    Returns:
        ``(ok, similarity)`` per pair; for ``hamming`` the similarity is ``1 - d / bits``.

    Examples:
        >>> sets = np.array([1, 2, 3, 2, 3, 4], np.uint64).view(np.uint8)
        >>> ok, sim = similarities("jaccard", sets, np.array([0, 24, 48]), np.array([0]),
        ...                        np.array([1]), threshold=0.5)
        >>> ok.tolist(), sim.tolist()
        ([True], [0.5])
    """
    from neardup._kernels.sets import jaccard_pairs

    item = _ITEM[kind]
    values = data.view(item) if len(data) else np.zeros(0, item)
    off = offsets // item.itemsize
    if kind == "jaccard":
        sims = jaccard_pairs(values.astype(np.uint64, copy=False), off, a, b)
        return sims >= threshold, sims
    width = int(off[1] - off[0]) if len(off) > 1 else 1
    rows = values.reshape(-1, width)
    if kind == "estimate":
        est = np.count_nonzero(rows[a] == rows[b], axis=1) / width
        return est >= threshold, est.astype(np.float64)
    d = np.bitwise_count(rows[a] ^ rows[b]).sum(axis=1, dtype=np.int64)
    limit = min(radius, bits - 1)  # the local HammingIndex caps the radius the same way
    return d <= limit, 1.0 - d / bits


def verify_step(
    batches: Iterator[pa.RecordBatch],
    *,
    kind: Kind,
    threshold: float,
    id_type: pa.DataType,
    mode: Literal["pairs", "edges"],
    radius: int = 0,
    bits: int = 64,
    emitted: Any = None,
) -> Iterator[pa.RecordBatch]:
    """``mapInArrow`` step: FORWARD, DATA and ACCEPTED rows to accepted pairs or component
    edges.

    ``mode="pairs"``: rows ``(a, b, similarity)`` with ``a < b`` (id order). ``mode="edges"``:
    the accepted pairs of this task reduced by union-find to ``(src, dst)`` edges from each
    node to the smallest id of its local component, a forest with the same connected
    components and at most one edge per document. ``emitted`` is a Spark accumulator for
    the number of rows written, or None.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    blobs = _split(batches)
    if not blobs[FORWARD] and not blobs[ACCEPTED]:
        return
    string_ids = pa.types.is_string(id_type) or pa.types.is_large_string(id_type)
    wide = pa.large_string() if string_ids else pa.int64()
    n_ids = 2 if string_ids else 1
    firsts: list[pa.Array] = []
    seconds: list[pa.Array] = []
    scores: list[npt.NDArray[np.float64]] = []
    for blob in blobs[ACCEPTED]:
        parts = unpack(blob)
        firsts.append(ids_to_arrow(parts[:n_ids]).cast(wide))
        seconds.append(ids_to_arrow(parts[n_ids : 2 * n_ids]).cast(wide))
        scores.append(parts[-1])
    if blobs[FORWARD]:
        docs = _Docs.from_blobs(blobs[DATA], string_ids)
        datas, offs, a_rows, b_rows, a_ids = [docs.data], [docs.offsets], [], [], []
        n_docs, base = len(docs.refs), len(docs.data)
        for blob in blobs[FORWARD]:
            parts = unpack(blob)
            ids, (data, off, local, b) = parts[:n_ids], parts[n_ids:]
            a_ids.append(ids_to_arrow(ids).cast(wide))
            a_rows.append(local + n_docs)
            b_rows.append(docs.rows_of(b))
            datas.append(data)
            offs.append(off[1:] + base)
            n_docs += len(off) - 1
            base += len(data)
        a_idx, b_idx = np.concatenate(a_rows), np.concatenate(b_rows)
        ok, sims = similarities(
            kind,
            np.concatenate(datas),
            np.concatenate(offs),
            a_idx,
            b_idx,
            threshold=threshold,
            radius=radius,
            bits=bits,
        )
        firsts.append(pa.concat_arrays(a_ids).take(pa.array(a_idx[ok] - len(docs.refs))))
        seconds.append(ids_to_arrow(take_ids(docs.ids, b_idx[ok])).cast(wide))
        scores.append(sims[ok])
    ida, idb = pa.concat_arrays(firsts), pa.concat_arrays(seconds)
    score = np.concatenate(scores)
    if emitted is not None:
        emitted.add(len(ida))
    if mode == "pairs":
        first = pc.less(ida, idb)
        yield pa.RecordBatch.from_arrays(
            [
                pc.if_else(first, ida, idb).cast(id_type),
                pc.if_else(first, idb, ida).cast(id_type),
                pa.array(score, pa.float64()),
            ],
            names=["a", "b", "similarity"],
        )
        return
    yield _star_edges(ida, idb, id_type)


def components_step(
    batches: Iterator[pa.RecordBatch], *, id_type: pa.DataType
) -> Iterator[pa.RecordBatch]:
    """``mapInArrow`` step: all the ``(src, dst)`` edges of a graph (one task) to
    ``(id, component)`` rows, component = the smallest id of the node's component, by
    union-find (:func:`neardup.cluster.components`)."""
    import pyarrow as pa

    src, dst = [], []
    for batch in batches:
        src.append(batch.column("src"))
        dst.append(batch.column("dst"))
    if not src or not sum(len(s) for s in src):
        return
    star = _star_edges(pa.concat_arrays(src), pa.concat_arrays(dst), id_type, roots=True)
    yield star.rename_columns(["id", "component"])


def _star_edges(
    ida: pa.Array, idb: pa.Array, id_type: pa.DataType, *, roots: bool = False
) -> pa.RecordBatch:
    """Edges ``node -> smallest id of its component`` for the graph of pairs ``(ida, idb)``
    (with ``roots``, also ``root -> root`` for every component)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from neardup.cluster import components

    ends = pa.concat_arrays([ida, idb])
    rank = pc.rank(ends, sort_keys="ascending", tiebreaker="dense").to_numpy().astype(np.int64)
    rank -= 1
    n = int(rank.max()) + 1 if len(rank) else 0
    k = len(ida)
    roots_of = components(n, rank[:k], rank[k:])
    where = np.empty(n, dtype=np.int64)
    where[rank] = np.arange(len(rank), dtype=np.int64)
    nodes = np.arange(n) if roots else np.flatnonzero(roots_of != np.arange(n))
    return pa.RecordBatch.from_arrays(
        [
            ends.take(pa.array(where[nodes])).cast(id_type),
            ends.take(pa.array(where[roots_of[nodes]])).cast(id_type),
        ],
        names=["src", "dst"],
    )
