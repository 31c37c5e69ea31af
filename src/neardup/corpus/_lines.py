"""The kernels of ``neardup lines`` over packed documents (native, with numpy references that
give the same results):

* :func:`line_spans`: each line's bytes and its whitespace-trimmed bytes, in one walk over the
  UTF-8 buffer;
* :func:`kept_text`: each document's kept lines joined by ``\\n``, packed again;
* :func:`kept_json`: the same, as JSON strings, for the documents that lose a unit, given
  each unit's drop flag (one walk over those documents);
* :func:`splice_lines`: JSONL records' lines with a new text each, in place (each line
  built straight from the new text, escaped into it);
* :class:`UnitCounts`: document frequencies of unit hashes, a hash table (native) or sorted
  arrays merged batch by batch (reference).

Lines end at ``\\n`` and at each document's end (a document of ``k`` newlines has ``k + 1``
lines, an empty one has one empty line). Trimming strips ASCII whitespace (tab, newline,
vertical tab, form feed, carriage return, space) from both ends.
"""

from __future__ import annotations

from collections.abc import MutableSequence

import numpy as np
import numpy.typing as npt

from neardup._kernels.engine import kernels

__all__ = ["UnitCounts", "json_strings", "kept_json", "kept_text", "line_spans", "splice_lines"]

U8 = npt.NDArray[np.uint8]
I64 = npt.NDArray[np.int64]
U64 = npt.NDArray[np.uint64]
B = npt.NDArray[np.bool_]


def line_spans(buf: U8, offsets: I64) -> tuple[I64, I64, I64, I64, I64]:
    """``(starts, ends, trimmed_starts, trimmed_ends, doc)`` of every line, in document order.

    A blank line has ``trimmed_starts >= trimmed_ends``.

    Examples:
        >>> from neardup.packed import pack
        >>> p = pack(["a\\n  b \\n", "x"])
        >>> [x.tolist() for x in line_spans(p.buf, p.offsets)]
        [[0, 2, 7, 7], [1, 6, 7, 8], [0, 4, 7, 7], [1, 5, 7, 8], [0, 0, 0, 1]]
    """
    buf = np.ascontiguousarray(buf, dtype=np.uint8)
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    out: tuple[I64, I64, I64, I64, I64] = kernels("lines").line_spans(buf, offsets)
    return out


def kept_text(
    buf: U8, offsets: I64, line_starts: I64, line_ends: I64, line_doc: I64, keep_line: B
) -> tuple[U8, I64]:
    """``(buffer, offsets)``: each document's kept lines joined by ``\\n``.

    Args:
        buf / offsets: The packed documents.
        line_starts / line_ends / line_doc: Every line, in document order (:func:`line_spans`).
        keep_line: Which lines stay.

    Examples:
        >>> from neardup.packed import pack
        >>> p = pack(["a\\nb\\nc", "x\\ny"])
        >>> s, e, _, _, d = line_spans(p.buf, p.offsets)
        >>> out, off = kept_text(p.buf, p.offsets, s, e, d, np.array([1, 0, 1, 0, 1], bool))
        >>> out.tobytes(), off.tolist()
        (b'a\\ncy', [0, 3, 4])
    """
    out: tuple[U8, I64] = kernels("lines").kept_text(
        buf, offsets, line_starts, line_ends, line_doc, keep_line
    )
    return out


def json_strings(buf: U8, offsets: I64, docs: I64) -> tuple[U8, I64]:
    """``(buffer, offsets)``: the texts of ``docs`` (UTF-8) as JSON strings, quotes included,
    each byte for byte what ``json.dumps(text, ensure_ascii=False)`` writes.

    Examples:
        >>> from neardup.packed import pack
        >>> p = pack(['a"b\\\\', "x\\n\\x01é"])
        >>> out, off = json_strings(p.buf, p.offsets, np.array([1, 0]))
        >>> out.tobytes().decode(), off.tolist()
        ('"x\\\\n\\\\u0001é""a\\\\"b\\\\\\\\"', [0, 13, 21])
    """
    out: tuple[U8, I64] = kernels("lines").json_strings(buf, offsets, docs)
    return out


def splice_lines(
    lines: MutableSequence[bytes], spans: I64, changed: I64, buf: U8, offsets: I64
) -> I64:
    """Give each changed record of a batch its new text, in place: ``lines[k]`` (``k`` in
    ``changed``) becomes its line with the text value's JSON string (``lines[k][a:b]``,
    ``spans[k] = (a, b)``) replaced by that of ``buf[offsets[k]:offsets[k + 1]]`` (as
    :func:`json_strings` writes it), blanks (space, tab, ``\\r``) trimmed at both ends and
    ``\\n`` added. Each line is built straight from the new text (no buffer of all the JSON
    strings) and replaces the old one at once, so the next one can reuse its memory.

    Returns:
        The changed records without a span (``a < 0``: the line went to ``json.loads``),
        left as they were.

    Raises:
        ValueError: ``lines``, ``spans`` and the documents of ``offsets`` differ in number,
            or a changed record's span is not inside its line.
        IndexError: a changed record out of range.

    Examples:
        >>> from neardup.packed import pack
        >>> lines = [b'{"id": 1, "text": "old"} ', b"x"]
        >>> spans = np.array([[18, 23], [-1, -1]], np.int64)
        >>> p = pack(['n"é', "y"])
        >>> splice_lines(lines, spans, np.array([0, 1]), p.buf, p.offsets).tolist()
        [1]
        >>> lines[0].decode()
        '{"id": 1, "text": "n\\\\"é"}\\n'
    """
    left: I64 = kernels("lines").splice_lines(lines, spans, changed, buf, offsets)
    return left


def kept_json(
    buf: U8, offsets: I64, drop: B, unit_off: I64, paragraph: bool
) -> tuple[I64, U8, I64, I64, int]:
    """The documents that lose a unit, and their kept text as JSON strings.

    Args:
        buf / offsets: The packed documents.
        drop: Each unit's flag, in order (a unit: a solid line, or with ``paragraph`` a run
            of solid lines; a blank line is no unit and always stays).
        unit_off: Document ``d``'s units are ``drop[unit_off[d] : unit_off[d + 1]]``.
        paragraph: The units are paragraphs.

    Returns:
        ``(changed, out, out_offsets, kept_lengths, bad)``: the documents with a dropped unit;
        each one's kept lines joined by ``\\n``, as ``json.dumps(text, ensure_ascii=False)``
        writes that text (quotes included), in ``out[out_offsets[j] : out_offsets[j + 1]]``;
        the kept text's UTF-8 length; and ``bad``: ``-1``, or the first changed document
        whose units do not number as ``unit_off`` says (then the other values are partial).

    Examples:
        >>> from neardup.packed import pack
        >>> p = pack(["menu\\nbody\\n\\nmenu", 'x "y"'])
        >>> drop = np.array([True, False, True, False])
        >>> ch, out, off, n, bad = kept_json(p.buf, p.offsets, drop, np.array([0, 3, 4]), False)
        >>> ch.tolist(), out.tobytes().decode(), off.tolist(), n.tolist(), bad
        ([0], '"body\\\\n"', [0, 8], [5], -1)
    """
    buf = np.ascontiguousarray(buf, dtype=np.uint8)
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    drop = np.ascontiguousarray(drop, dtype=np.bool_)
    unit_off = np.ascontiguousarray(unit_off, dtype=np.int64)
    changed, out, out_off, kept_len, bad = kernels("lines").kept_json(
        buf, offsets, drop, unit_off, bool(paragraph)
    )
    return changed, out, out_off, kept_len, int(bad)


class UnitCounts:
    """Document frequencies of unit hashes (natively a hash map: 30 to 60 bytes per distinct
    hash).

    Examples:
        >>> c = UnitCounts()
        >>> h = np.array([7, 7, 9], np.uint64)
        >>> c.add(h, np.array([0, 0, 0]))
        >>> c.add(h[:1], np.array([1]))
        >>> c.lookup(np.array([7, 9, 8], np.uint64)).tolist(), len(c), c.at_least(2)
        ([2, 1, 0], 2, 1)
    """

    def __init__(self) -> None:
        self._table = kernels("lines").UnitTable()

    def add(self, hashes: U64, docs: I64) -> None:
        """Count each ``(doc, hash)`` pair once (``docs``: a document number per hash, never
        decreasing from call to call, a document's hashes all in one call)."""
        self._table.add(
            np.ascontiguousarray(hashes, np.uint64), np.ascontiguousarray(docs, np.int64)
        )

    def lookup(self, hashes: U64) -> I64:
        """The document count of each hash (0 for unseen)."""
        out: I64 = self._table.lookup(np.ascontiguousarray(hashes, np.uint64))
        return out

    def at_least(self, n: int) -> int:
        """How many hashes occur in at least ``n`` documents."""
        return int(self._table.at_least(n))

    def __len__(self) -> int:
        return len(self._table)
