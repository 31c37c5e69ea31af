"""The jsonl family: the native scanner against its twin and against ``json.loads``.

The twin takes no line (every non-blank line goes to ``json.loads``), so the bits to agree
on are the line bounds, the blank lines, the errors and the output types; the native scanner's
own lines are checked against ``json.loads``, the real reference: a line it takes (``OK``)
holds exactly the text and id ``json.loads`` gives, and one it calls ``NO_TEXT`` is an object
without the text field.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from twins import same

from conftest import native_pair
from neardup.io import read_jsonl
from neardup.packed import read_jsonl_packed

OK, SLOW, BLANK, NO_TEXT = 0, 1, 2, 3

TEXT_CHARS = st.one_of(
    st.sampled_from('"\\/\b\f\n\r\t\x00\x1f\x7f é€\U0001f600\u2028\ufeff\ud800\udc00'),
    st.characters(),  # surrogates included: json writes them as escapes, or raw
)
PLAIN_CHARS = st.sampled_from([*"abcdefgh .-" * 6, *'"\\\n\té'])
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**20), 10**20),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(TEXT_CHARS, max_size=12),
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)
KEYS = ["a", "meta", "tëxt", "id", "text", "", "x" * 300, "te", "texts", "ID"]


@st.composite
def lines(draw: st.DrawFn) -> bytes:
    """A JSON line as writers make them, sometimes damaged."""
    rec: dict[str, object] = {}
    for key in draw(st.lists(st.sampled_from(KEYS), max_size=4)):
        rec[key] = draw(values)
    if draw(st.booleans()):
        # or long runs of plain ASCII among escapes (the 32-byte loop, as in man pages)
        rec["text"] = draw(st.text(TEXT_CHARS, max_size=60) | st.text(PLAIN_CHARS, max_size=300))
    if draw(st.booleans()):
        rec["id"] = draw(st.text(TEXT_CHARS, max_size=8) | st.integers(-(10**25), 10**25))
    line = json.dumps(rec, ensure_ascii=draw(st.booleans())).encode("utf-8", "surrogatepass")
    how = draw(st.sampled_from(["as is", "tight", "spaced", "escaped key", "damaged", "deep"]))
    if how == "tight":
        line = line.replace(b", ", b",").replace(b": ", b":")
    elif how == "spaced":
        line = b" \t" + line.replace(b": ", b" :\r ").replace(b",", b" ,") + b" \r"
    elif how == "escaped key":
        line = line.replace(b'"text"', b'"t\\u0065xt"', 1)
    elif how == "deep":
        depth = draw(st.sampled_from([1, 255, 256, 300]))
        line = b'{"d": ' + b"[" * depth + b"]" * depth + b', "text": "deep"}'
    elif how == "damaged" and line:
        rng = random.Random(draw(st.integers(0, 2**32)))
        k = rng.randrange(len(line) + 1)
        piece = rng.choice([b"", b"\\", b'"', b"\xff", b"\xc3", b"\xed\xa0\x80", b"\\u12", b"\n"])
        line = line[:k] + piece + line[k + rng.randrange(2) :]
    return line


LINES = st.lists(
    lines()
    | st.sampled_from(
        [
            b"",
            b"  \x0b\x0c",
            b"\x0c{}",
            b"{}",
            b"[]",
            b"{bad",
            b'{"text": 5}',
            b'{"text": "x", "text": "y"}',
            b'{"id": -0, "text": "x"}',
            b'{"id": 1e3, "text": "x"}',
            b'{"id": 00, "text": "x"}',
            b'\xef\xbb\xbf{"text": "bom"}',
            b'{"text": "a\\ud83d\\ude00b\\ud800"}',
            b'{"text": "\\ud83d\\u0041"}',
            b'{"text": "a"}  {"text": "b"}',
        ]
    ),
    max_size=8,
)


def chunk(found: list[bytes]) -> tuple[bytes, np.ndarray, np.ndarray]:
    data = b"\n".join(found) + b"\n"
    ends = np.flatnonzero(np.frombuffer(data, np.uint8) == 10).astype(np.int64)
    starts = np.concatenate(([0], ends[:-1] + 1)).astype(np.int64)
    return data, starts, ends


def scan(module: object, data: bytes, starts: np.ndarray, ends: np.ndarray, keys: tuple) -> tuple:
    """``scan_lines_spans`` and ``scan_lines`` of ``module``: their arrays, and the fields."""
    buf = np.frombuffer(data, np.uint8)
    id_key, text_key = (np.frombuffer(k.encode(), np.uint8) for k in keys)
    size = max(len(data), int(np.sum(ends - starts)))
    texts, ids = np.empty(size, np.uint8), np.empty(size, np.uint8)
    found = module.scan_lines_spans(buf, starts, ends, id_key, text_key, texts, ids)  # type: ignore[attr-defined]
    texts2, ids2 = np.empty(size, np.uint8), np.empty(size, np.uint8)
    plain = module.scan_lines(buf, starts, ends, id_key, text_key, texts2, ids2)  # type: ignore[attr-defined]
    for a, b in zip(plain, found, strict=False):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)
    toff, ioff = found[1], found[2]
    assert texts2[: toff[-1]].tobytes() == texts[: toff[-1]].tobytes()
    return found, texts[: toff[-1]].tobytes(), ids[: ioff[-1]].tobytes()


def check_against_json(data: bytes, starts: np.ndarray, ends: np.ndarray, keys: tuple) -> tuple:
    native, reference = native_pair("jsonl")
    got, texts, ids = scan(native, data, starts, ends, keys)
    want, _, _ = scan(reference, data, starts, ends, keys)
    for g, w in zip(got, want, strict=True):  # the same types and shapes
        assert (g.dtype, g.shape) == (w.dtype, w.shape)
    status, toff, ioff, kind, spans = got
    assert ((status == BLANK) == (want[0] == BLANK)).all()
    id_key, text_key = keys
    for k, (a, b) in enumerate(zip(starts.tolist(), ends.tolist(), strict=True)):
        line = data[a:b]
        if status[k] not in (OK, NO_TEXT):
            assert status[k] in (SLOW, BLANK)
            assert (toff[k], ioff[k], kind[k]) == (toff[k + 1], ioff[k + 1], 0)
            assert spans[k].tolist() == [-1, -1]
            continue
        record = json.loads(line)  # the scanner took it: json must read it
        assert isinstance(record, dict)
        if status[k] == NO_TEXT:
            assert text_key not in record
            assert (toff[k], ioff[k]) == (toff[k + 1], ioff[k + 1])
            continue
        text = texts[toff[k] : toff[k + 1]].decode("utf-8")
        assert text == record[text_key], line
        assert json.loads(data[spans[k, 0] : spans[k, 1]]) == text
        digits = ids[ioff[k] : ioff[k + 1]].decode("utf-8")
        if kind[k] == 0:
            assert id_key not in record and digits == ""
        elif kind[k] == 1:
            assert record[id_key] == digits
        else:
            assert kind[k] == 2
            assert type(record[id_key]) is int and str(record[id_key]) == digits
    return got, texts, ids


@settings(max_examples=600)
@given(LINES, st.sampled_from([("id", "text"), ("ID", "tëxt"), ("text", "id"), ("a", "a")]))
def test_scan_lines_read_as_json_loads_reads(found: list[bytes], keys: tuple) -> None:
    data, starts, ends = chunk(found)
    check_against_json(data, starts, ends, keys)


def test_plain_records_are_taken() -> None:
    """The native scanner does take the lines writers write (not all SLOW, as the twin)."""
    found = [
        json.dumps({"id": i, "text": 'é\U0001f600 "q" \\ ' * i, "m": [1, {"x": None}]}).encode()
        for i in range(20)
    ]
    found += [json.dumps({"text": "x" * 40, "id": "s"}, ensure_ascii=False).encode()]
    # every two-byte escape, at every place of a 16-byte block, runs of them included
    found += [
        b'{"id": %d, "text": "%s%s%s"}' % (k, b"a" * k, esc * (1 + k % 3), b"b" * 20)
        for k in range(17)
        for esc in (b"\\\\", b'\\"', b"\\/", b"\\b", b"\\f", b"\\n", b"\\r", b"\\t")
    ]
    data, starts, ends = chunk(found)
    (status, *_), _, _ = check_against_json(data, starts, ends, ("id", "text"))
    assert status.tolist() == [OK] * len(found)


@settings(max_examples=150)
@given(st.lists(lines(), max_size=12), st.integers(0, 2**32))
def test_lines_in_any_order_and_overlapping(found: list[bytes], seed: int) -> None:
    """Lines are ranges: they may come in any order, repeat or overlap (buffers as long as
    the lines together)."""
    data, starts, ends = chunk(found)
    order = np.random.default_rng(seed).permutation(len(starts))
    starts, ends = np.concatenate((starts[order], starts)), np.concatenate((ends[order], ends))
    native, reference = native_pair("jsonl")
    buf = np.frombuffer(data, np.uint8)
    keys = (np.frombuffer(b"id", np.uint8), np.frombuffer(b"text", np.uint8))
    need = int(np.sum(ends - starts))
    for module in (native, reference):
        texts, ids = np.empty(need, np.uint8), np.empty(need, np.uint8)
        module.scan_lines(buf, starts, ends, *keys, texts, ids)
    check_against_json(data, starts, ends, ("id", "text"))


@settings(max_examples=200)
@given(st.binary(max_size=80) | LINES.map(lambda x: b"\n".join(x)), st.integers(-100, 200))
def test_line_bounds(data: bytes, limit: int) -> None:
    native, reference = native_pair("jsonl")
    buf = np.frombuffer(data, np.uint8)
    same(lambda: native.line_bounds(buf, limit), lambda: reference.line_bounds(buf, limit))


@settings(max_examples=150)
@given(
    st.binary(max_size=30),
    st.lists(st.tuples(st.integers(-2, 35), st.integers(-2, 35)), max_size=5),
    st.integers(0, 40),
    st.integers(0, 40),
    st.booleans(),
)
def test_scan_errors(
    data: bytes, lines: list[tuple[int, int]], n_texts: int, n_ids: int, spans: bool
) -> None:
    native, reference = native_pair("jsonl")
    buf = np.frombuffer(data, np.uint8)
    starts = np.array([a for a, _ in lines], np.int64)
    ends = np.array([b for _, b in lines[: len(lines) - (n_texts % 7 == 0)]], np.int64)
    keys = (np.frombuffer(b"id", np.uint8), np.frombuffer(b"text", np.uint8))
    name = "scan_lines_spans" if spans else "scan_lines"

    def run(module: object) -> object:
        out = (np.empty(n_texts, np.uint8), np.empty(n_ids, np.uint8))
        return getattr(module, name)(buf, starts, ends, *keys, *out)

    try:
        want = run(reference)
    except ValueError as exc:
        with pytest.raises(ValueError) as got:
            run(native)
        assert str(got.value) == str(exc)
        return
    got = run(native)
    for g, w in zip(got, want, strict=True):  # type: ignore[call-overload]
        assert (g.dtype, g.shape) == (w.dtype, w.shape)


def test_one_field_for_id_and_text(tmp_path: Path) -> None:
    """``--id-field`` naming the text field: the id is the text, as read_jsonl reads it."""
    native_pair("jsonl")
    path = tmp_path / "x.jsonl"
    path.write_bytes(b'{"text": "a\\u00e9"}\n{"text": "b", "id": 3}\n')
    got = [(d.id, d.text) for b in read_jsonl_packed(path, id_field="text") for d in b]
    with path.open("rb") as fh:
        want = [(d.id, d.text) for d in read_jsonl(fh, name="x", id_field="text")]
    assert got == want == [("a\u00e9", "a\u00e9"), ("b", "b")]


ID_BYTES = st.one_of(
    st.text(TEXT_CHARS, max_size=6).map(lambda t: t.encode("utf-8", "surrogatepass")),
    st.binary(max_size=4),  # not UTF-8 at times: both raise UnicodeDecodeError
)


@settings(max_examples=200)
@given(
    st.lists(st.tuples(ID_BYTES, st.integers(0, 2)), max_size=8),
    st.lists(st.integers(-2, 9), max_size=10),
    st.integers(0, 10**6),
    st.sampled_from(["ok", "short offsets", "falling offsets", "short buffer"]),
)
def test_row_ids(
    found: list[tuple[bytes, int]], rows: list[int], first_line: int, damage: str
) -> None:
    native, reference = native_pair("jsonl")
    buf = np.frombuffer(b"".join(b for b, _ in found), np.uint8)
    off = np.zeros(len(found) + 1, np.int64)
    np.cumsum([len(b) for b, _ in found], out=off[1:])
    kind = np.array([k for _, k in found], np.uint8)
    if damage == "short offsets":
        off = off[:-1]
    elif damage == "falling offsets" and len(off) > 1:
        off[0] = off[-1] + 1
    elif damage == "short buffer" and len(buf):
        buf = buf[:-1]
    r = np.array(rows, np.int64)
    try:
        want = reference.row_ids(buf, off, kind, r, first_line)
    except (ValueError, UnicodeDecodeError) as exc:
        with pytest.raises(type(exc)) as got:
            native.row_ids(buf, off, kind, r, first_line)
        assert str(got.value) == str(exc)
        return
    ids = native.row_ids(buf, off, kind, r, first_line)
    assert type(ids) is list and all(type(x) is str for x in ids)
    assert ids == want
