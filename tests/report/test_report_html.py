"""The HTML report: structure, escaping, caps, empty results, thumbnails and determinism."""

from __future__ import annotations

import base64
import io
import logging
import re
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from neardup.errors import ConfigError
from neardup.report import Cluster, DedupResult, Pair
from neardup.report.html import render_html, write_html


class Page(HTMLParser):
    """Collects what the tests look at: elements (with attributes), text, table rows."""

    def __init__(self, page: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self._stack: list[tuple[str, dict[str, str | None]]] = []
        self.rows: dict[str, int] = {}  # table id -> rows in its tbody
        self.feed(page)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self.tags.append((tag, a))
        if tag == "tr":
            tables = [x for x in self._stack if x[0] == "table"]
            in_body = any(x[0] == "tbody" for x in self._stack)
            if tables and in_body:
                key = tables[-1][1].get("id") or tables[-1][1].get("class") or ""
                self.rows[key] = self.rows.get(key, 0) + 1
        if tag not in ("meta", "img", "col", "line", "rect", "br"):
            self._stack.append((tag, a))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag: str) -> None:
        for i in range(len(self._stack) - 1, -1, -1):
            if self._stack[i][0] == tag:
                del self._stack[i:]
                break

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def find(self, tag: str, **attrs: str) -> list[dict[str, str | None]]:
        return [
            a for t, a in self.tags if t == tag and all(a.get(k) == v for k, v in attrs.items())
        ]

    def classed(self, tag: str, cls: str) -> list[dict[str, str | None]]:
        return [a for t, a in self.tags if t == tag and cls in (a.get("class") or "").split()]

    @property
    def all_text(self) -> str:
        return "".join(self.text)


def make_result(n_clusters: int = 3, size: int = 3, *, n_docs: int = 100) -> DedupResult:
    clusters = [
        Cluster(k, tuple(f"d{k}-{m}" for m in range(size + k % 2)), f"d{k}-0")
        for k in range(n_clusters)
    ]
    pairs = [
        Pair(c.members[0], m, 0.8 + (i % 20) / 100)
        for i, (c, m) in enumerate((c, m) for c in clusters for m in c.members[1:])
    ]
    return DedupResult(
        clusters,
        pairs,
        n_docs,
        "minhash",
        0.8,
        "minhash:v1:num_perm=128",
        {"seconds_total": 1.5, "candidates": 42.0},
    )


def test_structure_summary_table_and_histogram() -> None:
    result = make_result(3)
    page = Page(render_html(result, title="My corpus"))
    assert page.find("title") and "My corpus" in page.all_text
    assert page.rows["clusters"] == 3
    assert len(page.find("table", id="clusters")) == 1
    headers = [a for t, a in page.tags if t == "th"]
    assert len(headers) >= 4
    hist = page.find("svg", id="histogram")
    assert len(hist) == 1 and hist[0]["role"] == "img"
    assert hist[0]["aria-labelledby"] == "histogram-title histogram-desc"
    assert page.find("title", id="histogram-title") and page.find("desc", id="histogram-desc")
    assert len(page.find("rect")) == 20
    text = page.all_text
    for expected in ("100", "Documents", "Duplicates removed", "minhash:v1:num_perm=128"):
        assert expected in text
    assert str(result.duplicates) in text and "1.500" in text and "candidates" in text
    # No script, no external resources, and a policy that forbids both.
    assert not page.find("script") and not page.find("link")
    csp = page.find("meta", **{"http-equiv": "Content-Security-Policy"})
    assert csp and "default-src 'none'" in (csp[0]["content"] or "")


def test_histogram_counts_every_pair_and_marks_the_threshold() -> None:
    pairs = [Pair("a", f"b{i}", s) for i, s in enumerate([0.81, 0.82, 0.9, 0.99, 1.0, 1.0])]
    result = DedupResult([Cluster(0, ("a", *(p.b for p in pairs)), "a")], pairs, 7, "m", 0.8, "p")
    page = render_html(result)
    counts = [int(n) for n in re.findall(r"<title>[\d.]+ to [\d.]+: (\d+) pairs</title>", page)]
    assert len(counts) == 20
    assert sum(counts) == len(pairs)
    assert counts[-1] == 3  # 0.99 and both 1.0 land in the last bin
    assert "threshold 0.800" in page


def test_clusters_are_largest_first_then_by_id() -> None:
    clusters = [
        Cluster(0, ("a", "b"), "a"),
        Cluster(1, ("c", "d", "e"), "c"),
        Cluster(2, ("f", "g", "h"), "f"),
    ]
    page = render_html(DedupResult(clusters, [], 8, "m", 0.5, "p"))
    assert page.index(">c</span>") < page.index(">f</span>") < page.index(">a</span>")


def test_untrusted_text_and_ids_are_escaped() -> None:
    evil = "<script>document.body.dataset.pwned=1</script>\n<img src=x onerror=alert(1)>"
    evil_id = '"><script>alert(2)</script>'
    clusters = [Cluster(0, ("good", evil_id), "good")]
    pairs = [Pair("good", evil_id, 0.9)]
    result = DedupResult(clusters, pairs, 2, "<b>m</b>", 0.8, "<i>p</i>", {"<u>k</u>": 1.0})
    html_text = render_html(
        result,
        texts={"good": "plain text\nsecond line", evil_id: evil},
        title="<script>t</script>",
    )
    page = Page(html_text)
    assert not page.find("script") and not page.find("img") and not page.find("b")
    assert not page.find("i") and not page.find("u")
    assert "<script>document.body.dataset.pwned=1</script>" in page.all_text
    assert evil_id in page.all_text and "<b>m</b>" in page.all_text
    assert "&lt;script&gt;" in html_text and "<script" not in html_text


def test_lone_surrogates_do_not_break_writing(tmp_path: Path) -> None:
    result = DedupResult([Cluster(0, ("a", "b"), "a")], [Pair("a", "b", 0.9)], 2, "m", 0.8, "p")
    out = write_html(result, tmp_path / "r.html", texts={"a": "x\udcff y", "b": "x y"})
    assert "x? y" in out.read_text(encoding="utf-8")


def test_caps_are_applied_and_stated() -> None:
    result = make_result(70, size=30)
    page = Page(render_html(result, max_clusters=5, max_members=4, max_pairs=3))
    assert page.rows["clusters"] == 5
    text = page.all_text
    assert "+65 more clusters" in text and "5 of 70 clusters" in text
    # Cluster sizes alternate 30/31; the five shown are the largest (31), each listing 4.
    assert "+27 more" in text
    assert len(page.classed("li", "more")) == 5
    assert len(page.classed("section", "pair")) == 3
    assert f"+{len(result.pairs) - 3:,} more pairs" in text


def test_diff_rows_are_capped() -> None:
    a = "\n".join(f"line {i} alpha" for i in range(100))
    b = "\n".join(f"line {i} beta" for i in range(100))
    result = DedupResult([Cluster(0, ("a", "b"), "a")], [Pair("a", "b", 0.5)], 2, "m", 0.5, "p")
    page = Page(render_html(result, texts={"a": a, "b": b}, max_diff_lines=10))
    assert page.rows["diff"] == 10
    assert "+90 more diff lines" in page.all_text


def test_diff_marks_changed_words_and_folds_unchanged_lines() -> None:
    common = [f"same line {i}" for i in range(20)]
    a = "\n".join([*common, "the quick brown fox", *common])
    b = "\n".join([*common, "the quick red fox", *common, "an added line"])
    result = DedupResult([Cluster(0, ("a", "b"), "a")], [Pair("a", "b", 0.9)], 2, "m", 0.5, "p")
    html_text = render_html(result, texts={"a": a, "b": b})
    assert "<del>brown </del>" in html_text and "<ins>red </ins>" in html_text
    page = Page(html_text)
    assert "17 unchanged lines" in page.all_text  # before the change: 20 minus 3 of context
    assert len(page.classed("tr", "ins")) == 1 and "an added line" in page.all_text
    assert len(page.classed("tr", "chg")) == 1


def test_pairs_least_similar_first_and_text_fallbacks() -> None:
    pairs = [Pair("a", "b", 0.95), Pair("a", "c", 0.85, 7), Pair("a", "d", 0.9)]
    result = DedupResult([Cluster(0, ("a", "b", "c", "d"), "a")], pairs, 4, "m", 0.8, "p")
    page = render_html(result, texts={"a": "x", "b": "x", "c": "y"})
    assert page.index("similarity 0.850, distance 7") < page.index("similarity 0.900")
    assert page.index("similarity 0.900") < page.index("similarity 0.950")
    assert "Text not available for this pair." in page  # d has no text
    assert "The two texts are identical." in page  # a and b


def test_texts_callable_is_asked_only_for_shown_documents() -> None:
    result = make_result(10, size=3)
    asked: list[object] = []

    def lookup(doc: str | int) -> str | None:
        asked.append(doc)
        return f"text of {doc}"

    render_html(result, texts=lookup, max_clusters=2, max_pairs=1)
    shown = {c.representative for c in sorted(result.clusters, key=lambda c: -c.size)[:2]}
    low = min(result.pairs, key=lambda p: p.similarity)
    assert set(asked) == shown | {low.a, low.b}


def test_long_texts_are_cut_for_the_diff() -> None:
    result = DedupResult([Cluster(0, ("a", "b"), "a")], [Pair("a", "b", 0.9)], 2, "m", 0.5, "p")
    page = render_html(
        result, texts={"a": "x" * 500 + "TAILA", "b": "x" * 500 + "TAILB"}, max_text_chars=100
    )
    assert "Texts cut at 100 characters" in page and "TAILA" not in page


def test_empty_result_says_so() -> None:
    result = DedupResult([], [], 12, "simhash", 0.9, "simhash:v1")
    page = Page(render_html(result))
    assert "No near-duplicate clusters were found." in page.all_text
    assert not page.find("table", id="clusters")
    assert page.find("p", id="histogram") and not page.find("svg")
    assert "12" in page.all_text


def test_output_is_deterministic_and_has_no_time_unless_given() -> None:
    result = make_result(4)
    texts = {d: f"text {d}" for c in result.clusters for d in c.members}
    first = render_html(result, texts=texts)
    assert first == render_html(make_result(4), texts=dict(texts))
    assert "generated" not in first
    assert "generated 2024-01-02T03:04Z" in render_html(result, generated="2024-01-02T03:04Z")


@pytest.mark.parametrize("name", ["max_clusters", "max_pairs", "max_members", "max_diff_lines"])
def test_negative_caps_are_refused(name: str) -> None:
    with pytest.raises(ConfigError, match=name):
        render_html(make_result(1), **{name: -1})  # type: ignore[arg-type]


def test_zero_thumbnail_size_is_refused() -> None:
    with pytest.raises(ConfigError, match="thumbnail_size"):
        render_html(make_result(1), thumbnail_size=0)


def test_write_html_replaces_the_file_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "report.html"
    target.write_text("old", encoding="utf-8")
    out = write_html(make_result(2), target, title="T")
    assert out == target and target.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html"]


def _images(tmp_path: Path) -> dict[str, Path]:
    image_mod = pytest.importorskip("PIL.Image")
    paths = {
        "big.png": tmp_path / "big.png",
        "photo.jpg": tmp_path / "photo.jpg",
        "alpha.png": tmp_path / "alpha.png",
    }
    image_mod.new("RGB", (300, 150), (200, 40, 40)).save(paths["big.png"])
    image_mod.new("RGB", (40, 60), (10, 90, 200)).save(paths["photo.jpg"], quality=90)
    image_mod.new("RGBA", (50, 50), (0, 200, 0, 100)).save(paths["alpha.png"])
    return paths


def test_thumbnails_are_small_inline_images(tmp_path: Path) -> None:
    image_mod = pytest.importorskip("PIL.Image")
    images = _images(tmp_path)
    ids = tuple(images)
    result = DedupResult(
        [Cluster(0, ids, ids[0])], [Pair(ids[0], ids[1], 0.95)], 3, "phash", 0.9, "phash:v1"
    )
    page = Page(render_html(result, images=images, thumbnail_size=32))
    imgs = page.find("img")
    assert len(imgs) == 5  # three in the cluster, two in the image pair
    mimes = set()
    for img in imgs:
        src = img["src"] or ""
        head, data = src.split(",", 1)
        assert head.startswith("data:image/") and head.endswith(";base64")
        mimes.add(head)
        with image_mod.open(io.BytesIO(base64.b64decode(data))) as im:
            assert max(im.size) <= 32
        assert (img["alt"] or "").startswith("thumbnail of ")
    assert mimes == {"data:image/jpeg;base64", "data:image/png;base64"}


def test_bad_images_get_a_placeholder(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    pytest.importorskip("PIL.Image")
    images = _images(tmp_path)
    (tmp_path / "junk.jpg").write_bytes(b"not an image at all")
    good = (tmp_path / "big.png").read_bytes()
    (tmp_path / "cut.png").write_bytes(good[: len(good) // 2])
    bad = {
        "junk.jpg": tmp_path / "junk.jpg",
        "cut.png": tmp_path / "cut.png",
        "gone.png": tmp_path / "gone.png",
    }
    images_all: dict[str, Path] = {**images, **bad}
    result = DedupResult([Cluster(0, tuple(images_all), "big.png")], [], 6, "phash", 0.9, "p")
    with caplog.at_level(logging.WARNING, logger="neardup.report.html"):
        page = Page(render_html(result, images=images_all))
    holders = page.classed("span", "placeholder")
    assert len(holders) == 3 and len(page.find("img")) == 3
    assert all(h["role"] == "img" and h["title"] for h in holders)
    assert sum("no thumbnail" in r.getMessage() for r in caplog.records) == 3


def test_thumbnail_cap(tmp_path: Path) -> None:
    pytest.importorskip("PIL.Image")
    images = _images(tmp_path)
    result = DedupResult([Cluster(0, tuple(images), "big.png")], [], 3, "phash", 0.9, "p")
    page = Page(render_html(result, images=images, max_thumbnails=1))
    assert len(page.find("img")) == 1
    assert "Thumbnails stop at 1 images" in page.all_text


def test_without_pillow_the_report_still_renders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "PIL.Image", None)
    (tmp_path / "a.png").write_bytes(b"\x89PNG")
    result = DedupResult([Cluster(0, ("a.png", "b.png"), "a.png")], [], 2, "phash", 0.9, "p")
    images: dict[str, str | Path] = {"a.png": tmp_path / "a.png", "b.png": "b.png"}
    page = Page(render_html(result, images=images))
    assert page.rows["clusters"] == 1 and not page.find("img")
    assert not page.classed("span", "placeholder")
    assert "Thumbnails need Pillow" in page.all_text
