"""Line- and paragraph-level dedup: remove the lines (or paragraphs) that occur in at least
``min_docs`` documents — navigation, footers, cookie banners — and keep the rest.

Two streaming passes, as in the boilerplate removal of large crawls (e.g. the C4 and
RefinedWeb pipelines, and datatrove's sentence/line dedup): the first counts, for every unit,
the number of documents it occurs in; the second drops the frequent units. A unit is a line
(split at ``\\n``) or a paragraph (lines between blank lines), compared after trimming
surrounding whitespace, keyed by its XXH3-64 (a collision among ``u`` distinct units has
probability about ``u**2 / 2**65``). Blank lines are never counted or removed.

Batches travel as one UTF-8 buffer plus offsets: line spans come from one kernel walk over
the buffer, the counts in a hash table, the kept lines packed again in one copy
(:mod:`neardup._kernels.lines`, numba with numpy references), and the hashes from the batch
engine's XXH3 kernel. Memory: the counts table, 48 bytes per distinct unit at most (the
algorithm needs every unit's count), plus one batch.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from neardup.errors import ConfigError
from neardup.io import Document

if TYPE_CHECKING:
    from neardup._kernels.lines import UnitCounts

__all__ = ["LinesSummary", "remove_frequent_units", "remove_frequent_units_jsonl", "unit_spans"]

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


def remove_frequent_units(
    read: Callable[[], Iterable[Document]],
    *,
    min_docs: int,
    unit: str = "line",
    batch_size: int = 2048,
    summary: LinesSummary | None = None,
    count: Callable[[], Iterable[tuple[npt.NDArray[np.uint8], I64]]] | None = None,
) -> Iterator[Document]:
    """Yield every document with the units that occur in ``>= min_docs`` documents removed.

    Args:
        read: Called twice; each call returns the same documents in the same order (pass 1
            counts, pass 2 removes).
        min_docs: A unit found in at least this many documents is removed everywhere.
        unit: ``line`` or ``paragraph``.
        batch_size: Documents per batch.
        summary: Filled with the counts (complete once the iterator is exhausted).
        count: For pass 1 in place of ``read``: called once, it returns the same documents'
            texts as packed batches ``(UTF-8 buffer, offsets)`` (a JSONL file read by
            :class:`neardup.packed.PackedBatches`, say).

    Raises:
        ConfigError: ``min_docs < 2``, an unknown unit, or the two passes read different
            numbers of documents.

    Examples:
        >>> docs = [Document(str(i), f"menu | home\\nbody {i}\\nfooter (c)") for i in range(3)]
        >>> [d.text for d in remove_frequent_units(lambda: docs, min_docs=3)]
        ['body 0', 'body 1', 'body 2']
    """
    _check_args(min_docs, unit)
    s = summary if summary is not None else LinesSummary(unit, min_docs)
    packed = count() if count is not None else (_pack(b) for b in _batches(read(), batch_size))
    counts = _count(packed, unit, s)
    seen = 0
    for batch in _batches(read(), batch_size):
        seen += len(batch)
        _check_more(seen, s)
        buf, offsets = _pack(batch)
        out = list(batch)
        for k, text in _removals(buf, offsets, counts, unit, s):
            out[k] = replace(batch[k], text=text.decode("utf-8", "surrogatepass"))
        yield from out
    _check_same(seen, s)


def _count(
    packed: Iterable[tuple[npt.NDArray[np.uint8], I64]], unit: str, s: LinesSummary
) -> UnitCounts:
    """Pass 1: the documents each unit occurs in."""
    from neardup._kernels.lines import UnitCounts

    counts = UnitCounts()
    for buf, offsets in packed:
        spans = unit_spans(buf, offsets, unit)
        counts.add(_hashes(buf, spans), spans.doc + s.documents)
        s.documents += len(offsets) - 1
        s.units += len(spans.starts)
    s.distinct_units = len(counts)
    s.frequent_units = counts.at_least(s.min_docs)
    return counts


def _removals(
    buf: npt.NDArray[np.uint8], offsets: I64, counts: UnitCounts, unit: str, s: LinesSummary
) -> list[tuple[int, bytes]]:
    """Pass 2 on one packed batch: ``(document, kept UTF-8 text)`` for each document that
    loses a unit (the others stay as they are)."""
    got = _kept(buf, offsets, counts, unit, s)
    if got is None:
        return []
    changed, kept, kept_offsets = got
    o = kept_offsets.tolist()
    return [(k, kept[o[k] : o[k + 1]].tobytes()) for k in changed.tolist()]


def _kept(
    buf: npt.NDArray[np.uint8], offsets: I64, counts: UnitCounts, unit: str, s: LinesSummary
) -> tuple[I64, npt.NDArray[np.uint8], I64] | None:
    """Pass 2 on one packed batch: the documents that lose a unit and every document's kept
    text (packed), or None when no document loses one."""
    from neardup._kernels.lines import kept_text

    spans = unit_spans(buf, offsets, unit)
    drop_unit = counts.lookup(_hashes(buf, spans)) >= s.min_docs
    if not drop_unit.any():
        return None
    drop_line = np.zeros(len(spans.line_unit), dtype=bool)
    solid = spans.line_unit >= 0
    drop_line[solid] = drop_unit[spans.line_unit[solid]]
    per_doc_units = np.bincount(spans.doc[drop_unit], minlength=len(offsets) - 1)
    changed = np.flatnonzero(per_doc_units)
    kept, kept_offsets = kept_text(
        buf, offsets, spans.line_starts, spans.line_ends, spans.line_doc, ~drop_line
    )
    s.bytes_removed += len(buf) - len(kept)
    s.units_removed += int(np.count_nonzero(drop_unit))
    s.documents_changed += len(changed)
    return changed, kept, kept_offsets


def _check_more(seen: int, s: LinesSummary) -> None:
    if seen > s.documents:
        raise ConfigError(
            "the second read returned more documents than the first: the input changed "
            "while it was read"
        )


def _check_same(seen: int, s: LinesSummary) -> None:
    if seen != s.documents:
        raise ConfigError(
            f"the second read returned {seen} documents, the first {s.documents}: the input "
            "changed while it was read"
        )


def remove_frequent_units_jsonl(
    path: Path,
    *,
    min_docs: int,
    unit: str = "line",
    id_field: str = "id",
    text_field: str = "text",
    batch_size: int = 2048,
    summary: LinesSummary | None = None,
) -> Iterator[list[bytes]]:
    """:func:`remove_frequent_units` on one JSONL file, as JSONL lines out (each ending in
    ``\\n``), in batches.

    A record that loses no unit is its input line unchanged (surrounding whitespace and the
    ``\\r`` of a CRLF ending trimmed), so it is never decoded or encoded again. A record that
    loses units is its input line with the text value's JSON string replaced by the new
    text's, encoded as the record writer encodes a string (``json.dumps(text,
    ensure_ascii=False)``); its other fields stay as they were read, so a line written as
    ``json.dumps(record, ensure_ascii=False)`` comes out as the record writer would write the
    changed record. The place of the value comes from the numba JSONL scanner; a line that
    scanner leaves to ``json.loads`` (a lone surrogate escape, two text keys, ...) is decoded,
    gets its ``text_field`` replaced, and is encoded as the record writer does. Both passes
    read the file as packed batches (:func:`neardup.packed.read_jsonl_packed_lines`); pass 1
    checks the ids as :class:`neardup.packed.PackedBatches` does.

    Raises:
        ConfigError: as for :func:`remove_frequent_units`.
        InputError: a line that is not a JSON object with a string ``text_field``, or a
            repeated id.

    Examples:
        >>> import tempfile
        >>> p = Path(tempfile.mkdtemp()) / "in.jsonl"
        >>> rows = [f'{{"id": {i}, "text": "menu\\\\nbody {i}"}}' for i in range(3)]
        >>> _ = p.write_text("\\n".join(rows) + '\\n{"text":"alone"}\\n')
        >>> for batch in remove_frequent_units_jsonl(p, min_docs=3):
        ...     print(b"".join(batch).decode(), end="")
        {"id": 0, "text": "body 0"}
        {"id": 1, "text": "body 1"}
        {"id": 2, "text": "body 2"}
        {"text":"alone"}
    """
    _check_args(min_docs, unit)
    from neardup.corpus.records import splice_texts
    from neardup.packed import PackedBatches, read_jsonl_packed_lines

    s = summary if summary is not None else LinesSummary(unit, min_docs)
    first = PackedBatches(path, id_field, text_field, batch_size)
    counts = _count(((b.buf, b.offsets) for b in first), unit, s)
    seen = 0
    for docs, lines, spans in read_jsonl_packed_lines(
        path, id_field=id_field, text_field=text_field, batch_size=batch_size
    ):
        seen += len(docs)
        _check_more(seen, s)
        out = [line.strip(b" \t\r") + b"\n" for line in lines]
        got = _kept(docs.buf, docs.offsets, counts, unit, s)
        if got is not None:
            splice_texts(out, lines, spans, got, text_field)
        yield out
    _check_same(seen, s)


def _check_args(min_docs: int, unit: str) -> None:
    if isinstance(min_docs, bool) or not isinstance(min_docs, int) or min_docs < 2:
        raise ConfigError(f"min_docs must be an integer >= 2, got {min_docs!r}")
    if unit not in UNITS:
        raise ConfigError(f"unit must be line or paragraph, got {unit!r}")
