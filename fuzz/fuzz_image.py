"""Fuzz image decoding and hashing: ``neardup.image.phash`` (both presets), ``hash_image``
with the other methods and the Go ``compat.fingerprint.phash``, on raw bytes and on
mutated PNG / GIF / BMP / JPEG / TIFF / WebP files, under a small pixel cap.

Run: ``python fuzz/fuzz_image.py -runs=20000``.
"""

from __future__ import annotations

import functools
import io

from _harness import attempt, main, mutate, pick

MAX_PIXELS = 1 << 16


@functools.cache
def seeds() -> tuple[bytes, ...]:
    """Small valid images in every format Pillow writes here."""
    from PIL import Image

    image = Image.radial_gradient("L").resize((24, 16))
    out = []
    for fmt, mode in (("PNG", "L"), ("GIF", "P"), ("BMP", "RGB"), ("JPEG", "RGB"),
                      ("TIFF", "RGB"), ("WEBP", "RGB"), ("PNG", "RGBA")):  # fmt: skip
        buf = io.BytesIO()
        image.convert(mode).save(buf, format=fmt)
        out.append(buf.getvalue())
    return tuple(out)


def target(data: bytes) -> None:
    """Hash raw and mutated-seed bytes as images."""
    from neardup.compat.fingerprint import phash as go_phash
    from neardup.image import hash_image, phash
    from neardup.image.value import ImageHash, ImageHashParams

    seed, rest = pick(seeds(), data)
    blob = mutate(seed, rest)
    for source in (data, blob):
        h = attempt(phash, source, max_pixels=MAX_PIXELS)
        assert h is None or isinstance(h, ImageHash)
    attempt(phash, blob, preset="go", max_pixels=MAX_PIXELS)
    attempt(go_phash, blob, max_pixels=MAX_PIXELS)
    method = ("ahash", "dhash", "whash", "colorhash")[len(data) % 4]
    attempt(hash_image, blob, ImageHashParams(method=method), max_pixels=MAX_PIXELS)


if __name__ == "__main__":
    import warnings

    # Pillow warns about every odd TIFF tag and EXIF block it skips; the answer is what counts.
    warnings.filterwarnings("ignore", category=UserWarning, module="PIL")
    main(target)
