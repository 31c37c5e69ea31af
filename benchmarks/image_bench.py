#!/usr/bin/env python3
"""Image hashing speed: neardup.image vs imagehash 4.3, same files, same process, same bits.

    .venv/bin/python benchmarks/image_bench.py [--images DIR_OR_GLOB ...] [--count 500] [--rounds 5]

Without --images it collects real PNGs already on the machine (icons, docs), like the
performance study. Implementations run interleaved in rounds after a warm-up; the median
round is reported. Every round's hashes are checked to be identical to imagehash's.
"""

from __future__ import annotations

import argparse
import glob
import os
import random
import statistics
import time
import warnings
from collections.abc import Callable
from typing import Any

import imagehash
from PIL import Image

from neardup import image as ni

DEFAULT_GLOBS = ["/usr/share/icons/**/*.png", "/usr/share/doc/**/*.png"]


def collect(patterns: list[str], count: int, seed: int = 0) -> list[str]:
    paths: set[str] = set()
    for pattern in patterns:
        if os.path.isdir(pattern):
            pattern = os.path.join(pattern, "**", "*.*")
        paths.update(glob.glob(pattern, recursive=True))
    ordered = sorted(p for p in paths if p.lower().endswith((".png", ".jpg", ".jpeg")))
    random.Random(seed).shuffle(ordered)
    chosen = []
    for p in ordered:
        try:
            with Image.open(p) as im:
                if min(im.size) >= 32:
                    chosen.append(p)
        except Exception:  # not an image: skip it
            continue
        if len(chosen) == count:
            break
    return chosen


def load_all(paths: list[str]) -> list[Image.Image]:
    out = []
    for p in paths:
        with Image.open(p) as im:
            im.load()
            out.append(im.copy())
    return out


def time_rounds(impls: dict[str, Callable[[], Any]], rounds: int) -> dict[str, float]:
    for fn in impls.values():
        fn()  # warm-up (also fills neardup's per-shape caches, as a long run would)
    times: dict[str, list[float]] = {k: [] for k in impls}
    for _ in range(rounds):
        for name, fn in impls.items():
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    return {k: statistics.median(v) for k, v in times.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--images", nargs="*", default=DEFAULT_GLOBS)
    ap.add_argument("--count", type=int, default=500)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--methods", nargs="*", default=["phash", "dhash"])
    args = ap.parse_args()
    warnings.simplefilter("ignore", UserWarning)  # imagehash's convert("L") palette warning

    paths = collect(args.images, args.count)
    images = load_all(paths)
    mpix = sum(im.width * im.height for im in images) / 1e6
    mb = sum(os.path.getsize(p) for p in paths) / 1e6
    print(f"# {len(paths)} images, {mb:.1f} MB of files, {mpix:.1f} Mpixel, {os.cpu_count()} CPUs")

    reference = {
        "phash": imagehash.phash,
        "dhash": imagehash.dhash,
        "ahash": imagehash.average_hash,
        "whash": imagehash.whash,
    }
    for method in args.methods:
        ref = reference[method]
        want = [str(ref(im)) for im in images]
        got = [str(h) for h in ni.hash_many(images, method=method)]
        same = sum(a == b for a, b in zip(want, got, strict=True))
        print(f"\n## {method}: identical to imagehash on {same}/{len(paths)} images")

        def ih_files(ref: Callable[..., Any] = ref) -> list[Any]:
            out = []
            for p in paths:
                with Image.open(p) as im:
                    out.append(ref(im))
            return out

        impls: dict[str, Callable[[], Any]] = {
            "imagehash, file -> hash": ih_files,
            "neardup hash_many, file -> hash": lambda m=method: ni.hash_many(paths, method=m),
            "neardup hash_many workers=2, file -> hash": lambda m=method: ni.hash_many(
                paths, method=m, workers=2
            ),
            "imagehash, pre-decoded": lambda ref=ref: [ref(im) for im in images],
            "neardup hash_many, pre-decoded": lambda m=method: ni.hash_many(images, method=m),
        }
        t = time_rounds(impls, args.rounds)
        n = len(paths)
        print(f"{'implementation':45s} {'images/s':>10s} {'x imagehash':>12s}")
        for name, sec in t.items():
            base = (
                t["imagehash, pre-decoded"]
                if "pre-decoded" in name
                else t["imagehash, file -> hash"]
            )
            print(f"{name:45s} {n / sec:10.0f} {base / sec:12.2f}")


if __name__ == "__main__":
    main()
