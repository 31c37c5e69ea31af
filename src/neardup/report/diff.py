"""Side-by-side diffs of two texts for the HTML report, with the shared shingles marked.

The diff is :mod:`difflib`'s: lines are aligned, runs of unchanged lines are folded, and
inside a changed line the changed words are struck out (``<del>``) on the left and
highlighted (``<ins>``) on the right. On top of that, every word that belongs to a word
``k``-shingle (``k`` consecutive words, case-folded) found in *both* texts is wrapped in
``<mark class="sh">``: that is "why these matched", and it shows shared passages even where
the diff cannot align them (moved paragraphs, a shared boilerplate block). Every piece of
text is HTML-escaped.
"""

from __future__ import annotations

import bisect
import difflib
import html
import re
from dataclasses import dataclass
from typing import TypeAlias

import numpy as np

__all__ = ["SharedShingles", "escape", "render_diff", "shared_shingles"]

_CONTEXT_LINES = 3
_WORD_RE = re.compile(r"\s+|\S+\s*")
_SHINGLE_WORD = re.compile(r"\w+")
#: Words per shingle for the "why these matched" marks.
SHINGLE_WORDS = 3


def escape(value: object) -> str:
    """Escape ``value`` for HTML text or attributes (lone surrogates become ``?``)."""
    text = str(value).encode("utf-8", "replace").decode("utf-8")
    return html.escape(text, quote=True)


@dataclass(frozen=True, slots=True)
class SharedShingles:
    """Which parts of two texts lie in a shingle both have, and how many are shared.

    Attributes:
        marks_a: Sorted, disjoint ``(start, end)`` character ranges of ``a`` inside shared
            shingles (a run of consecutive shared words is one range).
        marks_b: The same for ``b``.
        shared: Distinct shingles in both texts.
        union: Distinct shingles in either text.
        k: Words per shingle.
    """

    marks_a: list[tuple[int, int]]
    marks_b: list[tuple[int, int]]
    shared: int
    union: int
    k: int

    @property
    def jaccard(self) -> float:
        """Jaccard similarity of the two shingle sets (1.0 when both are empty)."""
        return self.shared / self.union if self.union else 1.0


def _shingles(text: str, k: int) -> tuple[list[tuple[int, int]], list[tuple[str, ...]]]:
    spans = [m.span() for m in _SHINGLE_WORD.finditer(text)]
    folded = [text[s:e].casefold() for s, e in spans]
    n = max(len(folded) - k + 1, 1 if folded else 0)
    return spans, list(zip(*(folded[i : i + n] for i in range(min(k, len(folded)))), strict=False))


def _marks(
    spans: list[tuple[int, int]], grams: list[tuple[str, ...]], common: set[tuple[str, ...]], k: int
) -> list[tuple[int, int]]:
    """Character ranges of the runs of words that lie in a shared shingle."""
    if not grams or not common:
        return []
    starts = np.fromiter((g in common for g in grams), dtype=np.int8, count=len(grams))
    width = min(k, len(spans))
    covered = np.convolve(starts, np.ones(width, dtype=np.int8))[: len(spans)] > 0
    edges = np.flatnonzero(np.diff(np.concatenate(([0], covered.view(np.int8), [0]))))
    return [(spans[i][0], spans[j - 1][1]) for i, j in zip(edges[::2], edges[1::2], strict=True)]


def shared_shingles(a: str, b: str, *, k: int = SHINGLE_WORDS) -> SharedShingles:
    """Mark the word ``k``-shingles that ``a`` and ``b`` share.

    Examples:
        >>> s = shared_shingles("the quick brown fox", "The quick brown dog")
        >>> s.shared, s.union, s.marks_a, s.marks_b
        (1, 3, [(0, 15)], [(0, 15)])
    """
    spans_a, grams_a = _shingles(a, k)
    spans_b, grams_b = _shingles(b, k)
    set_a, set_b = set(grams_a), set(grams_b)
    common = set_a & set_b
    return SharedShingles(
        _marks(spans_a, grams_a, common, k),
        _marks(spans_b, grams_b, common, k),
        len(common),
        len(set_a | set_b),
        k,
    )


def _marked(text: str, start: int, marks: list[tuple[int, int]]) -> str:
    """``text`` (which starts at ``start`` in the document) escaped, marked ranges wrapped."""
    end = start + len(text)
    out: list[str] = []
    pos = start
    k = bisect.bisect_right(marks, (start, end)) - 1
    k = max(k, 0)
    while k < len(marks) and marks[k][0] < end:
        s, e = max(marks[k][0], start), min(marks[k][1], end)
        k += 1
        if e <= s:
            continue
        if s > pos:
            out.append(escape(text[pos - start : s - start]))
        out.append(f'<mark class="sh">{escape(text[s - start : e - start])}</mark>')
        pos = e
    if pos < end:
        out.append(escape(text[pos - start :]))
    return "".join(out)


def _word_diff(a: str, sa: int, b: str, sb: int, sh: SharedShingles) -> tuple[str, str]:
    """Both sides of a changed line with changed words in ``<del>``/``<ins>``."""
    ta, tb = _WORD_RE.findall(a), _WORD_RE.findall(b)
    oa = [sa]
    for t in ta:
        oa.append(oa[-1] + len(t))
    ob = [sb]
    for t in tb:
        ob.append(ob[-1] + len(t))
    out_a: list[str] = []
    out_b: list[str] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, ta, tb, autojunk=False).get_opcodes():
        pa = _marked("".join(ta[i1:i2]), oa[i1], sh.marks_a)
        pb = _marked("".join(tb[j1:j2]), ob[j1], sh.marks_b)
        out_a.append(pa if tag == "equal" or not pa else f"<del>{pa}</del>")
        out_b.append(pb if tag == "equal" or not pb else f"<ins>{pb}</ins>")
    return "".join(out_a), "".join(out_b)


_Row: TypeAlias = tuple[str, int | None, int | None]


def _lines(text: str) -> tuple[list[str], list[int]]:
    """Lines without their ends, and the offset where each starts."""
    lines: list[str] = []
    starts: list[int] = []
    pos = 0
    for piece in text.splitlines(keepends=True):
        body = piece.splitlines()[0] if piece.splitlines() else ""
        lines.append(body)
        starts.append(pos)
        pos += len(piece)
    return lines, starts


def _diff_rows(a: list[str], b: list[str]) -> list[_Row]:
    """Rows ``(kind, index_a, index_b)``; ``skip`` rows fold unchanged lines (their count in
    ``index_a``)."""
    rows: list[_Row] = []
    done = 0
    sm = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for group in sm.get_grouped_opcodes(_CONTEXT_LINES):
        if group[0][1] > done:
            rows.append(("skip", group[0][1] - done, None))
        for tag, i1, i2, j1, j2 in group:
            for k in range(max(i2 - i1, j2 - j1)):
                i, j = i1 + k, j1 + k
                la, lb = (i if i < i2 else None), (j if j < j2 else None)
                kind = (
                    "eq"
                    if tag == "equal"
                    else "chg"
                    if la is not None and lb is not None
                    else "del"
                    if la is not None
                    else "ins"
                )
                rows.append((kind, la, lb))
        done = group[-1][2]
    if len(a) > done:
        rows.append(("skip", len(a) - done, None))
    return rows


def render_diff(
    a: str, b: str, ids: tuple[str, str], *, max_lines: int = 200, k: int = SHINGLE_WORDS
) -> str:
    """A side-by-side diff table of two texts with their shared shingles marked.

    Args:
        a: The left text.
        b: The right text.
        ids: Column headings (the two document ids).
        max_lines: Rows shown; the rest are counted below the table.
        k: Words per shingle for the marks.

    Returns:
        An HTML fragment: a sentence with the shared-shingle count, then the table.

    Examples:
        >>> frag = render_diff("one two three four", "one two three five", ("a", "b"))
        >>> '<mark class="sh">one two three</mark>' in frag, "<ins>" in frag
        (True, True)
    """
    sh = shared_shingles(a, b, k=k)
    la, sa = _lines(a)
    lb, sb = _lines(b)
    rows = _diff_rows(la, lb)
    out = [
        f'<p class="why"><mark class="sh">Marked</mark>: words in a {k}-word shingle that both '
        f"texts contain ({sh.shared:,} of {sh.union:,} distinct shingles shared, Jaccard "
        f"{sh.jaccard:.3f}).</p>",
        '<div class="scroll"><table class="diff"><colgroup><col class="ln"><col class="txt">'
        f'<col class="ln"><col class="txt"></colgroup><thead><tr><th colspan="2" scope="col">'
        f'{escape(ids[0])}</th><th colspan="2" scope="col">{escape(ids[1])}</th></tr></thead>'
        "<tbody>",
    ]
    for kind, ia, ib in rows[:max_lines]:
        if kind == "skip":
            out.append(f'<tr class="skip"><td colspan="4">{ia} unchanged lines</td></tr>')
            continue
        if kind == "chg":
            assert ia is not None and ib is not None
            ha, hb = _word_diff(la[ia], sa[ia], lb[ib], sb[ib], sh)
        else:
            ha = _marked(la[ia], sa[ia], sh.marks_a) if ia is not None else ""
            hb = _marked(lb[ib], sb[ib], sh.marks_b) if ib is not None else ""
        na = "" if ia is None else ia + 1
        nb = "" if ib is None else ib + 1
        out.append(
            f'<tr class="{kind}"><td class="ln">{na}</td><td class="a">{ha}</td>'
            f'<td class="ln">{nb}</td><td class="b">{hb}</td></tr>'
        )
    out.append("</tbody></table></div>")
    if len(rows) > max_lines:
        out.append(f'<p class="more">+{len(rows) - max_lines:,} more diff lines</p>')
    return "".join(out)
