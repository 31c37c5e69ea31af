"""Where a report finds the documents it shows: collected while a run streams them, read lazily.

A report shows a few thousand documents out of millions, and it is written after the run, so
it must neither hold every text in memory nor read the inputs a second time.
:class:`DocumentSource` sits on the document stream (:meth:`DocumentSource.tap`) and keeps,
per document, only where its content can be found again:

* a file document (one with a ``path``) keeps its path; its text is read back, for the
  documents the report shows and no others, by the ``loader`` the caller passes (the same
  reading the run did: plain text, HTML main content, PDF ...);
* a record without a file (JSONL, CSV, stdin) has its text, cut at ``max_chars``, appended
  to an unnamed temporary file; the report reads it back by offset.

Memory grows by one small entry per document; the temporary file by at most ``max_chars``
characters per record, and it disappears when the source is closed.
"""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from types import TracebackType
from typing import IO

from neardup.errors import NeardupError
from neardup.io import Document
from neardup.types import DocId

__all__ = ["DocumentSource"]

log = logging.getLogger(__name__)

#: Characters of a record's text kept for the report (the HTML report's default diff cap).
DEFAULT_MAX_CHARS = 20_000


class DocumentSource:
    """The text and file of each document of a run, for the report's lazy lookups.

    Args:
        loader: Reads a file document's text again from its path (``None``: file
            documents are spooled like records).
        max_chars: Characters of a spooled text that are kept.

    Examples:
        >>> with DocumentSource() as src:
        ...     docs = list(src.tap([Document("a", "one two"), Document("b", "three")]))
        ...     src.text("b"), src.text("zzz"), len(src)
        ('three', None, 2)
    """

    def __init__(
        self,
        *,
        loader: Callable[[Path], str | None] | None = None,
        max_chars: int = DEFAULT_MAX_CHARS,
    ) -> None:
        self._loader = loader
        self._max_chars = max_chars
        self._paths: dict[DocId, Path] = {}
        self._spans: dict[DocId, tuple[int, int]] = {}
        self._spool: IO[bytes] | None = None
        self._end = 0

    def __len__(self) -> int:
        return len(self._paths.keys() | self._spans.keys())

    def __enter__(self) -> DocumentSource:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Delete the temporary file (lookups of spooled texts then return ``None``)."""
        if self._spool is not None:
            self._spool.close()
            self._spool = None
        self._spans.clear()

    def tap(self, docs: Iterable[Document]) -> Iterator[Document]:
        """Yield ``docs`` unchanged, remembering where each one's content is."""
        for d in docs:
            self.add(d)
            yield d

    def add(self, doc: Document) -> None:
        """Remember ``doc``: its path, or its text (cut at ``max_chars``) in the spool."""
        if doc.path is not None and (doc.text is None or self._loader is not None):
            self._paths[doc.id] = doc.path
            return
        if doc.text is None:
            return
        if self._spool is None:
            self._spool = tempfile.TemporaryFile(prefix="neardup-report-")  # noqa: SIM115 - lives until close()
        data = doc.text[: self._max_chars].encode("utf-8", "surrogatepass")
        self._spool.seek(self._end)
        self._spool.write(data)
        self._spans[doc.id] = (self._end, len(data))
        self._end += len(data)
        if doc.path is not None:
            self._paths[doc.id] = doc.path

    def path(self, doc: DocId) -> Path | None:
        """The file ``doc`` came from, if any."""
        return self._paths.get(doc)

    def text(self, doc: DocId) -> str | None:
        """The text of ``doc``: read back from the spool or through the loader; ``None`` if
        unknown or unreadable (a warning is logged)."""
        span = self._spans.get(doc)
        if span is not None and self._spool is not None:
            self._spool.seek(span[0])
            return self._spool.read(span[1]).decode("utf-8", "surrogatepass")
        path = self._paths.get(doc)
        if path is None or self._loader is None:
            return None
        try:
            return self._loader(path)
        except (NeardupError, OSError) as exc:
            log.warning("report: cannot read %s again: %s", path, exc)
            return None
