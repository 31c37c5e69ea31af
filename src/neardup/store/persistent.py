"""A persistent near-duplicate index: a dedup method's sketches and bucket keys in a Store.

``neardup index add|query|remove|stats`` and ``neardup dedup --index`` use it to grow an index
over days and to deduplicate new data against everything seen before. The store records the
method's canonical configuration (name, threshold and options, as JSON), so
:meth:`PersistentIndex.open` rebuilds the method from the file alone, and the fingerprint
``params|index_params`` that refuses to mix anything else. Methods: ``minhash``, ``simhash``,
``simhash-go``, ``phash``.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from types import TracebackType
from typing import Self

import numpy as np
import numpy.typing as npt

from neardup.errors import ConfigError, StoreError
from neardup.io import Document
from neardup.methods import (
    Method,
    build,
    config_from_json,
    make_method,
    method_info,
    method_names,
)
from neardup.packed import PackedDocs
from neardup.sketch.setcodec import PackedBlobs
from neardup.store._writer import BatchWriter
from neardup.store.sqlite import Store

__all__ = ["Match", "PersistentIndex", "method_config", "rebuild_method"]

log = logging.getLogger(__name__)

#: Documents that :meth:`PersistentIndex.query_then_add` gathers before one write transaction.
WRITE_DOCS = 65536

#: Seconds after which :meth:`PersistentIndex.query_then_add` writes what it gathered even
#: below :data:`WRITE_DOCS`: a slow or interrupted ``dedup --index`` run loses at most its
#: last few seconds, a fast one keeps its big transactions.
COMMIT_EVERY_SECONDS = 2.0

ConfigValue = str | int | float | bool


@dataclass(frozen=True, slots=True)
class Match:
    """A stored document similar to a query document."""

    query: str
    key: str
    similarity: float
    distance: int | None = None


def method_config(method: Method) -> str:
    """The canonical JSON that rebuilds ``method`` (its registry configuration).

    Examples:
        >>> method_config(make_method("simhash", 0.9))
        '{"bits":64,"canonicalize":"txtfp","kind":"simhash","threshold":0.9}'
    """
    return method.config.to_json()


def rebuild_method(text: str, path: str = "") -> Method:
    """Build the method a store's configuration text describes.

    Raises:
        StoreError: the text is not a method configuration (the store is damaged or was
            not written by :class:`PersistentIndex`).

    Examples:
        >>> rebuild_method('{"kind":"minhash","num_perm":64,"threshold":0.7}').threshold
        0.7
    """
    try:
        return build(config_from_json(text))
    except ConfigError as exc:
        raise StoreError(
            f"the store {path!r} has no usable method configuration ({exc}); it was not "
            "written by PersistentIndex or is damaged: rebuild it"
        ) from None


class PersistentIndex:
    """A dedup method's index kept in an SQLite file.

    Args:
        path: The store file (created if missing, unless ``readonly``).
        method: A dedup method (:func:`neardup.methods.make_method`); None rebuilds the
            store's own from its configuration (see :meth:`open`).
        readonly: Open for queries only.
        write_docs: Documents gathered by :meth:`query_then_add` before one write
            transaction.
        commit_every_seconds: :meth:`query_then_add` also writes what it gathered once this
            many seconds passed since the last write (0: every batch is committed).
        background: In a dedup run (after :meth:`begin_run`, whose queries never search
            the run's own writes), :meth:`query_then_add` hands the batches to a writer
            thread with its own connection, which encodes and writes them in the same
            groups and order while the caller goes on (a file store opened for writing;
            ``dedup --index`` with ``--jobs 2`` then writes beside the sketching).
            :meth:`flush`, :meth:`close` and the other calls wait for it; a failed write is
            raised at the next call. False, or outside a run: the caller's thread writes,
            and a batch that makes a group due is committed before :meth:`query_then_add`
            returns.

    Raises:
        IncompatibleSketchError: the file holds another method or other parameters.
        StoreError: the file cannot be opened.
        ConfigError: the method cannot be stored.

    Examples:
        >>> import tempfile, os
        >>> path = os.path.join(tempfile.mkdtemp(), "s.db")
        >>> with PersistentIndex(path, make_method("simhash")) as idx:
        ...     idx.add([Document("a", "one two three four five six seven")])
        1
        >>> with PersistentIndex.open(path, readonly=True) as idx:
        ...     [(m.key, m.similarity) for m in idx.query(
        ...         [Document("q", "One two three four five six seven!")])]
        [('a', 1.0)]
    """

    def __init__(
        self,
        path: str | Path,
        method: Method | None = None,
        *,
        readonly: bool = False,
        write_docs: int = WRITE_DOCS,
        commit_every_seconds: float = COMMIT_EVERY_SECONDS,
        background: bool = True,
    ) -> None:
        if method is not None and not method_info(method.name).storable:
            raise ConfigError(
                f"method {method.name!r} cannot be stored; use "
                f"{', '.join(method_names(storable=True))}"
            )
        if not commit_every_seconds >= 0:  # also refuses NaN
            raise ConfigError(
                f"commit_every_seconds must be 0 or more, got {commit_every_seconds!r}"
            )
        self._write_docs = max(1, write_docs)
        self._commit_every = float(commit_every_seconds)
        self._last_write = time.monotonic()
        self._run_floor: int | None = None  # query_then_add sees documents up to this id
        self._pending: list[tuple[list[str], PackedBlobs, npt.NDArray[np.int64]]] = []
        self._pending_docs = 0
        self._writer: BatchWriter | None = None
        self._background = background and not readonly and str(path) != ":memory:"
        if method is None:
            self.store = Store.open(path, kind=None, params=None, create=False, readonly=readonly)
            try:
                self.method = rebuild_method(self.store.config, str(path))
                expected = f"{self.method.params}|{self.method.index_params}"
                if self.store.params != expected:
                    raise StoreError(
                        f"the store {str(path)!r} records params {self.store.params!r}, but its "
                        f"configuration rebuilds {expected!r}; it was made by another neardup "
                        "version: rebuild it"
                    )
            except BaseException:
                self.store.close()
                raise
            return
        self.method = method
        self.store = Store.open(
            path,
            kind=method.name,
            params=f"{method.params}|{method.index_params}",
            config=method_config(method),
            create=not readonly,
            readonly=readonly,
            # a store this index creates is loaded with a rollback journal, each page written
            # once, and is switched to WAL when the load ends (Store.open's bulk)
            bulk=self._background and not Path(path).exists(),
        )

    @classmethod
    def open(
        cls,
        path: str | Path,
        *,
        readonly: bool = False,
        create: bool = True,
        method: str | None = None,
        threshold: float | None = None,
        commit_every_seconds: float = COMMIT_EVERY_SECONDS,
        background: bool = True,
        **options: ConfigValue | None,
    ) -> PersistentIndex:
        """Open a store and rebuild its method from the stored configuration.

        Explicit ``method``, ``threshold`` and ``options`` (None = not given) must agree with
        the store's; a new store (``create``) is made with them (default method ``minhash``).
        ``commit_every_seconds`` and ``background`` are the constructor's.

        Raises:
            ConfigError: a given value contradicts the store's (both are named).
            StoreError: no store at ``path`` (read-only or ``create=False``), or it is damaged.

        Examples:
            >>> import tempfile, os
            >>> path = os.path.join(tempfile.mkdtemp(), "s.db")
            >>> PersistentIndex.open(path, method="simhash", threshold=0.9).close()
            >>> with PersistentIndex.open(path) as idx:
            ...     idx.method.name, idx.method.threshold
            ('simhash', 0.9)
            >>> PersistentIndex.open(path, threshold=0.8)
            Traceback (most recent call last):
            ...
            neardup.errors.ConfigError: threshold 0.8 contradicts the index's threshold 0.9 ...
        """
        given = {k: v for k, v in options.items() if v is not None}
        if not Path(path).exists():
            if readonly or not create:
                raise StoreError(
                    f"no index at {str(path)!r}; check the path, or build one with "
                    "`neardup index add --index FILE ...`"
                )
            return cls(
                path,
                make_method(method or "minhash", threshold, **given),
                commit_every_seconds=commit_every_seconds,
                background=background,
            )
        index = cls(
            path,
            readonly=readonly,
            commit_every_seconds=commit_every_seconds,
            background=background,
        )
        try:
            have = index.method.config.to_dict()
            have["method"] = have.pop("kind")
            wanted = {"method": method, "threshold": threshold, **given}
            for name, value in wanted.items():
                if value is None:
                    continue
                if name not in have:
                    raise ConfigError(
                        f"{name} does not apply to the index's method {have['method']!r} "
                        f"({str(path)!r}); drop the option"
                    )
                if have[name] != value:
                    raise ConfigError(
                        f"{name} {value!r} contradicts the index's {name} {have[name]!r} "
                        f"({str(path)!r}); drop the option to use the index's, or give "
                        "another index file"
                    )
        except BaseException:
            index.close()
            raise
        return index

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Write what :meth:`query_then_add` gathered, then close the store."""
        try:
            if not self.store.closed and self._writer is None:
                self.flush()
        finally:
            # the writer writes what it was handed, then stops (an error it raised before
            # is not raised again)
            writer, self._writer = self._writer, None
            try:
                if writer is not None:
                    writer.close()
            finally:
                self.store.close()

    def flush(self) -> int:
        """Write the gathered documents in one transaction; return how many were written.

        The documents stay gathered until the transaction committed: an interrupt during
        the write (rolled back) leaves them for :meth:`close` to write. With the writer
        thread, wait until it wrote everything handed to it (an interrupt of the wait
        leaves that to :meth:`close` too).

        Raises:
            NeardupError: a write failed (the writer thread's, raised here).
        """
        if self._writer is not None:
            return self._writer.drain()
        if not self._pending:
            self._last_write = time.monotonic()
            return 0
        keys = [k for part in self._pending for k in part[0]]
        blobs = PackedBlobs.concat([part[1] for part in self._pending])
        lookup = np.concatenate([part[2] for part in self._pending])
        written = self.store.add_many(keys, blobs, lookup)
        self._pending, self._pending_docs = [], 0
        self._last_write = time.monotonic()
        return written

    def __len__(self) -> int:
        """The number of stored documents (gathered writes are written first)."""
        self.flush()
        return len(self.store)

    def _batches(
        self, docs: Iterable[Document], batch_size: int
    ) -> Iterator[tuple[list[Document], object]]:
        stream = iter(docs)
        while batch := list(islice(stream, batch_size)):
            yield batch, self.method.sketch(batch)

    def add(
        self, docs: Iterable[Document], *, batch_size: int = 2048, write_size: int | None = None
    ) -> int:
        """Sketch and store documents; return how many were added.

        Args:
            docs: The documents; a key already in the store is replaced.
            batch_size: Documents sketched at a time.
            write_size: Documents per write transaction (default ``batch_size``); larger
                is faster on big stores (fewer commits touching the same pages). A batch
                is also written once ``commit_every_seconds`` passed since the last write.
        """
        self.flush()  # the writer thread's batches go first
        per_write = max(1, write_size or batch_size)
        keys: list[str] = []
        blobs: list[bytes] = []
        lookups: list[npt.NDArray[np.int64]] = []
        added = 0
        for batch, payload in self._batches(docs, batch_size):
            lookup, encoded = self._encode(payload)
            keys += [d.id for d in batch]
            blobs += encoded
            lookups.append(lookup)
            if len(keys) >= per_write or self._write_due():
                added += self.store.add_many(keys, blobs, np.concatenate(lookups))
                keys, blobs, lookups = [], [], []
                self._last_write = time.monotonic()
        if keys:
            added += self.store.add_many(keys, blobs, np.concatenate(lookups))
            self._last_write = time.monotonic()
        return added

    def _write_due(self) -> bool:
        return time.monotonic() - self._last_write >= self._commit_every

    def add_payload(self, batch: Sequence[Document] | PackedDocs, payload: object) -> int:
        """Store an already sketched batch (one transaction); return how many were added."""
        self.flush()  # the writer thread's batches go first
        keys, blobs = self._encode(payload)
        return self.store.add_many(_ids(batch), blobs, keys)

    def _encode(self, payload: object) -> tuple[npt.NDArray[np.int64], PackedBlobs]:
        return self.method.lookup_keys(payload).view(np.int64), self.method.packed_blobs(payload)

    def begin_run(self) -> None:
        """Start a dedup run (:func:`neardup.dedup` calls it): write what was gathered, and
        from now on let :meth:`query_then_add` search only the documents stored before this
        point. The run's own documents, written as they pile up, are paired by the run's
        in-memory index; searching them too would verify every such pair twice (at 100,000
        documents with a 65,536-document write, that made ``dedup(index=...)`` 7x a plain
        dedup)."""
        self.flush()
        self._run_floor = self.store.last_doc_id()

    def end_run(self) -> None:
        """End a dedup run (:func:`neardup.dedup` calls it once every batch was handed over):
        with the writer thread, have it write the last group and checkpoint now, beside the
        run's clustering, instead of at :meth:`close`."""
        if self._writer is not None:
            self._writer.write(checkpoint=True)

    def query_then_add(
        self, batch: Sequence[Document] | PackedDocs, payload: object
    ) -> list[Match]:
        """:meth:`query_payload` (each document's own old entry excluded), then gather the
        batch for writing, encoding it once.

        The query sees what was written before: earlier runs, and, unless :meth:`begin_run`
        started this one, this run's flushed writes too; documents gathered and not yet
        written are not searched: the dedup run's own in-memory index pairs them. The
        gathered documents are written in one transaction once ``write_docs`` documents
        piled up or ``commit_every_seconds`` passed since the last write, and by
        :meth:`flush` / :meth:`close` (which the CLI calls on an interrupt too). A packed
        batch is taken as it is: only its ids are read (no :class:`Document` is made).
        """
        ids = _ids(batch)
        if self._run_floor == 0:  # the store held nothing when the run began: nothing to find
            if self._background:  # in a run: the writer thread encodes it
                self._hand(ids, None, None, payload)
                return []
            keys, blobs = self._encode(payload)
            found = []
        else:
            keys, blobs = self._encode(payload)
            found = self._query(ids, keys, blobs, exclude_self=True, up_to=self._run_floor)
        if self._background and self._run_floor is not None:
            self._hand(ids, keys, blobs, payload)
            return found
        self._pending.append((ids, blobs, keys))
        self._pending_docs += len(batch)
        if self._pending_docs >= self._write_docs or self._write_due():
            self.flush()
        return found

    def _hand(
        self,
        ids: list[str],
        keys: npt.NDArray[np.int64] | None,
        blobs: PackedBlobs | None,
        payload: object,
    ) -> None:
        """Hand a batch to the writer thread (started at the first batch)."""
        if self._writer is None:
            self.flush()  # what this thread gathered goes first
            path, kind, params = self.store.path, self.store.kind, self.store.params
            bulk = self.store.bulk  # the writer's connection joins this one's bulk load

            def open_store() -> Store:
                return Store.open(
                    path, kind=kind, params=params, create=False, quick_check=False, bulk=bulk
                )

            self._writer = BatchWriter(
                open_store,
                self._encode,
                write_docs=self._write_docs,
                commit_every=self._commit_every,
            )
        self._writer.put(ids, keys, blobs, None if keys is not None else payload)

    def query_payload(
        self,
        batch: Sequence[Document] | PackedDocs,
        payload: object,
        *,
        exclude_self: bool = False,
        threshold: float | None = None,
    ) -> list[Match]:
        """Stored documents at or above the threshold (default the index's) for an already
        sketched batch."""
        keys, blobs = self._encode(payload)
        return self._query(_ids(batch), keys, blobs, exclude_self=exclude_self, threshold=threshold)

    def _query(
        self,
        ids: list[str],
        keys: npt.NDArray[np.int64],
        blobs: Sequence[bytes] | PackedBlobs,
        *,
        exclude_self: bool,
        up_to: int | None = None,
        threshold: float | None = None,
    ) -> list[Match]:
        queries: list[str] = []
        stored_keys: list[str] = []
        mine: list[bytes] = []
        theirs: list[bytes] = []
        found = self.store.candidates_many(keys, up_to=up_to)
        for doc_id, blob, stored in zip(ids, blobs, found, strict=True):
            for key, other in stored:
                if exclude_self and key == doc_id:
                    continue
                queries.append(doc_id)
                stored_keys.append(key)
                mine.append(blob)
                theirs.append(other)
        if threshold is None:
            threshold = self.method.threshold
        scores = self.method.blob_similarities(mine, theirs) if mine else []
        return [
            Match(q, k, sim, dist)
            for q, k, (sim, dist) in zip(queries, stored_keys, scores, strict=True)
            if sim >= threshold
        ]

    def query(
        self,
        docs: Iterable[Document],
        *,
        batch_size: int = 2048,
        threshold: float | None = None,
    ) -> list[Match]:
        """Stored documents whose similarity to each query is at or above the threshold,
        best first per query.

        Args:
            docs: The query documents.
            batch_size: Documents sketched at a time.
            threshold: Report matches at or above this similarity instead of the index's
                own threshold. Candidates still come from the stored bucket keys, which were
                chosen for the index's threshold, and every candidate is verified against
                this one: a higher threshold finds exactly the index's matches at or above
                it; a lower one finds only the pairs below the index's threshold that happen
                to share a bucket key (no recall promise there).

        Raises:
            ConfigError: ``threshold`` is not a similarity in [0, 1].
        """
        if threshold is not None and (
            isinstance(threshold, bool)
            or not isinstance(threshold, int | float)
            or not 0.0 <= threshold <= 1.0
        ):
            raise ConfigError(f"threshold must be a similarity in [0, 1], got {threshold!r}")
        out: list[Match] = []
        for batch, payload in self._batches(docs, batch_size):
            found = self.query_payload(batch, payload, threshold=threshold)
            order = {d.id: i for i, d in enumerate(batch)}
            found.sort(key=lambda m: (order[m.query], -m.similarity, m.key))
            out.extend(found)
        return out

    def remove(self, keys: Iterable[str]) -> int:
        """Remove documents by key; return how many were there."""
        self.flush()
        return sum(self.store.remove(k) for k in keys)

    def stats(self) -> dict[str, object]:
        """The store's statistics (documents, kind, params, schema, file size, ...) and the
        method configuration it was built with (``config``: method, threshold, options)."""
        self.flush()
        stats: dict[str, object] = dict(self.store.stats())
        stats["config"] = json.loads(method_config(self.method))
        docs = int(str(stats["docs"]))
        stats["bytes_per_doc"] = round(int(str(stats["file_size"])) / docs, 1) if docs else 0.0
        return stats


def _ids(batch: Sequence[Document] | PackedDocs) -> list[str]:
    """A batch's document ids (a packed batch's as they are, without making documents)."""
    if isinstance(batch, PackedDocs):
        return list(batch.ids)
    return [d.id for d in batch]
