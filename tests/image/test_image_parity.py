"""neardup.image preset "imagehash": the same bits as imagehash 4.3 on real and synthetic images."""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("PIL")
imagehash = pytest.importorskip("imagehash")
from PIL import Image  # noqa: E402

from neardup import image as ni  # noqa: E402
from neardup.compat.fingerprint import phash_hex  # noqa: E402
from neardup.image.pilresize import resize_l  # noqa: E402

VECTORS = Path(__file__).resolve().parents[1] / "golden" / "vectors"
MAX_REAL_IMAGES = 60  # ten of each content kind, in every mode

REFERENCE: dict[str, Callable[..., Any]] = {
    "ahash": imagehash.average_hash,
    "phash": imagehash.phash,
    "dhash": imagehash.dhash,
    "whash": imagehash.whash,
    "colorhash": imagehash.colorhash,
}


def _reference(method: str, img: Image.Image, **kwargs: Any) -> str:
    with warnings.catch_warnings():
        # imagehash's convert("L") warns on palette transparency given as bytes.
        warnings.simplefilter("ignore", UserWarning)
        return str(REFERENCE[method](img, **kwargs))


def _generated_image(i: int, rng: np.random.Generator) -> Image.Image:
    """Icons, photos-like blobs, gradients, noise, stripes and flat fills, in the modes and
    sizes found on a disk (RGBA icons, palette PNGs, greyscale, RGB photos)."""
    if i % 5 == 0:  # icon: small, square, with alpha
        side = int(rng.choice([16, 22, 24, 32, 48, 64, 128]))
        h = w = side
    else:
        h, w = (int(v) for v in rng.integers(8, 700, 2))
    kind = i % 6
    if kind == 0:
        arr = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
    elif kind == 1:
        yy, xx = np.mgrid[0:h, 0:w]
        arr = np.stack([xx * 255 // max(w - 1, 1), yy * 255 // max(h - 1, 1), (xx + yy) % 256], 2)
        arr = arr.astype(np.uint8)
    elif kind == 2:
        small = rng.integers(0, 256, (int(rng.integers(2, 10)), int(rng.integers(2, 10)), 3))
        blob = Image.fromarray(small.astype(np.uint8)).resize((w, h), Image.Resampling.BICUBIC)
        arr = np.asarray(blob)
    elif kind == 3:
        stripe = (np.arange(w) // int(rng.integers(1, 9)) % 2 * 255).astype(np.uint8)
        arr = np.stack([np.tile(stripe, (h, 1))] * 3, 2)
    elif kind == 4:
        arr = np.full((h, w, 3), rng.integers(0, 256, 3), np.uint8)
        y0, x0 = h // 4, w // 4
        arr[y0 : h - y0, x0 : w - x0] = rng.integers(0, 256, 3)
    else:
        grey = rng.normal(128, 40, (h, w)).clip(0, 255).astype(np.uint8)
        arr = np.stack([grey] * 3, 2)
    im = Image.fromarray(arr, "RGB")
    mode = ["RGB", "RGBA", "L", "P", "LA"][int(rng.integers(0, 5))]
    if i % 5 == 0:
        mode = "RGBA"
    if mode == "RGBA" or mode == "LA":
        alpha = Image.fromarray(rng.integers(0, 256, (h, w), dtype=np.uint8))
        im = im.convert("RGBA")
        im.putalpha(alpha)
        im = im.convert(mode)
    elif mode == "P":
        im = im.quantize(int(rng.integers(2, 256)))
    elif mode == "L":
        im = im.convert("L")
    return im


@pytest.fixture(scope="module")
def real_images(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """MAX_REAL_IMAGES generated PNG and JPEG files (written, then read back by path, as real
    files are; generated, so every machine tests the same images)."""
    root = tmp_path_factory.mktemp("images")
    rng = np.random.default_rng(1234)
    paths = []
    for i in range(MAX_REAL_IMAGES):
        im = _generated_image(i, rng)
        if i % 3 == 2 and im.mode in ("RGB", "L"):
            path = root / f"{i:03d}.jpg"
            im.save(path, quality=int(rng.integers(30, 96)))
        else:
            path = root / f"{i:03d}.png"
            im.save(path)
        paths.append(str(path))
    return paths


@pytest.mark.parametrize("method", sorted(REFERENCE))
def test_parity_on_real_images(real_images: list[str], method: str) -> None:
    ours = [str(h) for h in ni.hash_many(real_images, method=method, batch_size=97)]
    mismatches = []
    for path, got in zip(real_images, ours, strict=True):
        with Image.open(path) as im:
            want = _reference(method, im)
        if got != want:
            mismatches.append((path, got, want))
    assert mismatches == []


def test_threads_give_the_same_bits(real_images: list[str]) -> None:
    sample = real_images[:60]
    assert ni.hash_many(sample, workers=2) == ni.hash_many(sample, workers=1)
    assert ni.hash_many(sample, workers=2) == [ni.phash(p) for p in sample]


def _synthetic() -> list[tuple[str, Image.Image]]:
    rng = np.random.default_rng(7)
    noise = rng.integers(0, 256, size=(37, 53, 4), dtype=np.uint8)
    rgba = Image.fromarray(noise, "RGBA")
    pal = rgba.convert("RGB").quantize(16)
    pal.info["transparency"] = bytes(range(0, 256, 16))
    cmyk = rgba.convert("CMYK")
    i16 = Image.fromarray(rng.integers(0, 65535, size=(20, 30)).astype(np.uint16))
    return [
        ("rgba", rgba),
        ("rgb", rgba.convert("RGB")),
        ("la", rgba.convert("LA")),
        ("l", rgba.convert("L")),
        ("1", rgba.convert("1")),
        ("p_trns_bytes", pal),
        ("cmyk", cmyk),
        ("i16", i16),
        ("one_pixel", Image.new("RGB", (1, 1), (9, 99, 199))),
        ("wide", Image.fromarray(noise[:2, :, :3].copy(), "RGB")),
        ("gradient", Image.linear_gradient("L")),
        ("flat", Image.new("L", (64, 64), 128)),
    ]


@pytest.mark.parametrize("method", sorted(REFERENCE))
@pytest.mark.parametrize(
    ("name", "img"), _synthetic(), ids=lambda v: v if isinstance(v, str) else ""
)
def test_parity_on_modes_and_sizes(method: str, name: str, img: Image.Image) -> None:
    if method == "colorhash" and img.mode in ("I;16",):
        pytest.skip("imagehash's colorhash cannot convert I;16 to HSV either")
    assert str(ni.hash_image(img, ni.ImageHashParams(method=method))) == _reference(method, img)


@pytest.mark.parametrize(
    ("method", "kwargs"),
    [
        ("phash", {"hash_size": 4}),
        ("phash", {"hash_size": 12, "highfreq_factor": 2}),
        ("ahash", {"hash_size": 16}),
        ("dhash", {"hash_size": 5}),
        ("whash", {"hash_size": 16}),
        ("whash", {"hash_size": 8, "image_scale": 64}),
        ("whash", {"hash_size": 4, "remove_max_haar_ll": False}),
        ("colorhash", {"binbits": 5}),
    ],
)
def test_parity_with_non_default_sizes(method: str, kwargs: dict[str, Any]) -> None:
    with Image.open(VECTORS / "images" / "photo.png") as im:
        im.load()
        ours = str(ni.hash_image(im, ni.ImageHashParams(method=method, **kwargs)))
        assert ours == _reference(method, im, **kwargs)


def test_pillow_lanczos_resize_is_replayed_exactly() -> None:
    rng = np.random.default_rng(3)
    for _ in range(40):
        h, w = (int(v) for v in rng.integers(1, 300, size=2))
        out_w, out_h = (int(v) for v in rng.integers(1, 70, size=2))
        arr = rng.integers(0, 256, size=(h, w), dtype=np.uint8)
        want = np.asarray(
            Image.fromarray(arr, "L").resize((out_w, out_h), Image.Resampling.LANCZOS)
        )
        assert np.array_equal(resize_l(arr[None], out_w, out_h)[0], want)


def test_go_preset_equals_the_compat_facade() -> None:
    vectors = json.loads((VECTORS / "go_fingerprint_phash.json").read_text(encoding="utf-8"))
    paths = [VECTORS / e["file"] for e in vectors["images"]]
    batch = ni.hash_many(paths, preset="go")
    for entry, h in zip(vectors["images"], batch, strict=True):
        assert str(h) == entry["phash_hex"] == phash_hex(int(h))
        assert h == ni.phash(VECTORS / entry["file"], preset="go")
        assert h.bits == 64


def test_jpeg_draft_is_close_but_a_different_parameter() -> None:
    src = VECTORS / "images" / "photo.png"
    with Image.open(src) as im:
        big = im.resize((960, 636))
    import io

    buf = io.BytesIO()
    big.save(buf, "JPEG", quality=90)
    data = buf.getvalue()
    full = ni.phash(data)
    draft = ni.phash(data, jpeg_draft=True)
    assert full.params != draft.params
    assert bin(full.value ^ draft.value).count("1") <= 6
    go_full, go_draft = ni.phash(data, preset="go"), ni.phash(data, preset="go", jpeg_draft=True)
    assert bin(go_full.value ^ go_draft.value).count("1") <= 6


def test_exif_orientation_is_ignored_by_default_and_applied_on_request(tmp_path: Path) -> None:
    with Image.open(VECTORS / "images" / "photo.png") as im:
        photo = im.convert("RGB")
    exif = Image.Exif()
    exif[0x0112] = 6  # rotate 90 degrees clockwise to display
    path = tmp_path / "rotated.jpg"
    photo.save(path, "JPEG", quality=95, exif=exif.tobytes())
    upright = photo.transpose(Image.Transpose.ROTATE_270)
    stored = ni.phash(path)
    applied = ni.phash(path, exif_transpose=True)
    assert str(stored) == _reference("phash", Image.open(path))
    with Image.open(path) as im:
        plain = ni.phash(im)
    assert plain == stored
    assert stored.params != applied.params
    reference_upright = ni.phash(upright, exif_transpose=True)
    assert applied.distance(reference_upright) <= 4
    assert stored.distance(ni.phash(photo)) <= 4
