"""The batch writes of ``dedup --index`` on a thread of their own (private: PersistentIndex's).

:class:`BatchWriter` takes each sketched batch from the run's main thread through a bounded
queue, encodes it (blobs and lookup keys: native kernels that release the GIL), gathers the
batches and writes them with :meth:`Store.add_many` on its own connection (SQLite releases
the GIL while it steps), so that with ``--jobs 2`` the store's work runs beside the sketching
threads instead of stopping the main thread. Batches are written in the order they came, in
the same groups as before (``write_docs`` documents, or ``commit_every`` seconds since the
last write); what was committed survives a crash as before, and a failed write is raised in
the main thread at its next call (nothing is dropped silently).

A group's write transaction runs on a second thread (the committer, which owns the
connection), so that the writer keeps taking and encoding batches meanwhile: a
65,536-document write took 0.1-0.3 s, during which the bounded queue filled and the main
thread (and with it the sketching) stopped. At most one group waits while another is
written; a group's blobs take ~130 bytes a document, a queued batch's payload ~1 KB.

The main thread hands the batches over in bundles of up to :data:`BUNDLE_BATCHES` (or what
came within :data:`BUNDLE_SECONDS`), not one by one: each hand-over wakes the writer thread,
and each wake-up is a few context switches and GIL hand-offs (~1,600 of them at 100,000
documents in ~316 batches, ~30 ms of CPU). The writer still takes the batches one at a time,
so the groups and their order are the same.
"""

from __future__ import annotations

import mmap
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from neardup.errors import NeardupError, StoreError
from neardup.sketch.setcodec import PackedBlobs
from neardup.store.sqlite import Store

__all__ = ["BatchWriter"]

I64 = npt.NDArray[np.int64]
Encode = Callable[[object], tuple[I64, PackedBlobs]]

#: Batches that may wait for the writer before the main thread waits too (bounds memory).
QUEUE_BATCHES = 16

#: Batches the main thread gathers before it hands them to the writer thread in one go.
BUNDLE_BATCHES = 8

#: Seconds after the last hand-over from which a batch is handed over at once, even in a
#: bundle that is not full (a slow stream's batches are not held back).
BUNDLE_SECONDS = 0.05


@dataclass(frozen=True, slots=True)
class _Batch:
    """A batch to store: its ids and either its encoding or the payload to encode."""

    ids: list[str]
    keys: I64 | None
    blobs: PackedBlobs | None
    payload: object


_WRITE = "write"  # write what was gathered now
_CHECKPOINT = "checkpoint"  # the run's writes are done: end a bulk load, copy the WAL back
_STOP = "stop"

_Item = list[_Batch] | str


class BatchWriter:
    """A writer thread with its own connection to a store (see the module docstring).

    Args:
        open_store: Opens the store; called on the writer thread (a connection belongs to
            the thread that made it).
        encode: A payload's ``(lookup keys, blobs)``.
        write_docs: Documents gathered before one write transaction.
        commit_every: Seconds after which a batch is written even below ``write_docs``.
    """

    def __init__(
        self,
        open_store: Callable[[], Store],
        encode: Encode,
        *,
        write_docs: int,
        commit_every: float,
    ) -> None:
        self._encode = encode
        self._write_docs = write_docs
        self._commit_every = commit_every
        # bundles of batches (or _WRITE, _CHECKPOINT, _STOP) for the writer; a zero time
        # budget (every batch committed as the run goes) hands each batch over at once
        self._bundle_batches = BUNDLE_BATCHES if commit_every > 0 else 1
        self._queue: queue.Queue[_Item] = queue.Queue(maxsize=QUEUE_BATCHES // self._bundle_batches)
        self._bundle: list[_Batch] = []  # the batches not handed over yet (the main thread's)
        self._handed = time.monotonic()  # when the last bundle was handed over
        self._error: BaseException | None = None
        self._reported = False
        self._written = 0  # documents written since the last drain()
        # groups (or _CHECKPOINT, _STOP) for the committer: one waits while one is written
        self._commits: queue.Queue[_Group | str] = queue.Queue(maxsize=1)
        self._committer = threading.Thread(
            target=self._commit_loop,
            args=(open_store,),
            name="neardup-store-committer",
            daemon=True,
        )
        self._committer.start()
        self._thread = threading.Thread(target=self._run, name="neardup-store-writer", daemon=True)
        self._thread.start()

    # ------------------------------------------------------------------ the main thread's side

    def put(
        self, ids: list[str], keys: I64 | None, blobs: PackedBlobs | None, payload: object
    ) -> None:
        """Hand a batch over, in a bundle of :data:`BUNDLE_BATCHES` (one, when every batch
        is committed: ``commit_every`` 0), or at once when the last hand-over is
        :data:`BUNDLE_SECONDS` old (waits while :data:`QUEUE_BATCHES` are waiting already).

        Raises:
            NeardupError: an earlier write failed (a StoreError says why).
        """
        self._raise()
        self._bundle.append(_Batch(ids, keys, blobs, payload))
        if (
            len(self._bundle) >= self._bundle_batches
            or time.monotonic() - self._handed >= BUNDLE_SECONDS
        ):
            self._hand_over()

    def _hand_over(self) -> None:
        """Hand the gathered batches to the writer thread (an interrupt of the wait for
        room leaves them gathered, for :meth:`close` to hand over)."""
        if self._bundle:
            self._queue.put(self._bundle)
            self._bundle = []
            self._handed = time.monotonic()

    def write(self, *, checkpoint: bool = False) -> None:
        """Have what was handed over written now, without waiting for it (``checkpoint``:
        then copy the write-ahead log into the database, the run's writes being done)."""
        self._raise()
        self._hand_over()
        self._queue.put(_WRITE)
        if checkpoint:
            self._queue.put(_CHECKPOINT)

    def drain(self) -> int:
        """Wait until everything handed over is written; return how many documents were
        written since the last drain.

        Raises:
            NeardupError: a write failed.
        """
        self._raise()
        self._hand_over()
        self._queue.put(_WRITE)
        self._queue.join()
        self._raise()
        written, self._written = self._written, 0
        return written

    def close(self) -> None:
        """Stop the thread after what was handed over is written, and close its connection.

        Raises:
            NeardupError: a write failed and the error was not raised yet.
        """
        if self._thread.is_alive():
            self._hand_over()
            self._queue.put(_STOP)
            self._thread.join()  # which waits for the committer
        self._committer.join()
        if self._error is not None and not self._reported:
            self._raise()

    def _raise(self) -> None:
        error = self._error
        if error is None:
            return
        self._reported = True
        if isinstance(error, NeardupError):
            raise error
        raise StoreError(
            f"the store's writer thread failed ({type(error).__name__}: {error}); the documents "
            "handed to it since its last commit were not written: run again to add them"
        ) from error

    # --------------------------------------------------------------------- the writer's side

    def _run(self) -> None:
        """Take the batches, encode and gather them; hand each group that is due to the
        committer (a ``_WRITE`` waits until it was written: :meth:`drain` counts on it)."""
        pending = _Group(self._write_docs)
        last = time.monotonic()
        stop = False
        try:
            while not stop:
                item = self._queue.get()
                stop = item == _STOP
                try:
                    if self._error is not None:
                        continue  # the error stands; what follows it is not written
                    try:
                        if isinstance(item, list):
                            for batch in item:  # each batch as if it came alone
                                pending.add(*self._encoded(batch))
                                due = time.monotonic() - last >= self._commit_every
                                if pending.docs >= self._write_docs or due:
                                    self._commits.put(pending)
                                    pending, last = _Group(self._write_docs), time.monotonic()
                            continue
                        if item == _CHECKPOINT:
                            self._commits.put(_CHECKPOINT)
                            continue
                        # _WRITE or _STOP: what was gathered, then wait for it
                        if pending.docs:
                            self._commits.put(pending)
                        self._commits.join()
                        pending, last = _Group(self._write_docs), time.monotonic()
                    except BaseException as exc:
                        self._error = exc
                finally:
                    self._queue.task_done()
        finally:
            self._commits.put(_STOP)
            self._committer.join()

    def _commit_loop(self, open_store: Callable[[], Store]) -> None:
        """Open the store, write each group handed over in its own transaction (and run the
        checkpoint asked for), close the store at ``_STOP``."""
        store: Store | None = None
        try:
            store = open_store()
        except BaseException as exc:  # raised in the main thread at its next call
            self._error = exc
        try:
            while True:
                item = self._commits.get()
                try:
                    if item == _STOP:
                        break
                    if store is None or self._error is not None:
                        continue  # the error stands; what follows it is not written
                    try:
                        if isinstance(item, _Group):
                            self._written += item.commit(store)
                        else:  # _CHECKPOINT: the run's writes are done
                            store.end_bulk()  # a new store's load: now in WAL mode
                            store.checkpoint()
                    except BaseException as exc:
                        self._error = exc
                finally:
                    self._commits.task_done()
        finally:
            if store is not None:
                try:
                    store.close()
                except BaseException as exc:  # raised in the main thread by close()
                    self._error = self._error or exc

    def _encoded(self, batch: _Batch) -> tuple[list[str], I64, PackedBlobs]:
        if batch.keys is None or batch.blobs is None:
            keys, blobs = self._encode(batch.payload)
            return batch.ids, keys, blobs
        return batch.ids, batch.keys, batch.blobs


def _anonymous(size: int) -> mmap.mmap:
    """A private anonymous mapping of ``size`` bytes (zero pages until written)."""
    if hasattr(mmap, "MAP_PRIVATE"):  # POSIX
        return mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE)
    return mmap.mmap(-1, size)  # Windows: backed by the paging file, private to the process


#: Most bytes a group reserves for its blobs up front (past it, the buffer doubles).
RESERVE_BYTES = 64 << 20


class _Group:
    """The batches of one write transaction, gathered as they come: their ids, their lookup
    keys, and their blobs copied into one buffer (each batch's own buffer is let go at once,
    so a group holds its blobs once, not twice while they are joined).

    The buffer is reserved at the first batch for ``reserve_docs`` documents of that
    batch's mean size (and doubled if that was short): memory that is reserved and never
    written costs no page, where a buffer grown by appends was copied as it grew, each copy
    into new pages (~4,500 page faults a 65,536-document group, against ~2,100 for the
    blobs themselves). It is a private anonymous mapping, not a numpy array: numpy asks for
    transparent huge pages for arrays of 4 MB or more, whose first touch can stall in the
    kernel's compaction (one such ``add`` took 27 ms of CPU)."""

    def __init__(self, reserve_docs: int = 0) -> None:
        self.docs = 0
        self._reserve_docs = reserve_docs
        self._ids: list[str] = []
        self._keys: list[I64] = []
        self._data: mmap.mmap | None = None
        self._used = 0
        self._starts: list[I64] = [np.zeros(1, dtype=np.int64)]

    def add(self, ids: list[str], keys: I64, blobs: PackedBlobs) -> None:
        self.docs += len(ids)
        self._ids += ids
        self._keys.append(keys)
        lo, hi = int(blobs.starts[0]), int(blobs.starts[-1])
        used, size = self._used, hi - lo
        have = 0 if self._data is None else len(self._data)
        if used + size > have:
            want = max(2 * have, used + size, 1)
            if not used and ids:  # the first batch: room for the group at its mean size
                mean = -(-size // len(ids))
                want = max(want, min(RESERVE_BYTES, mean * self._reserve_docs * 9 // 8))
            grown = _anonymous(want)  # pages only as written
            if self._data is not None:
                memoryview(grown)[:used] = memoryview(self._data)[:used]
                self._data.close()
            self._data = grown
        self._starts.append(blobs.starts[1:] + (used - lo))
        if size and self._data is not None:
            memoryview(self._data)[used : used + size] = memoryview(blobs.data)[lo:hi]
        self._used = used + size

    def commit(self, store: Store) -> int:
        """Write the group in one transaction (its batches' key arrays are let go once
        joined: ~7 MB at 65,536 documents that the write would hold twice)."""
        parts, self._keys = self._keys, []
        keys = parts[0] if len(parts) == 1 else np.concatenate(parts)
        del parts
        starts, self._starts = self._starts, []
        data = memoryview(b"") if self._data is None else memoryview(self._data)[: self._used]
        blobs = PackedBlobs(data, np.concatenate(starts))
        del starts
        return store.add_many(self._ids, blobs, keys)
