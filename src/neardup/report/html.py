"""The HTML report of a dedup run: one self-contained, static page a person can read.

The page needs no server, no network and no script: styles are inline, thumbnails are
``data:`` URIs and the similarity histogram is inline SVG. A ``Content-Security-Policy`` meta
tag forbids every script and every external load, and every piece of document text is
HTML-escaped, so untrusted corpora cannot inject markup. The same input gives the same bytes
(no timestamp unless one is passed in as ``generated``).

What is shown, each part capped (the page states how many were left out):

* summary numbers: documents, clusters, duplicates removed, pairs, method, threshold, the
  params fingerprint and every counter and timing in ``DedupResult.stats``;
* a histogram of all pair similarities (``id="histogram"``), the threshold marked;
* the largest clusters (``id="clusters"``), with thumbnails when ``images`` is given and
  Pillow is installed (extra ``image``) and a text snippet of each representative;
* side-by-side diffs of pairs, least similar first (the borderline cases that show whether
  the threshold is right); image pairs show both thumbnails instead.
"""

from __future__ import annotations

import base64
import difflib
import html
import io
import logging
import math
import os
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias, cast

from neardup.errors import ConfigError, MissingExtraError, NeardupError
from neardup.report.results import Cluster, DedupResult, Pair
from neardup.types import DocId

if TYPE_CHECKING:
    from PIL import Image as PILImage

__all__ = ["ImageLookup", "TextLookup", "render_html", "write_html"]

log = logging.getLogger(__name__)

_StrPath: TypeAlias = str | os.PathLike[str]
#: Where the report finds a document's text: a mapping from id, or a function (``None`` =
#: unknown). Called lazily, only for the documents the page shows.
TextLookup: TypeAlias = (
    Mapping[str, str] | Mapping[int, str] | Mapping[DocId, str] | Callable[[DocId], str | None]
)
#: Where the report finds an image document's file, by id.
ImageLookup: TypeAlias = Mapping[str, _StrPath] | Mapping[int, _StrPath] | Mapping[DocId, _StrPath]

_CONTEXT_LINES = 3
_SNIPPET_CHARS = 160
_HIST_BINS = 20
_WORD_RE = re.compile(r"\s+|\S+\s*")

_CSS = """
*{box-sizing:border-box}body{margin:0;color:#1f2328;background:#f6f8fa;
font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
main{max-width:1180px;margin:0 auto;padding:24px 20px 48px}h1{font-size:1.6em;margin:0 0 4px}
h2{font-size:1.2em;margin:32px 0 10px}nav a{margin-right:14px;color:#0969da}
.meta,.more,caption,.snippet,dl.summary dt{color:#59636e}.more{font-style:italic}
.card,dl.summary div{background:#fff;border:1px solid #d1d9e0;border-radius:8px;padding:12px 14px}
dl.summary{display:grid;grid-template-columns:repeat(auto-fill,minmax(160px,1fr));gap:10px;margin:0}
dl.summary dt{font-size:.85em}dl.summary div.wide{grid-column:1/-1}
dl.summary dd{margin:0;font-size:1.35em;font-weight:600;overflow-wrap:anywhere}
dl.summary dd code{font-size:.7em;font-weight:400}#stats{max-width:520px;padding:0}
table{border-collapse:collapse;width:100%;background:#fff}caption{text-align:left;padding:0 0 6px}
th,td{border:1px solid #d1d9e0;padding:6px 8px;text-align:left;vertical-align:top}
th{background:#eef1f4;font-weight:600}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
code,.mono,table.diff td,table.diff th{font-family:ui-monospace,Menlo,Consolas,monospace}
ul.members{list-style:none;margin:0;padding:0;display:flex;flex-wrap:wrap;gap:4px 6px}
ul.members li{background:#eef1f4;border-radius:4px;padding:1px 6px;overflow-wrap:anywhere}
ul.members li.rep{background:#dafbe1;font-weight:600}
ul.members li.thumbed{background:none;padding:0;text-align:center;font-size:.8em}
.snippet{display:block;font-size:.85em;overflow-wrap:anywhere}
img.thumb,.placeholder{display:block;border:1px solid #d1d9e0;border-radius:4px;margin:0 auto}
.placeholder{width:64px;height:64px;line-height:64px;text-align:center;color:#59636e;
background:repeating-linear-gradient(45deg,#eef1f4 0 6px,#fff 6px 12px)}
section.pair{margin:14px 0}section.pair h3{font-size:1em;margin:0 0 6px;overflow-wrap:anywhere}
table.diff{table-layout:fixed;font-size:13px}table.diff col.ln{width:3.5em}
table.diff th{font-weight:400;overflow-wrap:anywhere}
table.diff td{white-space:pre-wrap;overflow-wrap:anywhere;border-width:0 1px}
table.diff td.ln{color:#8c959f;text-align:right;background:#f6f8fa}
tr.del td.a,tr.chg td.a{background:#ffebe9}tr.ins td.b,tr.chg td.b{background:#dafbe1}
del{background:#ffcecb;text-decoration:line-through}ins{background:#aceebb;text-decoration:none}
tr.skip td{background:#eef1f4;color:#59636e;text-align:center;font-style:italic}
.pairimgs{display:flex;gap:16px;align-items:flex-end}
svg text{font:12px system-ui,sans-serif;fill:#59636e}
"""


def _e(value: object) -> str:
    """Escape ``value`` for HTML text or attributes (lone surrogates become ``?``)."""
    text = str(value).encode("utf-8", "replace").decode("utf-8")
    return html.escape(text, quote=True)


def _num(value: float) -> str:
    """Format a counter or timing: integers with separators, other floats to 3 decimals."""
    if float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:,.3f}"


def _text_getter(texts: TextLookup | None) -> Callable[[DocId], str | None]:
    if texts is None:
        return lambda _doc: None
    if callable(texts):
        return texts
    mapping = cast("Mapping[DocId, str]", texts)
    return mapping.get


class _Thumbnails:
    """Makes (and caches) each image document's thumbnail as an escaped HTML fragment."""

    def __init__(self, images: ImageLookup | None, *, size: int, limit: int) -> None:
        self._images = cast("Mapping[DocId, _StrPath]", images or {})
        self._size = size
        self._limit = limit
        self._cache: dict[DocId, str] = {}
        self.missing_pillow = False
        self.skipped = 0

    def has(self, doc: DocId) -> bool:
        return doc in self._images

    def html(self, doc: DocId) -> str | None:
        """The ``<img>`` (or placeholder) of ``doc``; ``None`` if none can or may be shown."""
        if doc not in self._images or self.missing_pillow:
            return None
        if doc in self._cache:
            return self._cache[doc]
        if len(self._cache) >= self._limit:
            self.skipped += 1
            return None
        try:
            uri = self._data_uri(self._images[doc])
        except MissingExtraError:
            self.missing_pillow = True
            log.info("thumbnails skipped: Pillow is not installed (extra 'image')")
            return None
        except (NeardupError, OSError, ValueError) as exc:
            log.warning("no thumbnail for %r: %s", doc, exc)
            frag = (
                f'<span class="placeholder" role="img" aria-label="no preview of {_e(doc)}" '
                f'title="{_e(exc)}">?</span>'
            )
        else:
            frag = f'<img class="thumb" src="{uri}" alt="thumbnail of {_e(doc)}">'
        self._cache[doc] = frag
        return frag

    def _data_uri(self, path: _StrPath) -> str:
        from neardup._extras import require_extra

        require_extra("image", "PIL.Image")
        from neardup.image.decode import opened

        size = (self._size, self._size)
        with opened(os.fspath(path), draft=("RGB", size)) as im:
            thumb = _shrink(im, size)
        buf = io.BytesIO()
        if thumb.mode == "RGBA":
            thumb.save(buf, format="PNG", optimize=True)
            mime = "image/png"
        else:
            thumb.save(buf, format="JPEG", quality=82)
            mime = "image/jpeg"
        return f"data:{mime};base64,{base64.b64encode(buf.getvalue()).decode('ascii')}"


def _shrink(im: PILImage.Image, size: tuple[int, int]) -> PILImage.Image:
    """A small RGB (or RGBA, if the image has transparency) copy of ``im``."""
    alpha = "A" in im.getbands() or "transparency" in im.info
    thumb = im.convert("RGBA" if alpha else "RGB")
    thumb.thumbnail(size)
    return thumb


def _histogram(pairs: Sequence[Pair], threshold: float) -> str:
    """An inline SVG histogram of pair similarities, with the threshold marked."""
    if not pairs:
        return '<p id="histogram" class="more">No pairs, so there is nothing to plot.</p>'
    sims = [min(max(p.similarity, 0.0), 1.0) if math.isfinite(p.similarity) else 0.0 for p in pairs]
    lo = min(min(sims), min(max(threshold, 0.0), 1.0))
    lo = min(int(lo * _HIST_BINS) / _HIST_BINS, 1.0 - 1.0 / _HIST_BINS)
    width = (1.0 - lo) / _HIST_BINS
    counts = [0] * _HIST_BINS
    for s in sims:
        counts[min(int((s - lo) / width + 1e-9), _HIST_BINS - 1)] += 1  # 1e-9: 0.99 is 0.99
    top = max(counts)
    w, h, left, bottom, pad = 640, 220, 48, 34, 12
    plot_w, plot_h = w - left - pad, h - bottom - pad
    bar_w = plot_w / _HIST_BINS
    parts = [
        f'<svg id="histogram" viewBox="0 0 {w} {h}" width="100%" role="img" '
        'aria-labelledby="histogram-title histogram-desc" '
        'xmlns="http://www.w3.org/2000/svg" style="max-width:760px">',
        '<title id="histogram-title">Histogram of pair similarities</title>',
        f'<desc id="histogram-desc">{len(pairs)} pairs in {_HIST_BINS} bins from {lo:.2f} to '
        f"1.00; the tallest bin holds {top}; the dashed line is the threshold "
        f"{threshold:.3f}.</desc>",
        f'<line x1="{left}" y1="{pad + plot_h}" x2="{w - pad}" y2="{pad + plot_h}" '
        'stroke="#8c959f"/>',
    ]
    for i, n in enumerate(counts):
        bar_h = plot_h * n / top
        a, b = lo + i * width, lo + (i + 1) * width
        parts.append(
            f'<rect x="{left + i * bar_w + 1:.1f}" y="{pad + plot_h - bar_h:.1f}" '
            f'width="{bar_w - 2:.1f}" height="{bar_h:.1f}" fill="#3b82c4">'
            f"<title>{a:.3f} to {b:.3f}: {n} pairs</title></rect>"
        )
    for frac in (0.0, 0.5, 1.0):
        x = left + plot_w * frac
        parts.append(
            f'<text x="{x:.1f}" y="{h - 14}" text-anchor="middle">{lo + (1 - lo) * frac:.2f}</text>'
        )
    parts += [
        f'<text x="{left - 6}" y="{pad + 10}" text-anchor="end">{top}</text>',
        f'<text x="{left - 6}" y="{pad + plot_h}" text-anchor="end">0</text>',
        f'<text x="{left + plot_w / 2:.1f}" y="{h - 1}" text-anchor="middle">similarity</text>',
    ]
    if lo <= threshold <= 1.0:
        tx = left + plot_w * (threshold - lo) / (1 - lo)
        parts.append(
            f'<line x1="{tx:.1f}" y1="{pad}" x2="{tx:.1f}" y2="{pad + plot_h}" '
            'stroke="#cf222e" stroke-dasharray="4 3"><title>threshold '
            f"{threshold:.3f}</title></line>"
        )
    parts.append("</svg>")
    return "\n".join(parts)


def _word_diff(a: str, b: str) -> tuple[str, str]:
    """Both sides of a changed line, escaped, with changed words in ``<del>``/``<ins>``."""
    ta, tb = _WORD_RE.findall(a), _WORD_RE.findall(b)
    out_a: list[str] = []
    out_b: list[str] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, ta, tb).get_opcodes():
        sa, sb = _e("".join(ta[i1:i2])), _e("".join(tb[j1:j2]))
        out_a.append(sa if tag == "equal" or not sa else f"<del>{sa}</del>")
        out_b.append(sb if tag == "equal" or not sb else f"<ins>{sb}</ins>")
    return "".join(out_a), "".join(out_b)


_Row: TypeAlias = tuple[str, int | None, str, int | None, str]


def _diff_rows(a: list[str], b: list[str]) -> list[_Row]:
    """Side-by-side rows ``(kind, line_a, text_a, line_b, text_b)``; ``skip`` rows fold runs
    of unchanged lines (their count in ``text_a``). Texts are raw; rendering escapes them."""
    rows: list[_Row] = []
    done = 0
    sm = difflib.SequenceMatcher(None, a, b)
    for group in sm.get_grouped_opcodes(_CONTEXT_LINES):
        if group[0][1] > done:
            rows.append(("skip", None, str(group[0][1] - done), None, ""))
        for tag, i1, i2, j1, j2 in group:
            for k in range(max(i2 - i1, j2 - j1)):
                i, j = i1 + k, j1 + k
                la, lb = (i + 1 if i < i2 else None), (j + 1 if j < j2 else None)
                kind = "eq" if tag == "equal" else "chg" if la and lb else "del" if la else "ins"
                rows.append((kind, la, a[i] if la else "", lb, b[j] if lb else ""))
        done = group[-1][2]
    if len(a) > done:
        rows.append(("skip", None, str(len(a) - done), None, ""))
    return rows


def _render_diff(a: str, b: str, ids: tuple[DocId, DocId], max_lines: int) -> str:
    """A side-by-side diff table of two texts, folded and capped at ``max_lines`` rows."""
    rows = _diff_rows(a.splitlines(), b.splitlines())
    out = [
        '<table class="diff"><colgroup><col class="ln"><col class="txt"><col class="ln">'
        f'<col class="txt"></colgroup><thead><tr><th colspan="2" scope="col">{_e(ids[0])}</th>'
        f'<th colspan="2" scope="col">{_e(ids[1])}</th></tr></thead><tbody>'
    ]
    for kind, ia, ta, ib, tb in rows[:max_lines]:
        if kind == "skip":
            out.append(f'<tr class="skip"><td colspan="4">{ta} unchanged lines</td></tr>')
            continue
        ha, hb = _word_diff(ta, tb) if kind == "chg" else (_e(ta), _e(tb))
        out.append(
            f'<tr class="{kind}"><td class="ln">{ia or ""}</td><td class="a">{ha}</td>'
            f'<td class="ln">{ib or ""}</td><td class="b">{hb}</td></tr>'
        )
    out.append("</tbody></table>")
    if len(rows) > max_lines:
        out.append(f'<p class="more">+{len(rows) - max_lines} more diff lines</p>')
    return "".join(out)


def _pair_section(
    pair: Pair,
    get_text: Callable[[DocId], str | None],
    thumbs: _Thumbnails,
    *,
    max_diff_lines: int,
    max_text_chars: int,
) -> str:
    dist = "" if pair.distance is None else f", distance {pair.distance}"
    head = (
        f'<section class="pair card"><h3><span class="mono">{_e(pair.a)}</span> and '
        f'<span class="mono">{_e(pair.b)}</span>: similarity {pair.similarity:.3f}{dist}</h3>'
    )
    if thumbs.has(pair.a) and thumbs.has(pair.b):
        figs = []
        for doc in (pair.a, pair.b):
            img = thumbs.html(doc) or '<span class="placeholder" aria-hidden="true">?</span>'
            figs.append(f"<figure>{img}<figcaption>{_e(doc)}</figcaption></figure>")
        return f'{head}<div class="pairimgs">{"".join(figs)}</div></section>'
    ta, tb = get_text(pair.a), get_text(pair.b)
    if ta is None or tb is None:
        return f'{head}<p class="more">Text not available for this pair.</p></section>'
    if ta == tb:
        return f'{head}<p class="more">The two texts are identical.</p></section>'
    cut = max(len(ta), len(tb)) > max_text_chars
    diff = _render_diff(ta[:max_text_chars], tb[:max_text_chars], (pair.a, pair.b), max_diff_lines)
    note = f'<p class="more">Texts cut at {max_text_chars:,} characters for the diff.</p>'
    return f"{head}{diff}{note if cut else ''}</section>"


def _snippet(text: str | None) -> str:
    if not text:
        return ""
    flat = " ".join(text[: _SNIPPET_CHARS * 4].split())
    if len(flat) > _SNIPPET_CHARS:
        flat = flat[: _SNIPPET_CHARS - 1] + "\u2026"
    return f'<span class="snippet">{_e(flat)}</span>'


def _cluster_row(
    c: Cluster, get_text: Callable[[DocId], str | None], thumbs: _Thumbnails, max_members: int
) -> str:
    items = []
    for m in c.members[:max_members]:
        rep = m == c.representative
        img = thumbs.html(m)
        label = _e(m) + (" (representative)" if rep else "")
        classes = " ".join(x for x in ("rep" if rep else "", "thumbed" if img else "") if x)
        cls = f' class="{classes}"' if classes else ""
        items.append(f"<li{cls}>{img}{label}</li>" if img else f"<li{cls}>{label}</li>")
    if c.size > max_members:
        items.append(f'<li class="more">+{c.size - max_members} more</li>')
    return (
        f'<tr><td class="num">{c.id}</td><td class="num">{c.size:,}</td>'
        f'<td><span class="mono">{_e(c.representative)}</span>'
        f"{_snippet(get_text(c.representative))}</td>"
        f'<td><ul class="members">{"".join(items)}</ul></td></tr>'
    )


def _summary(result: DedupResult) -> str:
    cells = [
        ("Documents", _num(result.n_docs)),
        ("Clusters", _num(len(result.clusters))),
        ("Duplicates removed", _num(result.duplicates)),
        ("Pairs", _num(len(result.pairs))),
        ("Method", _e(result.method)),
        ("Threshold", f"{result.threshold:.3f}"),
    ]
    out = ['<dl class="summary">']
    out.extend(f"<div><dt>{k}</dt><dd>{v}</dd></div>" for k, v in cells)
    out.append(f'<div class="wide"><dt>Params</dt><dd><code>{_e(result.params)}</code></dd></div>')
    out.append("</dl>")
    if result.stats:
        out.append(
            '<h2 id="stats-title">Counters and timings</h2><table id="stats" class="card">'
            '<thead><tr><th scope="col">Name</th><th scope="col">Value</th></tr></thead><tbody>'
        )
        out.extend(
            f'<tr><td>{_e(k)}</td><td class="num">{_num(v)}</td></tr>'
            for k, v in sorted(result.stats.items())
        )
        out.append("</tbody></table>")
    return "".join(out)


def render_html(
    result: DedupResult,
    *,
    texts: TextLookup | None = None,
    images: ImageLookup | None = None,
    max_clusters: int = 50,
    max_pairs: int = 50,
    max_members: int = 20,
    max_diff_lines: int = 200,
    max_text_chars: int = 20_000,
    max_thumbnails: int = 500,
    thumbnail_size: int = 96,
    title: str = "neardup report",
    generated: str | None = None,
) -> str:
    """Render ``result`` as one self-contained HTML page (no script, no external resource).

    Args:
        result: What a dedup run found.
        texts: Each document's text, by id (a mapping, or a function returning ``None`` when
            unknown); looked up only for the documents shown. ``None``: no diffs or snippets.
        images: Each image document's file, by id; thumbnails need Pillow (extra ``image``)
            and are left out without it. Unreadable images get a placeholder.
        max_clusters: Largest clusters shown (by size, then id).
        max_pairs: Pairs shown with a diff (least similar first, then input order).
        max_members: Members listed per cluster.
        max_diff_lines: Rows per diff.
        max_text_chars: Characters of each text that a diff compares.
        max_thumbnails: Distinct images turned into thumbnails.
        thumbnail_size: Longest side of a thumbnail in pixels.
        title: The page title.
        generated: Shown as "generated ..." when given (e.g. a timestamp); the page has no
            other time-dependent content.

    Returns:
        The HTML page.

    Raises:
        ConfigError: A cap is negative or ``thumbnail_size`` is below 1.

    Examples:
        >>> r = DedupResult([Cluster(0, ("a", "b"), "a")], [Pair("a", "b", 0.9)], 3,
        ...                 "minhash", 0.8, "minhash:v1")
        >>> page = render_html(r, texts={"a": "one <b>two</b>", "b": "one <b>too</b>"})
        >>> page.startswith("<!DOCTYPE html>"), 'id="clusters"' in page, "<b>" in page
        (True, True, False)
    """
    caps = {
        "max_clusters": max_clusters,
        "max_pairs": max_pairs,
        "max_members": max_members,
        "max_diff_lines": max_diff_lines,
        "max_text_chars": max_text_chars,
        "max_thumbnails": max_thumbnails,
    }
    for name, value in caps.items():
        if value < 0:
            raise ConfigError(f"{name} must be 0 or more, got {value}")
    if thumbnail_size < 1:
        raise ConfigError(f"thumbnail_size must be 1 or more, got {thumbnail_size}")
    get_text = _text_getter(texts)
    thumbs = _Thumbnails(images, size=thumbnail_size, limit=max_thumbnails)
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "img-src data:; style-src 'unsafe-inline'\">",
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(title)}</title><style>{_CSS}</style></head><body><main>",
        f"<h1>{_e(title)}</h1>",
    ]
    meta = f"{_e(result.method)} at threshold {result.threshold:.3f}"
    if generated is not None:
        meta += f", generated {_e(generated)}"
    out.append(f'<p class="meta">{meta}</p>')
    out.append(
        '<nav aria-label="Sections"><a href="#summary">Summary</a>'
        '<a href="#similarities">Similarities</a><a href="#largest">Clusters</a>'
        '<a href="#pairs">Pairs</a></nav>'
    )
    out.append(f'<section id="summary"><h2>Summary</h2>{_summary(result)}</section>')
    out.append(
        '<section id="similarities"><h2>Pair similarities</h2>'
        f'<div class="card">{_histogram(result.pairs, result.threshold)}</div></section>'
    )
    clusters = _clusters_section(result, get_text, thumbs, max_clusters, max_members)
    pairs = _pairs_section(result, get_text, thumbs, max_pairs, max_diff_lines, max_text_chars)
    if images and thumbs.missing_pillow:
        out.append("<p class=\"more\">Thumbnails need Pillow: pip install 'neardup[image]'.</p>")
    if thumbs.skipped:
        out.append(f'<p class="more">Thumbnails stop at {max_thumbnails:,} images.</p>')
    out += [clusters, pairs]
    out.append("</main></body></html>\n")
    return "\n".join(out)


def _clusters_section(
    result: DedupResult,
    get_text: Callable[[DocId], str | None],
    thumbs: _Thumbnails,
    max_clusters: int,
    max_members: int,
) -> str:
    head = '<section id="largest"><h2>Largest clusters</h2>'
    if not result.clusters:
        return f'{head}<p id="no-clusters">No near-duplicate clusters were found.</p></section>'
    shown = sorted(result.clusters, key=lambda c: (-c.size, c.id))[:max_clusters]
    rows = "".join(_cluster_row(c, get_text, thumbs, max_members) for c in shown)
    more = len(result.clusters) - len(shown)
    tail = f'<p class="more">+{more:,} more clusters</p>' if more else ""
    return (
        f'{head}<table id="clusters"><caption>{len(shown):,} of {len(result.clusters):,} '
        "clusters, largest first</caption><thead><tr>"
        '<th scope="col">Cluster</th><th scope="col">Size</th>'
        '<th scope="col">Representative</th><th scope="col">Members</th></tr></thead>'
        f"<tbody>{rows}</tbody></table>{tail}</section>"
    )


def _pairs_section(
    result: DedupResult,
    get_text: Callable[[DocId], str | None],
    thumbs: _Thumbnails,
    max_pairs: int,
    max_diff_lines: int,
    max_text_chars: int,
) -> str:
    head = '<section id="pairs"><h2>Pairs, least similar first</h2>'
    if not result.pairs:
        return f'{head}<p class="more">No pairs.</p></section>'
    order = sorted(range(len(result.pairs)), key=lambda i: (result.pairs[i].similarity, i))
    body = "".join(
        _pair_section(
            result.pairs[i],
            get_text,
            thumbs,
            max_diff_lines=max_diff_lines,
            max_text_chars=max_text_chars,
        )
        for i in order[:max_pairs]
    )
    more = len(result.pairs) - min(max_pairs, len(result.pairs))
    tail = f'<p class="more">+{more:,} more pairs</p>' if more else ""
    return f"{head}{body}{tail}</section>"


def write_html(
    result: DedupResult,
    path: str | os.PathLike[str],
    *,
    texts: TextLookup | None = None,
    images: ImageLookup | None = None,
    max_clusters: int = 50,
    max_pairs: int = 50,
    max_members: int = 20,
    max_diff_lines: int = 200,
    max_text_chars: int = 20_000,
    max_thumbnails: int = 500,
    thumbnail_size: int = 96,
    title: str = "neardup report",
    generated: str | None = None,
) -> Path:
    """Write :func:`render_html` of ``result`` to ``path`` (UTF-8), replacing it atomically.

    The page is written to a temporary file next to ``path`` and then renamed, so an
    existing report is never left half-written.

    Args:
        result: What a dedup run found.
        path: Where to write the page.
        texts: As :func:`render_html`.
        images: As :func:`render_html`.
        max_clusters: As :func:`render_html`.
        max_pairs: As :func:`render_html`.
        max_members: As :func:`render_html`.
        max_diff_lines: As :func:`render_html`.
        max_text_chars: As :func:`render_html`.
        max_thumbnails: As :func:`render_html`.
        thumbnail_size: As :func:`render_html`.
        title: As :func:`render_html`.
        generated: As :func:`render_html`.

    Returns:
        The path written.

    Raises:
        ConfigError: As :func:`render_html`.
        OSError: ``path`` cannot be written.

    Examples:
        >>> import tempfile
        >>> r = DedupResult([], [], 2, "simhash", 0.9, "simhash:v1")
        >>> with tempfile.TemporaryDirectory() as d:
        ...     out = write_html(r, Path(d) / "report.html")
        ...     "No near-duplicate clusters" in out.read_text(encoding="utf-8")
        True
    """
    page = render_html(
        result,
        texts=texts,
        images=images,
        max_clusters=max_clusters,
        max_pairs=max_pairs,
        max_members=max_members,
        max_diff_lines=max_diff_lines,
        max_text_chars=max_text_chars,
        max_thumbnails=max_thumbnails,
        thumbnail_size=thumbnail_size,
        title=title,
        generated=generated,
    )
    target = Path(path)
    tmp = target.with_name(f".{target.name}.tmp")
    try:
        tmp.write_text(page, encoding="utf-8", newline="\n")
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    return target
