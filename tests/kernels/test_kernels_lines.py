"""The lines kernels: numba and numpy reference give the same spans, kept text and counts."""

from __future__ import annotations

import random

import numpy as np
import numpy.typing as npt
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import native_pair
from neardup._kernels import lines as reference
from neardup.corpus._lines import UnitCounts
from neardup.packed import pack

TEXT = st.text(alphabet=st.sampled_from(["a", " ", "\n", "\t", "é", "\r", "x"]), max_size=30)


fast = native_pair("lines")[0]  # the compiled twin


@settings(max_examples=150, deadline=None)
@given(st.lists(TEXT, max_size=8))
def test_fast_equals_reference(texts: list[str]) -> None:
    p = pack(texts)
    want = reference.line_spans(p.buf, p.offsets)
    for g, w in zip(fast.line_spans(p.buf, p.offsets), want, strict=True):
        assert g.tolist() == w.tolist()
    # every line is its text's split at \n, and the trimmed span is its strip()
    raw = p.buf.tobytes()
    lines = [raw[a:b] for a, b in zip(want[0], want[1], strict=True)]
    assert lines == [x.encode() for t in texts for x in t.split("\n")]
    trimmed = [raw[a:b] for a, b in zip(want[2], want[3], strict=True)]
    assert trimmed == [x.encode().strip(b" \t\n\x0b\x0c\r") for t in texts for x in t.split("\n")]


@settings(max_examples=150, deadline=None)
@given(st.lists(TEXT, max_size=8), st.randoms(use_true_random=False))
def test_kept_text_fast_equals_reference(texts: list[str], rnd: random.Random) -> None:
    p = pack(texts)
    starts, ends, _, _, doc = reference.line_spans(p.buf, p.offsets)
    keep = np.array([rnd.random() < 0.6 for _ in starts], dtype=bool)
    want, want_off = reference.kept_text(p.buf, p.offsets, starts, ends, doc, keep)
    got, got_off = fast.kept_text(p.buf, p.offsets, starts, ends, doc, keep)
    assert got.tobytes() == want.tobytes() and got_off.tolist() == want_off.tolist()
    # each document is "\n".join of its kept lines
    raw, lines = p.buf.tobytes(), iter(zip(starts, ends, keep, strict=True))
    for i, t in enumerate(texts):
        kept = [raw[a:b] for a, b, k in (next(lines) for _ in t.split("\n")) if k]
        assert want[want_off[i] : want_off[i + 1]].tobytes() == b"\n".join(kept)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.lists(st.integers(0, 40), max_size=30).map(lambda xs: np.array(xs, np.uint64)),
        max_size=6,
    )
)
def test_unit_counts_table_equals_sorted(batches: list[npt.NDArray[np.uint64]]) -> None:
    """The engine's table, numba's hash table and the numpy sorted arrays count the same
    (growth included: hashes spread over both halves of 64 bits so they collide in the low
    bits)."""
    table = UnitCounts()
    numba_table = fast.UnitTable()
    ref = reference.UnitTable()
    first_doc = 0
    truth: dict[int, set[int]] = {}
    for raw in batches:
        hashes = (raw << np.uint64(58)) | raw  # equal low bits for many distinct hashes
        docs = first_doc + np.sort(np.arange(len(hashes)) % 3)
        table.add(hashes, docs)
        numba_table.add(hashes, docs)
        ref.add(hashes, docs)
        for h, d in zip(hashes.tolist(), docs.tolist(), strict=True):
            truth.setdefault(h, set()).add(d)
        first_doc += 3
    probe = np.array([*truth, 12345], np.uint64)
    want = [len(truth.get(h, ())) for h in probe.tolist()]
    assert table.lookup(probe).tolist() == ref.lookup(probe).tolist() == want
    assert numba_table.lookup(probe).tolist() == want
    assert len(table) == len(ref) == len(numba_table) == len(truth)
    assert table.at_least(2) == ref.at_least(2) == sum(len(v) >= 2 for v in truth.values())
    assert numba_table.at_least(2) == table.at_least(2)


def test_unit_counts_grow_past_the_first_table() -> None:
    table = fast.UnitTable()
    ref = reference.UnitTable()
    rng = np.random.default_rng(5)
    for b in range(4):
        hashes = rng.integers(0, 50_000, 30_000).astype(np.uint64)
        docs = b * 100 + np.sort(rng.integers(0, 100, 30_000))
        table.add(hashes, docs)
        ref.add(hashes, docs)
    probe = np.arange(0, 60_000, dtype=np.uint64)
    assert table.lookup(probe).tolist() == ref.lookup(probe).tolist()
    assert len(table) == len(ref) and table.at_least(5) == ref.at_least(5)


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=30)
        | st.sampled_from(['"\\\x00\x1f\x7f\b\f\n\r\t/', "\u2028\U0001f600é", ""]),
        max_size=8,
    ),
    st.randoms(use_true_random=False),
)
def test_json_strings_are_json_dumps(texts: list[str], rnd: random.Random) -> None:
    """Both twins write each chosen text as ``json.dumps(text, ensure_ascii=False)``."""
    import json

    p = pack(texts)
    docs = np.array([rnd.randrange(len(texts)) for _ in range(len(texts))], np.int64)
    want = [json.dumps(texts[d], ensure_ascii=False).encode() for d in docs.tolist()]
    for twin in (fast, reference):
        out, off = twin.json_strings(p.buf, p.offsets, docs)
        o = off.tolist()
        assert [out[o[j] : o[j + 1]].tobytes() for j in range(len(docs))] == want


def _units(text: str, paragraph: bool) -> list[int]:
    """Each line's unit number within ``text`` (-1 for a blank line), by the module's rules."""
    out, n, prev = [], 0, False
    for line in text.split("\n"):
        solid = bool(line.encode().strip(b" \t\n\x0b\x0c\r"))
        if solid and (not paragraph or not prev):
            n += 1
        out.append(n - 1 if solid else -1)
        prev = solid
    return out


@settings(max_examples=150, deadline=None)
@given(
    st.lists(TEXT | st.sampled_from(['a\n"\\\x01\x7f\nb', "\n\n", "é\u2028x\n x "]), max_size=8),
    st.booleans(),
    st.randoms(use_true_random=False),
)
def test_kept_json_is_the_kept_text_as_json(
    texts: list[str], paragraph: bool, rnd: random.Random
) -> None:
    """Both twins give each changed document's kept lines joined by ``\\n``, as
    ``json.dumps(text, ensure_ascii=False)``, and its UTF-8 length."""
    import json

    p = pack(texts)
    units = [_units(t, paragraph) for t in texts]
    counts = [max(u, default=-1) + 1 for u in units]
    unit_off = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    drop = np.array([rnd.random() < 0.4 for _ in range(int(unit_off[-1]))], dtype=bool)
    want_changed, want_out, want_len = [], [], []
    for d, t in enumerate(texts):
        flags = drop[unit_off[d] : unit_off[d + 1]]
        if not flags.any():
            continue
        kept = "\n".join(
            line for line, u in zip(t.split("\n"), units[d], strict=True) if u < 0 or not flags[u]
        )
        want_changed.append(d)
        want_out.append(json.dumps(kept, ensure_ascii=False).encode())
        want_len.append(len(kept.encode()))
    for twin in (fast, reference):
        changed, out, off, kept_len, bad = twin.kept_json(
            p.buf, p.offsets, drop, unit_off, paragraph
        )
        o = off.tolist()
        assert bad == -1 and changed.tolist() == want_changed
        assert [out[o[j] : o[j + 1]].tobytes() for j in range(len(changed))] == want_out
        assert kept_len.tolist() == want_len


def test_kept_json_names_a_document_whose_units_do_not_match() -> None:
    """A changed document with more or fewer units than its flags: both twins name it."""
    p = pack(["a\nb", "c\nd\ne", "f"])
    drop = np.array([False, False, True, True, True, False], dtype=bool)
    for unit_off, want in (
        ([0, 2, 4, 6], 1),
        ([0, 2, 6, 6], 1),
        ([0, 1, 5, 6], 1),
        ([0, 3, 5, 6], 0),
    ):
        for twin in (fast, reference):
            got = twin.kept_json(p.buf, p.offsets, drop, np.array(unit_off, np.int64), False)
            assert got[4] == want, (twin.__name__, unit_off)
