"""numba kernel: pull one text field and one id field out of JSON lines into UTF-8 buffers.

Its reference is the standard library's ``json.loads`` (:mod:`neardup.packed` falls back to it
for every line this kernel marks ``SLOW``); the tests check that both give the same texts and
ids. The kernel validates each line as strictly as ``json.loads`` does for what it accepts
(UTF-8, the JSON grammar, no raw control characters in strings), and leaves everything else
(lone surrogate escapes, duplicate target keys, non-integer ids, NaN/Infinity, nesting deeper
than :data:`MAX_DEPTH`) to the slow path, so no line is ever read differently.
"""

from __future__ import annotations

import numpy as np

from neardup._kernels.cache import njit

OK = 0
SLOW = 1
BLANK = 2
NO_TEXT = 3

ID_MISSING = 0
ID_STRING = 1
ID_INT = 2

MAX_DEPTH = 256


@njit()
def _ws(c):  # type: ignore[no-untyped-def]
    return c == 0x20 or c == 0x09 or c == 0x0A or c == 0x0D


@njit()
def _skip_ws(data, i, end):  # type: ignore[no-untyped-def]
    while i < end and _ws(data[i]):
        i += 1
    return i


@njit()
def _utf8_len(data, i, end):  # type: ignore[no-untyped-def]
    """Length of the valid UTF-8 sequence at i (strict, as Python decodes), or 0."""
    b0 = data[i]
    if b0 < 0x80:
        return 1
    if b0 < 0xC2:
        return 0
    if b0 < 0xE0:
        if i + 1 < end and (data[i + 1] & 0xC0) == 0x80:
            return 2
        return 0
    if b0 < 0xF0:
        if i + 2 >= end:
            return 0
        b1 = data[i + 1]
        if (b1 & 0xC0) != 0x80 or (data[i + 2] & 0xC0) != 0x80:
            return 0
        if b0 == 0xE0 and b1 < 0xA0:
            return 0
        if b0 == 0xED and b1 >= 0xA0:  # surrogates
            return 0
        return 3
    if b0 < 0xF5:
        if i + 3 >= end:
            return 0
        b1 = data[i + 1]
        if (b1 & 0xC0) != 0x80 or (data[i + 2] & 0xC0) != 0x80 or (data[i + 3] & 0xC0) != 0x80:
            return 0
        if b0 == 0xF0 and b1 < 0x90:
            return 0
        if b0 == 0xF4 and b1 >= 0x90:
            return 0
        return 4
    return 0


@njit()
def _hex4(data, i, end):  # type: ignore[no-untyped-def]
    if i + 4 > end:
        return -1
    v = 0
    for k in range(4):
        c = data[i + k]
        if 0x30 <= c <= 0x39:
            d = c - 0x30
        elif 0x41 <= c <= 0x46:
            d = c - 0x41 + 10
        elif 0x61 <= c <= 0x66:
            d = c - 0x61 + 10
        else:
            return -1
        v = v * 16 + d
    return v


@njit()
def _put(out, o, cp):  # type: ignore[no-untyped-def]
    if cp < 0x80:
        out[o] = cp
        return o + 1
    if cp < 0x800:
        out[o] = 0xC0 | (cp >> 6)
        out[o + 1] = 0x80 | (cp & 0x3F)
        return o + 2
    if cp < 0x10000:
        out[o] = 0xE0 | (cp >> 12)
        out[o + 1] = 0x80 | ((cp >> 6) & 0x3F)
        out[o + 2] = 0x80 | (cp & 0x3F)
        return o + 3
    out[o] = 0xF0 | (cp >> 18)
    out[o + 1] = 0x80 | ((cp >> 12) & 0x3F)
    out[o + 2] = 0x80 | ((cp >> 6) & 0x3F)
    out[o + 3] = 0x80 | (cp & 0x3F)
    return o + 4


#: 1 for the bytes that end a run of plain string bytes: '"', '\\', controls, non-ASCII.
_STOP = np.zeros(256, np.uint8)
_STOP[:0x20] = 1
_STOP[0x22] = 1
_STOP[0x5C] = 1
_STOP[0x80:] = 1


_ONES = np.uint64(0x0101010101010101)
_HIGHS = np.uint64(0x8080808080808080)
_SPACES = np.uint64(0x2020202020202020)
_QUOTES = np.uint64(0x2222222222222222)
_SLASHES = np.uint64(0x5C5C5C5C5C5C5C5C)
_B = tuple(np.uint64(8 * k) for k in range(8))
_U8 = np.uint64(8)


@njit()
def _stops(w):  # type: ignore[no-untyped-def]
    """Not 0 exactly when one of the 8 bytes of ``w`` is a ``_STOP`` byte: non-ASCII (its top
    bit), a control (below 0x20), a quote or a backslash (a zero byte of ``w`` xor that byte
    repeated). Without such a byte no subtraction borrows across bytes, so no other byte can
    set a top bit; with one, the lowest such byte sets its own."""
    q = w ^ _QUOTES
    b = w ^ _SLASHES
    return (w | ((w - _SPACES) & ~w) | ((q - _ONES) & ~q) | ((b - _ONES) & ~b)) & _HIGHS


@njit()
def _first_stop(m):  # type: ignore[no-untyped-def]
    """The place (0-7) of the first stop byte of a word whose :func:`_stops` is ``m`` (not 0):
    that of its lowest top bit (``2 ** (8k + 7)``), read off a multiply that moves byte
    ``7 - k`` of ``0x0001020304050607`` (whose value is ``k``) to the top."""
    low = (m & (~m + np.uint64(1))) >> np.uint64(7)
    return (low * np.uint64(0x0001020304050607)) >> np.uint64(56)


@njit()
def _string(data, i, end, out, o):  # type: ignore[no-untyped-def]
    """Parse the string whose opening quote is at i-1; unescape into out[o:]. Returns (index
    after the closing quote, new o), or (-1, o) for SLOW.

    Plain bytes are copied 8 at a time (the offsets unsigned, so that LLVM merges the byte
    loads and stores into one each): a word is stored whole, and when :func:`_stops` finds a
    stop byte in it, only the bytes before the first one count (:func:`_first_stop`). Near
    the end of the line or of ``out`` the bytes go one by one."""
    stop = _STOP
    room = np.uint64(len(out))
    while i < end:
        ui = np.uint64(i)
        uo = np.uint64(o)
        while ui + _U8 <= np.uint64(end) and uo + _U8 <= room:
            w = (
                np.uint64(data[ui])
                | (np.uint64(data[ui + np.uint64(1)]) << _B[1])
                | (np.uint64(data[ui + np.uint64(2)]) << _B[2])
                | (np.uint64(data[ui + np.uint64(3)]) << _B[3])
                | (np.uint64(data[ui + np.uint64(4)]) << _B[4])
                | (np.uint64(data[ui + np.uint64(5)]) << _B[5])
                | (np.uint64(data[ui + np.uint64(6)]) << _B[6])
                | (np.uint64(data[ui + np.uint64(7)]) << _B[7])
            )
            out[uo] = np.uint8(w & np.uint64(0xFF))
            out[uo + np.uint64(1)] = np.uint8((w >> _B[1]) & np.uint64(0xFF))
            out[uo + np.uint64(2)] = np.uint8((w >> _B[2]) & np.uint64(0xFF))
            out[uo + np.uint64(3)] = np.uint8((w >> _B[3]) & np.uint64(0xFF))
            out[uo + np.uint64(4)] = np.uint8((w >> _B[4]) & np.uint64(0xFF))
            out[uo + np.uint64(5)] = np.uint8((w >> _B[5]) & np.uint64(0xFF))
            out[uo + np.uint64(6)] = np.uint8((w >> _B[6]) & np.uint64(0xFF))
            out[uo + np.uint64(7)] = np.uint8(w >> _B[7])
            m = _stops(w)
            if m != 0:
                k = _first_stop(m)
                ui += k
                uo += k
                break
            ui += _U8
            uo += _U8
        i = np.int64(ui)
        o = np.int64(uo)
        while i < end and stop[data[i]] == 0:
            out[o] = data[i]
            i += 1
            o += 1
        if i >= end:
            return -1, o
        c = data[i]
        if c == 0x22:
            return i + 1, o
        if c == 0x5C:
            if i + 1 >= end:
                return -1, o
            e = data[i + 1]
            if e == 0x75:
                cp = _hex4(data, i + 2, end)
                if cp < 0:
                    return -1, o
                i += 6
                if 0xD800 <= cp < 0xDC00:
                    if i + 6 <= end and data[i] == 0x5C and data[i + 1] == 0x75:
                        lo = _hex4(data, i + 2, end)
                        if 0xDC00 <= lo < 0xE000:
                            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00)
                            i += 6
                        else:
                            return -1, o
                    else:
                        return -1, o
                elif 0xDC00 <= cp < 0xE000:
                    return -1, o
                o = _put(out, o, cp)
                continue
            if e == 0x22 or e == 0x5C or e == 0x2F:
                cp = e
            elif e == 0x62:
                cp = 0x08
            elif e == 0x66:
                cp = 0x0C
            elif e == 0x6E:
                cp = 0x0A
            elif e == 0x72:
                cp = 0x0D
            elif e == 0x74:
                cp = 0x09
            else:
                return -1, o
            out[o] = cp
            o += 1
            i += 2
            continue
        if c < 0x20:
            return -1, o
        n = _utf8_len(data, i, end)
        if n == 0:
            return -1, o
        for k in range(n):
            out[o + k] = data[i + k]
        o += n
        i += n
    return -1, o


@njit()
def _number(data, i, end):  # type: ignore[no-untyped-def]
    """Index after the JSON number at i, or -1; second value: whether it is a plain int."""
    start = i
    if i < end and data[i] == 0x2D:
        i += 1
    if i >= end:
        return -1, False
    if data[i] == 0x30:
        i += 1
    elif 0x31 <= data[i] <= 0x39:
        while i < end and 0x30 <= data[i] <= 0x39:
            i += 1
    else:
        return -1, False
    plain = True
    if i < end and data[i] == 0x2E:
        plain = False
        i += 1
        if i >= end or not (0x30 <= data[i] <= 0x39):
            return -1, False
        while i < end and 0x30 <= data[i] <= 0x39:
            i += 1
    if i < end and (data[i] == 0x65 or data[i] == 0x45):
        plain = False
        i += 1
        if i < end and (data[i] == 0x2B or data[i] == 0x2D):
            i += 1
        if i >= end or not (0x30 <= data[i] <= 0x39):
            return -1, False
        while i < end and 0x30 <= data[i] <= 0x39:
            i += 1
    # "-0" is the int 0: its text is not str(int(...)); leave it to the slow path
    if plain and i - start == 2 and data[start] == 0x2D and data[start + 1] == 0x30:
        return -1, False
    return i, plain


@njit()
def _literal(data, i, end, word):  # type: ignore[no-untyped-def]
    n = len(word)
    if i + n > end:
        return -1
    for k in range(n):
        if data[i + k] != word[k]:
            return -1
    return i + n


@njit()
def _skip_value(data, i, end, scratch):  # type: ignore[no-untyped-def]
    """Index after the JSON value at i (validated), or -1 for SLOW."""
    true_ = np.array([0x74, 0x72, 0x75, 0x65], np.uint8)
    false_ = np.array([0x66, 0x61, 0x6C, 0x73, 0x65], np.uint8)
    null_ = np.array([0x6E, 0x75, 0x6C, 0x6C], np.uint8)
    stack = np.empty(MAX_DEPTH, np.uint8)
    depth = 0
    # state: 0 expect value, 1 after value (',' or close), 2 expect key (or '}' right after '{')
    state = 0
    first = False
    while True:
        i = _skip_ws(data, i, end)
        if i >= end:
            return -1
        c = data[i]
        if state == 2:
            if c == 0x7D and first:
                depth -= 1
                i += 1
                state = 1
            elif c == 0x22:
                i, _ = _string(data, i + 1, end, scratch, 0)
                if i < 0:
                    return -1
                i = _skip_ws(data, i, end)
                if i >= end or data[i] != 0x3A:
                    return -1
                i += 1
                state = 0
                first = False
                continue
            else:
                return -1
        elif state == 0:
            if c == 0x7B:
                if depth >= MAX_DEPTH:
                    return -1
                stack[depth] = 0x7D
                depth += 1
                i += 1
                state = 2
                first = True
                continue
            if c == 0x5B:
                if depth >= MAX_DEPTH:
                    return -1
                stack[depth] = 0x5D
                depth += 1
                i += 1
                j = _skip_ws(data, i, end)
                if j < end and data[j] == 0x5D:
                    depth -= 1
                    i = j + 1
                    state = 1
                else:
                    state = 0
                continue
            if c == 0x22:
                i, _ = _string(data, i + 1, end, scratch, 0)
            elif c == 0x74:
                i = _literal(data, i, end, true_)
            elif c == 0x66:
                i = _literal(data, i, end, false_)
            elif c == 0x6E:
                i = _literal(data, i, end, null_)
            elif c == 0x2D or 0x30 <= c <= 0x39:
                i, _ = _number(data, i, end)
            else:
                return -1
            if i < 0:
                return -1
            state = 1
        if state == 1:
            if depth == 0:
                return i
            i = _skip_ws(data, i, end)
            if i >= end:
                return -1
            c = data[i]
            if c == 0x2C:
                i += 1
                state = 2 if stack[depth - 1] == 0x7D else 0
                first = False
            elif c == stack[depth - 1]:
                depth -= 1
                i += 1
                state = 1
                if depth == 0:
                    return i
            else:
                return -1


@njit()
def _same(a, alen, b):  # type: ignore[no-untyped-def]
    if alen != len(b):
        return False
    for k in range(alen):  # noqa: SIM110 (numba compiles no generator expressions)
        if a[k] != b[k]:
            return False
    return True


@njit()
def scan_lines(data, starts, ends, id_key, text_key, texts, ids):  # type: ignore[no-untyped-def]
    """Scan lines ``data[starts[k]:ends[k]]`` (no newline) of one top-level object each.

    ``texts`` and ``ids`` must each hold at least ``len(data)`` bytes. Returns
    ``(status, text_offsets, id_offsets, id_kind)``: per line a status (``OK``, ``SLOW``,
    ``BLANK`` or ``NO_TEXT``), the unescaped text field in ``texts[text_offsets[k] :
    text_offsets[k + 1]]`` and the id field (an unescaped string, or an integer's digits) in
    ``ids[...]``.
    """
    status, toff, ioff, kind, _ = _scan(data, starts, ends, id_key, text_key, texts, ids, False)
    return status, toff, ioff, kind


@njit()
def scan_lines_spans(data, starts, ends, id_key, text_key, texts, ids):  # type: ignore[no-untyped-def]
    """:func:`scan_lines`, plus ``text_spans``: for each ``OK`` line, where its text value's
    JSON string lies in ``data`` (``[k, 0]``: its opening quote, ``[k, 1]``: just after its
    closing quote); ``-1`` for every other line. The value is the line's only top-level text
    key (a second one makes the line ``SLOW``), whatever escapes spell the key."""
    return _scan(data, starts, ends, id_key, text_key, texts, ids, True)


@njit()
def _scan(data, starts, ends, id_key, text_key, texts, ids, want_spans):  # type: ignore[no-untyped-def]
    n = len(starts)
    spans = np.full((n if want_spans else 0, 2), -1, np.int64)
    status = np.zeros(n, np.uint8)
    kind = np.zeros(n, np.uint8)
    toff = np.zeros(n + 1, np.int64)
    ioff = np.zeros(n + 1, np.int64)
    to = 0
    io = 0
    keybuf = np.empty(max(64, len(id_key), len(text_key)) * 4 + 8, np.uint8)
    for k in range(n):
        i = starts[k]
        end = ends[k]
        toff[k + 1] = to
        ioff[k + 1] = io
        j = i
        blank = True
        while j < end:
            c = data[j]
            if not (c == 0x20 or (0x09 <= c <= 0x0D)):
                blank = False
                break
            j += 1
        if blank:
            status[k] = BLANK
            continue
        t0 = to
        i0 = io
        got_text = False
        id_kind = ID_MISSING
        bad = False
        i = _skip_ws(data, i, end)
        if i >= end or data[i] != 0x7B:
            bad = True
        else:
            i = _skip_ws(data, i + 1, end)
            if i < end and data[i] == 0x7D:
                i += 1
            else:
                while True:
                    if i >= end or data[i] != 0x22:
                        bad = True
                        break
                    # keys longer than the buffer cannot be a target key: skip them
                    if _key_fits(data, i + 1, end, len(keybuf)):
                        i, klen = _string(data, i + 1, end, keybuf, 0)
                    else:
                        i, klen = _string(data, i + 1, end, texts, to)
                        klen = -1
                    if i < 0:
                        bad = True
                        break
                    i = _skip_ws(data, i, end)
                    if i >= end or data[i] != 0x3A:
                        bad = True
                        break
                    i = _skip_ws(data, i + 1, end)
                    if i >= end:
                        bad = True
                        break
                    if klen >= 0 and _same(keybuf, klen, text_key):
                        if got_text or data[i] != 0x22:
                            bad = True  # a second text key, or a text that is not a string
                            break
                        q0 = i
                        i, to = _string(data, i + 1, end, texts, t0)
                        if i < 0:
                            bad = True
                            break
                        got_text = True
                        if want_spans:
                            spans[k, 0] = q0
                            spans[k, 1] = i
                    elif klen >= 0 and _same(keybuf, klen, id_key):
                        if id_kind != ID_MISSING:
                            bad = True
                            break
                        if data[i] == 0x22:
                            i, io = _string(data, i + 1, end, ids, i0)
                            id_kind = ID_STRING
                        else:
                            s = i
                            i, plain = _number(data, i, end)
                            if i < 0 or not plain:
                                bad = True
                                break
                            for q in range(s, i):
                                ids[io] = data[q]
                                io += 1
                            id_kind = ID_INT
                        if i < 0:
                            bad = True
                            break
                    else:
                        i = _skip_value(data, i, end, ids[io:])
                        if i < 0:
                            bad = True
                            break
                    i = _skip_ws(data, i, end)
                    if i >= end:
                        bad = True
                        break
                    if data[i] == 0x2C:
                        i = _skip_ws(data, i + 1, end)
                        continue
                    if data[i] == 0x7D:
                        i += 1
                        break
                    bad = True
                    break
            if not bad and _skip_ws(data, i, end) != end:
                bad = True
        if bad or not got_text:
            status[k] = SLOW if bad else NO_TEXT
            to = t0
            io = i0
            if want_spans:
                spans[k, 0] = -1
                spans[k, 1] = -1
        else:
            kind[k] = id_kind
        toff[k + 1] = to
        ioff[k + 1] = io
    return status, toff, ioff, kind, spans


@njit()
def _key_fits(data, i, end, cap):  # type: ignore[no-untyped-def]
    """Whether the string starting at i unescapes within ``cap`` bytes (a bound)."""
    n = 0
    while i < end and data[i] != 0x22:
        if data[i] == 0x5C:
            i += 1
        i += 1
        n += 4
        if n > cap - 8:
            return False
    return True


@njit()
def line_bounds(data, limit):  # type: ignore[no-untyped-def]
    """Starts and ends (newline excluded) of the complete lines of ``data[:limit]``."""
    count = 0
    for i in range(limit):
        if data[i] == 0x0A:
            count += 1
    starts = np.empty(count, np.int64)
    ends = np.empty(count, np.int64)
    s = 0
    k = 0
    for i in range(limit):
        if data[i] == 0x0A:
            starts[k] = s
            ends[k] = i
            k += 1
            s = i + 1
    return starts, ends
