"""Persistent SQLite store of sketches and their lookup keys, one params fingerprint per file.

A :class:`Store` keeps, for every document key, the serialized sketch (the value type's
``to_bytes()``) and a set of integer lookup keys ``(band, value)``: LSH band hashes for MinHash,
Hamming-block values for SimHash or image hashes, 7-gram hashes for CTPH digests. The caller
computes the lookup keys, so the store is generic over sketch kinds and imports none of them.
:meth:`Store.candidates` returns every document that shares at least one ``(band, value)``
with a query; the caller decodes the sketches and verifies the candidates.

A store file holds one sketch kind made with one set of parameters: the kind and the params
fingerprint (:meth:`neardup.config.Params.fingerprint`) are written when the store is created
and checked on every open, so sketches made with different parameters are never mixed.

Durability and concurrency (details in ``docs/store.md``): the database runs in WAL mode with
``synchronous=FULL``, so a committed :meth:`Store.add_many` survives a crash of the process
*and* of the machine, and an interrupted one leaves no trace. Any number of processes may
read while one writes; readers see committed snapshots only. Writers serialize, waiting up to
the busy timeout. A :class:`Store` object belongs to one thread. A new store's bulk load
(``Store.open(bulk=True)``, what ``dedup --index`` does) is written with a rollback journal,
as durable, until it ends and the file switches to WAL.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from neardup._gc import collector_paused
from neardup.errors import (
    IncompatibleSketchError,
    InputError,
    SchemaVersionError,
    StoreError,
)
from neardup.sketch.setcodec import PackedBlobs
from neardup.store._cache import ReadCache
from neardup.store._check import check_layout, chunk_holes, full_check, quick_check
from neardup.store._chunks import SLOTS, encode_slots, iter_chunks
from neardup.store._lookup import Lookup, band_rows, blob, folded_rows, key_folds, pairs
from neardup.store._reads import StatValue, StoreReads
from neardup.store._rows import damaged, encodable, insert_rows, integer
from neardup.store._segments import (
    KEYS,
    LOOKUP,
    PreparedMerge,
    apply_merge,
    compact_all,
    merge_step,
    mergeable,
    prepare_merge,
    write_band_segment,
    write_segment,
)
from neardup.store._tail import (
    TAIL_DOCS,
    TAIL_MAX,
    TAIL_SECONDS,
    TailRow,
    encode_row,
    insert_row,
)
from neardup.store.migrations import SCHEMA_VERSION, migrate, schema_version

__all__ = ["APPLICATION_ID", "Lookup", "StatValue", "Store"]

logger = logging.getLogger(__name__)

APPLICATION_ID = 0x4E445550
"""``PRAGMA application_id`` of a neardup store (ASCII ``NDUP``); other SQLite files are refused."""


PAGE_SIZE = 65536
"""The SQLite page size of a new store (an existing one keeps its own). A store's rows are
documents 32 to a ~3.5 KB ``chunks`` row and lookup blocks of ~300 bytes written in bulk:
64 KiB pages hold them with less slack than 4 KiB ones (a 100k-document MinHash store: 29.0
MB against 29.6; 8 and 16 KiB pages: 35 and 34.5 MB) and write a batch in 16x fewer system
calls, each page once to the WAL and once more at the checkpoint, or once into the file in
a new store's bulk load (``dedup --index`` of 100k documents: 0.1-0.2 CPU-s less system
time). Queries read the same number of pages."""

_COMPACT_MIN = 4096  # stale documents before add_many/remove compact by themselves
_INSERT_CHUNKS = "INSERT OR FAIL INTO chunks (id, n, added, data, checksum) VALUES "


#: An index of the chunks' slot counts, which keeps the open test's ``count(*), sum(n)``
#: from reading the chunk rows (1M documents: 2 ms instead of 0.2 s). Not part of a schema
#: version: any writable open adds it when it is missing, and SQLite keeps it up to date
#: whichever neardup writes the file.
CHUNK_INDEX = ("chunks_n", "CREATE INDEX IF NOT EXISTS chunks_n ON chunks (n)")


def _has_index(conn: sqlite3.Connection, name: str) -> bool:
    found = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?", (name,)
    ).fetchone()
    return found is not None


def _read_only_media(name: str) -> str:
    """The URI parameter that opens a store in a folder nothing can be written to: WAL mode
    wants a ``-shm`` file beside the database, which cannot be made there, so the file is
    opened ``immutable`` (no locks, no shared memory). That is safe only while no one
    writes it, which a read-only folder ensures, and only when its WAL holds nothing the
    file lacks and no rollback journal holds a write to undo.

    Raises:
        StoreError: a ``-wal`` file beside it holds commits not copied into the database, or
            a ``-journal`` file a stopped write's undo record.
    """
    stopped = (
        (
            "-wal",
            "holds commits not yet copied into it (its last writer was stopped)",
            "they are folded in",
        ),
        # a bulk load's rollback journal (Store.open(bulk=True))
        (
            "-journal",
            "holds the undo record of a write that was stopped midway",
            "that write is rolled back",
        ),
    )
    for suffix, holds, then in stopped:
        side = f"{name}{suffix}"
        if os.path.exists(side) and os.path.getsize(side) > 0:
            raise StoreError(
                f"the store {name!r} is in a read-only folder and {side} beside it {holds}: "
                "open it once where its folder is writable (neardup index stats --index FILE) "
                f"so {then}, then copy the one file"
            )
    return "&immutable=1"


def _journal_mode(conn: sqlite3.Connection) -> str:
    """The connection's journal mode (``"wal"`` once it read a file in WAL mode)."""
    return str(conn.execute("PRAGMA journal_mode").fetchone()[0]).lower()


def _remove_empty(name: str) -> None:
    """Remove a database file that holds nothing (and its WAL and shared-memory files)."""
    try:
        if os.path.getsize(name) != 0:
            return
    except OSError:
        return
    for path in (name, f"{name}-wal", f"{name}-shm", f"{name}-journal"):
        with contextlib.suppress(OSError):
            os.unlink(path)


def _packed_ascii(keys: Sequence[str]) -> PackedBlobs | None:
    """The keys' UTF-8 in one buffer when every key is an ASCII ``str`` (its UTF-8 is itself,
    as long as the string), without a ``bytes`` object per key; None otherwise (then
    :func:`_encoded_keys` encodes each, and checks them)."""
    try:
        joined = "".join(keys)
    except TypeError:  # a key that is not a str: _encoded_keys says which
        return None
    if not joined.isascii():
        return None
    starts = np.zeros(len(keys) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, keys), np.int64, count=len(keys)), out=starts[1:])
    return PackedBlobs(joined.encode("ascii"), starts)


def _encoded_keys(keys: Sequence[str]) -> list[bytes]:
    """The keys' UTF-8; InputError for a key that is not str or not encodable."""
    try:
        return list(map(str.encode, keys))  # UTF-8, strict
    except (AttributeError, TypeError, UnicodeEncodeError):
        for i, key in enumerate(keys):
            if not isinstance(key, str):
                raise InputError(
                    f"key {i} is a {type(key).__name__}; document keys are str"
                ) from None
            encodable(key, i)
        raise


class Store(StoreReads):
    """A persistent SQLite store of one kind of sketch, searchable by lookup keys.

    Open it with :meth:`Store.open` (not the constructor); it is a context manager. Duplicate
    keys *replace*: adding a key that is already stored overwrites its sketch, metadata and
    lookup keys (within one batch, the last occurrence wins). Keys are matched exactly
    (case-sensitive). Not thread-safe: use one ``Store`` per thread or process.

    Examples:
        >>> import numpy as np
        >>> with Store.open(":memory:", kind="minhash", params="minhash-0123456789abcdef") as s:
        ...     s.add_many(["a", "b"], [b"A", b"B"], np.array([[1, 2], [3, 4]]))
        ...     s.candidates(np.array([9, 4]))
        2
        [('b', b'B')]
    """

    # ----------------------------------------------------------------------------- opening

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        *,
        kind: str | None,
        params: str | None,
        config: str = "",
        create: bool = True,
        readonly: bool = False,
        timeout: float = 30.0,
        quick_check: bool = True,
        cache: bool = False,
        synchronous: str = "full",
        idle_checkpoints: bool = False,
        bulk: bool = False,
    ) -> Store:
        """Open (or create) the store at ``path`` for sketches of ``kind`` made with ``params``.

        A new store records ``kind``, ``params`` and ``config``; an existing one must have been
        created with the same ``kind`` and ``params`` (pass None for either to accept the
        store's own, then read them from :meth:`stats`). An older schema is upgraded in place
        (not when ``readonly``).

        Args:
            path: The database file, or ``":memory:"`` for a private in-memory store.
            kind: The sketch kind, e.g. ``"minhash"``, ``"simhash"``, ``"phash"``, ``"ctph"``.
            params: The params fingerprint, :meth:`neardup.config.Params.fingerprint`.
            config: Text recorded in a new store (e.g. the canonical JSON that rebuilds the
                method, see :class:`~neardup.store.persistent.PersistentIndex`).
            create: Create the file when it does not exist.
            readonly: Open for reading only (the file must exist and be up to date).
            timeout: Seconds to wait for another process's write lock before giving up.
            quick_check: Test the counters against the rows on opening (cheap: no blob is
                read) and refuse a store they disagree with; False leaves that to
                :meth:`check`, which lists every problem.
            cache: Keep the checked, decoded small segments and recent chunks that reads
                used (bounded; see ``_cache.py``), for a long-lived connection that reads
                the same ones again and again (``neardup serve``'s writer).
            synchronous: ``"full"``: every commit is fsynced, it survives a crash of the
                process and of the machine; ``"normal"``: a commit survives a crash of the
                process (SIGKILL, OOM kill), the last ones may be lost on power loss, and a
                commit costs no fsync (WAL mode; the file is never damaged either way).
            idle_checkpoints: Copy the WAL back into the database at :meth:`merge_step`
                (a writer's idle moments) once
                :data:`~neardup.store._base.CHECKPOINT_IDLE_BYTES` of it wait to be copied
                (each checkpoint syncs a few MB) instead of when a commit passes SQLite's
                threshold, so that no write waits for a checkpoint and its sync; a write
                still checkpoints past :data:`~neardup.store._base.CHECKPOINT_MAX_BYTES`
                without an idle moment (``neardup serve``'s writer).
            bulk: A bulk load into a store this call creates: the new file is written
                with a rollback journal (``journal_mode=TRUNCATE``) instead of the WAL, so
                each page is written once (into the file) instead of twice (into the WAL,
                then back at the checkpoint), until :meth:`end_bulk` or :meth:`close`
                switch it to WAL. Commits are as durable either way. Other connections
                opened meanwhile wait while a write commits instead of reading beside it.
                A second connection of the load (``bulk=True`` on a file not in WAL mode
                yet) joins it; a store already in WAL mode keeps it (``dedup --index``
                into an existing store, ``neardup serve``).

        Returns:
            The open store; close it (or use ``with``).

        Raises:
            StoreError: The file is missing (with ``create=False`` or ``readonly``), is not a
                neardup store, is damaged, or is locked for longer than ``timeout``.
            SchemaVersionError: The store was written by a newer neardup.
            IncompatibleSketchError: The store holds another kind or params fingerprint.
            InputError: ``kind`` or ``params`` is empty.
            StoreError: ``kind`` or ``params`` is None and the store is new.

        Examples:
            >>> import tempfile, pathlib
            >>> with tempfile.TemporaryDirectory() as d:
            ...     db = pathlib.Path(d) / "s.db"
            ...     with Store.open(db, kind="simhash", params="simhash-00") as s:
            ...         s.add("x", b"\\x01", np.array([7]))
            ...     with Store.open(db, kind="simhash", params="simhash-00", readonly=True) as s:
            ...         s.get("x")
            b'\\x01'
        """
        if synchronous not in ("full", "normal"):
            raise InputError(f"synchronous must be 'full' or 'normal', got {synchronous!r}")
        if kind == "" or params == "":
            raise InputError(
                "kind and params must be non-empty strings, e.g. kind='minhash', "
                "params=MinHashConfig(...).fingerprint()"
            )
        name = os.fspath(path)
        created = False
        if name == ":memory:":
            if readonly:
                raise StoreError("an in-memory store cannot be read-only; give a file path")
            target = name
        else:
            if os.path.isdir(name):
                raise StoreError(f"{name!r} is a directory; give the path of a store file")
            if not os.path.exists(name) and (readonly or not create):
                how = "read-only" if readonly else "with create=False"
                raise StoreError(
                    f"no store at {name!r}: the file does not exist and it was opened {how}; "
                    "check the path, or open it writable with create=True to make a new store"
                )
            created = not os.path.exists(name)
            mode = "ro" if readonly else ("rwc" if create else "rw")
            target = f"{Path(name).absolute().as_uri()}?mode={mode}"
            if readonly and not os.access(os.path.dirname(os.path.abspath(name)), os.W_OK):
                target += _read_only_media(name)
        try:
            conn = sqlite3.connect(target, timeout=timeout, isolation_level=None, uri=True)
        except sqlite3.Error as exc:
            raise StoreError(
                f"cannot open store {name!r}: {exc}; check the path and its permissions"
            ) from exc
        store = cls(conn, path=name, kind=kind, params=params, readonly=readonly, timeout=timeout)
        store._config = config
        store._quick_check = quick_check
        store._synchronous = synchronous.upper()
        store._idle_checkpoints = idle_checkpoints and not readonly
        store._bulk = bulk and not readonly and name != ":memory:"
        if cache:
            store._cache = ReadCache()
        try:
            with store._errors("open the store"):
                store._prepare()
        except BaseException:
            store._bulk = False  # nothing to switch: a file that failed to open stays as it is
            store.close()
            if created:
                _remove_empty(name)  # a store that could not even be created leaves no file
            raise
        return store

    def _prepare(self) -> None:
        """Set pragmas, check the file is ours, migrate, then record or check the identity."""
        conn = self._live()
        version = schema_version(conn)  # the first read: fails here on a non-database file
        app_id = int(conn.execute("PRAGMA application_id").fetchone()[0])
        if version < 0:
            raise damaged(self._path, f"its header records schema version {version}")
        if version > SCHEMA_VERSION:
            raise SchemaVersionError(
                f"the store {self._path!r} has schema version {version} but this neardup reads "
                f"up to version {SCHEMA_VERSION}: it was written by a newer neardup; upgrade "
                "neardup (pip install -U neardup) to open it"
            )
        tables = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        if app_id != APPLICATION_ID and (app_id != 0 or version != 0 or tables):
            raise StoreError(
                f"{self._path!r} is an SQLite database but not a neardup store; "
                "check the path, or give a new file name to create a store"
            )
        # a version edited by hand would otherwise be "upgraded" over newer tables
        check_layout(conn, self._path, version)
        if not self._readonly:
            # WAL: readers never block the writer nor see uncommitted data. FULL: each commit
            # is fsynced to the WAL, so committed batches survive a power loss, not only a
            # process crash (NORMAL would risk the last commits on power loss).
            new = not version and not tables
            if new:  # a new file: its page size is set once for all
                conn.execute(f"PRAGMA page_size = {PAGE_SIZE:d}")
            if self._bulk and (new or _journal_mode(conn) != "wal"):
                # a bulk load into a new file: a rollback journal until end_bulk(); TRUNCATE
                # (with FULL, the emptied journal is synced: a commit survives a power loss)
                conn.execute("PRAGMA journal_mode = TRUNCATE").fetchone()
            else:
                self._bulk = False
                conn.execute("PRAGMA journal_mode = WAL").fetchone()
            conn.execute(f"PRAGMA synchronous = {self._synchronous}")
            if self._idle_checkpoints:  # merge_step checkpoints (and _write, past a bound)
                conn.execute("PRAGMA wal_autocheckpoint = 0").fetchone()
        identity = self._identity() if version else {}
        if version < SCHEMA_VERSION or "kind" not in identity:
            if self._readonly:
                state = "is not initialized" if not version else f"has schema version {version}"
                raise StoreError(
                    f"the store {self._path!r} {state} (current: {SCHEMA_VERSION}); open it "
                    "once without readonly=True to initialize or upgrade it"
                )
            with self._write():
                applied = migrate(conn)
                if applied:
                    conn.execute(f"PRAGMA application_id = {APPLICATION_ID:d}")
                    logger.debug("store %s: applied %d migration(s)", self._path, applied)
                identity = self._identity()
                if "kind" not in identity:
                    if self._kind is None or self._params is None:
                        raise StoreError(
                            f"{self._path!r} is not a store yet; give the method (kind and "
                            "params) to create one, or check the path"
                        )
                    identity = {
                        "kind": self._kind,
                        "params": self._params,
                        "config": self._config,
                        "created": repr(time.time()),
                    }
                    conn.executemany(
                        "INSERT INTO meta (name, value) VALUES (?, ?)", identity.items()
                    )
                    conn.execute("INSERT OR IGNORE INTO meta (name, value) VALUES ('holes', '0')")
        if "params" not in identity:
            raise StoreError(
                f"{self._path!r} is damaged: its meta table has no 'params' row; restore the "
                "store from a backup or rebuild it"
            )
        if self._kind is None:
            self._kind = identity["kind"]
        if self._params is None:
            self._params = identity["params"]
        self._consistent()
        if identity["kind"] != self._kind or identity["params"] != self._params:
            raise IncompatibleSketchError(
                f"the store {self._path!r} holds {identity['kind']!r} sketches with params "
                f"{identity['params']!r}, but it was opened for {self._kind!r} with params "
                f"{self._params!r}; sketches made with different parameters cannot be mixed: "
                "open it with the kind and parameters it was built with, or use a new store "
                "file for these parameters"
            )

    _quick_check = True
    _synchronous = "FULL"
    _idle_checkpoints = False
    last_step = ""
    """What the last :meth:`merge_step` did: ``"tail"``, ``"checkpoint"``, ``"merge"`` or
    ``""`` (nothing); for traces."""

    def _consistent(self) -> None:
        """The cheap consistency test of every open (:func:`~neardup.store._check.quick_check`);
        a writable open first records the empty-slot count of a store written before neardup
        counted them (one pass over the document rows, once)."""
        with self._read() as r:
            missing = self._holes(r) is None or not _has_index(r, CHUNK_INDEX[0])
        if missing and not self._readonly:  # no write lock otherwise: opening never waits
            with self._write() as w:
                # the open test's chunk aggregates read this small index, not the chunk rows
                w.execute(CHUNK_INDEX[1])
                if self._holes(w) is None:
                    self._set_counters(w, holes=chunk_holes(w, self._path, self._chunk))
        if self._quick_check:
            with self._read() as r:
                quick_check(r, self._path, self._counters(r), self._holes(r))

    def check(self) -> dict[str, StatValue | list[str] | bool]:
        """Check every row: SQLite's ``integrity_check``, then each document and lookup row
        (types, checksums, lengths) and the counters against what the rows hold.

        Returns:
            ``path``, ``ok``, ``problems`` (the first 20), ``problem_count``, and what the
            rows hold: ``docs``, ``chunks``, ``segments``, ``lookup_entries``,
            ``key_entries``. See ``docs/store.md``, "Checking a store".

        Examples:
            >>> with Store.open(":memory:", kind="phash", params="phash-00") as s:
            ...     s.add("img", b"\\xff", np.array([1, 2]))
            ...     report = s.check()
            >>> report["ok"], report["docs"], report["problems"]
            (True, 1, [])
        """
        with self._errors("check the store"), self._read() as conn:
            try:
                if self._cache is not None:  # the check reads the rows, not what is held
                    self._cache.clear()
                counts: dict[str, int] | None = self._counters(conn)
                holes = self._holes(conn)
            except StoreError:
                counts, holes = None, None
            report = full_check(conn, self._path, counts, holes)
        return {"path": self._path, **report}

    # ------------------------------------------------------------------------------ writing

    def add_many(
        self,
        keys: Sequence[str],
        sketches: Sequence[bytes] | PackedBlobs,
        lookup: Lookup,
        *,
        meta: Sequence[str | None] | None = None,
        defer_merges: bool = False,
        buffered: bool = False,
    ) -> int:
        """Add or replace documents in ONE transaction: all of them are stored, or none.

        The documents go in 32 to a ``chunks`` row (``_chunks.py``) with one ``executemany``;
        stored keys are found through the documents' key entries (one probe for the batch);
        the lookup entries and the key entries become two segments of bit-packed blocks
        (``_segments.py``). No row is written per document.

        Args:
            keys: Document keys (unique ids, e.g. paths); an existing key is replaced, and
                within the batch the last occurrence of a key wins.
            sketches: Serialized sketches (``to_bytes()``), one per key; or a
                :class:`~neardup.sketch.setcodec.PackedBlobs` of them (written from its
                buffer, no ``bytes`` per document).
            lookup: The lookup keys: an ``(n, n_bands)`` integer array whose column ``j``
                is band ``j`` (LSH bands, Hamming blocks), or one ``(m_i, 2)`` array of
                ``(band, value)`` rows per document for key sets of varying size (CTPH
                7-grams). int64 or uint64; each pair is folded to a 32-bit key.
            meta: Optional caller metadata per document (e.g. JSON text), see
                :meth:`get_meta`.
            defer_merges: Leave the segment merges this write would run (up to a bound)
                to :meth:`merge_step`, for a writer of many small batches that has idle
                moments (``neardup serve``'s).
            buffered: A batch of fewer than :data:`~neardup.store._tail.TAIL_DOCS`
                documents keeps its lookup and key entries in one ``tail`` row (committed
                with the documents, searched by every read) instead of two new segments;
                :meth:`merge_step` turns the tail into segments once it holds
                :data:`~neardup.store._tail.TAIL_DOCS` documents or is older than
                :data:`~neardup.store._tail.TAIL_SECONDS`, and a write that would take it
                past :data:`~neardup.store._tail.TAIL_MAX` does it itself. For a writer of
                many small batches with idle moments (``neardup serve``'s).

        Returns:
            The number of documents written (distinct keys).

        Raises:
            InputError: The lengths or shapes disagree, a sketch is not bytes, or a key is
                not valid Unicode.
            StoreError: The store is read-only, closed, or stayed locked past the timeout.

        Examples:
            >>> s = Store.open(":memory:", kind="simhash", params="simhash-00")
            >>> s.add_many(["a", "b", "a"], [b"1", b"2", b"3"], np.zeros((3, 4), np.int64))
            2
            >>> len(s), s.get("a")
            (2, b'3')
            >>> s.close()
        """
        n = len(keys)
        if len(sketches) != n or (meta is not None and len(meta) != n):
            raise InputError(
                f"add_many got {n} keys, {len(sketches)} sketches"
                + ("" if meta is None else f" and {len(meta)} meta values")
                + "; give exactly one of each per document"
            )
        # ASCII keys (the usual ids) are packed as they are: no bytes object per key
        packed_keys = _packed_ascii(keys)
        encoded = _encoded_keys(keys) if packed_keys is None else None
        distinct = len(set(keys)) == n
        # the usual dedup write (a row of band values a document, each document kept, no
        # tail): its lookup entries are folded, numbered and packed by one kernel call
        direct = isinstance(lookup, np.ndarray) and not buffered and distinct
        if direct:
            rows = band_rows(lookup, n)
        else:
            folded, doc_index = folded_rows(lookup, n)
        kept: Sequence[int]
        blobs: Sequence[bytes] | PackedBlobs
        names: PackedBlobs  # the kept keys' UTF-8, hashed and packed into chunks from one buffer
        if distinct:  # no key twice: every document is kept (the usual batch)
            kept, kept_ids = range(n), list(keys)
            names = packed_keys if packed_keys is not None else PackedBlobs.of(encoded or [])
            if isinstance(sketches, PackedBlobs):  # one buffer: no bytes per document
                blobs = sketches
            elif set(map(type, sketches)) <= {bytes}:
                blobs = list(sketches)
            else:
                blobs = [blob(sk, i) for i, sk in enumerate(sketches)]
        else:  # each key at its last occurrence (a re-add moves it)
            kept = sorted(dict(zip(keys, range(n), strict=True)).values())
            kept_ids = [keys[i] for i in kept]
            names = PackedBlobs.of([key.encode() for key in kept_ids])
            blobs = [blob(sketches[i], i) for i in kept]
        notes = None if meta is None else [meta[i] for i in kept]
        now = int(time.time())
        keep = self._cache is not None
        with collector_paused(), self._errors("add documents"), self._write(keep) as conn:
            if keep:  # validated and read once; the writes below keep it up to date
                self._cached(conn)
                self._segment_rows(conn)
            counts = self._counters(conn)
            kfolds = key_folds(names)  # the batch's key entries: probed, then written
            old = self._find(conn, kept_ids, names, kfolds)
            first_chunk = counts["last_doc"] // SLOTS + 1  # a batch starts a fresh chunk
            base = first_chunk * SLOTS
            everyone = len(kept) == n  # (then kept is a range: no index array from it)
            if everyone:
                doc_of = np.arange(base, base + n, dtype=np.int64)
            else:
                doc_of = np.full(n, -1, dtype=np.int64)
                doc_of[kept] = np.arange(base, base + len(kept), dtype=np.int64)
            insert_rows(conn, _INSERT_CHUNKS, iter_chunks(first_chunk, names, blobs, notes, now))
            if old:  # replaced: listed in gone, their lookup entries stale until compact()
                conn.executemany(
                    "INSERT INTO gone (doc) VALUES (?)", [(d,) for d, _, _ in old.values()]
                )
            if not direct:
                per_doc = isinstance(doc_index, int)  # n_bands keys a document, or an index
                docs = np.repeat(doc_of, doc_index) if per_doc else doc_of[doc_index]
                if len(kept) < n:  # drops the lookup rows of superseded duplicates
                    use = docs >= 0
                    folded, docs = folded[use], docs[use]
            kdocs = doc_of if everyone else doc_of[kept]
            held: TailRow | None = None
            tail_docs = self._tail.docs + len(kept)
            if direct:
                self._insert_band_keys(conn, rows, base, defer_merges)
                self._insert_keys(conn, kfolds, kdocs, KEYS, defer_merges)
            elif buffered and kept and len(kept) < TAIL_DOCS and tail_docs <= TAIL_MAX:
                held = TailRow(base, len(kept), folded, docs, kfolds, kdocs)
                insert_row(conn, encode_row(base, len(kept), folded, docs, kfolds, kdocs))
            elif buffered and self._tail.rows:  # the tail and this batch: two segments
                lk, ld = self._tail.entries()
                kk, kd = self._tail.entries(keys_role=True)
                self._insert_keys(
                    conn, np.concatenate([lk, folded]), np.concatenate([ld, docs]), LOOKUP, True
                )
                self._insert_keys(
                    conn, np.concatenate([kk, kfolds]), np.concatenate([kd, kdocs]), KEYS, True
                )
                conn.execute("DELETE FROM tail")
                self._tail.clear()  # (a rollback clears it too)
            else:
                self._insert_keys(conn, folded, docs, LOOKUP, defer_merges)
                self._insert_keys(conn, kfolds, kdocs, KEYS, defer_merges)
            stale = counts["stale"] + len(old)
            self._set_counters(
                conn,
                last_doc=base + len(kept) - 1 if kept else counts["last_doc"],
                docs=counts["docs"] + len(kept) - len(old),
                sketch_bytes=counts["sketch_bytes"]
                + (blobs.size if isinstance(blobs, PackedBlobs) else sum(map(len, blobs)))
                - sum(len(sk) for _, sk, _ in old.values()),
                stale=stale,
            )
        if held is not None:  # committed: this connection's reads need not read it back
            self._tail.hold(held, time.monotonic())
        if stale > _COMPACT_MIN and stale > len(self) // 4:  # len() counts: only then
            self.compact()
        return len(kept)

    def _insert_band_keys(
        self, conn: sqlite3.Connection, rows: npt.NDArray[np.int64], base: int, defer: bool
    ) -> None:
        """Write the lookup entries of documents ``base ..`` (a row of band values each) as
        one new segment, folded and packed in one kernel call (``_segments.py``)."""
        try:
            write_band_segment(conn, rows, base, LOOKUP, self._cache, defer_merges=defer)
        except ValueError as exc:
            raise damaged(self._path, str(exc)) from None

    def _insert_keys(
        self,
        conn: sqlite3.Connection,
        keys: npt.NDArray[np.int64],
        docs: npt.NDArray[np.int64],
        role: int = LOOKUP,
        defer_merges: bool = False,
    ) -> None:
        """Write the batch's lookup (or key) entries as one new segment (``_segments.py``)."""
        try:
            write_segment(conn, keys, docs, role, self._cache, defer_merges=defer_merges)
        except ValueError as exc:
            raise damaged(self._path, str(exc)) from None

    def merge_step(self, *, checkpoint: bool = True, merges: bool = True) -> bool:
        """Run one segment merge that writes with ``defer_merges`` left (one transaction),
        or the tail's flush or the WAL checkpoint that is due; return whether there was one
        to run.

        Args:
            checkpoint: Run the checkpoint of an ``idle_checkpoints`` store when due; False
                when the caller runs it elsewhere (:meth:`checkpoint_due`,
                :meth:`checkpoint`).
            merges: Run a segment merge; False when the caller prepares them elsewhere
                (:meth:`merge_due`, :meth:`prepare_merge`, :meth:`apply_merge`).

        Examples:
            >>> with Store.open(":memory:", kind="phash", params="phash-00") as s:
            ...     for i in range(4):
            ...         _ = s.add_many([f"k{i}"], [b"x"], np.array([[i]]), defer_merges=True)
            ...     s.merge_step(), s.merge_step(), s.merge_step()
            (True, True, False)
        """
        tail = self._tail
        self.last_step = ""
        if tail.docs >= TAIL_DOCS or (
            tail.since is not None and time.monotonic() - tail.since >= TAIL_SECONDS
        ):
            self.last_step = "tail"
            return self.flush_tail()
        if checkpoint and self.checkpoint_due():
            self.last_step = "checkpoint"
            self._checkpoint()
            return True
        held = None if self._cache is None else self._cache.segs
        if not merges or (held is not None and not mergeable(held)):  # no transaction
            return False
        self.last_step = "merge"
        with self._segments_written("merge lookup segments") as conn:
            return merge_step(conn, self._cache)

    @contextlib.contextmanager
    def _segments_written(self, what: str) -> Iterator[sqlite3.Connection]:
        """A write transaction whose writes keep the held segments up to date (with a read
        cache: they are checked and read first); rows found damaged (a ValueError of the
        decoders) raise a StoreError naming the store."""
        keep = self._cache is not None
        with self._errors(what), self._write(keep) as conn:
            try:
                if keep:
                    self._cached(conn)
                    self._segment_rows(conn)
                yield conn
            except ValueError as exc:
                raise damaged(self._path, str(exc)) from None

    def merge_due(self) -> bool:
        """Whether :meth:`merge_step` has a segment merge to run (read from the segments
        this connection holds, when it holds them)."""
        held = None if self._cache is None else self._cache.segs
        if held is None:
            with self._errors("read the lookup segments"), self._read() as conn:
                try:
                    self._cached(conn)
                    held = self._segment_rows(conn)
                except ValueError as exc:
                    raise damaged(self._path, str(exc)) from None
        return mergeable(held)

    def prepare_merge(self) -> PreparedMerge | None:
        """Compute the segment merge :meth:`merge_step` would run, on this connection's
        snapshot, without writing it: the reading, filtering and packing, off the writer's
        thread; the writer writes it with :meth:`apply_merge`. None: no merge to run.

        Raises:
            StoreError: The store is closed or damaged.
        """
        with self._errors("prepare a lookup segment merge"), self._read() as conn:
            try:
                return prepare_merge(conn)
            except ValueError as exc:
                raise damaged(self._path, str(exc)) from None

    def apply_merge(self, prepared: PreparedMerge) -> bool:
        """Write a merge :meth:`prepare_merge` computed (on any connection), in one short
        transaction, unless its segments changed since; whether it was written.

        Raises:
            StoreError: The store is closed, read-only or damaged.
        """
        with self._segments_written("merge lookup segments") as conn:
            return apply_merge(conn, prepared, self._cache)

    def flush_tail(self) -> bool:
        """Turn the entries of the buffered writes (``add_many(buffered=True)``) into two
        segments, in one transaction; return whether there were any.

        Examples:
            >>> with Store.open(":memory:", kind="phash", params="phash-00") as s:
            ...     _ = s.add_many(["k"], [b"x"], np.array([[7]]), buffered=True)
            ...     s.flush_tail(), s.flush_tail(), s.candidates(np.array([7]))
            (True, False, [('k', b'x')])
        """
        with self._segments_written("write the tail's entries") as conn:
            self._synced_tail(conn)
            if not self._tail.rows:
                return False
            self._write_tail(conn)
        return True

    def _write_tail(self, conn: sqlite3.Connection) -> None:
        """Write the held (synced) tail as two segments and delete its rows."""
        tail = self._tail
        self._insert_keys(conn, *tail.entries(), LOOKUP, True)
        self._insert_keys(conn, *tail.entries(keys_role=True), KEYS, True)
        conn.execute("DELETE FROM tail")
        tail.clear()

    def add(
        self,
        key: str,
        sketch: bytes,
        lookup: npt.NDArray[np.integer],
        *,
        meta: str | None = None,
    ) -> None:
        """Add or replace one document (see :meth:`add_many`; prefer it for many).

        Args:
            key: The document key.
            sketch: The serialized sketch.
            lookup: Its lookup keys: a 1-D array (band = position) or ``(m, 2)`` pairs.
            meta: Optional caller metadata.

        Examples:
            >>> with Store.open(":memory:", kind="ctph", params="ctph-00") as s:
            ...     s.add("doc", b"3:abc:def", np.array([[0, 11], [0, 12]]))
            ...     s.candidates(np.array([[0, 12]]))
            [('doc', b'3:abc:def')]
        """
        self.add_many(
            [key], [sketch], [pairs(lookup, "lookup")], meta=None if meta is None else [meta]
        )

    def remove(self, key: str) -> bool:
        """Delete a document (its lookup rows become stale, see :meth:`compact`).

        Args:
            key: The document key.

        Returns:
            True if it was stored, False if there was no such key.

        Examples:
            >>> with Store.open(":memory:", kind="phash", params="phash-00") as s:
            ...     s.add("img", b"\\xff", np.array([1, 2]))
            ...     s.remove("img"), s.remove("img"), s.candidates(np.array([1, 2]))
            (True, False, [])
        """
        encoded = _encoded_keys([key])
        with self._errors("remove a document"), self._write() as conn:
            found = self._find(conn, [key], encoded).get(key)
            if found is None:
                return False
            doc, sketch, _ = found
            conn.execute("INSERT INTO gone (doc) VALUES (?)", (doc,))
            counts = self._counters(conn)
            stale = counts["stale"] + 1
            self._set_counters(
                conn,
                docs=counts["docs"] - 1,
                sketch_bytes=counts["sketch_bytes"] - len(sketch),
                stale=stale,
            )
        if stale > _COMPACT_MIN and stale > len(self) // 4:
            self.compact()
        return True

    def compact(self) -> int:
        """Delete the lookup rows of replaced and removed documents; return how many.

        Replacing or removing a document leaves its lookup rows behind (they point to a
        document id that is never reused, so reads skip them); this one pass over the lookup
        table drops them. :meth:`add_many` and :meth:`remove` call it when stale documents
        pass a quarter of the store.

        Examples:
            >>> with Store.open(":memory:", kind="phash", params="phash-00") as s:
            ...     s.add("img", b"\\xff", np.array([1, 2]))
            ...     s.add("img", b"\\xfe", np.array([3, 4]))
            ...     s.compact(), s.stats()["lookup_rows"]
            (2, 2)
        """
        try:
            with self._errors("compact the store"), self._write() as conn:
                try:
                    self._cached(conn)
                    if self._synced_tail(conn).rows:  # its entries are compacted too
                        self._write_tail(conn)
                    dropped = compact_all(conn)
                except ValueError as exc:
                    raise damaged(self._path, str(exc)) from None
                self._empty_gone_slots(conn)
                self._set_counters(conn, stale=0)
                return dropped
        finally:
            if self._cache is not None:
                self._cache.clear()  # segments and chunks were rewritten

    def _empty_gone_slots(self, conn: sqlite3.Connection) -> None:
        """Empty the chunk slots of the documents in ``gone`` (deleting chunks left with
        none), then clear ``gone``; their lookup entries must already be dropped."""
        gone = [
            integer(self._path, d, "a document id") for (d,) in conn.execute("SELECT doc FROM gone")
        ]
        if not gone:
            return
        by_chunk: dict[int, set[int]] = {}
        for d in gone:
            by_chunk.setdefault(d // SLOTS, set()).add(d)
        holes = self._holes(conn)
        for cid, chunk in self._chunks_of(conn, sorted(by_chunk)).items():
            dead = by_chunk[cid]
            slots: list[tuple[str, bytes, str | None] | None] = [None] * chunk.n
            try:
                for doc, key, sketch, note in chunk.documents():
                    if doc not in dead:
                        slots[doc - chunk.first] = (key, sketch, note)
            except ValueError as exc:
                raise damaged(self._path, str(exc)) from None
            was = sum(1 for i in range(chunk.n) if not chunk.filled(i))
            now = sum(1 for slot in slots if slot is None)
            if holes is not None:
                holes += (0 if now == chunk.n else now) - was
            if all(slot is None for slot in slots):
                conn.execute("DELETE FROM chunks WHERE id = ?", (cid,))
            else:
                added = conn.execute("SELECT added FROM chunks WHERE id = ?", (cid,)).fetchone()
                conn.execute(
                    "REPLACE INTO chunks (id, n, added, data, checksum) VALUES (?, ?, ?, ?, ?)",
                    encode_slots(cid, slots, integer(self._path, added[0], "a chunk time")),
                )
        conn.execute("DELETE FROM gone")
        if holes is not None:
            self._set_counters(conn, holes=holes)
