"""The service's housekeeping off the writer's thread: WAL checkpoints and the costly part
of segment merges, on a thread and a connection of their own (private).

A checkpoint copies the WAL back into the database and syncs both files: a few ms for a few
MB on a quiet disk, tens of ms on a busy one, whatever the size. A segment merge reads,
filters and packs the entries of a size class: 5-30 ms of CPU. Run by the writer, either
delays every request queued meanwhile. So the writer hands them over at its idle moments
(:meth:`Housekeeper.hand_over`) and goes on committing while this thread works:

- a **checkpoint** runs here whole. SQLite starts the WAL again from its beginning only at
  a write transaction that begins with every frame copied back, which a checkpoint running
  beside a writer that appends rarely leaves: so this thread copies again the few frames
  committed meanwhile, up to :data:`PASSES` times, until one pass finds none new. If none
  did, the WAL is still longer than the store's bound at the writer's next idle moment,
  with frames left to copy: the checkpoint is due again and handed over again. Should the
  WAL still not start again, the writer copies the few frames left itself at an idle moment
  once it holds 16 MB (``CHECKPOINT_RESTART_BYTES``: a small sync, once in ~60 commits),
  and a writer that never pauses checkpoints by itself past 32 MB;
- a **merge** is computed here on this connection's snapshot
  (:meth:`~neardup.store.Store.prepare_merge`), and the writer writes it at its next idle
  moment (:meth:`Housekeeper.prepared`, :meth:`~neardup.store.Store.apply_merge`: deletes
  and inserts in one short transaction), unless its segments changed meanwhile.
"""

from __future__ import annotations

import contextlib
import logging
import threading

from neardup.serve.trace import Tracer
from neardup.store import Store
from neardup.store._segments import PreparedMerge

__all__ = ["PASSES", "Housekeeper"]

log = logging.getLogger("neardup.serve")

PASSES = 4
"""Checkpoints one hand-over runs at most, until one copies every frame."""


class Housekeeper:
    """A thread that runs the checkpoints and prepares the merges the writer hands over,
    on its own connection.

    Args:
        path: The store.
        kind: Its sketch kind.
        params: Its params fingerprint.
        synchronous: The writer's ``synchronous`` (a checkpoint syncs under both).
        tracer: Where each job's time goes (None: nowhere).
    """

    def __init__(
        self,
        path: str,
        *,
        kind: str,
        params: str,
        synchronous: str,
        tracer: Tracer | None = None,
    ) -> None:
        self._path = path
        self._kind = kind
        self._params = params
        self._synchronous = synchronous
        self._tracer = tracer
        self._go = threading.Event()
        self._idle = threading.Event()
        self._idle.set()
        self._job = ""  # "checkpoint" or "merge", set by the writer before _go
        self._merge: PreparedMerge | None = None  # a merge for the writer to write
        self._closing = False
        self._thread = threading.Thread(
            target=self._loop,
            name="neardup-housekeeper",
            daemon=True,  # close() stops it
        )

    def start(self) -> None:
        """Start the thread (it opens its connection at its first job)."""
        self._thread.start()

    @property
    def idle(self) -> bool:
        """Whether the thread runs no job."""
        return self._idle.is_set()

    @property
    def alive(self) -> bool:
        """Whether the thread runs (else the writer does its own housekeeping)."""
        return self._thread.is_alive()

    def prepared(self) -> PreparedMerge | None:
        """From the writer: the merge the thread prepared, once (None: none ready)."""
        if not self._idle.is_set():
            return None
        merge, self._merge = self._merge, None
        return merge

    def hand_over(self, store: Store) -> str:
        """From the writer, at an idle moment: start the checkpoint or else the merge its
        ``store`` has due, if the thread is free; which one it started (``""``: none)."""
        if not self._idle.is_set() or self._merge is not None or not self.alive:
            return ""
        if store.checkpoint_due():
            job = "checkpoint"
        elif store.merge_due():
            job = "merge"
        else:
            return ""
        self._job = job
        self._idle.clear()
        self._go.set()
        return job

    def close(self, timeout: float | None = None) -> None:
        """Let a running job finish, then stop the thread."""
        self._closing = True
        self._go.set()
        if self._thread.is_alive():
            self._thread.join(timeout)

    def _loop(self) -> None:
        store: Store | None = None
        try:
            while True:
                self._go.wait()
                self._go.clear()
                if self._closing:
                    return
                try:
                    if store is None:
                        store = Store.open(
                            self._path,
                            kind=self._kind,
                            params=self._params,
                            create=False,
                            quick_check=False,  # the writer checked it
                            synchronous=self._synchronous,
                            idle_checkpoints=True,  # no checkpoint of its own when it closes
                        )
                    if self._job == "merge":
                        with self._step("merge"):
                            self._merge = store.prepare_merge()
                    else:
                        self._passes(store)
                except Exception:  # the writer's own steps do it instead
                    log.exception("a housekeeping step (%s) failed", self._job)
                finally:
                    self._idle.set()
        finally:
            self._idle.set()
            if store is not None:
                store.close()

    def _step(self, what: str) -> contextlib.AbstractContextManager[None]:
        if self._tracer is None:
            return contextlib.nullcontext()
        return self._tracer.step("housekeeper", what)

    def _passes(self, store: Store) -> bool:
        """Checkpoint until a pass copies every frame (at most :data:`PASSES` passes);
        whether one did."""
        for n in range(PASSES):
            with self._step("checkpoint" if n == 0 else "catch up"):
                done = store.checkpoint()
            if done:
                return True
        return False
