"""Line- and paragraph-level dedup: remove the lines (or paragraphs) that occur in at least
``min_docs`` documents — navigation, footers, cookie banners — and keep the rest.

Two streaming passes, as in the boilerplate removal of large crawls (e.g. the C4 and
RefinedWeb pipelines, and datatrove's sentence/line dedup): the first counts, for every unit,
the number of documents it occurs in; the second drops the frequent units. A unit is a line
(split at ``\\n``) or a paragraph (lines between blank lines), compared after trimming
surrounding whitespace, keyed by its XXH3-64 (a collision among ``u`` distinct units has
probability about ``u**2 / 2**65``). Blank lines are never counted or removed.

Batches travel as one UTF-8 buffer plus offsets: line spans come from one kernel walk over
the buffer (:mod:`neardup._kernels.lines`, numba with a numpy reference), and the hashes from
the batch engine's XXH3 kernel. Memory: the counts table, 16 bytes per
distinct unit (the algorithm needs every unit's count), plus one batch.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from itertools import islice

import numpy as np
import numpy.typing as npt

from neardup.errors import ConfigError
from neardup.io import Document

__all__ = ["LinesSummary", "UnitCounts", "remove_frequent_units", "unit_spans"]

log = logging.getLogger(__name__)

UNITS = ("line", "paragraph")
U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class UnitSpans:
    """The units of a packed batch.

    Attributes:
        line_starts / line_ends: Every line's bytes (without its ``\\n``).
        line_doc: The document each line belongs to.
        line_unit: The unit each line belongs to (``-1`` for a blank line).
        starts / ends: Each unit's trimmed bytes (the hashed key).
        doc: The document each unit belongs to.
    """

    line_starts: I64
    line_ends: I64
    line_doc: I64
    line_unit: I64
    starts: I64
    ends: I64
    doc: I64


def unit_spans(buf: npt.NDArray[np.uint8], offsets: I64, unit: str = "line") -> UnitSpans:
    """Split packed documents into lines and units (``line`` or ``paragraph``).

    Examples:
        >>> from neardup._kernels.spans import pack
        >>> p = pack(["a\\n  b \\n\\nc", "x"])
        >>> s = unit_spans(p.buf, p.offsets, "paragraph")
        >>> [p.buf[a:b].tobytes() for a, b in zip(s.starts, s.ends)]
        [b'a\\n  b', b'c', b'x']
    """
    if unit not in UNITS:
        raise ConfigError(f"unit must be line or paragraph, got {unit!r}")
    from neardup._kernels.lines import line_spans

    starts, ends, t_start, t_end, doc = line_spans(buf, offsets)
    blank = t_start >= t_end
    line_unit = np.full(len(ends), -1, dtype=np.int64)
    solid_lines = np.flatnonzero(~blank)
    if unit == "line":
        line_unit[solid_lines] = np.arange(len(solid_lines))
        u_start, u_end, u_doc = t_start[solid_lines], t_end[solid_lines], doc[solid_lines]
    else:
        prev_solid = np.zeros(len(ends), dtype=bool)
        prev_solid[1:] = ~blank[:-1] & (doc[1:] == doc[:-1])
        new = ~prev_solid[solid_lines]
        ids = np.cumsum(new) - 1
        line_unit[solid_lines] = ids
        firsts = np.flatnonzero(new)
        u_start = t_start[solid_lines][firsts] if len(firsts) else np.zeros(0, np.int64)
        u_end = (
            np.maximum.reduceat(t_end[solid_lines], firsts)
            if len(firsts)
            else np.zeros(0, np.int64)
        )
        u_doc = doc[solid_lines][firsts] if len(firsts) else np.zeros(0, np.int64)
    return UnitSpans(
        starts.astype(np.int64),
        ends.astype(np.int64),
        doc,
        line_unit,
        np.asarray(u_start, np.int64),
        np.asarray(u_end, np.int64),
        np.asarray(u_doc, np.int64),
    )


def _hashes(buf: npt.NDArray[np.uint8], spans: UnitSpans) -> U64:
    from neardup._kernels.engine import hash_spans
    from neardup._kernels.spans import Spans

    offsets = np.array([0, len(spans.starts)], dtype=np.int64)
    lo, _ = hash_spans(Spans(buf, spans.starts, spans.ends, offsets), "xxh3_64")
    return lo


class UnitCounts:
    """Document frequencies of unit hashes: sorted keys and counts, merged batch by batch
    (a batch buffer is merged once it outgrows the table, so merging stays amortized)."""

    def __init__(self) -> None:
        self.keys: U64 = np.zeros(0, dtype=np.uint64)
        self.counts: I64 = np.zeros(0, dtype=np.int64)
        self._pending: list[U64] = []
        self._pending_n = 0

    def add(self, hashes: U64) -> None:
        """Count each hash once (the caller passes one hash per document and unit)."""
        self._pending.append(hashes)
        self._pending_n += len(hashes)
        if self._pending_n >= max(len(self.keys), 1 << 16):
            self._merge()

    def _merge(self) -> None:
        if not self._pending:
            return
        allk = np.concatenate([self.keys, *self._pending])
        allc = np.concatenate([self.counts, np.ones(self._pending_n, dtype=np.int64)])
        keys, inverse = np.unique(allk, return_inverse=True)
        self.keys, self.counts = keys, np.bincount(inverse, weights=allc).astype(np.int64)
        self._pending, self._pending_n = [], 0

    def lookup(self, hashes: U64) -> I64:
        """The document count of each hash (0 for unseen)."""
        self._merge()
        if not len(self.keys):
            return np.zeros(len(hashes), dtype=np.int64)
        at = np.minimum(np.searchsorted(self.keys, hashes), len(self.keys) - 1)
        out: I64 = np.where(self.keys[at] == hashes, self.counts[at], 0)
        return out

    def __len__(self) -> int:
        self._merge()
        return len(self.keys)


@dataclass
class LinesSummary:
    """What a lines run counted and removed."""

    unit: str
    min_docs: int
    documents: int = 0
    units: int = 0
    distinct_units: int = 0
    frequent_units: int = 0
    units_removed: int = 0
    documents_changed: int = 0
    bytes_removed: int = 0
    seconds: dict[str, float] = field(default_factory=dict)

    def line(self) -> str:
        """The summary as one line."""
        return (
            f"{self.documents} documents, {self.units} {self.unit}s ({self.distinct_units} "
            f"distinct); {self.frequent_units} {self.unit}s in >= {self.min_docs} documents, "
            f"{self.units_removed} removed from {self.documents_changed} documents "
            f"({self.bytes_removed} bytes)"
        )


def _batches(docs: Iterable[Document], size: int) -> Iterator[list[Document]]:
    it = iter(docs)
    while batch := list(islice(it, size)):
        yield batch


def _pack(batch: Sequence[Document]) -> tuple[npt.NDArray[np.uint8], I64]:
    from neardup._kernels.spans import pack

    p = pack([d.text or "" for d in batch])
    return p.buf, p.offsets


def _kept_bytes(n: int, spans: UnitSpans, kept: npt.NDArray[np.bool_]) -> npt.NDArray[np.bool_]:
    """Byte mask of ``"\\n".join(kept lines)`` per document: the kept lines' bytes, and the
    newline before each kept line that follows another kept line of its document."""
    delta = np.zeros(n + 1, dtype=np.int64)
    np.add.at(delta, spans.line_starts[kept], 1)
    np.add.at(delta, spans.line_ends[kept], -1)
    mask = np.cumsum(delta[:-1]) > 0
    doc = spans.line_doc
    first = np.ones(len(doc), dtype=bool)
    first[1:] = doc[1:] != doc[:-1]
    # kept lines before each line in its document
    count: npt.NDArray[np.int64] = np.cumsum(kept) - kept
    base = np.maximum.accumulate(np.where(first, np.arange(len(doc)), 0))
    before: npt.NDArray[np.int64] = count - count[base]
    sep = kept & ~first & (before > 0)
    mask[spans.line_starts[sep] - 1] = True
    return mask


def _doc_unique(spans: UnitSpans, hashes: U64) -> U64:
    """Each (document, hash) once: the hashes to count."""
    if not len(hashes):
        return hashes
    order = np.lexsort((spans.doc, hashes))
    h, d = hashes[order], spans.doc[order]
    new = np.ones(len(h), dtype=bool)
    new[1:] = (h[1:] != h[:-1]) | (d[1:] != d[:-1])
    out: U64 = h[new]
    return out


def remove_frequent_units(
    read: Callable[[], Iterable[Document]],
    *,
    min_docs: int,
    unit: str = "line",
    batch_size: int = 2048,
    summary: LinesSummary | None = None,
) -> Iterator[Document]:
    """Yield every document with the units that occur in ``>= min_docs`` documents removed.

    Args:
        read: Called twice; each call returns the same documents in the same order (pass 1
            counts, pass 2 removes).
        min_docs: A unit found in at least this many documents is removed everywhere.
        unit: ``line`` or ``paragraph``.
        batch_size: Documents per batch.
        summary: Filled with the counts (complete once the iterator is exhausted).

    Raises:
        ConfigError: ``min_docs < 2`` or an unknown unit.

    Examples:
        >>> docs = [Document(str(i), f"menu | home\\nbody {i}\\nfooter (c)") for i in range(3)]
        >>> [d.text for d in remove_frequent_units(lambda: docs, min_docs=3)]
        ['body 0', 'body 1', 'body 2']
    """
    if isinstance(min_docs, bool) or not isinstance(min_docs, int) or min_docs < 2:
        raise ConfigError(f"min_docs must be an integer >= 2, got {min_docs!r}")
    if unit not in UNITS:
        raise ConfigError(f"unit must be line or paragraph, got {unit!r}")
    s = summary if summary is not None else LinesSummary(unit, min_docs)
    counts = UnitCounts()
    for batch in _batches(read(), batch_size):
        buf, offsets = _pack(batch)
        spans = unit_spans(buf, offsets, unit)
        counts.add(_doc_unique(spans, _hashes(buf, spans)))
        s.documents += len(batch)
        s.units += len(spans.starts)
    s.distinct_units = len(counts)
    s.frequent_units = int(np.count_nonzero(counts.counts >= min_docs))
    seen = 0
    for batch in _batches(read(), batch_size):
        seen += len(batch)
        if seen > s.documents:
            raise ConfigError("the second read returned more documents than the first")
        buf, offsets = _pack(batch)
        spans = unit_spans(buf, offsets, unit)
        drop_unit = counts.lookup(_hashes(buf, spans)) >= min_docs
        if not drop_unit.any():
            yield from batch
            continue
        drop_line = np.zeros(len(spans.line_unit), dtype=bool)
        solid = spans.line_unit >= 0
        drop_line[solid] = drop_unit[spans.line_unit[solid]]
        per_doc_units = np.bincount(spans.doc[drop_unit], minlength=len(batch))
        changed = np.flatnonzero(per_doc_units)
        keep = _kept_bytes(len(buf), spans, ~drop_line)
        out = list(batch)
        for k in changed.tolist():
            lo, hi = int(offsets[k]), int(offsets[k + 1])
            text = buf[lo:hi][keep[lo:hi]].tobytes()
            s.bytes_removed += (hi - lo) - len(text)
            out[k] = replace(batch[k], text=text.decode("utf-8", "surrogatepass"))
        s.units_removed += int(np.count_nonzero(drop_unit))
        s.documents_changed += len(changed)
        yield from out
