#!/usr/bin/env python3
"""Build the transformed image set the image benchmarks measure (not committed).

    .venv/bin/python benchmarks/image_set.py [--out /work/bench/images] [--sources GLOB ...]

Originals are real photographs found on the machine: scikit-image's bundled sample photos
(from the installed package, or a folder they were unpacked into, default
``/work/bench/photos``), scikit-learn's two sample photos and the tests' photo. Each photo of
at least 256 pixels a side is cut into its four quadrants, so the originals are distinct,
non-overlapping photographs (about 100), not icons. Every original gets five copies:
``mirror`` (left-right), ``rot90`` (90 degrees counter-clockwise), ``crop10`` (5% cut from
each side: 10% of each dimension), ``half`` (half size, Lanczos) and ``jpeg50`` (JPEG
quality 50). Files are ``<original>__<transform>.png`` (``.jpg`` for JPEG), so the ground
truth is in the names; ``manifest.json`` lists them.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
from pathlib import Path

from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SOURCES = [
    "/work/bench/photos/**/*.png",
    "/work/bench/photos/**/*.jpg",
    "**/site-packages/skimage/data/*.png",
    "**/site-packages/skimage/data/*.jpg",
    "**/site-packages/sklearn/datasets/images/*.jpg",
    str(ROOT / "tests/golden/vectors/images/photo.png"),
]
#: skimage files that are not photographs (synthetic patterns, logos, tiny test files).
NOT_PHOTOS = {"chessboard_GRAY.png", "chessboard_RGB.png", "logo.png", "phantom.png", "horse.png"}
TRANSFORMS = ("mirror", "rot90", "crop10", "half", "jpeg50")


def find_photos(patterns: list[str]) -> list[Path]:
    found: dict[str, Path] = {}
    for pattern in patterns:
        base = pattern if os.path.isabs(pattern) else os.path.join(os.sys.prefix, pattern)
        for p in glob.glob(base, recursive=True):
            path = Path(p)
            if path.name in NOT_PHOTOS or path.name in found:
                continue
            try:
                with Image.open(path) as im:
                    if min(im.size) >= 256:
                        found[path.name] = path
            except Exception:  # not an image
                continue
    return [found[k] for k in sorted(found)]


def transformed(im: Image.Image) -> dict[str, Image.Image]:
    w, h = im.size
    dx, dy = int(w * 0.05), int(h * 0.05)
    return {
        "mirror": im.transpose(Image.Transpose.FLIP_LEFT_RIGHT),
        "rot90": im.transpose(Image.Transpose.ROTATE_90),
        "crop10": im.crop((dx, dy, w - dx, h - dy)),
        "half": im.resize((w // 2, h // 2), Image.Resampling.LANCZOS),
        "jpeg50": im,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", default="/work/bench/images")
    ap.add_argument("--sources", nargs="*", default=DEFAULT_SOURCES)
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for old in out.iterdir():
        old.unlink()
    manifest: dict[str, list[str]] = {}
    for photo in find_photos(args.sources):
        with Image.open(photo) as im:
            rgb = im.convert("RGB")
        w, h = rgb.size
        for qi, (x, y) in enumerate([(0, 0), (w // 2, 0), (0, h // 2), (w // 2, h // 2)]):
            tile = rgb.crop((x, y, x + w // 2, y + h // 2))
            name = f"{photo.stem}_q{qi}"
            tile.save(out / f"{name}.png")
            files = [f"{name}.png"]
            for t, img in transformed(tile).items():
                if t == "jpeg50":
                    img.save(out / f"{name}__{t}.jpg", quality=50)
                    files.append(f"{name}__{t}.jpg")
                else:
                    img.save(out / f"{name}__{t}.png")
                    files.append(f"{name}__{t}.png")
            manifest[name] = files
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    print(f"{len(manifest)} originals, {sum(len(v) for v in manifest.values())} files in {out}")


if __name__ == "__main__":
    main()
