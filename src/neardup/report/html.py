"""The HTML report of a dedup run: one self-contained page to review every cluster.

The page needs no server and no network: styles are inline, thumbnails are ``data:`` URIs,
the similarity histogram is inline SVG, and one inline script (allowed by its SHA-256 hash in
a ``Content-Security-Policy`` that forbids every other script and every external load) builds
the cluster list from a JSON data block. Every piece of document text is HTML-escaped (or set
as ``textContent``), so untrusted corpora cannot inject markup. The same input gives the same
bytes (no timestamp unless one is passed in as ``generated``).

What is shown (see ``docs/report.md``):

* a summary: documents, clusters, duplicates, pairs, a readable description of the method,
  the threshold and the clustering, every counter and timing of ``DedupResult.stats``;
* a histogram of all pair similarities, axes labelled, the threshold marked;
* **every** cluster (up to ``max_clusters``, 100,000 by default), a page at a time, with
  search by id and text, filters (size, lowest similarity) and sort orders; each row gives
  the cluster's size, lowest and highest pair similarity and its representative with the
  start of its text; opened, it lists the members (linked to their files, with thumbnails
  for images and an overlay view) and the cluster's pairs, least similar first, with
  side-by-side diffs whose shared shingles are marked ("why these matched").

Size is bounded: the cluster index holds at most ``max_members`` member ids per cluster, and
the texts, diffs and thumbnails are added cluster by cluster, largest first, until
``max_bytes`` is reached; the page says how many clusters have them. Texts are looked up only
for what the page shows.
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TypeAlias, cast

from neardup.errors import ConfigError
from neardup.report.assets import CSS, SCRIPT, script_hash
from neardup.report.diff import escape as _e
from neardup.report.diff import render_diff
from neardup.report.histogram import histogram_svg
from neardup.report.results import Cluster, DedupResult, Pair
from neardup.report.thumbs import Thumbnails
from neardup.types import DocId

__all__ = [
    "ImageLookup",
    "LinkLookup",
    "TextLookup",
    "describe_method",
    "render_html",
    "write_html",
]

log = logging.getLogger(__name__)

_StrPath: TypeAlias = str | os.PathLike[str]
#: Where the report finds a document's text: a mapping from id, or a function (``None`` =
#: unknown). Called lazily, only for the documents the page shows.
TextLookup: TypeAlias = (
    Mapping[str, str] | Mapping[int, str] | Mapping[DocId, str] | Callable[[DocId], str | None]
)
#: Where the report finds an image document's file, by id (a mapping or a function).
ImageLookup: TypeAlias = (
    Mapping[str, _StrPath]
    | Mapping[int, _StrPath]
    | Mapping[DocId, _StrPath]
    | Callable[[DocId], _StrPath | None]
)
#: Where a member links to: a URL or a file path by id (paths become ``file:`` URLs).
LinkLookup: TypeAlias = (
    Mapping[str, _StrPath]
    | Mapping[int, _StrPath]
    | Mapping[DocId, _StrPath]
    | Callable[[DocId], _StrPath | None]
)

_SNIPPET_CHARS = 200
_SCRIPT_OPEN = re.compile(r"<(?=!--|script)", re.IGNORECASE)

_METHODS = {
    "minhash": "MinHash over word 5-shingles with banded LSH; every candidate pair verified "
    "by its exact Jaccard similarity",
    "simhash": "SimHash over word 3-shingles; similarity is 1 - Hamming distance / bits",
    "simhash-go": "SimHash as the Go fingerprint package computes it; similarity is "
    "1 - Hamming distance / 64",
    "ctph": "context-triggered piecewise hashing (ssdeep-compatible); similarity is the "
    "ssdeep score / 100",
    "tlsh": "TLSH; similarity is max(0, 1 - distance / 300)",
    "phash": "perceptual image hash (64-bit pHash); similarity is 1 - Hamming distance / 64",
    "embedding": "cosine similarity of sentence embeddings",
}
_CLUSTERINGS = {
    "components": "connected components of the pairs (a chain of pairs joins its ends)",
    "center": "centers: every member has a pair with its representative",
}


def describe_method(method: str, threshold: float, clustering: str = "components") -> str:
    """A sentence a person can read for a method, its threshold and clustering.

    Examples:
        >>> describe_method("minhash", 0.8)[:40]
        'MinHash over word 5-shingles with banded'
    """
    what = _METHODS.get(method, f"method {method!r}")
    how = _CLUSTERINGS.get(clustering, clustering)
    return (
        f"{what[0].upper()}{what[1:]}; pairs at similarity {threshold:.2f} or more; "
        f"clusters: {how}."
    )


def _num(value: float) -> str:
    """Format a counter or timing: integers with separators, other floats to 3 decimals."""
    if float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:,.3f}"


def _lookup(table: object) -> Callable[[DocId], object | None]:
    if table is None:
        return lambda _doc: None
    if callable(table):
        return cast("Callable[[DocId], object | None]", table)
    return cast("Mapping[DocId, object]", table).get


def _href(target: object | None) -> str | None:
    if target is None:
        return None
    text = os.fspath(cast("_StrPath", target)) if not isinstance(target, str) else target
    if "://" in text or text.startswith(("data:", "mailto:")):
        return text if text.startswith(("http://", "https://", "file://")) else None
    return Path(text).resolve().as_uri()


def _snippet(text: str | None) -> str | None:
    if not text:
        return None
    flat = " ".join(text[: _SNIPPET_CHARS * 4].split())
    if len(flat) > _SNIPPET_CHARS:
        flat = flat[: _SNIPPET_CHARS - 1] + "\u2026"
    return flat


class _Builder:
    """Collects the JSON data block: the cluster index, the documents, the details."""

    def __init__(
        self,
        result: DedupResult,
        get_text: Callable[[DocId], str | None],
        thumbs: Thumbnails,
        get_link: Callable[[DocId], object | None] | None,
        opts: dict[str, int],
    ) -> None:
        self.result = result
        self.get_text = get_text
        self.thumbs = thumbs
        self.get_link = get_link
        self.o = opts
        self.docs: list[str] = []
        self.index: dict[DocId, int] = {}
        self.href: dict[int, str] = {}
        self.snip: dict[int, str] = {}
        self.thumb: dict[int, str] = {}
        self.bad: dict[int, str] = {}
        self.details: list[str] = []
        self.used = 0
        self.diffs = 0

    def doc(self, d: DocId) -> int:
        k = self.index.get(d)
        if k is None:
            k = self.index[d] = len(self.docs)
            self.docs.append(str(d))
            if self.get_link is not None:
                link = _href(self.get_link(d))
                if link is not None:
                    self.href[k] = link
        return k

    def detail(
        self, c: Cluster, pairs: list[Pair], crossing: int
    ) -> tuple[str, dict[int, str], dict[int, str]]:
        """The cluster's details (HTML), and the snippets and thumbnails of its members."""
        snips: dict[int, str] = {}
        thumbs: dict[int, str] = {}
        texts: dict[DocId, str | None] = {}

        def text(d: DocId) -> str | None:
            if d not in texts:
                t = self.get_text(d)
                texts[d] = None if t is None else t[: self.o["max_text_chars"]]
            return texts[d]

        for m in c.members[: self.o["max_members"]]:
            k = self.doc(m)
            if self.thumbs.is_image(m):
                uri = self.thumbs.uri(m)
                if uri is not None:
                    thumbs[k] = uri
                elif m in self.thumbs.failed:
                    self.bad[k] = self.thumbs.failed[m]
            elif k not in self.snip:
                s = _snippet(text(m))
                if s is not None:
                    snips[k] = s
        order = sorted(pairs, key=lambda p: (p.similarity, str(p.a), str(p.b)))
        out = [f"<h3>Pairs ({len(pairs):,}), least similar first</h3>"]
        if not pairs:
            out.append('<p class="more">No accepted pair has both documents in this cluster.</p>')
        shown = order[: self.o["max_pairs"]]
        if shown:
            out.append(
                '<div class="scroll"><table class="pairs"><thead><tr><th scope="col">A</th>'
                '<th scope="col">B</th><th scope="col">Similarity</th></tr></thead><tbody>'
            )
            out.extend(
                f'<tr><td class="mono">{_e(p.a)}</td><td class="mono">{_e(p.b)}</td>'
                f'<td class="num">{p.similarity:.3f}'
                f"{'' if p.distance is None else f' (d={p.distance})'}</td></tr>"
                for p in shown
            )
            out.append("</tbody></table></div>")
        if len(pairs) > len(shown):
            out.append(f'<p class="more">+{len(pairs) - len(shown):,} more pairs</p>')
        if crossing:
            out.append(
                f'<p class="more">{crossing:,} more accepted pairs join a member to another '
                "cluster (center clustering keeps each member with one representative).</p>"
            )
        room = max(self.o["max_diff_total"] - self.diffs, 0)
        views = order[: min(self.o["max_diffs"], room)]
        self.diffs += len(views)
        out.extend(self.pair_view(p, text, thumbs) for p in views)
        if pairs and not views and self.o["max_diffs"]:
            out.append(
                f'<p class="more">Diffs are shown for the first {self.o["max_diff_total"]:,} '
                "pairs, largest clusters first (max_diff_total); this cluster's texts are above."
                "</p>"
            )
        return "".join(out), snips, thumbs

    def pair_view(
        self, p: Pair, text: Callable[[DocId], str | None], thumbs: dict[int, str]
    ) -> str:
        head = (
            f'<h3><span class="mono">{_e(p.a)}</span> and <span class="mono">{_e(p.b)}</span>: '
            f"similarity {p.similarity:.3f}</h3>"
        )
        if self.thumbs.is_image(p.a) and self.thumbs.is_image(p.b):
            figs = []
            for d in (p.a, p.b):
                k = self.doc(d)
                uri = thumbs.get(k) or self.thumbs.uri(d)
                img = (
                    f'<img class="thumb" src="{uri}" alt="thumbnail of {_e(d)}" data-doc="{k}">'
                    if uri
                    else '<span class="placeholder" aria-hidden="true">?</span>'
                )
                figs.append(f"<figure>{img}<figcaption>{_e(d)}</figcaption></figure>")
            return f'{head}<div class="pairimgs">{"".join(figs)}</div>'
        ta, tb = text(p.a), text(p.b)
        if ta is None or tb is None:
            return f'{head}<p class="more">Text not available for this pair.</p>'
        if ta == tb:
            return f'{head}<p class="more">The two texts are identical.</p>'
        diff = render_diff(ta, tb, (str(p.a), str(p.b)), max_lines=self.o["max_diff_lines"])
        return head + diff


def _cluster_pairs(result: DedupResult) -> tuple[dict[int, list[Pair]], dict[int, int]]:
    """Each cluster's pairs (both ends inside), and its pairs that leave it."""
    where = result.cluster_of()
    inside: dict[int, list[Pair]] = {}
    crossing: dict[int, int] = {}
    for p in result.pairs:
        ca, cb = where.get(p.a), where.get(p.b)
        if ca is not None and ca == cb:
            inside.setdefault(ca, []).append(p)
        else:
            for c in (ca, cb):
                if c is not None:
                    crossing[c] = crossing.get(c, 0) + 1
    return inside, crossing


def render_html(
    result: DedupResult,
    *,
    texts: TextLookup | None = None,
    images: ImageLookup | None = None,
    links: LinkLookup | None = None,
    max_clusters: int = 100_000,
    max_members: int = 20,
    max_pairs: int = 50,
    max_diffs: int = 3,
    max_diff_total: int = 100,
    max_diff_lines: int = 200,
    max_text_chars: int = 20_000,
    max_bytes: int = 20_000_000,
    max_thumbnails: int = 2_000,
    thumbnail_size: int = 256,
    page_size: int = 50,
    title: str = "neardup report",
    generated: str | None = None,
) -> str:
    """Render ``result`` as one self-contained HTML page.

    Args:
        result: What a dedup run found.
        texts: Each document's text, by id (a mapping, or a function returning ``None`` when
            unknown); looked up only for the documents whose details the page embeds, e.g.
            :meth:`neardup.report.sources.DocumentSource.text`.
        images: Each image document's file, by id; thumbnails need Pillow (extra ``image``).
        links: Where each member links to (a URL, or a path made a ``file:`` URL).
        max_clusters: Clusters in the index (largest first when there are more).
        max_members: Members listed per cluster.
        max_pairs: Pairs listed per cluster (least similar first).
        max_diffs: Pairs per cluster shown with a diff (or both thumbnails).
        max_diff_total: Diffs in the whole page (they cost the most time and bytes), given to
            the largest clusters first.
        max_diff_lines: Rows per diff.
        max_text_chars: Characters of each text that a diff compares.
        max_bytes: Budget for the embedded snippets, details and thumbnails; clusters get
            them largest first until it is spent. Image clusters past it still get their
            representative's thumbnail, so every listed image cluster shows one (up to
            ``max_thumbnails`` images in all).
        max_thumbnails: Distinct images turned into thumbnails.
        thumbnail_size: Longest side of a thumbnail in pixels (the overlay shows it whole).
        page_size: Clusters per page of the list.
        title: The page title.
        generated: Shown as "generated ..." when given (e.g. a timestamp).

    Returns:
        The HTML page.

    Raises:
        ConfigError: A cap is negative, or ``thumbnail_size`` or ``page_size`` is below 1.

    Examples:
        >>> r = DedupResult([Cluster(0, ("a", "b"), "a")], [Pair("a", "b", 0.9)], 3,
        ...                 "minhash", 0.8, "minhash:v1")
        >>> page = render_html(r, texts={"a": "one <b>two</b>", "b": "one <b>too</b>"})
        >>> page.startswith("<!DOCTYPE html>"), 'id="cluster-list"' in page
        (True, True)
        >>> "&lt;b&gt;" in page, "<b>t" in page.split('id="report-data"')[0]  # escaped
        (True, False)
    """
    caps = {
        "max_clusters": max_clusters,
        "max_members": max_members,
        "max_pairs": max_pairs,
        "max_diffs": max_diffs,
        "max_diff_total": max_diff_total,
        "max_diff_lines": max_diff_lines,
        "max_text_chars": max_text_chars,
        "max_bytes": max_bytes,
        "max_thumbnails": max_thumbnails,
    }
    for name, value in caps.items():
        if value < 0:
            raise ConfigError(f"{name} must be 0 or more, got {value}")
    if thumbnail_size < 1 or page_size < 1:
        raise ConfigError(
            f"thumbnail_size and page_size must be 1 or more, got {thumbnail_size}, {page_size}"
        )
    get_text = cast("Callable[[DocId], str | None]", _lookup(texts))
    locate = cast("Callable[[DocId], _StrPath | None]", _lookup(images))
    thumbs = Thumbnails(locate, size=thumbnail_size, limit=max_thumbnails)
    b = _Builder(result, get_text, thumbs, None if links is None else _lookup(links), caps)
    inside, crossing = _cluster_pairs(result)
    order = sorted(result.clusters, key=lambda c: (-len(c.members), c.id))[:max_clusters]
    index: list[list[object]] = []
    spent = False
    with_details = 0
    for c in order:
        ps = inside.get(c.id, [])
        sims = [p.similarity for p in ps]
        lo = round(min(sims), 4) if sims else None
        hi = round(max(sims), 4) if sims else None
        members = [b.doc(m) for m in c.members[:max_members]]
        rep = b.doc(c.representative)
        detail = -1
        if not spent:
            diffs_before = b.diffs
            html_, snips, thumbs_ = b.detail(c, ps, crossing.get(c.id, 0))
            cost = len(json.dumps(html_, ensure_ascii=False)) + 12
            cost += sum(len(json.dumps(x, ensure_ascii=False)) + 12 for x in snips.values())
            cost += sum(len(u) + 12 for u in thumbs_.values())
            if b.used + cost <= max_bytes:
                b.used += cost
                detail = len(b.details)
                b.details.append(html_)
                b.snip.update(snips)
                b.thumb.update(thumbs_)
                with_details += 1
            else:
                spent = True
                b.diffs = diffs_before
        if detail < 0 and thumbs.is_image(c.representative) and rep not in b.thumb:
            # past the details budget an image cluster still shows its representative: the
            # thumbnail cap (max_thumbnails) bounds these, and the notes say when it stops
            uri = thumbs.uri(c.representative)
            if uri is not None:
                b.thumb[rep] = uri
        index.append([c.id, len(c.members), rep, lo, hi, len(ps), members, detail])
    data = {
        "clusters": index,
        "docs": b.docs,
        "href": b.href,
        "snip": b.snip,
        "thumb": b.thumb,
        "bad": b.bad,
        "details": b.details,
        "pageSize": page_size,
        "withDetails": with_details,
        "budget": f"{max_bytes:,} bytes",
    }
    blob = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    blob = blob.encode("utf-8", "replace").decode("utf-8")  # lone surrogates become "?"
    blob = _script_safe(blob)
    notes = _notes(result, len(order), with_details, thumbs, images is not None, max_thumbnails)
    return _page(result, title, generated, blob, notes)


def _script_safe(blob: str) -> str:
    """JSON that cannot end its ``<script>`` element: ``</`` and ``<!--`` are escaped (the
    JSON value is unchanged), and so is ``<script`` (no page can count it as a tag); HTML
    fragments keep their size."""
    return _SCRIPT_OPEN.sub(r"\\u003c", blob.replace("</", "<\\/"))


def _notes(
    result: DedupResult,
    listed: int,
    with_details: int,
    thumbs: Thumbnails,
    has_images: bool,
    max_thumbnails: int,
) -> str:
    out = []
    total = len(result.clusters)
    if listed < total:
        out.append(f"The list holds the {listed:,} largest of {total:,} clusters (max_clusters).")
    if with_details < listed:
        out.append(
            f"Texts, pairs and diffs are embedded for the {with_details:,} largest clusters; "
            "the others are listed with their ids and similarities (max_bytes)."
        )
    if has_images and thumbs.missing_pillow:
        out.append("Thumbnails need Pillow: pip install 'neardup[image]'.")
    if thumbs.skipped:
        out.append(f"Thumbnails stop at {max_thumbnails:,} images.")
    return "".join(f'<p class="more">{_e(x)}</p>' for x in out)


def _summary(result: DedupResult) -> str:
    largest = max((c.size for c in result.clusters), default=0)
    cells = [
        ("Documents", _num(result.n_docs)),
        ("Clusters", _num(len(result.clusters))),
        ("Duplicates removed", _num(result.duplicates)),
        ("Pairs", _num(len(result.pairs))),
        ("Largest cluster", _num(largest)),
        ("Threshold", f"{result.threshold:.3f}"),
    ]
    out = ['<dl class="summary">']
    out.extend(f"<div><dt>{k}</dt><dd>{v}</dd></div>" for k, v in cells)
    desc = describe_method(result.method, result.threshold, result.clustering)
    out.append(
        f'<div class="wide"><dt>Method</dt><dd id="method">{_e(desc)} <span class="meta">'
        f"(<code>{_e(result.method)}</code>, parameters <code>{_e(result.params)}</code>)"
        "</span></dd></div></dl>"
    )
    return "".join(out)


def _stats(result: DedupResult) -> str:
    if not result.stats:
        return ""
    rows = "".join(
        f'<tr><td>{_e(k)}</td><td class="num">{_num(v)}</td></tr>'
        for k, v in sorted(result.stats.items())
    )
    return (
        '<table id="stats"><caption>Counters and timings</caption><thead><tr>'
        '<th scope="col">Name</th><th scope="col">Value</th></tr></thead>'
        f"<tbody>{rows}</tbody></table>"
    )


_TOOLBAR = """<div class="toolbar" role="search">
<label>Search ids and text (#12 for a cluster id)<input id="q" type="search" autocomplete="off"
placeholder="id, path or words"></label>
<label>Size at least<input id="min-size" type="number" min="1" value="1"
inputmode="numeric"></label>
<label>Lowest similarity at most<input id="max-low" type="number" min="0" max="1" step="0.01"
placeholder="any"></label>
<label>Sort<select id="sort"><option value="size">largest first</option>
<option value="low">least similar first</option><option value="id">by cluster id</option>
</select></label>
<button id="prev" type="button">Previous</button><button id="next" type="button">Next</button>
<span id="page-info" aria-live="polite"></span></div>"""


def _page(result: DedupResult, title: str, generated: str | None, blob: str, notes: str) -> str:
    csp = (
        f"default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src {script_hash()}"
    )
    meta = (
        f"{_e(result.method)} at threshold {result.threshold:.3f}, "
        f"{_e(result.clustering)} clustering."
    )
    if generated is not None:
        meta += f" Generated {_e(generated)}."
    clusters = (
        f'{_TOOLBAR}{notes}<div id="cluster-list"></div>'
        '<noscript><p class="more">The cluster list is built by the page\'s script; allow '
        "JavaScript for this file to see it.</p></noscript>"
        if result.clusters
        else '<p id="no-clusters">No near-duplicate clusters were found.</p>'
        '<div id="cluster-list" hidden></div>'
    )
    toolbar_stub = "" if result.clusters else _hidden_toolbar()
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            f'<meta http-equiv="Content-Security-Policy" content="{csp}">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{_e(title)}</title><style>{CSS}</style></head><body><main>",
            f'<h1>{_e(title)}</h1><p class="meta">{meta}</p>',
            '<nav aria-label="Sections"><a href="#summary">Summary</a>'
            '<a href="#similarities">Similarities</a><a href="#clusters">Clusters</a></nav>',
            f'<section id="summary"><h2>Summary</h2>{_summary(result)}</section>',
            '<section id="similarities" class="split"><div><h2>Pair similarities</h2>'
            f'<div class="card">{histogram_svg(result.pairs, result.threshold)}</div></div>'
            f"<div><h2>Run</h2>{_stats(result)}</div></section>",
            f'<section id="clusters"><h2>Clusters</h2>{clusters}{toolbar_stub}</section>',
            '<div id="overlay" role="dialog" aria-modal="true" aria-label="Image">'
            '<img id="overlay-img" alt=""><p id="overlay-caption"></p>'
            '<p><a id="overlay-link" hidden>open the file</a> \u00b7 click or press Escape to '
            "close</p></div>",
            f'<script type="application/json" id="report-data">{blob}</script>',
            f"<script>{SCRIPT}</script>",
            "</main></body></html>\n",
        ]
    )


def _hidden_toolbar() -> str:
    return f"<div hidden>{_TOOLBAR.replace('<span id', '<span hidden id')}</div>"


def write_html(
    result: DedupResult,
    path: str | os.PathLike[str],
    *,
    texts: TextLookup | None = None,
    images: ImageLookup | None = None,
    links: LinkLookup | None = None,
    max_clusters: int = 100_000,
    max_members: int = 20,
    max_pairs: int = 50,
    max_diffs: int = 3,
    max_diff_total: int = 100,
    max_diff_lines: int = 200,
    max_text_chars: int = 20_000,
    max_bytes: int = 20_000_000,
    max_thumbnails: int = 2_000,
    thumbnail_size: int = 256,
    page_size: int = 50,
    title: str = "neardup report",
    generated: str | None = None,
) -> Path:
    """Write :func:`render_html` of ``result`` to ``path`` (UTF-8), replacing it atomically.

    The page is written to a temporary file next to ``path`` and then renamed, so an
    existing report is never left half-written. Every option is as :func:`render_html`'s.

    Returns:
        The path written.

    Raises:
        ConfigError: As :func:`render_html`.
        OutputError: ``path`` cannot be written (read-only folder, disk full).

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
        links=links,
        max_clusters=max_clusters,
        max_members=max_members,
        max_pairs=max_pairs,
        max_diffs=max_diffs,
        max_diff_total=max_diff_total,
        max_diff_lines=max_diff_lines,
        max_text_chars=max_text_chars,
        max_bytes=max_bytes,
        max_thumbnails=max_thumbnails,
        thumbnail_size=thumbnail_size,
        page_size=page_size,
        title=title,
        generated=generated,
    )
    from neardup._atomic import atomic_file

    target = Path(path)
    # backslashreplace: an id or text holding a lone surrogate has no UTF-8 form
    with (
        atomic_file(target) as tmp,
        tmp.open("w", encoding="utf-8", errors="backslashreplace", newline="\n") as fh,
    ):
        fh.write(page)
    return target
