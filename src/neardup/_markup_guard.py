"""Guards of the markup parsers: wall-clock deadlines and the rewrites that keep parsing linear.

HTML5 tree building is quadratic in the nesting depth (lexbor needs minutes for 100k nested
``<div>``) and in the number of attributes of one tag (each new attribute is checked against
the ones already read). :func:`defuse_html` removes the tags nested deeper than a cap (their
text is kept, as browsers do past depth 512) and the attributes past a cap, after a linear
scan; documents under both caps are returned unchanged.

markdown-it-py's pipe tables pad every row to the header's width, so a header of 100k columns
over 1,000 one-cell rows makes 100M tokens; and each ``[`` makes it scan to the end of the
paragraph for a ``]``. :func:`guard_markdown` limits the cells a table may pad (the rows past
the limit are parsed as paragraphs, so their text is kept), refuses at once a ``[`` that no
``]`` follows, and adds a rule that checks the deadline while the parser runs (it is pure Python, so
the check really interrupts it).
"""

from __future__ import annotations

import logging
import re
import time
from typing import Any

from neardup.errors import ConfigError, TimeoutError

__all__ = ["Deadline", "defuse_html", "guard_markdown"]

log = logging.getLogger(__name__)

# Elements that never have content, and elements whose end tag may be omitted (the parser
# closes them itself, so they do not deepen the tree): neither counts towards the depth.
_FLAT_TAGS = frozenset(
    (
        b"area base br col embed hr img input link meta source track wbr p li dt dd tr td th "
        b"option optgroup rb rt rp thead tbody tfoot colgroup caption html head body param "
        b"keygen basefont bgsound frame"
    ).split()
)
# Foreign content (SVG, MathML): there, and only there, ``<x/>`` closes itself. Elsewhere the
# slash is ignored and ``<div/>`` opens a div, like ``<div>``.
_FOREIGN_TAGS = frozenset({b"svg", b"math"})
# HTML elements that end foreign content when they appear inside it (HTML5 § 13.2.6.5).
_BREAKOUT_TAGS = frozenset(
    (
        b"b big blockquote body br center code dd div dl dt em embed h1 h2 h3 h4 h5 h6 head hr "
        b"i img li listing menu meta nobr ol p pre ruby s small span strong strike sub sup "
        b"table tt u ul var font"
    ).split()
)
# A tag: ``<``, optional ``/``, a name, attributes up to ``>`` (a value quoted right after its
# ``=`` may hold ``>``; elsewhere a quote is a plain character, as in HTML5; at the end of the
# input the parser still reads the attributes), and whether it ends with ``/>``.
_TAG_RE = re.compile(
    rb"""<(/?)([A-Za-z][A-Za-z0-9:-]*)((?:[^>"'/=]+|=\s*"[^"]*"?|=\s*'[^']*'?|[="'/])*?)"""
    rb"(/?)(?:>|\Z)"
)
# One attribute inside a tag: a name and an optional ``= value`` (quoted or bare).
_ATTR_RE = re.compile(rb"""[^\s"'>/=]+(?:\s*=\s*(?:"[^"]*"?|'[^']*'?|[^\s>]*))?""")
# markdown-it-py: a deadline check every this many rule calls.
_CHECK_EVERY = 256


class Deadline:
    """A wall-clock budget: :meth:`check` raises once ``timeout`` seconds have passed.

    Args:
        timeout: Seconds allowed; ``None`` never expires.
        what: What is being parsed, for the message (``"HTML"``).

    Raises:
        ConfigError: ``timeout`` is not a positive number or None.

    Examples:
        >>> Deadline(None, "HTML").check()  # never expires
        >>> Deadline(0.0, "HTML")
        Traceback (most recent call last):
        ...
        neardup.errors.ConfigError: timeout must be a positive number of seconds or None, got 0.0
    """

    __slots__ = ("_end", "timeout", "what")

    def __init__(self, timeout: float | None, what: str) -> None:
        if timeout is not None and not timeout > 0:
            raise ConfigError(
                f"timeout must be a positive number of seconds or None, got {timeout}"
            )
        self.timeout = timeout
        self.what = what
        self._end = None if timeout is None else time.monotonic() + timeout

    def check(self) -> None:
        """Raise :class:`~neardup.errors.TimeoutError` when the budget is spent."""
        if self._end is not None and time.monotonic() > self._end:
            raise TimeoutError(
                f"{self.what} extraction took longer than {self.timeout} s and was stopped; "
                "raise timeout= if the file is large but trusted, or leave it out (--exclude)"
            )


def _tag_counts(raw: bytes, deadline: Deadline) -> tuple[int, int]:
    """(estimated peak depth, most attributes of one tag), by one scan of the tags."""
    depth = peak = foreign = most = 0
    for i, m in enumerate(_TAG_RE.finditer(raw)):
        if i & 0xFFFF == 0:
            deadline.check()
        if m.end(3) - m.start(3) > 2 * most:  # an attribute takes at least two bytes
            most = max(most, len(_ATTR_RE.findall(m.group(3))))
        step = _depth_step(m, foreign)
        foreign = step[1]
        depth = max(depth + step[0], 0)
        peak = max(peak, depth)
    return peak, most


def _depth_step(m: re.Match[bytes], foreign: int) -> tuple[int, int]:
    """How the tag ``m`` moves the depth (+1, -1 or 0), and the foreign-content nesting."""
    name = m.group(2).lower()
    closing = bool(m.group(1))
    if name in _FOREIGN_TAGS:
        if closing:
            return -1, max(foreign - 1, 0)
        if m.group(4):
            return 0, foreign
        return 1, foreign + 1
    if foreign and name in _BREAKOUT_TAGS and not closing:
        foreign = 0
    if name in _FLAT_TAGS or (foreign and m.group(4)):
        return 0, foreign
    return (-1 if closing else 1), foreign


def _trim_attributes(tag: bytes, start: int, end: int, max_attributes: int) -> bytes:
    """``tag`` with the attributes in ``tag[start:end]`` past the first ``max_attributes``
    removed."""
    cut = end
    for i, a in enumerate(_ATTR_RE.finditer(tag, start, end)):
        if i == max_attributes:
            cut = a.start()
            break
    return tag[:cut] + tag[end:]


def defuse_html(
    html: str, *, max_depth: int, max_attributes: int, deadline: Deadline | None = None
) -> str:
    """Return ``html`` with the tags nested deeper than ``max_depth`` and the attributes past
    ``max_attributes`` per tag removed (both estimated by a scan of the tags).

    A document under both caps is returned unchanged; only pathological ones are rewritten.
    Self-closing forms of ordinary elements (``<div/>``) count as opening tags, as the HTML5
    parser treats them; inside SVG and MathML they close themselves.

    Examples:
        >>> defuse_html("<div/>" * 3 + "x", max_depth=2, max_attributes=8)
        '<div/><div/>x'
        >>> defuse_html('<p a=1 b c="3" d>x</p>', max_depth=8, max_attributes=2)
        '<p a=1 b >x</p>'
    """
    deadline = deadline or Deadline(None, "HTML")
    raw = html.encode("utf-8", "surrogatepass")
    peak, most = _tag_counts(raw, deadline)
    if peak <= max_depth and most <= max_attributes:
        return html
    if peak > max_depth:
        log.warning("HTML nested %d deep (cap %d): removing the deeper tags", peak, max_depth)
    if most > max_attributes:
        log.warning(
            "an HTML tag has %d attributes (cap %d): removing the extra ones", most, max_attributes
        )
    out: list[bytes] = []
    pos = depth = excess = foreign = 0
    for i, m in enumerate(_TAG_RE.finditer(raw)):
        if i & 0xFFFF == 0:
            deadline.check()
        step, foreign = _depth_step(m, foreign)
        keep = True
        if step < 0:
            if excess:
                excess -= 1
                keep = False
            else:
                depth = max(depth - 1, 0)
        elif step > 0:
            if depth >= max_depth:
                excess += 1
                keep = False
            else:
                depth += 1
        if not keep:
            out.append(raw[pos : m.start()])
            pos = m.end()
        elif m.end(3) - m.start(3) > 2 * max_attributes:
            out.append(raw[pos : m.start()])
            tag = m.group(0)
            base = m.start()
            out.append(_trim_attributes(tag, m.start(3) - base, m.end(3) - base, max_attributes))
            pos = m.end()
    out.append(raw[pos:])
    return b"".join(out).decode("utf-8", "surrogatepass")


def _no_close(state: Any, start: int) -> bool:
    """Whether no ``]`` follows ``start`` before ``state.posMax`` (then markdown-it's
    ``parseLinkLabel`` surely fails, after a scan to the end of the paragraph)."""
    src, end = state.src, state.posMax
    cached = getattr(state, "_neardup_last_close", None)
    if cached is None or cached[0] != end:
        cached = (end, src.rfind("]", 0, end))
        state._neardup_last_close = cached
    return bool(start >= cached[1])


def guard_markdown(parser: Any, *, max_padded_cells: int, deadline: Deadline) -> None:
    """Make ``parser`` (a ``markdown_it.MarkdownIt``) safe on hostile input.

    * A pipe table stops before the row that would take the cells added to pad short rows
      past ``max_padded_cells``; the rows after it are parsed as ordinary text.
    * A ``[`` or ``![`` with no ``]`` after it is refused at once, instead of by a scan to
      the end of the paragraph each (quadratic in a run of ``[``).
    * ``deadline`` is checked while the parser runs.
    """
    calls = [0]

    def tick(*_: Any) -> bool:
        calls[0] += 1
        if calls[0] % _CHECK_EVERY == 0:
            deadline.check()
        return False  # never matches: the next rule runs

    block = parser.block.ruler
    table = next(rule.fn for rule in block.__rules__ if rule.name == "table")

    def capped_table(state: Any, start: int, end: int, silent: bool) -> bool:
        deadline.check()
        src, b, e, t = state.src, state.bMarks, state.eMarks, state.tShift
        width = src.count("|", b[start] + t[start], e[start]) + 1
        padded, last = 0, start + 2
        while last < end and padded <= max_padded_cells:
            cells = src.count("|", b[last] + t[last], e[last]) + 1
            if b[last] + t[last] >= e[last]:  # a blank line ends a table
                break
            padded += max(width - cells, 0)
            last += 1
        if padded > max_padded_cells:
            last -= 1
            log.warning(
                "a Markdown table pads more than %d cells: its rows from line %d on are text",
                max_padded_cells,
                last + 1,
            )
        return bool(table(state, start, min(end, last), silent))

    inline = parser.inline.ruler
    link = next(rule.fn for rule in inline.__rules__ if rule.name == "link")
    image = next(rule.fn for rule in inline.__rules__ if rule.name == "image")

    def guarded_link(state: Any, silent: bool) -> bool:
        pos = state.pos
        if state.src[pos] == "[" and _no_close(state, pos):
            return False
        return bool(link(state, silent))

    def guarded_image(state: Any, silent: bool) -> bool:
        pos = state.pos
        if state.src.startswith("![", pos) and _no_close(state, pos + 1):
            return False
        return bool(image(state, silent))

    block.at("table", capped_table, {"alt": ["paragraph", "reference"]})
    inline.at("link", guarded_link)
    inline.at("image", guarded_image)
    block.before("table", "neardup_deadline", tick)
    inline.before("text", "neardup_deadline", tick)
    parser.inline.ruler2.before("balance_pairs", "neardup_deadline", tick)
