"""The HTML report: the data block, every cluster reachable, budgets, escaping, thumbnails."""

from __future__ import annotations

import base64
import io
import json
import logging
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from neardup.errors import ConfigError
from neardup.report import Cluster, DedupResult, Pair
from neardup.report.assets import SCRIPT, script_hash
from neardup.report.diff import render_diff, shared_shingles
from neardup.report.html import describe_method, render_html, write_html
from neardup.report.sources import DocumentSource

DATA_RE = re.compile(r'<script type="application/json" id="report-data">(.*?)</script>', re.S)


def data(page: str) -> dict[str, Any]:
    found = DATA_RE.search(page)
    assert found is not None
    out: dict[str, Any] = json.loads(found.group(1))
    return out


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
        "minhash-606d34eaff98478c",
        {"seconds_total": 1.5, "candidates": 42.0},
    )


def test_structure_policy_histogram_and_method_description() -> None:
    page = render_html(make_result(3), title="My corpus")
    assert page.startswith("<!DOCTYPE html>") and "<title>My corpus</title>" in page
    # exactly two scripts: the inert data block and the one the policy allows by hash
    assert page.count("<script") == 2 and f"<script>{SCRIPT}</script>" in page
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page)
    assert csp is not None
    assert "default-src 'none'" in csp.group(1) and f"script-src {script_hash()}" in csp.group(1)
    assert "unsafe-inline'" not in csp.group(1).split("script-src")[1]
    assert page.count("<rect") == 20 and ">pairs</text>" in page
    assert "similarity of the pair</text>" in page
    assert "MinHash over word 5-shingles" in page and "minhash-606d34eaff98478c" in page
    assert "1.500" in page and "candidates" in page
    assert describe_method("center-less", 0.5, "center").startswith("Method 'center-less'")


def test_histogram_counts_every_pair_and_marks_the_threshold() -> None:
    pairs = [Pair("a", f"b{i}", s) for i, s in enumerate([0.81, 0.82, 0.9, 0.99, 1.0, 1.0])]
    result = DedupResult([Cluster(0, ("a", *(p.b for p in pairs)), "a")], pairs, 7, "m", 0.8, "p")
    page = render_html(result)
    counts = [int(n) for n in re.findall(r"<title>[\d.]+ to [\d.]+: (\d+) pairs</title>", page)]
    assert len(counts) == 20 and sum(counts) == len(pairs)
    assert counts[-1] == 3  # 0.99 and both 1.0 land in the last bin
    assert "threshold 0.800" in page


def test_every_cluster_is_in_the_index_largest_first_with_its_similarity_range() -> None:
    result = make_result(260)
    d = data(render_html(result))
    assert len(d["clusters"]) == 260 and d["pageSize"] == 50
    sizes = [c[1] for c in d["clusters"]]
    assert sizes == sorted(sizes, reverse=True)
    ids = [c[0] for c in d["clusters"]]
    assert ids[:3] == [1, 3, 5]  # size 4 first, then by id
    by_id = {c.id: c for c in result.clusters}
    for cid, size, rep, lo, hi, npairs, members, _detail in d["clusters"]:
        sims = [p.similarity for p in result.pairs if p.a in by_id[cid].members]
        assert (lo, hi) == (round(min(sims), 4), round(max(sims), 4))
        assert size == by_id[cid].size and npairs == len(sims)
        assert d["docs"][rep] == by_id[cid].representative
        assert [d["docs"][m] for m in members] == list(by_id[cid].members)


def test_pairs_are_grouped_by_cluster_least_similar_first() -> None:
    clusters = [Cluster(0, ("a", "b", "c"), "a"), Cluster(1, ("x", "y"), "x")]
    pairs = [Pair("a", "b", 0.95), Pair("a", "c", 0.85), Pair("x", "y", 0.9), Pair("c", "x", 0.81)]
    result = DedupResult(clusters, pairs, 5, "minhash", 0.8, "p", clustering="center")
    d = data(render_html(result))
    first = d["details"][d["clusters"][0][7]]
    assert "Pairs (2)" in first and first.index("0.850") < first.index("0.950")
    assert ">x<" not in first and "1 more accepted pairs join a member" in first
    assert "Pairs (1)" in d["details"][d["clusters"][1][7]]
    assert d["clusters"][0][3:6] == [0.85, 0.95, 2]


def test_texts_follow_the_shown_order_and_are_read_only_for_embedded_clusters() -> None:
    # The old report read text for the first clusters by id but showed the largest ones.
    small = [Cluster(k, (f"s{k}a", f"s{k}b"), f"s{k}a") for k in range(60)]
    big = [Cluster(60 + k, tuple(f"b{k}-{m}" for m in range(5)), f"b{k}-0") for k in range(3)]
    pairs = [Pair(c.members[0], m, 0.9) for c in small + big for m in c.members[1:]]
    asked: list[str] = []

    def text(doc: str) -> str:
        asked.append(doc)
        return f"text of {doc} " * 20

    result = DedupResult(small + big, pairs, 200, "minhash", 0.8, "p")
    page = render_html(result, texts=text, max_bytes=40_000)
    d = data(page)
    embedded = [c for c in d["clusters"] if c[7] >= 0]
    assert [c[0] for c in d["clusters"][:3]] == [60, 61, 62]
    assert embedded and embedded == d["clusters"][: len(embedded)]  # a prefix, largest first
    assert d["withDetails"] == len(embedded) < len(d["clusters"])
    for c in embedded:
        assert all(str(m) in d["snip"] for m in c[6])  # every listed member has its text
    # texts are asked for the embedded clusters, and the one that no longer fit the budget
    wanted = {d["docs"][m] for c in d["clusters"][: len(embedded) + 1] for m in c[6]}
    assert set(asked) <= wanted
    assert f"embedded for the {len(embedded)} largest clusters" in page


def test_a_hundred_thousand_clusters_stay_within_the_budget() -> None:
    clusters = [Cluster(k, (f"{k}a", f"{k}b"), f"{k}a") for k in range(100_000)]
    pairs = [Pair(c.members[0], c.members[1], 0.9) for c in clusters]
    result = DedupResult(clusters, pairs, 200_000, "simhash", 0.9, "p")
    page = render_html(result, max_bytes=1_000_000)
    d = data(page)
    assert len(d["clusters"]) == 100_000
    assert sum(len(x) for x in d["details"]) <= 1_000_000
    assert len(page.encode()) < 9_000_000  # 1 MB of details, the index, the histogram
    few = DedupResult(clusters[:1000], pairs[:1000], 2000, "simhash", 0.9, "p")
    capped = data(render_html(few, max_clusters=10, max_bytes=0))
    assert len(capped["clusters"]) == 10 and capped["details"] == []


def test_untrusted_text_and_ids_are_escaped() -> None:
    evil = "<script>document.body.dataset.pwned=1</script>\n<img src=x onerror=alert(1)>"
    evil_id = '"><script>alert(2)</script>'
    clusters = [Cluster(0, ("good", evil_id), "good")]
    pairs = [Pair("good", evil_id, 0.9)]
    result = DedupResult(clusters, pairs, 2, "<b>m</b>", 0.8, "<i>p</i>", {"<u>k</u>": 1.0})
    page = render_html(result, texts={"good": "fine text\n" + evil, evil_id: "fine text\n"})
    assert page.count("<script") == 2 and "<b>m</b>" not in page
    outside = DATA_RE.sub("", page)  # the page itself carries no document text unescaped
    assert "<img src=x" not in outside and "pwned" not in outside
    d = data(page)
    assert evil_id in d["docs"]  # plain strings, which the script sets as textContent
    assert "<img src=x" in d["snip"][str(d["docs"].index("good"))]
    assert "&lt;script&gt;" in d["details"][0] and "<script" not in d["details"][0]
    assert "<img" not in d["details"][0]


def test_lone_surrogates_do_not_break_writing(tmp_path: Path) -> None:
    result = DedupResult(
        [Cluster(0, ("a\ud800", "b"), "b")], [Pair("b", "a\ud800", 0.9)], 2, "m", 0.8, "p"
    )
    out = write_html(result, tmp_path / "r.html", texts={"a\ud800": "x\udcff y", "b": "x y z"})
    assert out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_diff_marks_shared_shingles_and_changed_words() -> None:
    a = "alpha beta gamma delta\nsame line here\n" + "x\n" * 10 + "epsilon zeta eta"
    b = "alpha beta gamma omega\nsame line here\n" + "x\n" * 10 + "epsilon zeta theta"
    frag = render_diff(a, b, ("a", "b"), max_lines=100)
    assert '<mark class="sh">alpha beta gamma</mark>' in frag
    assert "<del>delta" in frag and "<ins>omega" in frag
    assert "unchanged lines" in frag
    sh = shared_shingles(a, b)
    assert 0 < sh.shared < sh.union and f"Jaccard {sh.jaccard:.3f}" in frag
    assert sh.marks_a[0] == (0, len("alpha beta gamma"))
    capped = render_diff(a, b, ("a", "b"), max_lines=2)
    assert "more diff lines" in capped


def test_negative_caps_and_bad_sizes_are_refused() -> None:
    for name in ("max_clusters", "max_pairs", "max_members", "max_bytes", "max_diffs"):
        with pytest.raises(ConfigError, match=name):
            render_html(make_result(1), **{name: -1})
    with pytest.raises(ConfigError, match="thumbnail_size"):
        render_html(make_result(1), thumbnail_size=0)


def test_output_is_deterministic_and_empty_result_says_so(tmp_path: Path) -> None:
    r = make_result(4)
    assert render_html(r) == render_html(r) and "Generated" not in render_html(r)
    assert "Generated 2026-01-01." in render_html(r, generated="2026-01-01")
    empty = render_html(DedupResult([], [], 5, "simhash", 0.9, "p"))
    assert "No near-duplicate clusters were found" in empty and 'id="q"' in empty
    target = tmp_path / "report.html"
    target.write_text("old", encoding="utf-8")
    assert write_html(r, target) == target
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html"]


def test_members_link_to_their_files(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x")
    result = make_result(1)
    links = {"d0-0": tmp_path / "a.txt", "d0-1": "https://example.org/b", "d0-2": "ftp://x/y"}
    d = data(render_html(result, links=links))
    href = {d["docs"][int(k)]: v for k, v in d["href"].items()}
    assert href == {
        "d0-0": (tmp_path / "a.txt").resolve().as_uri(),
        "d0-1": "https://example.org/b",
    }


def _images(tmp_path: Path) -> dict[str, Path]:
    image_mod = pytest.importorskip("PIL.Image")
    paths = {n: tmp_path / n for n in ("big.png", "photo.jpg", "alpha.png")}
    image_mod.new("RGB", (600, 300), (200, 40, 40)).save(paths["big.png"])
    image_mod.new("RGB", (40, 60), (10, 90, 200)).save(paths["photo.jpg"], quality=90)
    image_mod.new("RGBA", (50, 50), (0, 200, 0, 100)).save(paths["alpha.png"])
    return paths


def test_thumbnails_placeholders_and_cap(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    image_mod = pytest.importorskip("PIL.Image")
    images: dict[str, Path] = {**_images(tmp_path), "junk.jpg": tmp_path / "junk.jpg"}
    (tmp_path / "junk.jpg").write_bytes(b"not an image at all")
    ids = tuple(images)
    result = DedupResult(
        [Cluster(0, ids, ids[0])], [Pair(ids[0], ids[1], 0.95)], 4, "phash", 0.9, "p"
    )
    with caplog.at_level(logging.WARNING, logger="neardup.report.html"):
        page = render_html(result, images=images)
    d = data(page)
    assert len(d["thumb"]) == 3 and list(d["bad"].values()) and "no thumbnail" in caplog.text
    mimes = set()
    for uri in d["thumb"].values():
        head, raw = uri.split(",", 1)
        mimes.add(head)
        with image_mod.open(io.BytesIO(base64.b64decode(raw))) as im:
            assert max(im.size) <= 256
    assert mimes == {"data:image/jpeg;base64", "data:image/png;base64"}
    with image_mod.open(io.BytesIO(base64.b64decode(d["thumb"]["0"].split(",")[1]))) as im:
        assert im.size == (256, 128)  # larger thumbnails; the overlay shows them whole
    assert 'class="pairimgs"' in d["details"][0]  # an image pair shows both pictures
    capped = render_html(result, images=images, max_thumbnails=1)
    assert len(data(capped)["thumb"]) == 1 and "Thumbnails stop at 1 images" in capped


def test_without_pillow_the_report_still_renders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "PIL.Image", None)
    (tmp_path / "a.png").write_bytes(b"\x89PNG")
    result = DedupResult([Cluster(0, ("a.png", "b.png"), "a.png")], [], 2, "phash", 0.9, "p")
    page = render_html(result, images={"a.png": tmp_path / "a.png", "b.png": "b.png"})
    assert data(page)["thumb"] == {} and "Thumbnails need Pillow" in page


def test_document_source_spools_records_and_reloads_files_lazily(tmp_path: Path) -> None:
    from neardup.io import Document

    f = tmp_path / "f.txt"
    f.write_text("file text")
    loads: list[Path] = []

    def loader(path: Path) -> str:
        loads.append(path)
        return path.read_text()

    with DocumentSource(loader=loader, max_chars=5) as src:
        docs = [Document("r", "record text \ud800"), Document("f", "file text", f)]
        assert list(src.tap(docs)) == docs
        assert loads == []  # nothing is read while the run streams
        assert src.text("r") == "recor" and src.path("r") is None
        assert src.text("f") == "file text" and loads == [f] and src.path("f") == f
        f.unlink()
        assert src.text("f") is None  # unreadable now: logged, not raised
    assert src.text("r") is None  # closed: the spool is gone
