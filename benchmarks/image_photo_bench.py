#!/usr/bin/env python3
"""Image hashing on real photographs: neardup vs pdqhash, imagehash and imagededup, same files.

    .venv/bin/python benchmarks/image_photo_bench.py [--set /work/bench/images] [--crop-count 120]

The files are the set benchmarks/image_set.py builds (real photographs and their mirrored,
rotated, cropped, halved and JPEG copies, PNG and JPEG). Every implementation reads each file
from disk and decodes it (Pillow for all of them), in this one process, one after the other
after a warm-up; CPU seconds (``time.process_time``) are reported, so other load on the
machine does not count. Bits are compared where they should be equal (neardup pdq vs
pdqhash; neardup phash / dhash / crop-resistant vs imagehash). imagededup is imported with
its hashing modules only: its package ``__init__`` imports torchvision for the CNN, which
cannot run here (install imagededup with ``pip install --no-deps imagededup`` plus
matplotlib; never let pip resolve torch). The CNN contender is left out because (checked
2026-12-01): torch is ``2.13.0+cpu``; PyPI's torchvision 0.28.0 pins ``torch==2.13.0`` but is
the ``0.28.0+cu130`` build, whose ``_C.so`` links ``libtorch_cuda.so`` and ``libc10_cuda.so``
(absent from the CPU torch), so ``import torchvision`` fails with "operator torchvision::nms
does not exist" (tried in a throwaway venv on top of the CPU torch); 0.29.0 / 0.29.1 need
torch 2.14 (``==2.14.0`` / ``>=2.14.0``, CUDA builds); no ``+cpu`` torchvision is served by
the reachable indexes; and imagededup's CNNs load torchvision's ImageNet weights
(``MobileNet_V3_Small_Weights.IMAGENET1K_V1``) from the network at run time, which is not
reachable either. Recall and false pairs of imagededup's own
``find_duplicates`` (its default distance 10) are printed next to neardup's at the same radius.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import time
import types
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from neardup import image as ni


def _imagededup_hashing() -> Any:
    import imagededup

    root = os.path.dirname(imagededup.__file__)
    for sub in ("methods", "utils"):  # skip the package inits that import torchvision
        pkg = types.ModuleType(f"imagededup.{sub}")
        pkg.__path__ = [os.path.join(root, sub)]
        sys.modules[f"imagededup.{sub}"] = pkg
    return importlib.import_module("imagededup.methods.hashing")


def cpu(fn: Callable[[], Any]) -> tuple[float, Any]:
    t0 = time.process_time()
    out = fn()
    return time.process_time() - t0, out


def pdqhash_int(path: Path) -> tuple[int, int]:
    import pdqhash

    with Image.open(path) as im:
        rgb = np.asarray(im.convert("RGB"))
    vec, q = pdqhash.compute(rgb)
    return int("".join(str(int(b)) for b in vec), 2), int(q)


def recall(manifest: dict[str, list[str]], pairs: set[tuple[str, str]]) -> dict[str, float]:
    both = pairs | {(b, a) for a, b in pairs}
    out: dict[str, float] = {}
    originals = {files[0] for files in manifest.values()}
    for t in ("mirror", "rot90", "crop10", "half", "jpeg50"):
        hits = [
            (files[0], next(f for f in files if f"__{t}" in f)) in both
            for files in manifest.values()
        ]
        out[t] = float(np.mean(hits))
    n = len(originals)
    out["false"] = sum(1 for a, b in both if a < b and a in originals and b in originals) / (
        n * (n - 1) / 2
    )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--set", type=Path, default=Path("/work/bench/images"))
    ap.add_argument("--crop-count", type=int, default=120, help="files for crop-resistant")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    import imagehash

    manifest: dict[str, list[str]] = json.loads((args.set / "manifest.json").read_text())
    names = [f for files in manifest.values() for f in files]
    paths = [args.set / f for f in names]
    print(f"# {len(paths)} files ({len(manifest)} photographs and copies), load {os.getloadavg()}")
    hashing = _imagededup_hashing()
    ded_p, ded_d = hashing.PHash(verbose=False), hashing.DHash(verbose=False)
    # warm-up: numba kernels compiled / loaded, imports done
    ni.pdq_codes(paths[:4])
    ni.hash_many(paths[:4], method="phash")
    ni.crop_resistant_many(paths[:2])
    pdqhash_int(paths[0])

    rows: list[tuple[str, str, float]] = []
    t, ours = cpu(lambda: ni.pdq_codes(paths))
    rows.append(("pdq", "neardup.image.pdq_codes", t))
    t, ref = cpu(lambda: [pdqhash_int(p) for p in paths])
    rows.append(("pdq", "pdqhash.compute (Pillow decode)", t))
    same = sum(
        h.value == r[0] and q == r[1]
        for h, q, r in zip(ours.hashes(), ours.quality.tolist(), ref, strict=True)
    )
    print(f"pdq bit-equal to pdqhash on {same} of {len(paths)} files (hash and quality)")
    t, _ = cpu(lambda: ni.pdq_codes(paths, workers=2))
    rows.append(("pdq", "neardup.image.pdq_codes(workers=2)", t))

    for method, ih, ded in (
        ("phash", imagehash.phash, ded_p),
        ("dhash", imagehash.dhash, ded_d),
    ):
        t, ours_h = cpu(lambda m=method: ni.hash_many(paths, method=m))  # type: ignore[misc]
        rows.append((method, "neardup.image.hash_many", t))

        def ref_fn(fn: Any = ih) -> list[str]:
            out = []
            for p in paths:
                with Image.open(p) as im:
                    out.append(str(fn(im)))
            return out

        t, ref_h = cpu(ref_fn)
        rows.append((method, f"imagehash.{ih.__name__}", t))
        same = sum(str(a) == b for a, b in zip(ours_h, ref_h, strict=True))
        print(f"{method} bit-equal to imagehash on {same} of {len(paths)} files")
        t, _ = cpu(lambda d=ded: [d.encode_image(image_file=str(p)) for p in paths])  # type: ignore[misc]
        rows.append((method, f"imagededup {type(ded).__name__}.encode_image", t))

    sub = paths[: args.crop_count]
    t, ours_c = cpu(lambda: ni.crop_resistant_many(sub))
    rows.append(("crop-resistant", "neardup.image.crop_resistant_many", t, len(sub)))  # type: ignore[arg-type]

    def ref_crop() -> list[str]:
        out = []
        for p in sub:
            with Image.open(p) as im:
                out.append(str(imagehash.crop_resistant_hash(im)))
        return out

    t, ref_c = cpu(ref_crop)
    rows.append(("crop-resistant", "imagehash.crop_resistant_hash", t, len(sub)))  # type: ignore[arg-type]
    same = sum(str(a) == b for a, b in zip(ours_c, ref_c, strict=True))
    print(f"crop-resistant equal to imagehash on {same} of {len(sub)} files\n")

    print("| hash | implementation | files | CPU s | images/s |")
    print("|---|---|---:|---:|---:|")
    for row in rows:
        n = row[3] if len(row) > 3 else len(paths)  # type: ignore[misc]
        print(f"| {row[0]} | {row[1]} | {n} | {row[2]:.2f} | {n / row[2]:.0f} |")

    # recall: imagededup's own search (distance <= 10) vs neardup at radius 10
    print("\n| method | mirror | rot90 | crop10 | half | jpeg50 | false pairs |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    from neardup.io import Document
    from neardup.pipeline import dedup

    docs = [Document(n, path=p) for n, p in zip(names, paths, strict=True)]
    for label, ded in (("imagededup PHash", ded_p), ("imagededup DHash", ded_d)):
        enc = {n: ded.encode_image(image_file=str(p)) for n, p in zip(names, paths, strict=True)}
        dup = ded.find_duplicates(encoding_map=enc, max_distance_threshold=10)
        pairs = {(a, b) for a, bs in dup.items() for b in bs}
        r = recall(manifest, pairs)
        print(
            f"| {label} (d <= 10) | "
            + " | ".join(f"{r[k]:.2f}" for k in ("mirror", "rot90", "crop10", "half", "jpeg50"))
            + f" | {100 * r['false']:.2f}% |"
        )
    for method in ("phash", "dhash"):
        for dihedral in (False, True):
            res = dedup(docs, method=method, threshold=1 - 10 / 64, dihedral=dihedral)
            r = recall(manifest, {(p.a, p.b) for p in res.pairs})
            print(
                f"| neardup {method}{' --dihedral' if dihedral else ''} (d <= 10) | "
                + " | ".join(f"{r[k]:.2f}" for k in ("mirror", "rot90", "crop10", "half", "jpeg50"))
                + f" | {100 * r['false']:.2f}% |"
            )


if __name__ == "__main__":
    main()
