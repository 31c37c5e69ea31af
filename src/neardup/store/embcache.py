"""The embedding cache: vectors in SQLite keyed by model id and text hash, so re-runs skip them.

One table, ``embeddings (model, text_hash, vector)``: ``model`` is the provider's ``model_id``
(vectors of different models never mix), ``text_hash`` the 16-byte xxh3-128 of the text's
UTF-8 bytes, ``vector`` the float32 little-endian row. The cache may share a file with a
:class:`~neardup.store.sqlite.Store` or live on its own: its schema version is kept in its
own ``embcache_meta`` table (not ``PRAGMA user_version``, which the store owns), upgraded by
the ordered, idempotent migrations in :data:`MIGRATIONS`, the same rules as
:mod:`neardup.store.migrations`.

:class:`CachedProvider` wraps any embedding provider (static, local model, OpenAI, Voyage,
Cohere): it looks every text up first and sends only the misses, each distinct text once,
to the provider; the new rows are written in one transaction.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Protocol

import numpy as np
import numpy.typing as npt
import xxhash

from neardup.errors import ConfigError, FormatError, SchemaVersionError, StoreError
from neardup.store.migrations import Migration

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "CachedProvider", "EmbeddingCache", "text_hash"]

logger = logging.getLogger(__name__)

F32 = npt.NDArray[np.float32]

#: Host parameters per SELECT (SQLite's default limit is 32,766; stay well below it).
_CHUNK = 500


def _v1_initial(conn: sqlite3.Connection) -> None:
    """Version 1: the meta table and the vectors keyed by (model, text hash)."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS embcache_meta ("
        " name TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL)"
    )
    conn.execute(
        "CREATE TABLE IF NOT EXISTS embeddings ("
        " model TEXT NOT NULL,"
        " text_hash BLOB NOT NULL,"
        " vector BLOB NOT NULL,"
        " PRIMARY KEY (model, text_hash)) WITHOUT ROWID"
    )


MIGRATIONS: tuple[Migration, ...] = (_v1_initial,)
"""The cache's migrations in order; ``MIGRATIONS[i]`` upgrades version ``i`` to ``i + 1``."""

SCHEMA_VERSION: int = len(MIGRATIONS)
"""The embedding-cache schema version this neardup writes and reads."""


def text_hash(text: str) -> bytes:
    """The cache key of a text: xxh3-128 of its UTF-8 bytes, 16 bytes big-endian.

    Examples:
        >>> text_hash("").hex()
        '99aa06d3014798d86001c324468d497f'
    """
    return xxhash.xxh3_128_digest(text.encode("utf-8", "surrogatepass"))


class _Provider(Protocol):
    @property
    def dimension(self) -> int: ...

    @property
    def model_id(self) -> str: ...

    def embed(self, texts: Sequence[str]) -> F32: ...


class EmbeddingCache:
    """A SQLite file of embedding vectors keyed by ``(model_id, text_hash)``.

    Args:
        path: The database file (created if missing; may be a store's file too).

    Raises:
        StoreError: The file cannot be opened or is not a SQLite database.
        SchemaVersionError: The cache was written by a newer neardup.

    Examples:
        >>> cache = EmbeddingCache(":memory:")
        >>> cache.put("m", ["a"], np.array([[1.0, 2.0]], np.float32))
        >>> found = cache.get("m", ["a", "b"])
        >>> sorted(found), found[0].tolist()
        ([0], [1.0, 2.0])
        >>> cache.close()
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        created = self.path != ":memory:" and not os.path.exists(self.path)
        try:
            self._conn = sqlite3.connect(self.path, isolation_level=None, timeout=30.0)
            if self.path != ":memory:":
                self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                self._migrate()
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
        except sqlite3.DatabaseError as exc:
            with contextlib.suppress(sqlite3.Error, AttributeError):
                self._conn.close()
            if created:
                from neardup.store.sqlite import _remove_empty

                _remove_empty(self.path)
            why = "free space on its disk" if "full" in str(exc) else "pass a writable path"
            raise StoreError(
                f"cannot open the embedding cache {self.path!r} ({exc}); {why} for a new or "
                "existing SQLite file"
            ) from exc

    def _migrate(self) -> None:
        has_meta = self._conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'embcache_meta'"
        ).fetchone()
        current = 0
        if has_meta:
            row = self._conn.execute(
                "SELECT value FROM embcache_meta WHERE name = 'version'"
            ).fetchone()
            current = int(row[0]) if row else 0
        if current > SCHEMA_VERSION:
            raise SchemaVersionError(
                f"the embedding cache {self.path!r} has schema version {current} but this "
                f"neardup reads up to {SCHEMA_VERSION}: it was written by a newer neardup; "
                "upgrade neardup or pass another file"
            )
        for version in range(current, SCHEMA_VERSION):
            MIGRATIONS[version](self._conn)
            self._conn.execute(
                "INSERT OR REPLACE INTO embcache_meta (name, value) VALUES ('version', ?)",
                (str(version + 1),),
            )

    def __enter__(self) -> EmbeddingCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection."""
        self._conn.close()

    def __len__(self) -> int:
        return int(self._conn.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0])

    def get(self, model_id: str, texts: Sequence[str]) -> dict[int, F32]:
        """The cached vectors of ``texts`` under ``model_id``: ``{position: vector}``.

        Raises:
            FormatError: A stored vector is not a whole number of float32 values.
        """
        keys = [text_hash(t) for t in texts]
        where: dict[bytes, list[int]] = {}
        for i, k in enumerate(keys):
            where.setdefault(k, []).append(i)
        unique = list(where)
        out: dict[int, F32] = {}
        for start in range(0, len(unique), _CHUNK):
            part = unique[start : start + _CHUNK]
            marks = ",".join("?" * len(part))
            with self._errors("read vectors"):
                rows = self._conn.execute(
                    "SELECT text_hash, vector FROM embeddings WHERE model = ? AND text_hash IN "
                    f"({marks})",
                    (model_id, *part),
                ).fetchall()
            for key, blob in rows:
                if len(blob) % 4 or not blob:
                    raise FormatError(
                        f"a vector in the embedding cache {self.path!r} is truncated; delete "
                        "the file to rebuild the cache"
                    )
                vec = np.frombuffer(blob, dtype="<f4").astype(np.float32)
                for i in where[bytes(key)]:
                    out[i] = vec
        return out

    def put(self, model_id: str, texts: Sequence[str], vectors: npt.ArrayLike) -> None:
        """Store one row of ``vectors`` per text under ``model_id`` (one transaction).

        Raises:
            ConfigError: Row and text counts differ.
        """
        matrix = np.ascontiguousarray(vectors, dtype="<f4")
        if matrix.ndim != 2 or matrix.shape[0] != len(texts):
            raise ConfigError(
                f"put needs one vector per text: {len(texts)} texts, vectors of shape "
                f"{matrix.shape}"
            )
        rows = [(model_id, text_hash(t), matrix[i].tobytes()) for i, t in enumerate(texts)]
        with self._errors("store vectors"):
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                self._conn.executemany(
                    "INSERT OR REPLACE INTO embeddings (model, text_hash, vector) VALUES (?, ?, ?)",
                    rows,
                )
                self._conn.execute("COMMIT")
            except BaseException:
                if self._conn.in_transaction:  # a full disk may have rolled it back already
                    with contextlib.suppress(sqlite3.Error):
                        self._conn.execute("ROLLBACK")
                raise

    @contextlib.contextmanager
    def _errors(self, action: str) -> Iterator[None]:
        """Turn sqlite3 errors into a StoreError naming the file and what to do."""
        try:
            yield
        except sqlite3.Error as exc:
            text = str(exc)
            if "full" in text:
                why = "no space left on its disk; free space there or move --embedding-cache"
            elif "readonly" in text or "read-only" in text or "unable to open" in text:
                why = "its folder is read-only or not writable; pass a writable path"
            else:
                why = "check the file and its folder, or delete the file to rebuild the cache"
            raise StoreError(
                f"cannot {action} in the embedding cache {self.path!r} ({text}): {why}"
            ) from exc


class CachedProvider:
    """Any embedding provider behind an :class:`EmbeddingCache`: misses only are embedded.

    Args:
        provider: The provider whose ``model_id`` keys the cache.
        cache: The cache (or a path to open one at).

    Attributes:
        hits: Texts answered from the cache so far.
        misses: Texts sent to the provider so far (each distinct text once per call).

    Examples:
        >>> class Count:
        ...     dimension, model_id, calls = 1, "count", 0
        ...     def embed(self, texts):
        ...         self.calls += len(texts)
        ...         return np.array([[len(t)] for t in texts], np.float32)
        >>> inner = Count()
        >>> p = CachedProvider(inner, EmbeddingCache(":memory:"))
        >>> p.embed(["ab", "abc", "ab"]).ravel().tolist(), inner.calls
        ([2.0, 3.0, 2.0], 2)
        >>> p.embed(["abc", "ab"]).ravel().tolist(), inner.calls, p.hits
        ([3.0, 2.0], 2, 2)
    """

    def __init__(self, provider: _Provider, cache: EmbeddingCache | str | Path) -> None:
        self.provider = provider
        self.cache = cache if isinstance(cache, EmbeddingCache) else EmbeddingCache(cache)
        self.hits = 0
        self.misses = 0

    @property
    def model_id(self) -> str:
        """The wrapped provider's model id."""
        return self.provider.model_id

    @property
    def dimension(self) -> int:
        """The wrapped provider's vector length."""
        return self.provider.dimension

    def embed(self, texts: Sequence[str]) -> F32:
        """Embed ``texts``: cached rows from the cache, the rest from the provider (then stored).

        Raises:
            ConfigError: ``texts`` is not a sequence of str.
            FormatError: The provider returned the wrong number of rows or a cached vector
                has the wrong length.
        """
        if isinstance(texts, str) or not all(isinstance(t, str) for t in texts):
            raise ConfigError("texts must be a sequence of str; wrap a single text in a list")
        model = self.provider.model_id
        found = self.cache.get(model, texts)
        missing = list(dict.fromkeys(t for i, t in enumerate(texts) if i not in found))
        fresh: dict[str, F32] = {}
        if missing:
            matrix = np.asarray(self.provider.embed(missing), dtype=np.float32)
            if matrix.ndim != 2 or matrix.shape[0] != len(missing):
                raise FormatError(
                    f"provider {model!r} returned shape {matrix.shape} for {len(missing)} texts"
                )
            self.cache.put(model, missing, matrix)
            fresh = dict(zip(missing, matrix, strict=True))
        self.hits += len(found)
        self.misses += len(missing)
        dim = (
            next(iter(fresh.values())).shape[0]
            if fresh
            else next(iter(found.values())).shape[0]
            if found
            else self.provider.dimension
        )
        out = np.empty((len(texts), dim), dtype=np.float32)
        for i, t in enumerate(texts):
            vec = found.get(i)
            row = fresh[t] if vec is None else vec
            if row.shape[0] != dim:
                raise FormatError(
                    f"cached vectors of {model!r} have {row.shape[0]} and {dim} dimensions; "
                    f"delete the embedding cache {self.cache.path!r} to rebuild it"
                )
            out[i] = row
        return out
