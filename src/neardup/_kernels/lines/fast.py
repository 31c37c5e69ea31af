"""numba kernels of :mod:`neardup._kernels.lines`; bit-identical to the reference (the same
names; the native module ``neardup._native.lines`` replaces them)."""

from __future__ import annotations

import numpy as np

from neardup._kernels.cache import njit


@njit()
def _space(c):  # type: ignore[no-untyped-def]
    return c == 32 or (9 <= c <= 13)


@njit()
def line_spans(buf, offsets, n_lines=-1):  # type: ignore[no-untyped-def]
    if n_lines < 0:  # the line count: one allocation
        n_lines = offsets.shape[0] - 1
        for i in range(offsets[0], offsets[-1]):
            n_lines += buf[i] == 10
    starts = np.empty(n_lines, np.int64)
    ends = np.empty(n_lines, np.int64)
    tstarts = np.empty(n_lines, np.int64)
    tends = np.empty(n_lines, np.int64)
    doc = np.empty(n_lines, np.int64)
    k = 0
    for d in range(len(offsets) - 1):
        s = offsets[d]
        e_doc = offsets[d + 1]
        i = s
        while True:
            e = i
            while e < e_doc and buf[e] != 10:
                e += 1
            a = i
            while a < e and _space(buf[a]):
                a += 1
            b = e
            while b > a and _space(buf[b - 1]):
                b -= 1
            if a == e:  # blank: the reference's trimmed span is empty at the line's end
                a, b = e, e
            starts[k], ends[k], tstarts[k], tends[k], doc[k] = i, e, a, b, d
            k += 1
            if e >= e_doc:
                break
            i = e + 1
    return starts, ends, tstarts, tends, doc


@njit()
def kept_text(buf, offsets, line_starts, line_ends, line_doc, keep_line):  # type: ignore[no-untyped-def]
    """Each document's kept lines joined by ``\\n``, packed: ``(buffer, offsets)``."""
    n_docs = offsets.shape[0] - 1
    out = np.empty(buf.shape[0], np.uint8)
    out_offsets = np.zeros(n_docs + 1, np.int64)
    o = 0
    t = 0
    n_lines = line_doc.shape[0]
    for d in range(n_docs):
        first = True
        while t < n_lines and line_doc[t] == d:
            if keep_line[t]:
                if not first:
                    out[o] = 10
                    o += 1
                for i in range(line_starts[t], line_ends[t]):
                    out[o] = buf[i]
                    o += 1
                first = False
            t += 1
        out_offsets[d + 1] = o
    return out[:o], out_offsets


@njit()
def _slot(h, mask):  # type: ignore[no-untyped-def]
    return np.int64(h & np.uint64(mask))


@njit()
def table_add(keys, counts, last, hashes, docs):  # type: ignore[no-untyped-def]
    """Count each ``(doc, hash)`` once in the open-addressing table (``counts == 0``: empty
    slot; ``last``: the document that counted the slot last). Returns the new keys' number."""
    mask = keys.shape[0] - 1
    new = 0
    for t in range(hashes.shape[0]):
        h = hashes[t]
        d = docs[t]
        j = _slot(h, mask)
        while True:
            if counts[j] == 0:
                keys[j] = h
                counts[j] = 1
                last[j] = d
                new += 1
                break
            if keys[j] == h:
                if last[j] != d:
                    counts[j] += 1
                    last[j] = d
                break
            j = (j + 1) & mask
    return new


@njit()
def table_rehash(keys, counts, last, capacity):  # type: ignore[no-untyped-def]
    """The same table in ``capacity`` slots (a power of two)."""
    k2 = np.zeros(capacity, np.uint64)
    c2 = np.zeros(capacity, np.int64)
    l2 = np.zeros(capacity, np.int64)
    mask = capacity - 1
    for i in range(keys.shape[0]):
        if counts[i] == 0:
            continue
        j = _slot(keys[i], mask)
        while c2[j] != 0:
            j = (j + 1) & mask
        k2[j] = keys[i]
        c2[j] = counts[i]
        l2[j] = last[i]
    return k2, c2, l2


@njit()
def table_lookup(keys, counts, hashes):  # type: ignore[no-untyped-def]
    """The count of each hash (0 for unseen)."""
    mask = keys.shape[0] - 1
    out = np.zeros(hashes.shape[0], np.int64)
    for t in range(hashes.shape[0]):
        h = hashes[t]
        j = _slot(h, mask)
        while counts[j] != 0:
            if keys[j] == h:
                out[t] = counts[j]
                break
            j = (j + 1) & mask
    return out


class UnitTable:
    """Document frequencies of unit hashes in the open-addressing table of :func:`table_add`."""

    def __init__(self) -> None:
        self._used = 0
        self._keys = np.zeros(1 << 16, np.uint64)
        self._counts = np.zeros(1 << 16, np.int64)
        self._last = np.zeros(1 << 16, np.int64)

    def add(self, hashes, docs):  # type: ignore[no-untyped-def]
        """Count each ``(doc, hash)`` pair once."""
        capacity = len(self._keys)
        while 2 * (self._used + len(hashes)) > capacity:
            capacity *= 2
        if capacity != len(self._keys):
            self._keys, self._counts, self._last = table_rehash(
                self._keys, self._counts, self._last, capacity
            )
        self._used += int(table_add(self._keys, self._counts, self._last, hashes, docs))

    def lookup(self, hashes):  # type: ignore[no-untyped-def]
        """The document count of each hash (0 for unseen)."""
        return table_lookup(self._keys, self._counts, hashes)

    def at_least(self, n: int) -> int:
        """How many hashes occur in at least ``n`` documents."""
        return int(np.count_nonzero(self._counts >= n))

    def __len__(self) -> int:
        return self._used


#: The JSON escape of each byte below 0x80 that has one (as ``json.dumps`` writes it), else 0.
_ESC = np.zeros(128, np.uint8)
for _c, _e in ((0x22, 0x22), (0x5C, 0x5C), (8, 0x62), (12, 0x66), (10, 0x6E), (13, 0x72)):
    _ESC[_c] = _e
_ESC[9] = 0x74
_HEX = np.frombuffer(b"0123456789abcdef", np.uint8).copy()


@njit()
def _put_escape(out, o, c):  # type: ignore[no-untyped-def]
    """The JSON escape of byte ``c`` (a quote, a backslash or a control) at ``out[o:]``, as
    ``json.dumps`` writes it; returns the new ``o``."""
    out[o] = 0x5C
    if _ESC[c] != 0:
        out[o + 1] = _ESC[c]
        return o + 2
    # another control character: \u00XX, lower-case hex
    out[o + 1] = 0x75
    out[o + 2] = 0x30
    out[o + 3] = 0x30
    out[o + 4] = _HEX[c >> 4]
    out[o + 5] = _HEX[c & 15]
    return o + 6


@njit()
def json_strings(buf, offsets, docs):  # type: ignore[no-untyped-def]
    """Each of ``docs``' texts as a JSON string, quotes included, in one buffer with offsets."""
    esc = _ESC
    total = 0
    for j in range(docs.shape[0]):
        d = docs[j]
        total += 2
        for i in range(offsets[d], offsets[d + 1]):
            c = buf[i]
            if c < 0x20:
                total += 2 if esc[c] != 0 else 6
            elif c == 0x22 or c == 0x5C:
                total += 2
            else:
                total += 1
    out = np.empty(total, np.uint8)
    out_off = np.empty(docs.shape[0] + 1, np.int64)
    o = 0
    for j in range(docs.shape[0]):
        d = docs[j]
        out_off[j] = o
        out[o] = 0x22
        o += 1
        for i in range(offsets[d], offsets[d + 1]):
            c = buf[i]
            if c >= 0x20 and c != 0x22 and c != 0x5C:
                out[o] = c
                o += 1
            else:
                o = _put_escape(out, o, c)
        out[o] = 0x22
        o += 1
    out_off[docs.shape[0]] = o
    return out, out_off


@njit()
def _escaped_bound(buf, i, e):  # type: ignore[no-untyped-def]
    """At most how many bytes ``buf[i:e]`` takes JSON-escaped (a vectorized count)."""
    n = 0
    for k in range(i, e):
        c = buf[k]
        n += (c < 0x20) | (c == 0x22) | (c == 0x5C)
    return (e - i) + 5 * n


@njit()
def kept_json(buf, offsets, drop, unit_off, paragraph):  # type: ignore[no-untyped-def]
    """The JSON strings of the documents that lose a unit, their units' drop flags given.

    Document ``d``'s units (its solid lines, or its runs of solid lines when ``paragraph``) are
    ``drop[unit_off[d] : unit_off[d + 1]]``, in order. Returns ``(changed, out, out_offsets,
    kept_lengths, bad)``: the documents with a dropped unit, each one's kept lines joined by
    ``\\n`` as ``json.dumps(text, ensure_ascii=False)`` writes that text, the kept text's UTF-8
    length, and ``bad``: ``-1``, or the first document whose units do not number as given (the
    text is not the one the flags were counted on).

    One walk over each changed document: a line's first non-blank byte tells whether it is a
    unit (and so whether it goes), then a kept line is escaped as it is copied up to its
    newline, a dropped one skipped to it; ``out`` is sized first, each changed document's
    bytes counted with 6 for each byte that may need an escape.
    """
    n_docs = offsets.shape[0] - 1
    n_changed = 0
    room = 0
    for d in range(n_docs):
        for u in range(unit_off[d], unit_off[d + 1]):
            if drop[u]:
                n_changed += 1
                room += _escaped_bound(buf, offsets[d], offsets[d + 1]) + 2
                break
    changed = np.empty(n_changed, np.int64)
    kept_len = np.zeros(n_changed, np.int64)
    out_off = np.zeros(n_changed + 1, np.int64)
    out = np.empty(room, np.uint8)
    o = 0
    j = 0
    for d in range(n_docs):
        u = unit_off[d]
        u_end = unit_off[d + 1]
        hit = False
        for t in range(u, u_end):
            if drop[t]:
                hit = True
                break
        if not hit:
            continue
        changed[j] = d
        e_doc = offsets[d + 1]
        i = offsets[d]
        out[o] = 0x22
        o += 1
        n_kept = 0
        cur = -1
        prev_solid = False
        first = True
        while True:
            a = i
            while a < e_doc and buf[a] != 10 and _space(buf[a]):
                a += 1
            solid = a < e_doc and buf[a] != 10
            dropped = False
            if solid:
                if not paragraph or not prev_solid:
                    cur = u
                    u += 1
                if cur >= u_end:
                    return changed[:j], out[:o], out_off[: j + 1], kept_len[:j], d
                dropped = drop[cur]
            prev_solid = solid
            if dropped:
                i = a
                while i < e_doc and buf[i] != 10:
                    i += 1
            else:
                if not first:  # the separator: the newline's escape
                    out[o] = 0x5C
                    out[o + 1] = 0x6E
                    o += 2
                    n_kept += 1
                first = False
                line = i
                while i < e_doc:
                    c = buf[i]
                    if c >= 0x20 and c != 0x22 and c != 0x5C:
                        out[o] = c
                        o += 1
                        i += 1
                        continue
                    if c == 10:
                        break
                    o = _put_escape(out, o, c)
                    i += 1
                n_kept += i - line
            if i >= e_doc:
                break
            i += 1  # past the newline
        if u != u_end:
            return changed[:j], out[:o], out_off[: j + 1], kept_len[:j], d
        out[o] = 0x22
        o += 1
        kept_len[j] = n_kept
        j += 1
        out_off[j] = o
    return changed, out[:o], out_off, kept_len, -1
