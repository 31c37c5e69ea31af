"""The read side of the store: point reads, candidates, iteration and statistics, all through
the checked read path of :mod:`neardup.store._rows` (private: use :class:`neardup.store.Store`).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterator
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from neardup.errors import InputError
from neardup.sketch.setcodec import PackedBlobs
from neardup.store._base import StoreBase
from neardup.store._check import quick_check
from neardup.store._chunks import SLOTS, Chunk, chunk_checksum, decode_chunk
from neardup.store._lookup import Lookup, fold, key_folds, pairs, triples
from neardup.store._rows import damaged, integer, json_list
from neardup.store._segments import KEYS, LOOKUP, Segment, read_segments
from neardup.store._segments import lookup as segment_lookup
from neardup.store._tail import Tail
from neardup.store.migrations import schema_version

__all__ = ["StatValue", "StoreReads"]

T = TypeVar("T")

StatValue = str | int | float


def _distinct(values: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """The sorted distinct values of a 1-D array (``np.unique`` without its first call's
    import of ``numpy.ma``, ~10 ms a process)."""
    out = np.sort(values)
    if out.size > 1:
        out = out[np.concatenate(([True], out[1:] != out[:-1]))]
    return out


class StoreReads(StoreBase):
    """Reading a store (see :class:`neardup.store.Store`)."""

    # ------------------------------------------------------------------------------ reading

    def get(self, key: str) -> bytes | None:
        """Return the stored sketch bytes of ``key``, or None.

        Raises:
            StoreError: the row is damaged (wrong types, checksum mismatch).

        Examples:
            >>> from neardup.store import Store
            >>> with Store.open(":memory:", kind="minhash", params="minhash-00") as s:
            ...     s.add("k", b"sk", np.array([5]))
            ...     s.get("k"), s.get("missing")
            (b'sk', None)
        """
        found = self._lookup_key(key, "read a document")
        return None if found is None else found[1]

    def get_meta(self, key: str) -> str | None:
        """Return the caller metadata stored with ``key`` (None if absent or not set).

        Examples:
            >>> from neardup.store import Store
            >>> with Store.open(":memory:", kind="minhash", params="minhash-00") as s:
            ...     s.add("k", b"sk", np.array([5]), meta='{"len": 3}')
            ...     s.get_meta("k")
            '{"len": 3}'
        """
        found = self._lookup_key(key, "read a document")
        return None if found is None else found[2]

    def __contains__(self, key: object) -> bool:
        """Return whether ``key`` is stored."""
        if not isinstance(key, str):
            return False
        return self._lookup_key(key, "read a document") is not None

    def _lookup_key(self, key: str, action: str) -> tuple[int, bytes, str | None] | None:
        try:
            raw = key.encode("utf-8")
        except UnicodeEncodeError:
            return None  # never stored: add_many refuses such keys
        with self._errors(action), self._read() as conn:
            return self._find(conn, [key], [raw]).get(key)

    def _find(
        self,
        conn: sqlite3.Connection,
        keys: list[str],
        raw: list[bytes] | PackedBlobs,
        folds: npt.NDArray[np.int64] | None = None,
    ) -> dict[str, tuple[int, bytes, str | None]]:
        """The stored documents with these keys: ``key -> (id, sketch, meta)``, through
        their key entries in the lookup segments (one probe for the whole list; ``folds``:
        ``key_folds(raw)`` if the caller has them)."""
        if not keys:
            return {}
        try:
            cache = self._cached(conn)
            tail = self._synced_tail(conn)
            segments = [s for s in self._segment_rows(conn) if s.role == KEYS]
            if not segments and not tail.rows:
                return {}
            if folds is None:
                folds = key_folds(raw)
            _, docs = segment_lookup(conn, folds, segments, cache)
            if tail.rows:
                docs = np.concatenate([docs, tail.search(folds, keys_role=True)[1]])
        except ValueError as exc:
            raise damaged(self._path, str(exc)) from None
        if not docs.size:
            return {}
        wanted = set(keys)
        out: dict[str, tuple[int, bytes, str | None]] = {}
        for doc, chunk in self._docs(conn, _distinct(docs)):
            i = doc - chunk.first
            key = self._slot(chunk, i, chunk.key)
            if key in wanted:  # ids grow: the last wins
                out[key] = (doc, chunk.sketch(i), self._slot(chunk, i, chunk.meta))
        return out

    def _synced_tail(self, conn: sqlite3.Connection) -> Tail:
        """The tail's entries as the caller's transaction sees them (``_tail.py``).

        Raises:
            ValueError: a tail row is damaged.
        """
        cache = self._cache  # validated by the caller's read
        if cache is None or not cache.tail_synced:
            self._tail.sync(conn, time.monotonic())
            if cache is not None:
                cache.tail_synced = True
        return self._tail

    def _segment_rows(self, conn: sqlite3.Connection) -> list[Segment]:
        """:func:`read_segments`, held by the cache until this connection writes."""
        cache = self._cache  # validated by the caller's read
        if cache is None:
            return read_segments(conn)
        if cache.segs is None:
            cache.segs = read_segments(conn)
        return list(cache.segs)

    def _chunks_of(self, conn: sqlite3.Connection, ids: list[int]) -> dict[int, Chunk]:
        """The checked, decoded chunks with these ids (absent ones are left out)."""
        out: dict[int, Chunk] = {}
        cache = self._cache  # validated by the caller's read
        if cache is not None:
            missing = []
            for cid in ids:
                held = cache.chunk(cid)
                if held is None:
                    missing.append(cid)
                else:
                    out[cid] = held
            ids = missing
            if not ids:
                return out
        for cid, n, data, check in conn.execute(
            "SELECT id, n, data, checksum FROM chunks WHERE id IN (SELECT value FROM json_each(?))",
            (json_list(ids),),
        ):
            chunk = self._chunk(cid, n, data, check)
            out[integer(self._path, cid, "a chunk id")] = chunk
            if cache is not None:
                cache.hold_chunk(cid, chunk)
        return out

    def _chunk(self, cid: int, n: object, data: object, check: object) -> Chunk:
        if type(n) is not int or type(data) is not bytes or type(check) is not int:
            raise damaged(
                self._path,
                f"document chunk {cid} has the SQLite types ({type(n).__name__}, "
                f"{type(data).__name__}, {type(check).__name__}) instead of "
                "(integer, blob, integer)",
            )
        if chunk_checksum(cid, data) != check:
            raise damaged(self._path, f"document chunk {cid} fails its checksum (flipped bytes)")
        try:
            return decode_chunk(cid, n, data)
        except ValueError as exc:
            raise damaged(self._path, str(exc)) from None

    def _docs(
        self, conn: sqlite3.Connection, docs: npt.NDArray[np.int64]
    ) -> Iterator[tuple[int, Chunk]]:
        """The stored ones of these (sorted, unique) document ids with their chunks."""
        ids = docs.tolist()
        gone = {
            d
            for (d,) in conn.execute(
                "SELECT doc FROM gone WHERE doc IN (SELECT value FROM json_each(?))",
                (json_list(ids),),
            )
        }
        chunks = self._chunks_of(conn, sorted({d // SLOTS for d in ids}))
        for doc in ids:
            chunk = chunks.get(doc // SLOTS)
            if chunk is None or doc in gone:
                continue
            if chunk.filled(doc - chunk.first):
                yield doc, chunk

    def _slot(self, chunk: Chunk, i: int, read: Callable[[int], T]) -> T:
        try:
            return read(i)
        except ValueError as exc:
            raise damaged(self._path, str(exc)) from None

    def candidates(self, lookup: npt.NDArray[np.integer]) -> list[tuple[str, bytes]]:
        """Return every stored document sharing at least one ``(band, value)`` with ``lookup``.

        This is exactly banded LSH's candidate rule; for Hamming-block search pass the block
        values (band = block index). The result is a superset of the true matches (the
        32-bit folding adds a false candidate with probability about ``2**-32`` per stored
        key): decode the sketches and verify. Documents come once each, in the order they
        were last added. One read transaction, so one consistent snapshot.

        Args:
            lookup: A 1-D integer array (band ``j`` = position ``j``, the form of one row of
                :meth:`add_many`'s array) or an ``(m, 2)`` array of ``(band, value)`` rows.

        Returns:
            ``(key, sketch bytes)`` pairs.

        Raises:
            InputError: ``lookup`` has another shape or a non-integer dtype.
            StoreError: a row read is damaged.

        Examples:
            >>> from neardup.store import Store
            >>> with Store.open(":memory:", kind="minhash", params="minhash-00") as s:
            ...     _ = s.add_many(["a", "b"], [b"A", b"B"], np.array([[1, 2], [2, 1]]))
            ...     s.candidates(np.array([1, 1])), s.candidates(np.array([2, 9]))
            ([('a', b'A'), ('b', b'B')], [('b', b'B')])
        """
        return self.candidates_many([pairs(lookup, "lookup")])[0]

    def candidates_many(
        self, lookup: Lookup, *, up_to: int | None = None
    ) -> list[list[tuple[str, bytes]]]:
        """:meth:`candidates` for a batch of queries, in two SQL statements.

        Args:
            lookup: The queries' keys, in the forms :meth:`add_many` takes.
            up_to: Only documents with an id up to this one (:meth:`last_doc_id` at some
                earlier point: what was stored then); None: all.

        Returns:
            One list of ``(key, sketch bytes)`` per query, each in insertion order.

        Examples:
            >>> from neardup.store import Store
            >>> with Store.open(":memory:", kind="minhash", params="minhash-00") as s:
            ...     _ = s.add_many(["a", "b"], [b"A", b"B"], np.array([[1, 2], [2, 1]]))
            ...     s.candidates_many(np.array([[1, 1], [2, 9], [7, 7]]))
            [[('a', b'A'), ('b', b'B')], [('b', b'B')], []]
        """
        n = len(lookup)
        query, bands, values = triples(lookup, n)
        out: list[list[tuple[str, bytes]]] = [[] for _ in range(n)]
        if not bands.size:
            return out
        with self._errors("find candidates"), self._read() as conn:
            try:
                cache = self._cached(conn)
                tail = self._synced_tail(conn)
                segments = [s for s in self._segment_rows(conn) if s.role == LOOKUP]
                if up_to is not None:  # a segment written after that id holds none of them
                    segments = [seg for seg in segments if seg.doc_lo <= up_to]
                if not segments and not tail.rows:  # nothing stored (yet, or before ``up_to``)
                    return out
                folded = fold(bands, values)
                order = np.argsort(folded, kind="stable")
                sorted_keys, sorted_query = folded[order], query[order]
                unique = sorted_keys[np.concatenate(([True], sorted_keys[1:] != sorted_keys[:-1]))]
                hit_keys, hit_docs = segment_lookup(conn, unique, segments, cache)
                if tail.rows:
                    tail_keys, tail_docs = tail.search(unique)
                    hit_keys = np.concatenate([hit_keys, tail_keys])
                    hit_docs = np.concatenate([hit_docs, tail_docs])
            except ValueError as exc:
                raise damaged(self._path, str(exc)) from None
            if up_to is not None:
                early = hit_docs <= up_to
                hit_keys, hit_docs = hit_keys[early], hit_docs[early]
            if not hit_keys.size:
                return out
            found = np.stack([hit_keys, hit_docs], axis=1)
            lo = np.searchsorted(sorted_keys, found[:, 0], side="left")
            hi = np.searchsorted(sorted_keys, found[:, 0], side="right")
            counts = hi - lo
            starts = np.repeat(lo - np.cumsum(counts) + counts, counts)
            where = starts + np.arange(int(counts.sum()))
            # (doc, query) pairs as one integer each, sorted by document id = insertion order
            # (a 1-D unique: the 2-D one sorts rows as bytes, several times slower)
            pair = _distinct(np.repeat(found[:, 1], counts) * n + sorted_query[where])
            pair_docs = pair // n
            rows: dict[int, tuple[str, bytes]] = {}
            for doc, chunk in self._docs(conn, _distinct(pair_docs)):
                i = doc - chunk.first
                rows[doc] = (self._slot(chunk, i, chunk.key), chunk.sketch(i))
        for doc, q in zip(pair_docs.tolist(), (pair % n).tolist(), strict=True):
            got = rows.get(doc)
            if got is not None:  # absent: a stale lookup row of a replaced document
                out[q].append(got)
        return out

    def last_doc_id(self) -> int:
        """The id of the last document added so far (0 for none); ids only grow (a batch
        starts at the next multiple of 32, its first chunk).

        Examples:
            >>> from neardup.store import Store
            >>> with Store.open(":memory:", kind="minhash", params="minhash-00") as s:
            ...     before = s.last_doc_id()
            ...     _ = s.add_many(["a", "b"], [b"A", b"B"], np.zeros((2, 1), np.int64))
            ...     before, s.last_doc_id(), [k for k, _ in s.candidates_many(
            ...         np.zeros((1, 1), np.int64), up_to=s.last_doc_id() - 1)[0]]
            (0, 33, ['a'])
        """
        with self._errors("read the document counter"), self._read() as conn:
            self._cached(conn)
            return self._counters(conn)["last_doc"]

    def iter_sketches(self, batch: int = 10000) -> Iterator[tuple[list[str], list[bytes]]]:
        """Yield every stored ``(keys, sketches)`` in batches, in the order they were added.

        The iteration is one SQL statement, hence one snapshot: documents committed by other
        connections meanwhile do not appear, and until the iteration ends (or the generator is
        closed) this ``Store``'s other reads see the same snapshot. Do not write through this
        same ``Store`` while iterating. Memory holds one batch at a time.

        Args:
            batch: Documents per yielded batch (at least 1).

        Yields:
            Lists of keys and of sketch bytes, of equal length.

        Examples:
            >>> from neardup.store import Store
            >>> with Store.open(":memory:", kind="minhash", params="minhash-00") as s:
            ...     _ = s.add_many(["a", "b", "c"], [b"A", b"B", b"C"], np.zeros((3, 1), np.int64))
            ...     list(s.iter_sketches(batch=2))
            [(['a', 'b'], [b'A', b'B']), (['c'], [b'C'])]
        """
        if batch < 1:
            raise InputError(f"batch must be at least 1, got {batch}")
        conn = self._live()
        began = not conn.in_transaction  # one read transaction: one snapshot for every read
        with self._errors("read documents"):
            if began:
                conn.execute("BEGIN")
            gone = {d for (d,) in conn.execute("SELECT doc FROM gone")}
            cursor = conn.execute("SELECT id, n, data, checksum FROM chunks ORDER BY id")
        keys: list[str] = []
        sketches: list[bytes] = []
        try:
            while True:
                with self._errors("read documents"):
                    rows = cursor.fetchmany(max(1, batch // SLOTS))
                for cid, n, data, check in rows:
                    chunk = self._chunk(integer(self._path, cid, "a chunk id"), n, data, check)
                    for i in range(chunk.n):
                        if chunk.filled(i) and chunk.first + i not in gone:
                            keys.append(self._slot(chunk, i, chunk.key))
                            sketches.append(chunk.sketch(i))
                while len(keys) >= batch or (keys and not rows):
                    yield keys[:batch], sketches[:batch]
                    keys, sketches = keys[batch:], sketches[batch:]
                if not rows:
                    return
        finally:
            if self._conn is not None:  # close() already finalized the cursor's statement
                cursor.close()
                if began and conn.in_transaction:
                    conn.execute("COMMIT")

    def __len__(self) -> int:
        """Return the number of stored documents."""
        with self._errors("count documents"):  # no BEGIN: an iteration's snapshot holds
            conn = self._live()
            self._cached(conn)  # held counters only while no other connection wrote
            return self._counters(conn)["docs"]

    @property
    def config(self) -> str:
        """The configuration text recorded when the store was created ("" if none)."""
        with self._errors("read the configuration"):
            return self._identity().get("config", "")

    def stats(self) -> dict[str, StatValue]:
        """Return a summary of the store.

        Returns:
            ``path``, ``docs`` (documents), ``lookup_rows`` (lookup entries; the
            documents' key entries not counted), ``stale_docs`` (replaced or
            removed documents whose lookup rows :meth:`compact` will drop), ``kind``,
            ``params``, ``config``, ``schema_version``, ``file_size`` (bytes of the database
            pages, committed WAL content included), ``sketch_bytes`` (total stored sketch
            bytes), ``created`` (Unix time) and ``readonly``.

        Examples:
            >>> from neardup.store import Store
            >>> with Store.open(":memory:", kind="minhash", params="minhash-00") as s:
            ...     st = s.stats()
            >>> st["docs"], st["kind"], st["params"], st["schema_version"]
            (0, 'minhash', 'minhash-00', 5)
        """
        with self._errors("read statistics"), self._read() as conn:
            identity = self._identity()
            self._cached(conn)
            counts = self._counters(conn)
            docs, sketch_bytes = counts["docs"], counts["sketch_bytes"]
            lookup_rows = (
                conn.execute(
                    f"SELECT coalesce(sum(entries), 0) FROM segs WHERE role = {LOOKUP:d}"
                ).fetchone()[0]
                + conn.execute("SELECT coalesce(sum(lookups), 0) FROM tail").fetchone()[0]
            )
            pages = conn.execute("PRAGMA page_count").fetchone()[0]
            page_size = conn.execute("PRAGMA page_size").fetchone()[0]
            version = schema_version(conn)
            stale = counts["stale"]
            quick_check(conn, self._path, counts, self._holes(conn))  # no unsupported count
        try:
            created = float(identity.get("created", ""))
        except ValueError:
            raise damaged(
                self._path, f"its 'created' time {identity.get('created')!r} is not a number"
            ) from None
        return {
            "path": self._path,
            "docs": integer(self._path, docs, "the document count"),
            "lookup_rows": integer(self._path, lookup_rows, "the lookup row count"),
            "stale_docs": stale,
            "kind": identity["kind"],
            "params": identity["params"],
            "config": identity.get("config", ""),
            "schema_version": version,
            "file_size": int(pages) * int(page_size),
            "sketch_bytes": integer(self._path, sketch_bytes, "the sketch byte count"),
            "created": created,
            "readonly": self._readonly,
        }
