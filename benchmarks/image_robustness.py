#!/usr/bin/env python3
"""Measure how far image hashes move under common edits, to choose a Hamming radius.

    .venv/bin/python benchmarks/image_robustness.py [--count 200] [--markdown]
    .venv/bin/python benchmarks/image_robustness.py --set /work/bench/images [--methods ...]

With ``--set`` (a folder made by benchmarks/image_set.py: real photographs and their
mirrored, rotated, cropped, halved and JPEG copies) it runs ``neardup.dedup`` with every image
method, with and without ``dihedral``, at its default threshold, and prints recall per
transform (the share of original-copy pairs found) and the false pairs among distinct
originals (the share of original-original pairs reported), with the CPU seconds it took.

With ``--edits FOLDER`` (the same set) it makes, of every original, copies cropped at a corner
(the corner turns with the image) or centred by 2-20% of each side, and copies made darker or
brighter by 10-40%, and prints per edit how many of them pHash, PDQ and PDQ ``crops=True``
pair with their original (``neardup.dedup`` at each method's default threshold, quality rules
included), and the false pairs among the originals.

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


SET_METHODS = ("phash", "ahash", "dhash", "whash", "pdq", "crop-resistant")


def quality_on_set(
    folder: Path, methods: list[str], dihedral_modes: list[bool], pdq: dict[str, object]
) -> None:
    """Recall per transform and false pairs among originals, per method (see the docstring)."""
    import json
    import logging
    import time

    from neardup.io import Document
    from neardup.pipeline import dedup

    logging.getLogger("neardup").setLevel(logging.ERROR)  # PDQ gating warnings
    manifest: dict[str, list[str]] = json.loads((folder / "manifest.json").read_text())
    docs = [Document(f, path=folder / f) for files in manifest.values() for f in files]
    originals = sorted(files[0] for files in manifest.values())
    transforms = sorted(
        {f.split("__")[1].split(".")[0] for fs in manifest.values() for f in fs[1:]}
    )
    n_orig_pairs = len(originals) * (len(originals) - 1) // 2
    print(f"# {len(originals)} originals, {len(docs)} files, {n_orig_pairs} original pairs\n")
    head = " | ".join(transforms)
    print(f"| method | dihedral | threshold | {head} | false pairs | CPU s |")
    print("|---|---|---:|" + "---:|" * len(transforms) + "---:|---:|")
    for method in methods:
        for dihedral in dihedral_modes:
            t0 = time.process_time()
            extra = pdq if method == "pdq" else {}
            result = dedup(docs, method=method, dihedral=dihedral, batch_size=512, **extra)
            cpu = time.process_time() - t0
            found = {(p.a, p.b) for p in result.pairs} | {(p.b, p.a) for p in result.pairs}
            recall = []
            for t in transforms:
                hits = total = 0
                for files in manifest.values():
                    copy = next(f for f in files[1:] if f.split("__")[1].startswith(t))
                    total += 1
                    hits += (files[0], copy) in found
                recall.append(f"{hits / total:.2f}")
            orig_set = set(originals)
            false = sum(1 for a, b in found if a < b and a in orig_set and b in orig_set)
            from neardup.methods import make_method

            thr = make_method(method).threshold
            label = method + "".join(f" {k}={v}" for k, v in extra.items())
            print(
                f"| {label} | {'yes' if dihedral else 'no'} | {thr:.3f} | {' | '.join(recall)} | "
                f"{100 * false / n_orig_pairs:.2f}% ({false}) | {cpu:.1f} |",
                flush=True,
            )


#: Shares of each side cut off by the ``--edits`` crops.
CROP_SHARES = (0.02, 0.03, 0.05, 0.08, 0.10, 0.12, 0.15, 0.20)
#: Brightness factors of the ``--edits`` copies (PIL ``ImageEnhance.Brightness``).
BRIGHTNESS = (0.6, 0.75, 0.9, 1.1, 1.25, 1.4)
EDIT_METHODS: dict[str, tuple[str, dict[str, object]]] = {
    "phash": ("phash", {}),
    "pdq": ("pdq", {}),
    "pdq crops": ("pdq", {"crops": True}),
}


def _corner_crop(im: Image.Image, share: float, corner: int) -> Image.Image:
    """Keep ``1 - share`` of each side, anchored at corner 0..3 (top-left, top-right,
    bottom-left, bottom-right)."""
    w, h = im.size
    cw, ch = round(w * (1 - share)), round(h * (1 - share))
    left = 0 if corner in (0, 2) else w - cw
    top = 0 if corner in (0, 1) else h - ch
    return im.crop((left, top, left + cw, top + ch))


def _centre_crop(im: Image.Image, share: float) -> Image.Image:
    w, h = im.size
    cw, ch = round(w * (1 - share)), round(h * (1 - share))
    left, top = (w - cw) // 2, (h - ch) // 2
    return im.crop((left, top, left + cw, top + ch))


def set_edits() -> dict[str, Callable[[Image.Image, int], Image.Image]]:
    """The ``--edits`` copies by name: ``fn(image, index)``."""
    edits: dict[str, Callable[[Image.Image, int], Image.Image]] = {}
    for s in CROP_SHARES:
        edits[f"corner crop {s:.0%}"] = lambda im, i, s=s: _corner_crop(im, s, i % 4)
    for s in CROP_SHARES:
        edits[f"centred crop {s:.0%}"] = lambda im, i, s=s: _centre_crop(im, s)
    for f in BRIGHTNESS:
        name = f"brightness {'+' if f > 1 else '-'}{abs(f - 1):.0%}"
        edits[name] = lambda im, i, f=f: ImageEnhance.Brightness(im).enhance(f)
    return edits


def edits_on_set(folder: Path, methods: list[str]) -> None:
    """Copies per edit that each method pairs with their original (see the docstring)."""
    import json
    import logging
    import tempfile
    import time

    from neardup.io import Document
    from neardup.pipeline import dedup

    logging.getLogger("neardup").setLevel(logging.ERROR)  # PDQ gating warnings
    manifest: dict[str, list[str]] = json.loads((folder / "manifest.json").read_text())
    names = sorted(files[0] for files in manifest.values())
    originals = []
    for n in names:
        with Image.open(folder / n) as im:
            originals.append(im.convert("RGB"))
    print(f"# {len(names)} originals of {folder}; copies paired with their original\n")
    print("| edit | " + " | ".join(methods) + " |")
    print("|---|" + "---:|" * len(methods))
    cpu = dict.fromkeys(methods, 0.0)
    false = dict.fromkeys(methods, 0)
    with tempfile.TemporaryDirectory(prefix="neardup-edits-") as tmp:
        docs = [Document(n, path=folder / n) for n in names]
        for edit, fn in set_edits().items():
            copies = []
            for i, (n, im) in enumerate(zip(names, originals, strict=True)):
                target = Path(tmp) / f"copy-{i}.png"
                fn(im, i).save(target)
                copies.append(Document(f"copy::{n}", path=target))
            row = []
            for label in methods:
                method, options = EDIT_METHODS[label]
                t0 = time.process_time()
                result = dedup([*docs, *copies], method=method, **options)  # type: ignore[arg-type]
                cpu[label] += time.process_time() - t0
                found = {frozenset((str(p.a), str(p.b))) for p in result.pairs}
                hits = sum(frozenset((n, f"copy::{n}")) in found for n in names)
                false[label] = max(
                    false[label],
                    sum(1 for p in found if all(not x.startswith("copy::") for x in p)),
                )
                row.append(f"{hits}/{len(names)}")
            print(f"| {edit} | " + " | ".join(row) + " |", flush=True)
    print("| false pairs among originals | " + " | ".join(str(false[m]) for m in methods) + " |")
    print("| CPU s | " + " | ".join(f"{cpu[m]:.1f}" for m in methods) + " |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--set", type=Path, default=None, help="folder from image_set.py")
    ap.add_argument("--methods", nargs="*", default=list(SET_METHODS))
    ap.add_argument("--dihedral", choices=["both", "yes", "no"], default="both")
    ap.add_argument("--crops", action="store_true", help="pdq: index 90%% crops too")
    ap.add_argument("--min-quality", type=int, default=None, help="pdq: quality gate")
    ap.add_argument(
        "--edits", type=Path, default=None, help="folder from image_set.py: crop/brightness sweep"
    )
    ap.add_argument("--edit-methods", nargs="*", default=list(EDIT_METHODS))
    args = ap.parse_args()
    warnings.simplefilter("ignore", UserWarning)
    if args.edits is not None:
        edits_on_set(args.edits, args.edit_methods)
        return
    if args.set is not None:
        modes = {"both": [False, True], "yes": [True], "no": [False]}[args.dihedral]
        pdq: dict[str, object] = {"crops": True} if args.crops else {}
        if args.min_quality is not None:
            pdq["min_quality"] = args.min_quality
        quality_on_set(args.set, args.methods, modes, pdq)
        return
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
