#!/usr/bin/env python3
"""Compare rules for PDQ's low-quality hashes on the transformed image set.

    .venv/bin/python benchmarks/image_quality_rules.py [--set /work/bench/images]

Runs ``neardup.dedup(method="pdq", dihedral=True, crops=True, min_quality=0, low_quality=0)``
(no quality rule) once at Meta's distance 31 (every rule below only removes pairs from that
run), reads each file's PDQ quality, and applies each rule to the pairs (the default rule of
the ``pdq`` method is ``d<=16 if any q<50``):

- ``drop q<50``: Meta's suggestion, hashes of quality below 50 are discarded (either image);
- ``drop both q<50``: a pair is dropped only when both images are below 50;
- ``d<=R if any q<50``: a pair with a low-quality image must be within R instead of 31;
- ``d<=R if both q<50``: only pairs of two low-quality images need R;
- ``none``: no gate.

Prints recall per transform (original-copy pairs found), false pairs among distinct
originals, and the distances of the low-quality originals to their copies.

The set has few low-quality originals, so ``--degraded`` adds a second, in-memory set: every
original blurred (Gaussian, radius 4) and faded (contrast x0.25), the ones whose quality
falls below the low mark kept as distinct low-quality originals, each with the same five
copies (the blurred and the faded version of one photo are not counted as a false pair).
The same codes (dihedral, mirrored pixels, crops) and the same rules are applied; pair
distances are the smallest over all variants, as in the index.
"""

from __future__ import annotations

import argparse
import io
import json
import logging
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
from image_set import transformed
from PIL import Image, ImageEnhance, ImageFilter

from neardup.image import pdq_codes, pdq_variant_codes
from neardup.io import Document
from neardup.pipeline import dedup

Rule = Callable[[int, int, int], bool]  # (distance, quality a, quality b) -> pair kept


def rules(low: int) -> dict[str, Rule]:
    out: dict[str, Rule] = {
        "none": lambda d, qa, qb: True,
        f"drop q<{low}": lambda d, qa, qb: min(qa, qb) >= low,
        f"drop both q<{low}": lambda d, qa, qb: max(qa, qb) >= low,
    }
    for r in (8, 12, 16, 20, 24):
        out[f"d<={r} if any q<{low}"] = lambda d, qa, qb, r=r: min(qa, qb) >= low or d <= r
    for r in (8, 16):
        out[f"d<={r} if both q<{low}"] = lambda d, qa, qb, r=r: max(qa, qb) >= low or d <= r
    return out


def table(
    manifest: dict[str, list[str]],
    quality: dict[str, int],
    dist: dict[tuple[str, str], int],
    low: int,
    source: Callable[[str], str] = lambda name: name,
) -> None:
    """Recall per transform and false pairs among originals of different ``source``, per rule."""
    originals = sorted(fs[0] for fs in manifest.values())
    orig_set = set(originals)
    n_orig_pairs = sum(
        1 for i, a in enumerate(originals) for b in originals[i + 1 :] if source(a) != source(b)
    )
    transforms = sorted(
        {f.split("__")[1].split(".")[0] for fs in manifest.values() for f in fs[1:]}
    )
    n_low = sum(1 for o in originals if quality[o] < low)
    print(
        f"{len(originals)} originals ({n_low} of quality < {low}), "
        f"{sum(len(fs) for fs in manifest.values())} files, {n_orig_pairs} original pairs\n"
    )
    print(f"| rule | {' | '.join(transforms)} | false pairs | of which low-quality |")
    print("|---|" + "---:|" * len(transforms) + "---:|---:|")
    for name, keep in rules(low).items():
        recall = []
        for t in transforms:
            hits = 0
            for fs in manifest.values():
                copy = next(f for f in fs[1:] if f.split("__")[1].startswith(t))
                d = dist.get((fs[0], copy))
                hits += d is not None and keep(d, quality[fs[0]], quality[copy])
            recall.append(f"{hits / len(manifest):.2f}")
        false = [
            (a, b)
            for (a, b), d in dist.items()
            if a < b and a in orig_set and b in orig_set and source(a) != source(b)
            if keep(d, quality[a], quality[b])
        ]
        lowf = sum(1 for a, b in false if min(quality[a], quality[b]) < low)
        print(
            f"| {name} | {' | '.join(recall)} | {100 * len(false) / n_orig_pairs:.2f}% "
            f"({len(false)}) | {lowf} |"
        )


def min_distances(names: list[str], codes: np.ndarray, radius: int) -> dict[tuple[str, str], int]:
    """The smallest distance over all variant pairs of every two images, within ``radius``."""
    out: dict[tuple[str, str], int] = {}
    for i in range(len(names) - 1):
        x = codes[i][None, :, None, :] ^ codes[i + 1 :][:, None, :, :]
        d = np.bitwise_count(x).sum(axis=3, dtype=np.int64).min(axis=(1, 2))
        for j in np.nonzero(d <= radius)[0].tolist():
            out[(names[i], names[i + 1 + j])] = out[(names[i + 1 + j], names[i])] = int(d[j])
    return out


def degraded_set(folder: Path, manifest: dict[str, list[str]], low: int) -> None:
    """The rules on blurred and faded originals whose quality is below ``low``."""
    images: dict[str, Image.Image] = {}
    for key, fs in manifest.items():
        with Image.open(folder / fs[0]) as im:
            rgb = im.convert("RGB")
        images[f"{key}_blur"] = rgb.filter(ImageFilter.GaussianBlur(4))
        images[f"{key}_fade"] = ImageEnhance.Contrast(rgb).enhance(0.25)
    names = list(images)
    q0 = pdq_codes([np.asarray(images[n]) for n in names]).quality.tolist()
    kept = [n for n, q in zip(names, q0, strict=True) if q < low]
    files: dict[str, np.ndarray] = {}
    new_manifest: dict[str, list[str]] = {}
    for n in kept:
        new_manifest[n] = [n]
        files[n] = np.asarray(images[n])
        for t, img in transformed(images[n]).items():
            if t == "jpeg50":
                buf = io.BytesIO()
                img.save(buf, "JPEG", quality=50)
                buf.seek(0)
                with Image.open(buf) as j:
                    img = j.convert("RGB")
            files[f"{n}__{t}"] = np.asarray(img)
            new_manifest[n].append(f"{n}__{t}")
    order = list(files)
    out = pdq_variant_codes([files[n] for n in order], dihedral=True, crops=True)
    quality = dict(zip(order, out.quality.tolist(), strict=True))
    dist = min_distances(order, out.codes, 31)
    print(f"\n## Degraded set (blur radius 4, contrast x0.25; kept if quality < {low})\n")
    # The blurred and the faded copy of one photo are duplicates of each other: not counted.
    table(new_manifest, quality, dist, low, source=lambda n: n.rsplit("_", 1)[0])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--set", type=Path, default=Path("/work/bench/images"))
    ap.add_argument("--low", type=int, default=50, help="the quality that counts as low")
    ap.add_argument("--degraded", action="store_true", help="add the degraded low-quality set")
    ap.add_argument(
        "--details", action="store_true", help="list low-quality originals, false pairs"
    )
    args = ap.parse_args()
    warnings.simplefilter("ignore", UserWarning)
    logging.getLogger("neardup").setLevel(logging.ERROR)
    folder: Path = args.set
    manifest: dict[str, list[str]] = json.loads((folder / "manifest.json").read_text())
    files = [f for fs in manifest.values() for f in fs]
    docs = [Document(f, path=folder / f) for f in files]
    t0 = time.process_time()
    quality = dict(zip(files, pdq_codes([folder / f for f in files]).quality.tolist(), strict=True))
    result = dedup(
        docs, method="pdq", dihedral=True, crops=True, min_quality=0, low_quality=0, batch_size=512
    )
    cpu = time.process_time() - t0
    dist = {}
    for p in result.pairs:
        assert p.distance is not None
        dist[(p.a, p.b)] = dist[(p.b, p.a)] = int(p.distance)
    print(f"## Transform set (one dedup run, {cpu:.1f} CPU s)\n")
    table(manifest, quality, dist, args.low)
    if args.details:
        originals = sorted(fs[0] for fs in manifest.values())
        print("\nLow-quality originals (quality; copy quality/distance, '-' = not within 31):\n")
        for o in originals:
            if quality[o] >= args.low:
                continue
            fs = manifest[o.rsplit(".", 1)[0]]
            cells = []
            for c in fs[1:]:
                d = dist.get((o, c))
                t = c.split("__")[1].split(".")[0]
                cells.append(f"{t} {quality[c]}/{'-' if d is None else d}")
            print(f"- {o} q={quality[o]}: " + ", ".join(cells))
        print("\nFalse pairs among originals (a, b, distance, qualities):\n")
        orig_set = set(originals)
        for (a, b), d in sorted(dist.items()):
            if a < b and a in orig_set and b in orig_set:
                print(f"- {a} {b} d={d} q={quality[a]},{quality[b]}")
    if args.degraded:
        degraded_set(folder, manifest, args.low)


if __name__ == "__main__":
    main()
