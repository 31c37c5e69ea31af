"""The HTML report in a real browser: headless Chromium loads it offline from a file:// URL.

Skipped only when no ``chromium`` is on PATH (the Makefile and ``.ci/run`` install Debian's).
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from neardup.report import Cluster, DedupResult, Pair
from neardup.report.html import write_html

pytestmark = pytest.mark.slow

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
#: Flags that keep Chromium offline and away from any existing profile.
OFFLINE_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
INJECTED = "<script>document.body.setAttribute('data-pwned', 'yes')</script>"


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = "\n".join(
        f"Paragraph {i}: the quick brown fox jumps over the lazy dog." for i in range(8)
    )
    texts = {
        f"doc{i}.txt": base.replace("lazy", "lazy" if i == 0 else f"sleepy{i}") for i in range(6)
    }
    texts["evil.txt"] = base + "\n" + INJECTED
    clusters = [
        Cluster(0, ("doc0.txt", "doc1.txt", "doc2.txt", "evil.txt"), "doc0.txt"),
        Cluster(1, ("doc3.txt", "doc4.txt", "doc5.txt"), "doc3.txt"),
    ]
    pairs = [
        Pair("doc0.txt", "doc1.txt", 0.91),
        Pair("doc0.txt", "doc2.txt", 0.88),
        Pair("doc0.txt", "evil.txt", 0.84),
        Pair("doc3.txt", "doc4.txt", 0.86),
        Pair("doc3.txt", "doc5.txt", 0.97),
    ]
    result = DedupResult(
        clusters, pairs, 10, "minhash", 0.8, "minhash:v1:num_perm=128", {"seconds_total": 0.25}
    )
    path = tmp_path_factory.mktemp("report") / "report.html"
    return write_html(result, path, texts=texts)


def chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    if CHROMIUM is None:
        pytest.skip("chromium is not on PATH (install Debian's chromium package to run this)")
    profile = tmp_path / "profile"
    profile.mkdir()
    env = {**os.environ, "HOME": str(tmp_path)}  # keep Chromium's dot-files out of $HOME
    return subprocess.run(
        [CHROMIUM, *OFFLINE_FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=tmp_path,
        check=False,
    )


class Dom(HTMLParser):
    def __init__(self, dom: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self._table: list[str | None] = []
        self.cluster_rows = 0
        self.feed(dom)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self.tags.append((tag, a))
        if tag == "table":
            self._table.append(a.get("id"))
        elif tag == "tr" and self._table and self._table[-1] == "clusters":
            self.cluster_rows += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "table" and self._table:
            self._table.pop()

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def test_chromium_renders_the_clusters_table_and_histogram(report: Path, tmp_path: Path) -> None:
    proc = chromium(tmp_path, "--dump-dom", report.as_uri())
    assert proc.returncode == 0, proc.stderr[-2000:]
    dom = Dom(proc.stdout)
    ids = {a.get("id") for _, a in dom.tags}
    assert {"clusters", "histogram", "summary", "pairs"} <= ids
    assert dom.cluster_rows == 3  # the header row and two clusters
    svg = [a for t, a in dom.tags if t == "svg" and a.get("id") == "histogram"]
    assert svg and svg[0].get("role") == "img"
    assert sum(t == "rect" for t, _ in dom.tags) == 20
    # The injected script is shown as text, never parsed as an element, never run.
    assert not [t for t, _ in dom.tags if t == "script"]
    assert INJECTED in "".join(dom.text)
    assert not [a for t, a in dom.tags if t == "body" and "data-pwned" in a]


def test_chromium_screenshot_is_a_real_page(report: Path, tmp_path: Path) -> None:
    shot = tmp_path / "report.png"
    proc = chromium(tmp_path, "--window-size=1280,1600", f"--screenshot={shot}", report.as_uri())
    assert proc.returncode == 0, proc.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == (1280, 1600)
    # A blank or error page compresses to a few kilobytes; the report has text, bars, diffs.
    assert len(data) > 40_000, len(data)
