"""neardup.image.cropresistant: the segments and hashes of imagehash 4.3's crop_resistant_hash."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("PIL")
imagehash = pytest.importorskip("imagehash")
from PIL import Image  # noqa: E402

from neardup.errors import ConfigError, IncompatibleSketchError, InputError  # noqa: E402
from neardup.image import ImageHash, ImageHashParams  # noqa: E402
from neardup.image.cropresistant import (  # noqa: E402
    CropResistantHash,
    crop_resistant_hash,
    crop_resistant_many,
)

VECTORS = Path(__file__).resolve().parents[1] / "golden" / "vectors" / "images"


def _reference(im: Image.Image, **kwargs: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return imagehash.crop_resistant_hash(im, **kwargs)


def _generated(count: int, seed: int, sizes: tuple[int, int] = (20, 240)) -> list[Image.Image]:
    """Noise (hundreds of one-pixel regions: imagehash's early stop), waves, blobs, flat."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(count):
        h, w = (int(v) for v in rng.integers(*sizes, 2))
        kind = i % 4
        if kind == 0:
            arr = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
        elif kind == 1:
            yy, xx = np.mgrid[0:h, 0:w]
            fx, fy = rng.uniform(2, 30, 2)
            grey = (np.sin(xx / fx) * np.cos(yy / fy) * 120 + 128).astype(np.uint8)
            arr = np.stack([grey, grey[::-1], 255 - grey], axis=2)
        elif kind == 2:
            small = rng.integers(0, 256, (int(rng.integers(3, 12)), int(rng.integers(3, 12))))
            grey = Image.fromarray(small.astype(np.uint8)).resize((w, h), Image.Resampling.BICUBIC)
            arr = np.stack([np.asarray(grey)] * 3, axis=2)
        else:
            arr = np.full((h, w, 3), int(rng.integers(0, 256)), np.uint8)
        out.append(Image.fromarray(arr))
    return out


def _photos() -> list[Image.Image]:
    out = []
    for name in (
        "photo.png",
        "photo_q50.jpg",
        "photo_rot90.png",
        "synth_photo.png",
        "checker8.png",
    ):
        with Image.open(VECTORS / name) as im:
            im.load()
            out.append(im.copy())
    return out


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"limit_segments": 2}, {"min_segment_size": 40, "segment_threshold": 90}],
    ids=["defaults", "limit", "small-segments"],
)
def test_parity_with_imagehash(kwargs: dict[str, Any]) -> None:
    images = _generated(8, seed=len(kwargs)) + _photos()  # two of each kind
    ours = crop_resistant_many(images, **kwargs)
    for im, got in zip(images, ours, strict=True):
        assert str(got) == str(_reference(im, **kwargs)), im.size


def test_other_segment_methods_and_files() -> None:
    im = _photos()[0]
    want = _reference(im, hash_func=imagehash.phash)
    assert str(crop_resistant_hash(im, method="phash")) == str(want)
    assert str(crop_resistant_hash(VECTORS / "photo.png")) == str(_reference(im))
    with pytest.raises(ConfigError, match="dhash"):
        crop_resistant_hash(im, method="pdq")


def _thin(seed: int) -> list[Image.Image]:
    """Two waves and two blobs, 8..160 pixels by 8..60, tall and wide."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(4):
        h, w = int(rng.integers(8, 161)), int(rng.integers(8, 61))
        if i % 2:
            h, w = w, h
        if i < 2:
            yy, xx = np.mgrid[0:h, 0:w]
            fx, fy = rng.uniform(2, 30, 2)
            grey = (np.sin(xx / fx) * np.cos(yy / fy) * 120 + 128).astype(np.uint8)
        else:
            small = rng.integers(0, 256, (int(rng.integers(3, 12)), int(rng.integers(3, 12))))
            blob = Image.fromarray(small.astype(np.uint8)).resize((w, h), Image.Resampling.BICUBIC)
            grey = np.asarray(blob)
        out.append(Image.fromarray(np.stack([grey, grey[::-1], 255 - grey], axis=2)))
    return out


def test_small_and_thin_images_with_empty_segment_boxes() -> None:
    # On a small image a thin segment's box can round to zero pixels (the 30x97 wave: 0x57);
    # imagehash hashes the empty crop (Pillow resizes it to zeros) to all 0 bits.
    wave = _generated(2, seed=0, sizes=(20, 160))[1]
    assert wave.size == (30, 97)
    images = [wave, *_thin(2), *_thin(3)[:2]]
    ours = crop_resistant_many(images)
    empty = 0
    for im, got in zip(images, ours, strict=True):
        want = str(_reference(im))
        assert str(got) == want, im.size
        empty += want.split(",").count("0" * 16)
    assert empty >= 3  # the wave, a 21x136 and a 12x132 image each have an empty box
    for method, func in (("ahash", imagehash.average_hash), ("phash", imagehash.phash)):
        assert str(crop_resistant_hash(wave, method=method)) == str(
            _reference(wave, hash_func=func)
        )
    with pytest.raises(InputError, match=r"0x57 pixels.*method='dhash'"):
        crop_resistant_hash(wave, method="whash")
    with warnings.catch_warnings(), pytest.raises(OverflowError):  # imagehash: log2(0)
        warnings.simplefilter("ignore", RuntimeWarning)
        _reference(wave, hash_func=imagehash.whash)


def test_matching_rule_equals_image_multi_hash() -> None:
    photo = _photos()[0].convert("RGB")
    w, h = photo.size
    variants = [
        photo,
        photo.crop((0, 0, int(w * 0.9), h)),
        photo.crop((int(w * 0.1), int(h * 0.1), w, h)),
        _photos()[3],
        _generated(2, seed=9)[1],
    ]
    ours = crop_resistant_many(variants)
    theirs = [_reference(v) for v in variants]
    for a, ra in zip(ours, theirs, strict=True):
        for b, rb in zip(ours, theirs, strict=True):
            assert a.hash_diff(b) == ra.hash_diff(rb)
            assert a.matches(b) == ra.matches(rb)
            assert a.matches(b, region_cutoff=2) == ra.matches(rb, region_cutoff=2)
            assert a.difference(b) == pytest.approx(ra - rb)
    # the 10% crops still match (on this 240x159 photo, 20% crops do not)
    assert ours[0].matches(ours[1]) and ours[0].matches(ours[2])


def test_value_checks() -> None:
    p = ImageHashParams(method="dhash")
    with pytest.raises(ConfigError):
        CropResistantHash(())
    with pytest.raises(IncompatibleSketchError):
        CropResistantHash((ImageHash(1, p), ImageHash(1, ImageHashParams(method="ahash"))))
    a = CropResistantHash((ImageHash(1, p),))
    b = CropResistantHash((ImageHash(1, ImageHashParams(method="ahash")),))
    with pytest.raises(IncompatibleSketchError):
        a.hash_diff(b)
    assert crop_resistant_many(_photos()[:2], workers=2) == crop_resistant_many(_photos()[:2])
