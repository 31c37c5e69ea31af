#!/usr/bin/env python3
"""Recall per perturbation kind and strength, and false positives, for every method.

    .venv/bin/python benchmarks/perturbation_report.py [--docs 300] [--images 150]

Text: ``--docs`` documents from ``benchmarks/corpus.py`` (text already on the machine), each
perturbed by every kind of ``neardup.evaluate.synthetic_text`` at strengths 0.05, 0.1, 0.2
and 0.4; MinHash, SimHash, CTPH and TLSH run at their default thresholds over originals and
variants together. Images: PNGs from examples/images and /usr/share/icons (at least 64 px a
side), perturbed by ``synthetic_images``; pHash at its default threshold. Prints Markdown
tables: recall (variant paired with its original) per kind and strength, then pairs reported
between two originals (false positives unless the corpus itself holds near-duplicates).
"""

from __future__ import annotations

import argparse
import glob
import logging
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import load_corpus
from neardup.evaluate import (
    PerturbationReport,
    perturbation_report,
    synthetic_images,
    synthetic_text,
)
from neardup.methods import DEFAULT_THRESHOLDS

STRENGTHS = (0.05, 0.1, 0.2, 0.4)
TEXT_METHODS = ("minhash", "simhash", "ctph", "tlsh")


def table(reports: list[PerturbationReport]) -> str:
    head = (
        "| kind | strength | " + " | ".join(f"{r.method} ({r.threshold:g})" for r in reports) + " |"
    )
    lines = [head, "|---|---:|" + "---:|" * len(reports)]
    for i, (kind, s, n, _) in enumerate(reports[0].rows):
        cells = [f"{r.rows[i][3] / n:.2f}" for r in reports]
        lines.append(f"| {kind} | {s:g} | " + " | ".join(cells) + " |")
    lines.append(
        f"| pairs among {reports[0].originals} originals | | "
        + " | ".join(str(r.original_pairs) for r in reports)
        + " |"
    )
    lines.append(
        "| pairs across groups | | " + " | ".join(str(r.cross_pairs) for r in reports) + " |"
    )
    return "\n".join(lines)


def pick_images(paths: list[str], n: int) -> list[str]:
    """Up to ``n`` images of at least 64 px a side with real content once flattened on white
    (grey-level spread over 40: most icons are a glyph on transparency), one per file name."""
    import numpy as np
    from PIL import Image

    out: list[str] = []
    names: set[str] = set()
    for p in paths:
        name = Path(p).name
        if name in names:
            continue
        with Image.open(p) as im:
            if min(im.size) < 64:
                continue
            rgba = im.convert("RGBA")
        flat = Image.alpha_composite(Image.new("RGBA", rgba.size, "white"), rgba).convert("L")
        if float(np.asarray(flat, dtype=np.float64).std()) > 40:
            names.add(name)
            out.append(p)
            if len(out) >= n:
                break
    return out


def text_report(n_docs: int) -> None:
    """Print the text table."""
    docs = [d for d in load_corpus(5.0) if len(d.split()) >= 100][:n_docs]
    corpus = synthetic_text([(f"d{i}", t) for i, t in enumerate(docs)], strengths=STRENGTHS, seed=1)
    print(
        f"## Text: {len(docs)} documents + {len(corpus.variants)} variants "
        f"({sum(len(t) for t in docs) / len(docs) / 1024:.1f} KB mean)\n"
    )
    reports = []
    for m in TEXT_METHODS:
        t0 = time.perf_counter()
        reports.append(perturbation_report(corpus, m, threshold=DEFAULT_THRESHOLDS[m]))
        print(f"<!-- {m}: {time.perf_counter() - t0:.1f} s -->")
    print(table(reports))


def image_report(n_images: int) -> None:
    """Print the image table (pHash at its default threshold and at 0.75)."""
    paths = sorted(glob.glob("examples/images/*.png")) + sorted(
        glob.glob("/usr/share/icons/**/*.png", recursive=True)
    )
    with tempfile.TemporaryDirectory() as tmp:
        images = synthetic_images(
            pick_images(paths, n_images), out_dir=tmp, strengths=STRENGTHS, min_size=64
        )
        print(f"\n## Images: {len(images.originals)} images + {len(images.variants)} variants\n")
        reports = [
            perturbation_report(images, "phash", threshold=DEFAULT_THRESHOLDS["phash"]),
            perturbation_report(images, "phash", threshold=0.75),
        ]
        print(table(reports))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--docs", type=int, default=300)
    ap.add_argument("--images", type=int, default=150)
    ap.add_argument("--only", choices=["text", "images"])
    args = ap.parse_args()
    logging.getLogger("neardup").setLevel(logging.ERROR)
    if args.only != "images":
        text_report(args.docs)
    if args.only != "text":
        image_report(args.images)


if __name__ == "__main__":
    main()
