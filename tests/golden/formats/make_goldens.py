"""Regenerate the format goldens: ``python tests/golden/formats/make_goldens.py``.

Every persisted byte format of neardup, computed from fixed inputs. Changing one of these
files means a format change: bump that format's version, add a "Breaking" CHANGELOG entry,
and keep readers of the old version working (or failing with a clear error).
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).parent
IMAGE = HERE.parents[1] / "golden" / "vectors" / "images" / "photo.png"
TEXT = (
    "Near-duplicate detection finds documents that are almost the same: a copy with a few "
    "words changed, a page with a new header, a licence with its year updated. "
)


def build() -> dict[str, bytes]:
    """Return file name -> bytes for every golden."""
    from neardup import HammingIndex, MinHasher, SimHasher
    from neardup.fuzzy import ctph, tlsh

    out: dict[str, bytes] = {}
    text = TEXT * 4
    for bits in (64, 128, 256):
        h = SimHasher(bits).sketch(text)
        out[f"simhash_b{bits}_raw.bin"] = h.to_bytes()
        out[f"simhash_b{bits}_header.bin"] = h.to_bytes(header=True)
    out["simhash_go.bin"] = SimHasher(preset="go").sketch(text).to_bytes(header=True)
    for preset in ("xxh3", "datasketch", "oph"):
        mh = MinHasher(64, preset=preset)
        sketch = mh.sketch_tokens(text.split()) if preset == "datasketch" else mh.sketch(text)
        out[f"minhash_{preset}.bin"] = sketch.to_bytes()
    out["minhash_txtfp.bin"] = MinHasher(preset="txtfp").sketch(text).to_bytes(layout="txtfp")
    index = HammingIndex(64, radius=3)
    index.add_many(["a", "b", 7], [1, 3, 0xFFFF0000FFFF0000])
    out["hamming_index.bin"] = index.to_bytes()
    # the persistent store's blobs (schema 2): MinHash shingle sets and rows, SimHash codes
    from neardup.io import Document
    from neardup.methods import make_method

    docs = [Document("a", text), Document("b", TEXT * 2)]
    for name, method in (
        ("store_minhash_set.bin", make_method("minhash")),
        ("store_minhash_row.bin", make_method("minhash", verify=False)),
        ("store_simhash.bin", make_method("simhash")),
    ):
        out[name] = b"".join(method.blobs(method.sketch(docs)))
    out["fuzzy_digests.json"] = json.dumps(
        {"ctph": ctph(text.encode()), "tlsh": tlsh(text.encode())}, sort_keys=True
    ).encode()
    try:
        from neardup.image import phash

        out["imagehash_phash.bin"] = phash(IMAGE).to_bytes()
        out["imagehash_go.bin"] = phash(IMAGE, preset="go").to_bytes()
    except ImportError:  # pragma: no cover - the image extra is part of the test setup
        pass
    return out


def main() -> None:
    for name, data in build().items():
        (HERE / name).write_bytes(data)


if __name__ == "__main__":
    main()
