"""The connection, error mapping and transactions shared by the store's readers and writers
(private: use :class:`neardup.store.Store`)."""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import sys
from collections.abc import Iterator
from types import TracebackType
from typing import Self

from neardup.errors import StoreError
from neardup.store._cache import ReadCache
from neardup.store._rows import damaged
from neardup.store._tail import Tail

logger = logging.getLogger("neardup.store.sqlite")

__all__ = [
    "CHECKPOINT_IDLE_BYTES",
    "CHECKPOINT_MAX_BYTES",
    "CHECKPOINT_RESTART_BYTES",
    "StoreBase",
]

CHECKPOINT_IDLE_BYTES = 4 << 20
"""WAL bytes from which a store opened with ``idle_checkpoints`` checkpoints at its next
``merge_step()``, if some are not copied back yet. A checkpoint's cost is the sync of what it
copies, so bounding the bytes bounds the stall of the writer's next request: a few MB sync
in a few ms, where a count of commits let it reach 70-85 MB (30-40 ms) once small commits
of 64 KiB pages wrote ~265 KB each. Counting the WAL's whole length, not only what is left
to copy, also checkpoints again a WAL that did not start again from its beginning (a
checkpoint that ran beside the writer's commits, or beside a reader)."""
CHECKPOINT_RESTART_BYTES = 16 << 20
"""WAL bytes from which a writer that has its checkpoints run on another connection runs one
itself at an idle moment (:meth:`StoreBase.restart_due`). SQLite starts the WAL again from
its beginning only at a write transaction that begins with every frame copied back, which a
checkpoint running beside the writer's commits often misses; the writer's own copies the few
frames left (a small sync), and its next transaction starts the WAL again."""
CHECKPOINT_MAX_BYTES = 32 << 20
"""WAL bytes from which such a store checkpoints right after a write, if some are not
copied back yet (a writer that has no idle moment: the WAL must not grow for ever)."""

_SHM_HEAD = 100
"""The wal-index header (two copies of 48 bytes) and the checkpoint info's first field, at
the start of the ``-shm`` file (https://www.sqlite.org/walformat.html): ``mxFrame`` (the
frames in the WAL) at offset 16, ``nBackfill`` (those copied back) at offset 96, in the
machine's byte order; ``iVersion`` 3007000 at offset 0."""
_WAL_VERSION = 3007000
_FRAME_HEADER = 24

_COUNTERS = ("last_doc", "docs", "sketch_bytes", "stale")
_COUNTERS_SQL = "SELECT name, value FROM meta WHERE name IN ({})".format(
    ", ".join(f"'{name}'" for name in _COUNTERS)
)


class StoreBase:
    """An open store connection (see :class:`neardup.store.Store`)."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        *,
        path: str,
        kind: str | None,
        params: str | None,
        readonly: bool,
        timeout: float,
    ) -> None:
        """Wrap an open connection; use :meth:`Store.open` instead."""
        self._config = ""
        self._conn: sqlite3.Connection | None = conn
        self._path = path
        self._kind = kind
        self._params = params
        self._readonly = readonly
        self._timeout = timeout
        self._cache: ReadCache | None = None
        self._tail = Tail()  # the tail rows this connection decoded (``_tail.py``)
        self._commits = 0  # write transactions since the last checkpoint (idle_checkpoints)
        self._shm: int | None = None  # the -shm file, read for the WAL's backlog
        self._frame = 0  # bytes of a WAL frame (page size + header), once known

    def _cached(self, conn: sqlite3.Connection) -> ReadCache | None:
        """The read cache, checked against other connections' commits (None: no cache)."""
        if self._cache is not None:
            self._cache.validate(conn)
        return self._cache

    def _identity(self) -> dict[str, str]:
        rows = self._live().execute("SELECT name, value FROM meta").fetchall()
        out: dict[str, str] = {}
        for name, value in rows:
            if type(name) is not str or type(value) is not str:
                raise damaged(self._path, "its meta table holds a value that is not text")
            out[name] = value
        return out

    @property
    def path(self) -> str:
        """The store's file (``":memory:"`` for a private in-memory store)."""
        return self._path

    @property
    def kind(self) -> str:
        """The sketch kind the store holds."""
        return self._kind or ""

    @property
    def params(self) -> str:
        """The params fingerprint the store holds."""
        return self._params or ""

    # ------------------------------------------------------------------------------ helpers

    def _live(self) -> sqlite3.Connection:
        if self._conn is None:
            raise StoreError(f"the store {self._path!r} is closed; open it again with Store.open")
        return self._conn

    @contextlib.contextmanager
    def _errors(self, action: str) -> Iterator[None]:
        """Turn sqlite3 errors into StoreError with a message that says what to do."""
        try:
            yield
        except sqlite3.OperationalError as exc:
            text = str(exc)
            if "locked" in text or "busy" in text:
                raise StoreError(
                    f"cannot {action}: the store {self._path!r} stayed locked by another writer "
                    f"for longer than the busy timeout ({self._timeout:g} s); retry when it is "
                    "done, or open the store with a larger timeout"
                ) from exc
            raise StoreError(
                f"cannot {action} in {self._path!r}: {text}; {self._advice(text)}"
            ) from exc
        except sqlite3.DatabaseError as exc:
            raise StoreError(
                f"cannot {action}: {self._path!r} is not a neardup store or is damaged ({exc}); "
                "check the path; a damaged store can be checked with "
                "`sqlite3 FILE 'PRAGMA integrity_check'` and must be restored or rebuilt"
            ) from exc
        except sqlite3.Error as exc:
            raise StoreError(f"cannot {action} in {self._path!r}: {exc}") from exc
        except UnicodeDecodeError as exc:  # SQLite's message quotes the damaged, non-UTF-8 bytes
            raise StoreError(
                f"cannot {action}: {self._path!r} is damaged (SQLite reported non-UTF-8 data); "
                "check it with `sqlite3 FILE 'PRAGMA integrity_check'`, restore or rebuild it"
            ) from exc

    def _advice(self, text: str) -> str:
        """What to do about an SQLite error that is not about locks."""
        import os

        folder = os.path.dirname(os.path.abspath(self._path)) if self._path != ":memory:" else "."
        if "full" in text:
            return "no space is left on its disk: free space there, or move the store"
        if not os.access(folder, os.W_OK) or "readonly" in text or "read-only" in text:
            return (
                f"its folder {folder} is read-only or not writable: copy the store to a "
                "writable folder to change it (reading works in place)"
            )
        return "check the file, its directory's permissions and free disk space"

    @contextlib.contextmanager
    def _write(self, keep_segs: bool = False) -> Iterator[sqlite3.Connection]:
        """One write transaction: BEGIN IMMEDIATE (waits for the lock), COMMIT or ROLLBACK.

        ``keep_segs``: the transaction's writes kept the read cache's list of segments up to
        date (``_segments.py`` does, given the cache), so it stays held after the commit
        (otherwise it is read again at the next read)."""
        conn = self._live()
        if self._readonly:
            raise StoreError(
                f"the store {self._path!r} was opened read-only; open it with readonly=False "
                "to change it"
            )
        conn.execute("BEGIN IMMEDIATE")
        committed = False
        try:
            yield conn
            conn.execute("COMMIT")
            committed = True
            self._commits += 1
        except BaseException:
            self._tail.clear()  # it may hold what the rolled-back writes read
            if self._cache is not None:
                self._cache.clear()
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        finally:
            if self._cache is not None and not (keep_segs and committed):
                self._cache.segs = None
        if self._idle_checkpoints and self._wal_due(CHECKPOINT_MAX_BYTES):
            self._checkpoint()  # no idle moment came: the WAL must not grow for ever

    @contextlib.contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        """One read transaction, so that several statements see the same snapshot."""
        conn = self._live()
        if conn.in_transaction:
            yield conn
            return
        conn.execute("BEGIN")
        try:
            yield conn
        finally:
            if conn.in_transaction:
                conn.execute("COMMIT")

    _idle_checkpoints = False

    def _checkpoint(self) -> bool:
        """Copy the WAL back into the database (a passive checkpoint: it never waits for
        readers nor for another connection's checkpoint, and leaves what readers still use);
        whether it copied every frame. Then the next write transaction starts the WAL again
        from its beginning."""
        self._commits = 0
        with self._errors("checkpoint the write-ahead log"):
            row = self._live().execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        return bool(row is None or (not row[0] and row[1] == row[2]))

    def checkpoint(self) -> bool:
        """Copy the store's WAL back into its database now (a passive checkpoint, from any
        connection to the store: another thread's copies while the writer commits).

        Returns:
            Whether every frame was copied (not when a reader still used some, or another
            checkpoint ran).

        Raises:
            StoreError: The store is closed or the copy failed.
        """
        return self._checkpoint()

    _bulk = False  # a bulk load's connection: a rollback journal until end_bulk()

    @property
    def bulk(self) -> bool:
        """Whether this connection writes a bulk load with a rollback journal (see
        ``Store.open(bulk=True)``) that :meth:`end_bulk` has not ended yet."""
        return self._bulk

    def end_bulk(self) -> bool:
        """End a bulk load (``Store.open(bulk=True)``): switch the file to WAL mode, as every
        store is otherwise (other connections follow at their next read). Does nothing for
        a connection that is not in a bulk load.

        A failure (another connection kept a lock past the busy timeout, a full disk) is
        logged and leaves the file in rollback mode, a valid store that the next open
        without ``bulk`` switches to WAL.

        Returns:
            Whether the file is in WAL mode now (True when there was no bulk load).
        """
        if not self._bulk or self._conn is None:
            return True
        self._bulk = False
        try:
            row = self._conn.execute("PRAGMA journal_mode = WAL").fetchone()
        except sqlite3.Error as exc:
            logger.warning("store %s: left in rollback-journal mode (%s)", self._path, exc)
            return False
        if str(row[0]).lower() != "wal":
            logger.warning("store %s: left in %s journal mode", self._path, row[0])
            return False
        return True

    def checkpoint_due(self) -> bool:
        """Whether the WAL holds :data:`CHECKPOINT_IDLE_BYTES` or more and some of it is not
        copied back yet (``idle_checkpoints`` stores: the checkpoint :meth:`merge_step`
        would run, for a caller that runs it on another connection)."""
        return self._idle_checkpoints and self._wal_due(CHECKPOINT_IDLE_BYTES)

    def restart_due(self) -> bool:
        """Whether the WAL holds :data:`CHECKPOINT_RESTART_BYTES` or more, some not copied
        back yet: checkpoints run on another connection did not let it start again, and
        this writer should run one itself (``idle_checkpoints`` stores)."""
        return self._idle_checkpoints and self._wal_due(CHECKPOINT_RESTART_BYTES)

    def _wal_due(self, bound: int) -> bool:
        """Whether the WAL holds ``bound`` bytes or more, some not copied back yet."""
        if not self._commits:  # nothing written since this connection's last checkpoint
            return False
        length, left = self._wal()
        return length >= bound and left > 0

    def _wal(self) -> tuple[int, int]:
        """The WAL's length and the part of it not copied back into the database, in bytes.

        Read from the wal-index header in the ``-shm`` file (a ``pread`` of 100 bytes, no
        lock; its two copies differ only while another connection writes it: read again,
        else nothing is due yet); without a readable header (no ``-shm`` file), the ``-wal``
        file's size for both, which is never less than what it holds. An in-memory store
        has no WAL: (0, 0)."""
        if self._path == ":memory:":
            return 0, 0
        if not self._frame:
            size = int(self._live().execute("PRAGMA page_size").fetchone()[0])
            self._frame = size + _FRAME_HEADER
        head = b""
        with contextlib.suppress(OSError):
            if self._shm is None:
                self._shm = os.open(f"{os.path.abspath(self._path)}-shm", os.O_RDONLY)
            fd = self._shm
            head = os.pread(fd, _SHM_HEAD, 0)
        order = sys.byteorder
        if len(head) == _SHM_HEAD and int.from_bytes(head[0:4], order) == _WAL_VERSION:
            for _ in range(3):
                if head[:48] == head[48:96]:
                    frames = int.from_bytes(head[16:20], order)
                    copied = int.from_bytes(head[96:100], order)
                    return frames * self._frame, max(0, frames - copied) * self._frame
                head = os.pread(fd, _SHM_HEAD, 0)
            return 0, 0
        try:
            size = os.path.getsize(f"{self._path}-wal")
        except OSError:
            size = 0
        return size, size

    def _counters(self, conn: sqlite3.Connection) -> dict[str, int]:
        """The counters kept in ``meta``: ``last_doc`` (the last document id given out),
        ``docs`` (stored documents), ``sketch_bytes`` and ``stale`` (replaced or removed
        documents whose lookup entries remain); 0 when absent."""
        cache = self._cache  # held counters follow this connection's writes (see _set_counters)
        if cache is not None and cache.counts is not None:
            return dict(cache.counts)
        out = dict.fromkeys(_COUNTERS, 0)
        for name, value in conn.execute(
            _COUNTERS_SQL  # a constant statement: prepared once, no JSON to parse
        ):
            try:
                out[name] = int(str(value))
            except ValueError:
                raise damaged(self._path, f"its {name} count {value!r} is not a number") from None
        if cache is not None:
            cache.counts = dict(out)
        return out

    def _holes(self, conn: sqlite3.Connection) -> int | None:
        """The ``holes`` counter (chunk slots emptied by compaction), None when the store
        does not record it yet (written before neardup counted them)."""
        row = conn.execute("SELECT value FROM meta WHERE name = 'holes'").fetchone()
        if row is None:
            return None
        try:
            return int(str(row[0]))
        except ValueError:
            raise damaged(self._path, f"its holes count {row[0]!r} is not a number") from None

    def _stale(self, conn: sqlite3.Connection) -> int:
        return self._counters(conn)["stale"]

    def _set_counters(self, conn: sqlite3.Connection, **values: int) -> None:
        cache = self._cache
        held = None if cache is None else cache.counts
        if held is not None:  # only the counters that change (a rollback forgets them all)
            values = {k: v for k, v in values.items() if held.get(k) != v}
        conn.executemany(
            "INSERT INTO meta (name, value) VALUES (?, ?) "
            "ON CONFLICT (name) DO UPDATE SET value = excluded.value",
            [(name, str(value)) for name, value in values.items()],
        )
        if held is not None:
            held.update((k, v) for k, v in values.items() if k in held)

    # ------------------------------------------------------------------------------ closing

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._conn is None

    def close(self) -> None:
        """Close the connection (ending its bulk load, see :meth:`end_bulk`); calling it
        again does nothing."""
        self.end_bulk()
        conn, self._conn = self._conn, None
        shm, self._shm = self._shm, None
        if shm is not None:
            os.close(shm)
        self._tail.clear()
        if self._cache is not None:
            self._cache.clear()
        if conn is not None:
            conn.close()

    def __enter__(self) -> Self:
        """Return the store itself."""
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Close the store."""
        self.close()

    def __repr__(self) -> str:
        """Return ``Store(path, kind, params)``."""
        state = " closed" if self.closed else ""
        return f"<Store {self._path!r} {self._kind} {self._params}{state}>"
