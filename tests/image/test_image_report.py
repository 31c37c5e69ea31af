"""The HTML report gives every listed image cluster a thumbnail, past the details budget too."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("PIL")
from PIL import Image

from neardup.report import Cluster, DedupResult, Pair
from neardup.report.html import render_html

DATA_RE = re.compile(r'<script type="application/json" id="report-data">(.*?)</script>', re.S)


def test_every_image_cluster_shows_a_thumbnail(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    images: dict[str, Path] = {}
    clusters, pairs = [], []
    for c in range(40):
        ids = []
        for k in range(2):
            path = tmp_path / f"c{c}_{k}.png"
            Image.fromarray(rng.integers(0, 256, (40, 60, 3), dtype=np.uint8)).save(path)
            images[path.name] = path
            ids.append(path.name)
        clusters.append(Cluster(c, tuple(ids), ids[0]))
        pairs.append(Pair(ids[0], ids[1], 0.9))
    result = DedupResult(clusters, pairs, 80, "pdq", 0.88, "p")
    page = render_html(result, images=images, max_bytes=60_000)  # room for a few details
    found = DATA_RE.search(page)
    assert found is not None
    d = json.loads(found.group(1))
    with_details = sum(1 for row in d["clusters"] if row[7] >= 0)
    assert 0 < with_details < len(clusters)  # the budget ran out
    for row in d["clusters"]:  # row[2]: the representative's document key
        assert str(row[2]) in d["thumb"], row
    capped = render_html(result, images=images, max_bytes=60_000, max_thumbnails=5)
    assert "Thumbnails stop at 5 images" in capped
