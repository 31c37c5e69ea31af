"""Line- and paragraph-level dedup: remove the lines (or paragraphs) that occur in at least
``min_docs`` documents — navigation, footers, cookie banners — and keep the rest.

Two streaming passes, as in the boilerplate removal of large crawls (e.g. the C4 and
RefinedWeb pipelines, and datatrove's sentence/line dedup): the first counts, for every unit,
the number of documents it occurs in; the second drops the frequent units. A unit is a line
(split at ``\\n``) or a paragraph (lines between blank lines), compared after trimming
surrounding whitespace, keyed by its XXH3-64 (a collision among ``u`` distinct units has
probability about ``u**2 / 2**65``). Blank lines are never counted or removed, and neither is
a unit shorter than ``min_length`` bytes or with fewer than ``min_words`` words (runs of
non-whitespace; defaults 10 and 3, after C4's rule of at least three words per line): ``else:``
and ``import sys`` are in every Python file and are not boilerplate.

Batches travel as one UTF-8 buffer plus offsets: line spans come from one kernel walk over
the buffer, the counts in a hash table, the kept lines packed again in one copy
(:mod:`neardup.corpus._lines`, native with numpy references), and the hashes from the batch
engine's XXH3 kernel. Memory: the counts table, 30 to 60 bytes per distinct unit (the
algorithm needs every unit's count), plus one batch.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from itertools import islice
from pathlib import Path
from typing import IO

import numpy as np
import numpy.typing as npt

from neardup.errors import ConfigError
from neardup.io import Document

__all__ = [
    "MIN_LENGTH",
    "MIN_WORDS",
    "LinesSummary",
    "UnitLog",
    "frequent_units",
    "remove_frequent_units",
    "remove_frequent_units_jsonl",
    "unit_spans",
]

log = logging.getLogger(__name__)

UNITS = ("line", "paragraph")
#: A unit shorter than this many UTF-8 bytes (trimmed) is never counted or removed.
MIN_LENGTH = 10
#: A unit with fewer words than this (runs of non-whitespace) is never counted or removed.
MIN_WORDS = 3
#: ASCII whitespace (what separates words).
_SPACE = np.zeros(256, dtype=np.bool_)
_SPACE[[9, 10, 11, 12, 13, 32]] = True
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
        >>> from neardup.packed import pack
        >>> p = pack(["a\\n  b \\n\\nc", "x"])
        >>> s = unit_spans(p.buf, p.offsets, "paragraph")
        >>> [p.buf[a:b].tobytes() for a, b in zip(s.starts, s.ends)]
        [b'a\\n  b', b'c', b'x']
    """
    if unit not in UNITS:
        raise ConfigError(f"unit must be line or paragraph, got {unit!r}")
    from neardup.corpus._lines import line_spans

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
    from neardup._spans import Spans

    offsets = np.array([0, len(spans.starts)], dtype=np.int64)
    lo, _ = hash_spans(Spans(buf, spans.starts, spans.ends, offsets), "xxh3_64")
    return lo


@dataclass
class LinesSummary:
    """What a lines run counted and removed."""

    unit: str
    min_docs: int
    min_length: int = MIN_LENGTH
    min_words: int = MIN_WORDS
    documents: int = 0
    units: int = 0
    short_units: int = 0  # frequent units left alone: under min_length bytes or min_words
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
            f"distinct); {self.frequent_units} {self.unit}s in >= {self.min_docs} documents "
            f"({self.short_units} more under {self.min_length} bytes or {self.min_words} "
            "words left alone), "
            f"{self.units_removed} removed from {self.documents_changed} documents "
            f"({self.bytes_removed} bytes)"
        )


class UnitLog:
    """Pass 1's units for pass 2, in order: each document's number of units and every unit's
    hash (8 bytes per unit, 8 per document), so that pass 2 knows which records lose a unit
    without hashing again. Kept in memory up to ``cap`` bytes, then in an anonymous
    temporary file (``tempfile``'s folder: ``TMPDIR``), so memory stays bounded.

    Examples:
        >>> with UnitLog(cap=0) as log:
        ...     log.append(np.array([2, 0, 1]), np.array([7, 8, 9], np.uint64))
        ...     [x.tolist() for x in log.take(2)], [x.tolist() for x in log.take(1)]
        ([[2, 0], [7, 8]], [[1], [9]])
    """

    def __init__(self, cap: int = 64 << 20) -> None:
        """``cap``: the bytes kept in memory before the log moves to a temporary file."""
        self._cap = cap
        self._held: list[tuple[I64, U64]] = []
        self._bytes = 0
        self._file: IO[bytes] | None = None
        self._reading = False
        self._per_doc: I64 = np.zeros(0, np.int64)
        self._hashes: U64 = np.zeros(0, np.uint64)

    def __enter__(self) -> UnitLog:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._file is not None:
            self._file.close()
        self._held.clear()

    def append(self, per_doc: npt.ArrayLike, hashes: U64) -> None:
        """Log one batch: its documents' unit numbers, and its units' hashes in order."""
        per_doc = np.asarray(per_doc, np.int64)
        hashes = np.ascontiguousarray(hashes, np.uint64)
        self._held.append((per_doc, hashes))
        self._bytes += per_doc.nbytes + hashes.nbytes
        if self._bytes > self._cap:
            self._spill()

    def _spill(self) -> None:
        import tempfile

        if self._file is None:
            self._file = tempfile.TemporaryFile(prefix="neardup-lines-")  # noqa: SIM115 - closed by __exit__
        for per_doc, hashes in self._held:
            head = np.array([len(per_doc), len(hashes)], np.int64)
            self._file.write(head.tobytes() + per_doc.tobytes() + hashes.tobytes())
        self._held.clear()
        self._bytes = 0

    def _next(self) -> tuple[I64, U64]:
        if self._file is not None:
            if not self._reading:
                self._spill()
                self._file.seek(0)
            self._reading = True
            head = np.frombuffer(self._file.read(16), np.int64)
            if len(head) == 2:
                n, m = head.tolist()
                return (
                    np.frombuffer(self._file.read(8 * n), np.int64),
                    np.frombuffer(self._file.read(8 * m), np.uint64),
                )
        elif self._held:
            return self._held.pop(0)
        raise ConfigError(
            "the second read returned more documents than the first: the input changed "
            "while it was read"
        )

    def take(self, n: int) -> tuple[I64, U64]:
        """The next ``n`` documents' unit numbers, and their units' hashes."""
        per_doc, hashes = [], []
        while n > 0:
            if not len(self._per_doc):
                self._per_doc, self._hashes = self._next()
                continue
            k = min(n, len(self._per_doc))
            m = int(self._per_doc[:k].sum())
            per_doc.append(self._per_doc[:k])
            hashes.append(self._hashes[:m])
            self._per_doc, self._hashes = self._per_doc[k:], self._hashes[m:]
            n -= k
        if len(per_doc) == 1:
            return per_doc[0], hashes[0]
        return (
            np.concatenate([np.zeros(0, np.int64), *per_doc]),
            np.concatenate([np.zeros(0, np.uint64), *hashes]),
        )


def _batches(docs: Iterable[Document], size: int) -> Iterator[list[Document]]:
    it = iter(docs)
    while batch := list(islice(it, size)):
        yield batch


def _pack(batch: Sequence[Document]) -> tuple[npt.NDArray[np.uint8], I64]:
    from neardup.packed import pack

    p = pack([d.text or "" for d in batch])
    return p.buf, p.offsets


def remove_frequent_units(
    read: Callable[[], Iterable[Document]],
    *,
    min_docs: int,
    unit: str = "line",
    min_length: int = MIN_LENGTH,
    min_words: int = MIN_WORDS,
    batch_size: int = 2048,
    summary: LinesSummary | None = None,
    count: Callable[[], Iterable[tuple[npt.NDArray[np.uint8], I64]]] | None = None,
    progress: Callable[[str, int], None] | None = None,
) -> Iterator[Document]:
    """Yield every document with the units that occur in ``>= min_docs`` documents removed.

    Args:
        read: Called twice; each call returns the same documents in the same order (pass 1
            counts, pass 2 removes).
        min_docs: A unit found in at least this many documents is removed everywhere.
        unit: ``line`` or ``paragraph``.
        min_length: A unit shorter than this many UTF-8 bytes (trimmed) is kept.
        min_words: A unit with fewer words than this is kept (``1``: every unit counts).
        batch_size: Documents per batch.
        summary: Filled with the counts (complete once the iterator is exhausted).
        count: For pass 1 in place of ``read``: called once, it returns the same documents'
            texts as packed batches ``(UTF-8 buffer, offsets)`` (a JSONL file read by
            :class:`neardup.packed.PackedBatches`, say).
        progress: Called as ``progress(stage, documents)`` after each batch of each pass
            (stages ``count`` and ``write``).

    Raises:
        ConfigError: ``min_docs < 2``, an unknown unit, a bad ``min_length`` or
            ``min_words``, or the two passes read different numbers of documents.

    Examples:
        >>> text = "menu | home page\\nbody {}\\nfooter (c) acme"
        >>> docs = [Document(str(i), text.format(i)) for i in range(3)]
        >>> [d.text for d in remove_frequent_units(lambda: docs, min_docs=3)]
        ['body 0', 'body 1', 'body 2']
    """
    s = _summary(summary, unit, min_docs, min_length, min_words)
    packed = count() if count is not None else (_pack(b) for b in _batches(read(), batch_size))
    counts = _count(packed, unit, s, progress=progress)
    seen = 0
    for batch in _batches(read(), batch_size):
        seen += len(batch)
        _check_more(seen, s)
        if progress is not None:
            progress("write", seen)
        buf, offsets = _pack(batch)
        out = list(batch)
        for k, text in _removals(buf, offsets, counts, unit, s):
            out[k] = replace(batch[k], text=text.decode("utf-8", "surrogatepass"))
        yield from out
    _check_same(seen, s)


class _Frequent:
    """Pass 1's result: the document count of every unit, and the repeated units too short
    (bytes or words) to be removed. A unit's limits are checked once, when its count first
    reaches 2 (a unit found in one document is never removed), on its own bytes only, so
    the check costs the repeated units' bytes, not the corpus's."""

    def __init__(self, s: LinesSummary) -> None:
        from neardup.corpus._lines import UnitCounts

        self.counts = UnitCounts()
        self._limits = s.min_length > 1 or s.min_words > 1
        self._decided = UnitCounts()  # repeated units whose limits were checked
        self._short = UnitCounts()  # ... and found too short
        self._short_hashes: list[U64] = []

    def add(
        self,
        buf: npt.NDArray[np.uint8],
        spans: UnitSpans,
        hashes: U64,
        first_doc: int,
        s: LinesSummary,
    ) -> None:
        self.counts.add(hashes, spans.doc + first_doc)
        if not self._limits or not len(hashes):
            return
        stamp = np.full(len(hashes), first_doc, dtype=np.int64)
        new = np.flatnonzero(
            (self.counts.lookup(hashes) >= 2) & (self._decided.lookup(hashes) == 0)
        )
        if not len(new):
            return
        self._decided.add(hashes[new], stamp[new])
        short = new[~_long_enough(buf, spans.starts[new], spans.ends[new], s)]
        if len(short):
            self._short.add(hashes[short], stamp[short])
            self._short_hashes.append(hashes[short])

    def frequent(self, hashes: U64, min_docs: int) -> npt.NDArray[np.bool_]:
        """Which of ``hashes`` are removed: in ``>= min_docs`` documents and long enough."""
        drop: npt.NDArray[np.bool_] = self.counts.lookup(hashes) >= min_docs
        if self._short_hashes:
            hit = np.flatnonzero(drop)
            drop[hit[self._short.lookup(hashes[hit]) > 0]] = False
        return drop

    def finish(self, s: LinesSummary) -> None:
        """The summary's counts of distinct, frequent and frequent-but-short units."""
        s.distinct_units = len(self.counts)
        short = np.unique(np.concatenate(self._short_hashes)) if self._short_hashes else None
        s.short_units = (
            0 if short is None else int(np.count_nonzero(self.counts.lookup(short) >= s.min_docs))
        )
        s.frequent_units = self.counts.at_least(s.min_docs) - s.short_units


def _long_enough(
    buf: npt.NDArray[np.uint8], starts: I64, ends: I64, s: LinesSummary
) -> npt.NDArray[np.bool_]:
    """Which units (trimmed spans of ``buf``) have ``>= s.min_length`` bytes and
    ``>= s.min_words`` words (runs of non-whitespace: a trimmed unit starts a word, and so does
    every later byte that follows whitespace)."""
    size = ends - starts
    ok: npt.NDArray[np.bool_] = size >= max(s.min_length, 1)
    sel = np.flatnonzero(ok)
    if s.min_words > 1 and len(sel):
        lens = size[sel]
        first = np.zeros(len(sel), dtype=np.int64)
        np.cumsum(lens[:-1], out=first[1:])
        pos = np.repeat(starts[sel] - first, lens) + np.arange(int(lens.sum()), dtype=np.int64)
        space = _SPACE[buf[pos]]
        starts_word = np.zeros(len(pos), dtype=np.bool_)
        starts_word[1:] = ~space[1:] & space[:-1]  # a unit's first byte follows another's last
        words = 1 + np.add.reduceat(starts_word, first, dtype=np.int64)
        ok[sel] = words >= s.min_words
    return ok


def _count(
    packed: Iterable[tuple[npt.NDArray[np.uint8], I64]],
    unit: str,
    s: LinesSummary,
    log: UnitLog | None = None,
    progress: Callable[[str, int], None] | None = None,
) -> _Frequent:
    """Pass 1: the documents each unit occurs in (and, into ``log``, each document's number
    of units and every unit's hash, for pass 2)."""
    found = _Frequent(s)
    for buf, offsets in packed:
        spans = unit_spans(buf, offsets, unit)
        hashes = _hashes(buf, spans)
        found.add(buf, spans, hashes, s.documents, s)
        if log is not None:
            log.append(np.bincount(spans.doc, minlength=len(offsets) - 1), hashes)
        s.documents += len(offsets) - 1
        s.units += len(spans.starts)
        if progress is not None:
            progress("count", s.documents)
    found.finish(s)
    return found


def _removals(
    buf: npt.NDArray[np.uint8], offsets: I64, counts: _Frequent, unit: str, s: LinesSummary
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
    buf: npt.NDArray[np.uint8], offsets: I64, counts: _Frequent, unit: str, s: LinesSummary
) -> tuple[I64, npt.NDArray[np.uint8], I64] | None:
    """Pass 2 on one packed batch: the documents that lose a unit and every document's kept
    text (packed), or None when no document loses one."""
    from neardup.corpus._lines import kept_text

    spans = unit_spans(buf, offsets, unit)
    drop_unit = counts.frequent(_hashes(buf, spans), s.min_docs)
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
    min_length: int = MIN_LENGTH,
    min_words: int = MIN_WORDS,
    id_field: str = "id",
    text_field: str = "text",
    batch_size: int = 2048,
    summary: LinesSummary | None = None,
    id_required: bool = False,
    progress: Callable[[str, int], None] | None = None,
) -> Iterator[list[bytes]]:
    """:func:`remove_frequent_units` on one JSONL file, as JSONL lines out (each ending in
    ``\\n``), in batches.

    A record that loses no unit is its input line unchanged (surrounding whitespace and the
    ``\\r`` of a CRLF ending trimmed), so it is never decoded or encoded again. A record that
    loses units is its input line with the text value's JSON string replaced by the new
    text's, encoded as the record writer encodes a string (``json.dumps(text,
    ensure_ascii=False)``); its other fields stay as they were read, so a line written as
    ``json.dumps(record, ensure_ascii=False)`` comes out as the record writer would write the
    changed record. The place of the value comes from the native JSONL scanner; a line that
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
        >>> rows = [f'{{"id": {i}, "text": "main menu here\\\\nbody {i}"}}' for i in range(3)]
        >>> _ = p.write_text("\\n".join(rows) + '\\n{"text":"alone"}\\n')
        >>> for batch in remove_frequent_units_jsonl(p, min_docs=3):
        ...     print(b"".join(batch).decode(), end="")
        {"id": 0, "text": "body 0"}
        {"id": 1, "text": "body 1"}
        {"id": 2, "text": "body 2"}
        {"text":"alone"}
    """
    from neardup.packed import PackedBatches, read_jsonl_packed_lines

    s = _summary(summary, unit, min_docs, min_length, min_words)
    before = _stamp(path)
    with UnitLog() as log:
        first = PackedBatches(path, id_field, text_field, batch_size, id_required=id_required)
        counts = _count(((b.buf, b.offsets) for b in first), unit, s, log, progress)
        if _stamp(path) != before:
            raise ConfigError(f"{path} changed while it was read; run again on a stable copy")
        seen = 0
        for docs, lines, spans in read_jsonl_packed_lines(
            path, id_field=id_field, text_field=text_field, batch_size=batch_size
        ):
            seen += len(docs)
            _check_more(seen, s)
            if progress is not None:
                progress("write", seen)
            out = [line.strip(b" \t\r") + b"\n" for line in lines]
            per_doc, hashes = log.take(len(docs))
            _splice_kept(
                out,
                docs.buf,
                docs.offsets,
                lines,
                spans,
                per_doc,
                hashes,
                counts,
                s,
                text_field,
                path,
            )
            yield out
        _check_same(seen, s)


def _stamp(path: Path) -> tuple[int, int]:
    st = path.stat()
    return st.st_size, st.st_mtime_ns


def _splice_kept(
    out: list[bytes],
    buf: npt.NDArray[np.uint8],
    offsets: I64,
    lines: Sequence[bytes],
    spans: I64,
    per_doc: I64,
    hashes: U64,
    counts: _Frequent,
    s: LinesSummary,
    text_field: str,
    where: Path,
) -> None:
    """Pass 2 of the JSONL path on one batch: the records that lose a unit (pass 1's unit
    hashes tell which) get their kept text's JSON string in place of the text's."""
    from neardup.corpus._lines import kept_json
    from neardup.corpus.records import splice_values

    drop = counts.frequent(hashes, s.min_docs)
    if not drop.any():
        return
    unit_off = np.zeros(len(per_doc) + 1, np.int64)
    np.cumsum(per_doc, out=unit_off[1:])
    changed, values, v_off, kept_len, bad = kept_json(
        buf, offsets, drop, unit_off, s.unit == "paragraph"
    )
    if bad >= 0:
        raise ConfigError(
            f"{where}: a record's {s.unit}s differ from the first read's: the input changed "
            "while it was read; run again on a stable copy"
        )
    s.units_removed += int(np.count_nonzero(drop))
    s.documents_changed += len(changed)
    s.bytes_removed += int((offsets[changed + 1] - offsets[changed]).sum() - kept_len.sum())
    splice_values(out, lines, spans, changed, values, v_off, text_field)


def _check_args(min_docs: int, unit: str, min_length: int = 0, min_words: int = 1) -> None:
    if isinstance(min_docs, bool) or not isinstance(min_docs, int) or min_docs < 2:
        raise ConfigError(f"min_docs must be an integer >= 2, got {min_docs!r}")
    if unit not in UNITS:
        raise ConfigError(f"unit must be line or paragraph, got {unit!r}")
    for name, value, low in (("min_length", min_length, 0), ("min_words", min_words, 1)):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ConfigError(f"{name} must be an integer >= {low}, got {value!r}")


def _summary(
    summary: LinesSummary | None, unit: str, min_docs: int, min_length: int, min_words: int
) -> LinesSummary:
    """Check the arguments; the summary to fill, with the limits set."""
    _check_args(min_docs, unit, min_length, min_words)
    s = summary if summary is not None else LinesSummary(unit, min_docs)
    s.min_length, s.min_words = min_length, min_words
    return s


def frequent_units(
    read: Callable[[], Iterable[Document]],
    *,
    min_docs: int,
    unit: str = "line",
    min_length: int = MIN_LENGTH,
    min_words: int = MIN_WORDS,
    batch_size: int = 2048,
    count: Callable[[], Iterable[tuple[npt.NDArray[np.uint8], I64]]] | None = None,
    summary: LinesSummary | None = None,
    progress: Callable[[str, int], None] | None = None,
) -> list[tuple[str, int]]:
    """What :func:`remove_frequent_units` would remove, without removing it: each unit found
    in ``>= min_docs`` documents (trimmed) and the number of documents that hold it, most
    frequent first (ties: the one seen first). Two passes (count, then find the units' texts);
    nothing is written.

    Args:
        read: Called up to twice, as for :func:`remove_frequent_units`.
        count: Packed batches for both passes in place of ``read``, when given.
        min_docs, unit, min_length, min_words, batch_size, summary, progress: As for
            :func:`remove_frequent_units`.

    Raises:
        ConfigError: as for :func:`remove_frequent_units`.

    Examples:
        >>> docs = [Document(str(i), f"menu | home page\\nbody {i}\\nelse:") for i in range(3)]
        >>> frequent_units(lambda: docs, min_docs=2)
        [('menu | home page', 3)]
    """
    s = _summary(summary, unit, min_docs, min_length, min_words)

    def packed() -> Iterable[tuple[npt.NDArray[np.uint8], I64]]:
        return count() if count is not None else (_pack(b) for b in _batches(read(), batch_size))

    counts = _count(packed(), unit, s, progress=progress)
    found: dict[int, tuple[str, int]] = {}
    seen = 0
    for buf, offsets in packed():
        seen += len(offsets) - 1
        spans = unit_spans(buf, offsets, unit)
        hashes = _hashes(buf, spans)
        n = counts.counts.lookup(hashes)
        for k in np.flatnonzero(counts.frequent(hashes, min_docs)).tolist():
            h = int(hashes[k])
            if h not in found:
                text = buf[spans.starts[k] : spans.ends[k]].tobytes()
                found[h] = (text.decode("utf-8", "replace"), int(n[k]))
        if progress is not None:
            progress("find", seen)
    return sorted(found.values(), key=lambda t: -t[1])
