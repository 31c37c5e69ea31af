"""numpy reference of the lines kernels (:mod:`neardup.corpus._lines`): the oracle of the
native module ``neardup._native.lines``, with the same names, bits and errors."""

from __future__ import annotations

from collections.abc import MutableSequence

import numpy as np
import numpy.typing as npt

__all__ = ["UnitTable", "json_strings", "kept_json", "kept_text", "line_spans", "splice_lines"]

U8 = npt.NDArray[np.uint8]
I64 = npt.NDArray[np.int64]
U64 = npt.NDArray[np.uint64]
B = npt.NDArray[np.bool_]

_WS = np.zeros(256, dtype=bool)
_WS[[9, 10, 11, 12, 13, 32]] = True


def line_spans(buf: U8, offsets: I64) -> tuple[I64, I64, I64, I64, I64]:
    """See :func:`neardup.corpus._lines.line_spans`."""
    n_docs = len(offsets) - 1
    nl = np.flatnonzero(buf == 10)
    ends = np.concatenate([nl, offsets[1:]]).astype(np.int64)
    kinds = np.concatenate([np.zeros(len(nl), np.int8), np.ones(n_docs, np.int8)])
    docs = np.concatenate(
        [np.searchsorted(offsets[1:], nl, side="right"), np.arange(n_docs)]
    ).astype(np.int64)
    order = np.lexsort((kinds, ends, docs))
    ends, kinds, doc = ends[order], kinds[order], docs[order]
    starts = np.empty_like(ends)
    starts[0:1] = 0
    starts[1:] = ends[:-1] + (kinds[:-1] == 0)
    starts = np.maximum(starts, offsets[doc]) if len(doc) else starts
    n = len(buf)
    if n == 0:
        z = np.zeros(len(ends), np.int64)
        return starts, ends, z.copy(), z.copy(), doc
    idx = np.arange(n, dtype=np.int64)
    solid = ~_WS[buf]
    nxt = np.minimum.accumulate(np.where(solid, idx, n)[::-1])[::-1]
    prv = np.maximum.accumulate(np.where(solid, idx, -1))
    a = np.where(starts < n, nxt[np.minimum(starts, n - 1)], n)
    a = np.minimum(a, ends)
    b = np.where(ends > 0, prv[np.maximum(ends - 1, 0)] + 1, 0)
    blank = a >= ends
    a = np.where(blank, ends, a)
    b = np.where(blank, ends, np.maximum(b, a))
    return starts, ends, a, b, doc


def kept_text(
    buf: U8, offsets: I64, line_starts: I64, line_ends: I64, line_doc: I64, keep_line: B
) -> tuple[U8, I64]:
    """See :func:`neardup.corpus._lines.kept_text`: a byte mask of the kept lines and of the
    newline before each kept line that follows another kept line of its document."""
    n = len(buf)
    delta = np.zeros(n + 1, dtype=np.int64)
    np.add.at(delta, line_starts[keep_line], 1)
    np.add.at(delta, line_ends[keep_line], -1)
    mask = np.cumsum(delta[:-1]) > 0
    doc = line_doc
    first = np.ones(len(doc), dtype=bool)
    first[1:] = doc[1:] != doc[:-1]
    count: I64 = np.cumsum(keep_line) - keep_line  # kept lines before each line ...
    base = np.maximum.accumulate(np.where(first, np.arange(len(doc)), 0)) if len(doc) else count
    before: I64 = count - count[base]  # ... in its document
    sep = keep_line & ~first & (before > 0)
    mask[line_starts[sep] - 1] = True
    kept_before = np.concatenate([[0], np.cumsum(mask)]).astype(np.int64)
    return buf[mask], kept_before[offsets]


class UnitTable:
    """Document frequencies of unit hashes as sorted keys and counts, merged batch by batch
    (a batch is merged once the pending ones outgrow the table, so merging stays amortized)."""

    def __init__(self) -> None:
        self.keys: U64 = np.zeros(0, dtype=np.uint64)
        self.counts: I64 = np.zeros(0, dtype=np.int64)
        self._pending: list[U64] = []
        self._pending_n = 0

    def add(self, hashes: U64, docs: I64) -> None:
        """Count each ``(doc, hash)`` pair once (``docs``: never decreasing from call to call,
        a document's hashes all in one call)."""
        if len(hashes) != len(docs):
            raise ValueError(f"hashes and docs differ in length ({len(hashes)} and {len(docs)})")
        if len(hashes):
            order = np.lexsort((docs, hashes))
            h, d = hashes[order], docs[order]
            new = np.ones(len(h), dtype=bool)
            new[1:] = (h[1:] != h[:-1]) | (d[1:] != d[:-1])
            hashes = h[new]
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

    def at_least(self, n: int) -> int:
        """How many hashes occur in at least ``n`` documents."""
        self._merge()
        return int(np.count_nonzero(self.counts >= n))

    def __len__(self) -> int:
        self._merge()
        return len(self.keys)


def json_strings(buf: U8, offsets: I64, docs: I64) -> tuple[U8, I64]:
    """See :func:`neardup.corpus._lines.json_strings`."""
    import json

    raw = buf.tobytes()
    o = offsets.tolist()
    parts = [
        json.dumps(
            raw[o[d] : o[d + 1]].decode("utf-8", "surrogatepass"), ensure_ascii=False
        ).encode("utf-8", "surrogatepass")
        for d in docs.tolist()
    ]
    out_off = np.zeros(len(parts) + 1, np.int64)
    np.cumsum([len(p) for p in parts], out=out_off[1:])
    return np.frombuffer(b"".join(parts), np.uint8).copy(), out_off


def splice_lines(
    lines: MutableSequence[bytes], spans: I64, changed: I64, buf: U8, offsets: I64
) -> I64:
    """See :func:`neardup.corpus._lines.splice_lines`: each line as ``(line[:a] + value +
    line[b:]).strip(b" \\t\\r") + b"\\n"``, the value from :func:`json_strings`."""
    n = len(offsets) - 1
    why = None
    if n < 0:
        why = "are empty"
    elif offsets[0] < 0 or offsets[-1] > len(buf):
        why = f"run from {offsets[0]} to {offsets[-1]}"
    elif (np.diff(offsets) < 0).any():
        why = "decrease somewhere"
    if why is not None:
        raise ValueError(
            f"offsets {why}; pass n + 1 non-decreasing offsets into the {len(buf)} elements"
        )
    if len(lines) != n:
        raise ValueError(f"lines and offsets[1:] differ in length ({len(lines)} and {n})")
    if len(spans) != n:
        raise ValueError(f"spans and offsets[1:] differ in length ({len(spans)} and {n})")
    if spans.shape[1] != 2:
        raise ValueError(f"spans must have two columns (start, end), got {spans.shape[1]}")
    bad = changed[(changed < 0) | (changed >= n)]
    if len(bad):
        raise IndexError(f"document {bad[0]} is out of range for {n} documents")
    values, v_off = json_strings(buf, offsets, changed)
    raw = values.tobytes()
    v = v_off.tolist()
    left: list[int] = []
    for j, k in enumerate(changed.tolist()):
        a, b = spans[k].tolist()
        if a < 0:
            left.append(k)
            continue
        line = lines[k]
        if not 0 <= a <= b <= len(line):
            raise ValueError(
                f"record {k}: its text span {a}..{b} is not inside its line of {len(line)} bytes"
            )
        lines[k] = (line[:a] + raw[v[j] : v[j + 1]] + line[b:]).strip(b" \t\r") + b"\n"
    return np.array(left, dtype=np.int64)


def kept_json(
    buf: U8, offsets: I64, drop: B, unit_off: I64, paragraph: bool
) -> tuple[I64, U8, I64, I64, int]:
    """See :func:`neardup.corpus._lines.kept_json`: :func:`line_spans`, the units of the
    lines, :func:`kept_text` and :func:`json_strings` composed (the unit counts are checked
    on the changed documents only, as the kernel walks only those)."""
    if len(unit_off) != len(offsets) or unit_off[0] != 0 or unit_off[-1] != len(drop):
        raise ValueError(
            f"unit_off must run from 0 to the {len(drop)} units, one offset per document "
            f"and one more ({len(offsets)}), got {len(unit_off)} from "
            f"{unit_off[0] if len(unit_off) else None} to {unit_off[-1] if len(unit_off) else None}"
        )
    starts, ends, t_start, t_end, doc = line_spans(buf, offsets)
    n_docs = len(offsets) - 1
    given = np.diff(unit_off)
    hits = np.zeros(n_docs, dtype=bool)
    hits[np.repeat(np.arange(n_docs), given)[drop]] = True
    solid = t_start < t_end
    new_unit = solid.copy()
    if paragraph and len(solid):
        new_unit[1:] &= ~(solid[:-1] & (doc[1:] == doc[:-1]))
    per_doc = np.bincount(doc[new_unit], minlength=n_docs)
    wrong = np.flatnonzero(hits & (per_doc != given))
    if len(wrong):
        z = np.zeros(0, np.int64)
        return z, np.zeros(0, np.uint8), np.zeros(1, np.int64), z.copy(), int(wrong[0])
    # each solid line's unit: its document's first unit plus the units before it there
    first_unit = (np.cumsum(per_doc) - per_doc)[doc]
    unit_of_line = np.cumsum(new_unit) - 1 - first_unit + unit_off[doc]
    drop_line = np.zeros(len(doc), dtype=bool)
    take = solid & hits[doc]
    drop_line[take] = drop[unit_of_line[take]]
    changed = np.flatnonzero(hits).astype(np.int64)
    kept, kept_offsets = kept_text(buf, offsets, starts, ends, doc, ~drop_line)
    out, out_off = json_strings(kept, kept_offsets, changed)
    return changed, out, out_off, np.diff(kept_offsets)[changed].astype(np.int64), -1
