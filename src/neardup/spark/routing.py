"""How the Spark engine's executor steps address each other: shuffled rows, blob kinds,
routing to tasks, and the documents a task received.

Every shuffled frame has the rows ``(dest int, kind tinyint, blob binary)`` (:data:`ROWS`): a
blob (:mod:`neardup.spark.blobs`) carries all the arrays that one task sends to one
destination task, up to about :data:`BLOB_BYTES` (larger outputs are cut into several). A
document is known by its *ref*, ``partition << 32 | row``: the input partition that sketched
it and its row there. ``dest`` values come from :func:`neardup.spark.dedup.dest_table`, which
maps each to exactly one task of Spark's hash partitioning.

==========  ======================================================================
kind        blob
==========  ======================================================================
KEYS        bucket keys and the refs of their documents, and for SimHash their codes
            (sketch -> bucket step)
IDS         hashes of ids and the ids, routed by hash (sketch -> bucket step), where
            duplicate ids are found
DATA        documents' refs, ids, verification bytes and offsets: all of a chunk (sketch ->
            forward step), or those another task's pairs need (forward -> verify step)
PAIRS       candidate pairs ``(home, other)`` (bucket -> forward step)
NEEDS       refs of documents that are the other end of a pair (bucket -> forward step)
FORWARD     pairs with the ids and verification bytes of their home document (forward ->
            verify step)
ACCEPTED    the ids of verified pairs and their similarities (forward -> verify step): pairs
            whose two documents' data is in the same task are verified there
==========  ======================================================================
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from neardup.spark.blobs import ids_to_arrow, pack, take_ids, take_rows, unpack

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = [
    "ACCEPTED",
    "BLOB_BYTES",
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
    "Docs",
    "by_target",
    "concat_ids",
    "duplicate_ids",
    "home_side",
    "id_hashes",
    "partition_id",
    "pieces",
    "route",
    "rows_batches",
    "split_kinds",
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

U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]


def partition_id(partition: int | None) -> int:
    if partition is not None:
        return partition
    from pyspark import TaskContext

    ctx = TaskContext.get()
    return ctx.partitionId() if ctx is not None else 0


def rows_batches(
    dests: list[int], kinds: list[int], blobs: list[bytes]
) -> Iterator[pa.RecordBatch]:
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


def pieces(positions: I64, cost: I64) -> Iterator[I64]:
    """``positions`` cut into consecutive runs of about ``BLOB_BYTES`` (``cost`` per row),
    at least one row each."""
    if not len(positions):
        return
    before = np.cumsum(cost) - cost
    piece = before // BLOB_BYTES
    cuts = [*np.flatnonzero(np.r_[True, piece[1:] != piece[:-1]]).tolist(), len(positions)]
    for lo, hi in itertools.pairwise(cuts):
        yield positions[lo:hi]


def by_target(targets: I64) -> Iterator[tuple[int, I64]]:
    """``(target, positions)`` for each distinct target, in target order."""
    if not len(targets):
        return
    order = np.argsort(targets, kind="stable")
    ordered = targets[order]
    cuts = [*np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]]).tolist(), len(order)]
    for lo, hi in itertools.pairwise(cuts):
        yield int(ordered[lo]), order[lo:hi]


def route(
    targets: I64, dest_table: Sequence[int], kind: int, arrays: Sequence[npt.NDArray[Any]]
) -> tuple[list[int], list[int], list[bytes]]:
    """Blobs of about ``BLOB_BYTES`` for each target task: the rows of ``arrays`` whose
    target is that task."""
    dests: list[int] = []
    blobs: list[bytes] = []
    width = sum(arr.dtype.itemsize for arr in arrays)
    for target, sel in by_target(targets):
        for piece in pieces(sel, np.full(len(sel), width, dtype=np.int64)):
            dests.append(dest_table[target])
            blobs.append(pack(*(arr[piece] for arr in arrays)))
    return dests, [kind] * len(dests), blobs


def id_hashes(parts: list[npt.NDArray[Any]]) -> U64:
    """A 64-bit hash of every id (xxh3 of a string id's UTF-8 bytes; a mix of an integer)."""
    if len(parts) == 1:
        with np.errstate(over="ignore"):
            x = parts[0].astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
            return x ^ (x >> np.uint64(29))
    from neardup._kernels.engine import hash_spans
    from neardup._spans import Spans

    data, off = parts
    spans = Spans(data, off[:-1].copy(), off[1:].copy(), np.array([0, len(off) - 1]))
    lo, _ = hash_spans(spans, "xxh3_64")
    return lo


def duplicate_ids(blobs: list[bytes], string_ids: bool, limit: int = 3) -> list[Any]:
    """Up to ``limit`` ids that occur more than once among IDS blobs (hash, then bytes).

    Examples:
        >>> ids = [np.array([5, 7, 5])]
        >>> duplicate_ids([pack(id_hashes(ids), *ids)], string_ids=False)
        [5]
    """
    if not blobs:
        return []
    parts = [unpack(b) for b in blobs]
    hashes = np.concatenate([p[0] for p in parts])
    ids = concat_ids([p[1:] for p in parts])
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


@dataclass
class Docs:
    """The documents of the DATA blobs a task received: refs, ids, verification CSR."""

    refs: I64
    ids: list[npt.NDArray[Any]]
    data: npt.NDArray[np.uint8]
    offsets: I64

    @classmethod
    def from_blobs(cls, blobs: list[bytes], string_ids: bool) -> Docs:
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
            concat_ids([c[1:-2] for c in chunks]),
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

    def sizes(self, rows: I64, *, data: bool = True) -> I64:
        """About the bytes that the documents at ``rows`` add to a blob: ref, id and (with
        ``data``) verification bytes."""
        size: I64 = np.full(len(rows), 24, dtype=np.int64)
        if data:
            size += self.offsets[rows + 1] - self.offsets[rows]
        if len(self.ids) == 2:
            size += self.ids[1][rows + 1] - self.ids[1][rows]
        return size

    def blobs(self, rows: I64) -> Iterator[bytes]:
        """DATA blobs (about ``BLOB_BYTES`` each) of the documents at ``rows``."""
        for piece in pieces(rows, self.sizes(rows)):
            yield pack(
                self.refs[piece],
                *take_ids(self.ids, piece),
                *take_rows(self.data, self.offsets, piece),
            )


def concat_ids(parts: list[list[npt.NDArray[Any]]]) -> list[npt.NDArray[Any]]:
    if len(parts[0]) == 1:
        return [np.concatenate([p[0] for p in parts])]
    datas, offs, base = [], [], 0
    for k, (data, off) in enumerate(parts):
        datas.append(data)
        offs.append(off + base if k == 0 else off[1:] + base)
        base += len(data)
    return [np.concatenate(datas), np.concatenate(offs)]


def split_kinds(batches: Iterator[pa.RecordBatch]) -> dict[int, list[bytes]]:
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
