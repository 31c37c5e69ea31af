"""A persistent near-duplicate index: a dedup method's sketches and bucket keys in a Store.

``neardup index add|query|remove|stats`` and ``neardup dedup --index`` use it to grow an index
over days and to deduplicate new data against everything seen before. The store records the
method and ``params|index_params`` (sketch parameters plus the threshold-dependent banding or
radius) and refuses to mix anything else. Methods: ``minhash``, ``simhash``, ``phash``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from types import TracebackType
from typing import Self

import numpy as np
import numpy.typing as npt

from neardup.errors import ConfigError
from neardup.io import Document
from neardup.methods import Method
from neardup.store.sqlite import Store

__all__ = ["Match", "PersistentIndex"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Match:
    """A stored document similar to a query document."""

    query: str
    key: str
    similarity: float
    distance: int | None = None


class PersistentIndex:
    """A dedup method's index kept in an SQLite file.

    Args:
        path: The store file (created if missing, unless ``readonly``).
        method: A dedup method (:func:`neardup.methods.make_method`).
        readonly: Open for queries only.

    Raises:
        IncompatibleSketchError: the file holds another method or other parameters.
        StoreError: the file cannot be opened.
        ConfigError: the method cannot be stored.

    Examples:
        >>> import tempfile, os
        >>> from neardup.methods import make_method
        >>> path = os.path.join(tempfile.mkdtemp(), "s.db")
        >>> with PersistentIndex(path, make_method("simhash")) as idx:
        ...     idx.add([Document("a", "one two three four five six seven")])
        1
        >>> with PersistentIndex(path, make_method("simhash"), readonly=True) as idx:
        ...     [(m.key, m.similarity) for m in idx.query(
        ...         [Document("q", "One two three four five six seven!")])]
        [('a', 1.0)]
    """

    def __init__(self, path: str | Path, method: Method, *, readonly: bool = False) -> None:
        from neardup.methods import method_info, method_names

        if not method_info(method.name).storable:
            raise ConfigError(
                f"method {method.name!r} cannot be stored; use "
                f"{', '.join(method_names(storable=True))}"
            )
        self.method = method
        self.store = Store.open(
            path,
            kind=method.name,
            params=f"{method.params}|{method.index_params}",
            create=not readonly,
            readonly=readonly,
        )

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
        """Close the store."""
        self.store.close()

    def __len__(self) -> int:
        return len(self.store)

    def _batches(
        self, docs: Iterable[Document], batch_size: int
    ) -> Iterator[tuple[list[Document], object]]:
        stream = iter(docs)
        while batch := list(islice(stream, batch_size)):
            yield batch, self.method.sketch(batch)

    def add(self, docs: Iterable[Document], *, batch_size: int = 2048) -> int:
        """Sketch and store documents, one transaction per batch; return how many were added.

        A key already in the store is replaced.
        """
        return sum(self.add_payload(b, p) for b, p in self._batches(docs, batch_size))

    def add_payload(self, batch: list[Document], payload: object) -> int:
        """Store an already sketched batch (one transaction); return how many were added."""
        keys, blobs = self._encode(payload)
        return self.store.add_many([d.id for d in batch], blobs, keys)

    def _encode(self, payload: object) -> tuple[npt.NDArray[np.int64], list[bytes]]:
        return self.method.lookup_keys(payload).view(np.int64), self.method.blobs(payload)

    def query_then_add(self, batch: list[Document], payload: object) -> list[Match]:
        """:meth:`query_payload` (each document's own old entry excluded), then store the
        batch, encoding it once."""
        keys, blobs = self._encode(payload)
        found = self._query(batch, keys, blobs, exclude_self=True)
        self.store.add_many([d.id for d in batch], blobs, keys)
        return found

    def query_payload(
        self, batch: list[Document], payload: object, *, exclude_self: bool = False
    ) -> list[Match]:
        """Stored documents at or above the threshold for an already sketched batch."""
        keys, blobs = self._encode(payload)
        return self._query(batch, keys, blobs, exclude_self=exclude_self)

    def _query(
        self,
        batch: list[Document],
        keys: npt.NDArray[np.int64],
        blobs: list[bytes],
        *,
        exclude_self: bool,
    ) -> list[Match]:
        out: list[Match] = []
        for doc, row, blob in zip(batch, keys, blobs, strict=True):
            for key, stored in self.store.candidates(row):
                if exclude_self and key == doc.id:
                    continue
                sim, dist = self.method.blob_similarity(blob, stored)
                if sim >= self.method.threshold:
                    out.append(Match(doc.id, key, sim, dist))
        return out

    def query(self, docs: Iterable[Document], *, batch_size: int = 2048) -> list[Match]:
        """Stored documents whose similarity to each query is at or above the threshold,
        best first per query."""
        out: list[Match] = []
        for batch, payload in self._batches(docs, batch_size):
            found = self.query_payload(batch, payload)
            order = {d.id: i for i, d in enumerate(batch)}
            found.sort(key=lambda m: (order[m.query], -m.similarity, m.key))
            out.extend(found)
        return out

    def remove(self, keys: Iterable[str]) -> int:
        """Remove documents by key; return how many were there."""
        return sum(self.store.remove(k) for k in keys)

    def stats(self) -> dict[str, str | int | float]:
        """The store's statistics (documents, kind, params, schema, file size, ...)."""
        return self.store.stats()
