"""The HTML report in a real browser: headless Chromium loads it offline from a file:// URL.

The page's script runs (the policy allows it by hash), builds the list, and marks the body
``data-ready``; ``--dump-dom`` prints the DOM after that. Console messages (errors, policy
violations) go to Chromium's log on stderr as ``CONSOLE`` lines; there must be none.
Skipped only when no ``chromium`` is on PATH (the Makefile and ``.ci/run`` install Debian's).
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import zlib
from html.parser import HTMLParser
from pathlib import Path

import pytest

from neardup.report import Cluster, DedupResult, Pair
from neardup.report.html import write_html

pytestmark = pytest.mark.slow

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
#: Flags that keep Chromium offline and away from any existing profile; console to stderr.
OFFLINE_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--enable-logging=stderr",
    "--v=0",
]
INJECTED = "<script>document.body.setAttribute('data-pwned', 'yes')</script>"
N_CLUSTERS = 120


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = "\n".join(
        f"Paragraph {i}: the quick brown fox jumps over the lazy dog." for i in range(8)
    )
    texts: dict[str, str] = {}
    clusters = []
    pairs = []
    for k in range(N_CLUSTERS):
        members = tuple(f"c{k}/doc{m}.txt" for m in range(2 + k % 3))
        for m, d in enumerate(members):
            texts[d] = base.replace("lazy", f"lazy{k}").replace(f"Paragraph {m}:", f"Para {m}:")
        clusters.append(Cluster(k, members, members[0]))
        pairs += [
            Pair(members[0], d, 0.8 + ((k * 7 + j) % 19) / 100) for j, d in enumerate(members[1:])
        ]
    texts["c2/doc0.txt"] = "a needle-word only here\n" + texts["c2/doc0.txt"]
    texts["c2/doc1.txt"] += "\n" + INJECTED
    result = DedupResult(
        clusters, pairs, 400, "minhash", 0.8, "minhash-606d34eaff98478c", {"seconds_total": 0.25}
    )
    path = tmp_path_factory.mktemp("report") / "report.html"
    return write_html(result, path, texts=texts)


def chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    if CHROMIUM is None:
        pytest.skip("chromium is not on PATH (install Debian's chromium package to run this)")
    profile = tmp_path / "profile"
    profile.mkdir(exist_ok=True)
    env = {**os.environ, "HOME": str(tmp_path)}  # keep Chromium's dot-files out of $HOME
    proc = subprocess.run(
        [CHROMIUM, *OFFLINE_FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=tmp_path,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    console = [line for line in proc.stderr.splitlines() if ":CONSOLE" in line]
    assert console == [], console  # no error, no policy violation, no log at all
    return proc


class Dom(HTMLParser):
    def __init__(self, dom: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.feed(dom)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def find(self, tag: str, cls: str | None = None) -> list[dict[str, str | None]]:
        return [
            a
            for t, a in self.tags
            if t == tag and (cls is None or cls in (a.get("class") or "").split())
        ]

    @property
    def body(self) -> dict[str, str | None]:
        return self.find("body")[0]

    @property
    def all_text(self) -> str:
        return "".join(self.text)


def test_the_script_lists_a_page_of_clusters_and_runs_nothing_injected(
    report: Path, tmp_path: Path
) -> None:
    dom = Dom(chromium(tmp_path, "--dump-dom", report.as_uri()).stdout)
    assert dom.body.get("data-ready") == "1" and "data-error" not in dom.body
    assert "data-pwned" not in dom.body
    rows = dom.find("details", "cluster")
    assert len(rows) == 50  # one page
    assert f"Page 1 of 3 \u00b7 {N_CLUSTERS} of {N_CLUSTERS} clusters" in dom.all_text
    assert rows[0]["id"] == "cluster-2"  # the largest first (4 members), then by id
    assert len(dom.find("rect")) == 20 and dom.find("svg")


def test_search_paging_and_an_opened_cluster_with_its_marked_diff(
    report: Path, tmp_path: Path
) -> None:
    found = Dom(chromium(tmp_path, "--dump-dom", report.as_uri() + "#q=needle-word&open=1").stdout)
    rows = found.find("details", "cluster")
    assert [a["id"] for a in rows] == ["cluster-2"] and "open" in rows[0]
    # opened: members (the representative marked), pairs, and the diff with shared shingles
    assert found.find("li", "rep") and "Members (" in found.all_text
    assert "least similar first" in found.all_text
    assert found.find("table", "diff") and found.find("mark", "sh") and found.find("ins")
    assert INJECTED in found.all_text and "data-pwned" not in found.body  # shown, never run
    last = Dom(chromium(tmp_path, "--dump-dom", report.as_uri() + "#sort=id&page=3").stdout)
    ids = [a["id"] for a in last.find("details", "cluster")]
    assert ids == [f"cluster-{k}" for k in range(100, N_CLUSTERS)]
    assert "Page 3 of 3" in last.all_text


def test_image_thumbnails_open_in_the_overlay(tmp_path: Path) -> None:
    image_mod = pytest.importorskip("PIL.Image")
    paths = {}
    for k, size in enumerate([(800, 600), (400, 300), (640, 480)]):
        p = tmp_path / f"img{k}.png"
        image_mod.new("RGB", size, (40 * k, 120, 200)).save(p)
        paths[p.name] = p
    ids = tuple(paths)
    pairs = [Pair(ids[0], ids[1], 0.97), Pair(ids[0], ids[2], 0.95)]
    result = DedupResult([Cluster(0, ids, ids[0])], pairs, 3, "phash", 0.84, "image-1")
    report = write_html(result, tmp_path / "images.html", images=paths, links=paths)
    dom = Dom(chromium(tmp_path, "--dump-dom", report.as_uri() + "#open=1&overlay=1").stdout)
    assert len(dom.find("img", "thumb")) == 7  # three members, both sides of the two pairs
    overlay = [a for t, a in dom.tags if a.get("id") == "overlay"]
    assert overlay and "open" in (overlay[0].get("class") or "")
    big = [a for t, a in dom.tags if a.get("id") == "overlay-img"]
    assert big and (big[0].get("src") or "").startswith("data:image/")
    link = [a for t, a in dom.tags if a.get("id") == "overlay-link"]
    assert link and link[0].get("href") == paths["img0.png"].resolve().as_uri()


def _png_pixels(data: bytes) -> tuple[int, int, set[bytes]]:
    """Width, height and a sample of distinct pixel rows' bytes of an 8-bit RGB(A) PNG."""
    width, height = struct.unpack(">II", data[16:24])
    pos, idat = 8, b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        if kind == b"IDAT":
            idat += data[pos + 8 : pos + 8 + length]
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = len(raw) // height
    return width, height, {raw[r * stride + 1 : (r + 1) * stride] for r in range(0, height, 40)}


def test_screenshot_is_a_full_width_page(report: Path, tmp_path: Path) -> None:
    shot = tmp_path / "report.png"
    chromium(
        tmp_path, "--window-size=1400,1600", f"--screenshot={shot}", report.as_uri() + "#open=1"
    )
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height, rows = _png_pixels(data)
    assert (width, height) == (1400, 1600)
    assert len(rows) > 20  # sampled rows differ: text, bars, diffs, not a blank page
    assert len(data) > 60_000, len(data)
