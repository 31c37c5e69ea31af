#!/usr/bin/env python3
"""Measure how far image hashes move under common edits, to choose a Hamming radius.

    .venv/bin/python benchmarks/image_robustness.py [--count 200] [--markdown]

For real images found on the machine (PNG icons and documentation images of at least
64x64, flattened onto white), each edit is applied and the Hamming distance between the
hash of the original and of the edited image is recorded, for pHash (Go and imagehash
presets), dHash and aHash (64 bits each). "unrelated" pairs each image with another one.
Prints min / median / 90th percentile / max per edit and method.
"""

from __future__ import annotations

import argparse
import io
import random
import sys
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
from PIL import Image, ImageEnhance

sys.path.insert(0, str(Path(__file__).resolve().parent))
from image_bench import collect

from neardup import image as ni


def _jpeg(im: Image.Image, quality: int) -> Image.Image:
    buf = io.BytesIO()
    im.save(buf, "JPEG", quality=quality)
    buf.seek(0)
    with Image.open(buf) as out:
        out.load()
        return out.copy()


def _crop(im: Image.Image, frac: float) -> Image.Image:
    w, h = im.size
    dx, dy = int(w * frac / 2), int(h * frac / 2)
    return im.crop((dx, dy, w - dx, h - dy))


EDITS: dict[str, Callable[[Image.Image], Image.Image]] = {
    "resize 50%": lambda im: im.resize(
        (max(1, im.width // 2), max(1, im.height // 2)), Image.Resampling.LANCZOS
    ),
    "resize 200%": lambda im: im.resize((im.width * 2, im.height * 2), Image.Resampling.BICUBIC),
    "JPEG q90": lambda im: _jpeg(im, 90),
    "JPEG q50": lambda im: _jpeg(im, 50),
    "brightness +20%": lambda im: ImageEnhance.Brightness(im).enhance(1.2),
    "crop 5% each side": lambda im: _crop(im, 0.10),
    "crop 10% each side": lambda im: _crop(im, 0.20),
    "mirror": lambda im: im.transpose(Image.Transpose.FLIP_LEFT_RIGHT),
    "rotate 5°": lambda im: im.rotate(5, resample=Image.Resampling.BICUBIC, fillcolor="white"),
    "rotate 90°": lambda im: im.transpose(Image.Transpose.ROTATE_90),
}

METHODS: dict[str, ni.ImageHashParams] = {
    "phash (go)": ni.ImageHashParams(method="phash", preset="go"),
    "phash": ni.ImageHashParams(method="phash"),
    "dhash": ni.ImageHashParams(method="dhash"),
    "ahash": ni.ImageHashParams(method="ahash"),
}


def load(paths: list[str]) -> list[Image.Image]:
    out = []
    for p in paths:
        with Image.open(p) as im:
            rgba = im.convert("RGBA")
        white = Image.new("RGBA", rgba.size, "white")
        out.append(Image.alpha_composite(white, rgba).convert("RGB"))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    warnings.simplefilter("ignore", UserWarning)
    paths = [
        p for p in collect(["/usr/share/icons/**/*.png", "/usr/share/doc/**/*.png"], 4 * args.count)
    ]
    images = [im for im in load(paths) if min(im.size) >= 64][: args.count]
    print(f"# {len(images)} real images (>= 64x64), distances out of 64 bits\n")
    rows: list[tuple[str, str, np.ndarray]] = []
    base = {m: ni.hash_many(images, params=p) for m, p in METHODS.items()}
    for edit, fn in EDITS.items():
        edited = [fn(im) for im in images]
        for m, p in METHODS.items():
            hs = ni.hash_many(edited, params=p)
            rows.append(
                (edit, m, np.array([a.distance(b) for a, b in zip(base[m], hs, strict=True)]))
            )
    shuffled = list(range(len(images)))
    random.Random(0).shuffle(shuffled)
    for m in METHODS:
        d = [
            base[m][i].distance(base[m][j])
            for i, j in zip(range(len(images)), shuffled, strict=True)
            if i != j
        ]
        rows.append(("unrelated images", m, np.array(d)))
    print("| edit | method | min | median | p90 | max | share <= 10 |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for edit, m, d in rows:
        print(
            f"| {edit} | {m} | {d.min()} | {np.median(d):g} | {np.percentile(d, 90):g} | "
            f"{d.max()} | {100 * (d <= 10).mean():.0f}% |"
        )


if __name__ == "__main__":
    main()
