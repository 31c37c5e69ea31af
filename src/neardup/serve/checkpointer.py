"""The service's WAL checkpoints, on a thread and a connection of their own (private).

A checkpoint copies the WAL back into the database and syncs both files: a few ms for a few
MB on a quiet disk, tens of ms on a busy one, whatever the size. Run by the writer, it
delays every request queued meanwhile. So the writer hands the checkpoint over
(:meth:`Checkpointer.hand_over`, at an idle moment when the store says one is due) and goes
on committing while this thread copies.

SQLite starts the WAL again from its beginning only at a write transaction that begins with
every frame copied back, which a checkpoint running beside a writer that appends rarely
leaves: so this thread copies again the few frames committed meanwhile, up to
:data:`PASSES` times, until one pass finds none new. If none did, the WAL is still longer
than the store's bound at the writer's next idle moment, with frames left to copy: the
checkpoint is due again and handed over again, while the writer waits for nothing (and a
writer that never pauses checkpoints by itself past the store's larger bound).
"""

from __future__ import annotations

import logging
import threading

from neardup.serve.trace import Tracer
from neardup.store import Store

__all__ = ["Checkpointer"]

log = logging.getLogger("neardup.serve")

PASSES = 4
"""Checkpoints one hand-over runs at most, until one copies every frame."""


class Checkpointer:
    """A thread that runs the checkpoints the writer hands over, on its own connection.

    Args:
        path: The store.
        kind: Its sketch kind.
        params: Its params fingerprint.
        synchronous: The writer's ``synchronous`` (a checkpoint syncs under both).
        tracer: Where each checkpoint's time goes (None: nowhere).
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
        self._closing = False
        self._thread = threading.Thread(
            target=self._loop,
            name="neardup-checkpointer",
            daemon=True,  # close() stops it
        )

    def start(self) -> None:
        """Start the thread (it opens its connection at the first checkpoint)."""
        self._thread.start()

    def hand_over(self, store: Store) -> bool:
        """From the writer, at an idle moment: start a checkpoint on the thread if the
        writer's ``store`` has one due and none runs; whether it started one."""
        if not self._idle.is_set() or not self._thread.is_alive() or not store.checkpoint_due():
            return False
        self._idle.clear()
        self._go.set()
        return True

    def close(self, timeout: float | None = None) -> None:
        """Let a running checkpoint finish, then stop the thread."""
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
                    self._passes(store)
                except Exception:  # the writer's own checkpoints copy it instead
                    log.exception("a WAL checkpoint failed")
                finally:
                    self._idle.set()
        finally:
            self._idle.set()
            if store is not None:
                store.close()

    def _passes(self, store: Store) -> bool:
        """Checkpoint until a pass copies every frame (at most :data:`PASSES` passes);
        whether one did."""
        for n in range(PASSES):
            if self._tracer is None:
                done = store.checkpoint()
            else:
                with self._tracer.step("checkpointer", "checkpoint" if n == 0 else "catch up"):
                    done = store.checkpoint()
            if done:
                return True
        return False
