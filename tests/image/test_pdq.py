"""neardup.image.pdqhashing: Meta's PDQ bits and quality, with the pdqhash bindings as oracle."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("PIL")
pdqhash = pytest.importorskip("pdqhash")
from PIL import Image  # noqa: E402

from conftest import native_pair  # noqa: E402
from neardup import image as ni  # noqa: E402
from neardup._kernels import pdq as reference  # noqa: E402
from neardup.errors import IncompatibleSketchError, InputError  # noqa: E402
from neardup.image.pdqhashing import (  # noqa: E402
    DIHEDRAL,
    codes_to_hashes,
    dihedral_dct,
    pdq,
    pdq_codes,
    pdq_dihedral,
    pdq_many,
)

VECTORS = Path(__file__).resolve().parents[1] / "golden" / "vectors" / "images"

#: Sizes that exercise every branch: the 5-pixel minimum, fewer than 64 (decimation repeats
#: pixels), exactly 64 (no filtering), window changes at 128 and 256, wide and tall strips.
EDGE_SIZES = [(5, 5), (5, 300), (300, 5), (6, 9), (63, 64), (64, 64), (64, 65), (65, 64)]
EDGE_SIZES += [(127, 128), (128, 129), (129, 257), (256, 255), (400, 31), (2, 40), (40, 4)]


fast = native_pair("pdq")[0]  # the compiled twin


def _oracle(rgb: np.ndarray) -> tuple[int, int]:
    vec, quality = pdqhash.compute(np.ascontiguousarray(rgb))
    return int("".join(str(int(b)) for b in vec), 2), int(quality)


def _oracle_dihedral(rgb: np.ndarray) -> tuple[list[int], int]:
    vecs, quality = pdqhash.compute_dihedral(np.ascontiguousarray(rgb))
    return [int("".join(str(int(b)) for b in v), 2) for v in vecs], int(quality)


def _random_images(count: int, seed: int) -> list[np.ndarray]:
    """Noise, smooth gradients (many ties in the DCT median), posterized and flat images."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(count):
        h, w = EDGE_SIZES[i] if i < len(EDGE_SIZES) else (int(v) for v in rng.integers(5, 360, 2))
        rgb = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
        kind = i % 4
        if kind == 1:
            rgb = np.cumsum(rgb, axis=1, dtype=np.uint64).astype(np.uint8)
        elif kind == 2:
            rgb = (rgb // 85 * 85).astype(np.uint8)
        elif kind == 3:
            yy, xx = np.mgrid[0:h, 0:w]
            base = (np.sin(xx / (3 + i % 7)) * 60 + np.cos(yy / 5) * 60 + 128).astype(np.uint8)
            rgb = np.stack([base, base[::-1], 255 - base], axis=2)
        out.append(rgb)
    return out


def _photo_like() -> list[np.ndarray]:
    """Real photographs shipped with the tests, and their copies at other sizes."""
    out = []
    for name in ("photo.png", "photo_q50.jpg", "photo_rot90.png", "synth_photo.png"):
        with Image.open(VECTORS / name) as im:
            rgb = im.convert("RGB")
        out.append(np.asarray(rgb))
        out.append(np.asarray(rgb.resize((rgb.width * 3, rgb.height * 2))))
    return out


def test_parity_with_pdqhash_on_random_images() -> None:
    images = _random_images(300, seed=21)
    mismatches = []
    for rgb in images:
        h, q = pdq(rgb)
        if (h.value, q) != _oracle(rgb):
            mismatches.append(rgb.shape)
    assert mismatches == []


def test_parity_with_pdqhash_on_photographs() -> None:
    for rgb in _photo_like():
        h, q = pdq(rgb)
        assert (h.value, q) == _oracle(rgb), rgb.shape


def test_dihedral_hashes_equal_compute_dihedral() -> None:
    for rgb in _random_images(80, seed=5) + _photo_like():
        if rgb.shape[:2] == (64, 64):
            continue  # see test_64x64_follows_compute_not_compute_dihedral
        hashes, q = pdq_dihedral(rgb)
        assert ([x.value for x in hashes], q) == _oracle_dihedral(rgb), rgb.shape


def test_64x64_follows_compute_not_compute_dihedral() -> None:
    rgb = np.random.default_rng(64).integers(0, 256, (64, 64, 3), dtype=np.uint8)
    hashes, _ = pdq_dihedral(rgb)
    assert hashes[0].value == _oracle(rgb)[0] == pdq(rgb)[0].value


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    h=st.integers(1, 90),
    w=st.integers(1, 90),
    seed=st.integers(0, 2**32 - 1),
    levels=st.sampled_from([2, 3, 256]),
)
def test_parity_property(h: int, w: int, seed: int, levels: int) -> None:
    rgb = np.random.default_rng(seed).integers(0, levels, (h, w, 3), dtype=np.uint8)
    rgb = (rgb * (255 // (levels - 1))).astype(np.uint8)
    got, q = pdq(rgb)
    if h < 5 or w < 5:
        assert (got.value, q) == (0, 0)
    else:
        assert (got.value, q) == _oracle(rgb)


def test_files_hash_as_their_rgb_pixels(tmp_path: Path) -> None:
    for name in ("photo.png", "photo_q50.jpg", "photo_alpha.png", "photo_gray.png"):
        path = VECTORS / name
        with Image.open(path) as im:
            rgb = np.asarray(im.convert("RGB"))
        want = _oracle(rgb)
        assert (pdq(path)[0].value, pdq(path)[1]) == want
        assert (pdq(path.read_bytes())[0].value, pdq(path.read_bytes())[1]) == want
        with Image.open(path) as im:
            assert pdq(im)[0].value == want[0]


def test_fast_and_reference_kernels_give_the_same_floats() -> None:
    for rgb in _random_images(40, seed=9):
        a, qa = reference.pdq_rgb(rgb)
        b, qb = fast.pdq_rgb(rgb)
        assert qa == qb
        assert np.array_equal(a.view(np.uint32), b.view(np.uint32))
        luma = reference.luma_rgb(rgb)
        assert np.array_equal(luma, fast.luma_rgb(rgb))
        fa, _ = reference.pdq_float(luma)
        fb, _ = fast.pdq_float(luma)
        assert np.array_equal(fa.view(np.uint32), fb.view(np.uint32))


def test_luma_and_grey_arrays() -> None:
    rgb = _random_images(6, seed=11)[5]
    luma = reference.luma_rgb(rgb)
    assert pdq(luma) == pdq(rgb)  # float32 luma is taken as it is
    grey = rgb[:, :, 0].copy()
    assert pdq(grey) == pdq(grey.astype(np.float32))
    with pytest.raises(InputError, match="float32 luma or uint8 grey"):
        pdq(grey.astype(np.int32))
    with pytest.raises(InputError, match="uint8"):
        pdq(rgb.astype(np.float64))
    with pytest.raises(InputError, match="shape"):
        pdq(np.zeros((4, 4, 2), np.uint8))


def _torben(m: np.ndarray) -> np.float32:
    """A literal port of the reference's torben.cpp, for the lower-median claim."""
    n = len(m)
    lo = hi = m[0]
    for v in m[1:]:
        lo, hi = min(lo, v), max(hi, v)
    while True:
        guess = np.float32((lo + hi) / np.float32(2))
        less = int((m < guess).sum())
        greater = int((m > guess).sum())
        equal = n - less - greater
        maxlt = m[m < guess].max() if less else lo
        mingt = m[m > guess].min() if greater else hi
        maxlt, mingt = max(maxlt, lo), min(mingt, hi)
        if less <= (n + 1) // 2 and greater <= (n + 1) // 2:
            break
        if less > greater:
            hi = maxlt
        else:
            lo = mingt
    if less >= (n + 1) // 2:
        return np.float32(maxlt)
    if less + equal >= (n + 1) // 2:
        return guess
    return np.float32(mingt)


def test_torben_median_is_the_lower_median() -> None:
    rng = np.random.default_rng(2)
    for i in range(200):
        m = rng.normal(size=256).astype(np.float32)
        if i % 2:
            m = np.round(m * 3).astype(np.float32)  # many ties
        assert _torben(m) == np.sort(m)[127]


_OPS = {
    "original": lambda a: a,
    "rotate90": lambda a: np.rot90(a, 1),
    "rotate180": lambda a: np.rot90(a, 2),
    "rotate270": lambda a: np.rot90(a, -1),
    "flipx": lambda a: a[::-1],
    "flipy": lambda a: a[:, ::-1],
    "flipplus1": lambda a: a.transpose(1, 0, 2),
    "flipminus1": lambda a: np.rot90(a, 2).transpose(1, 0, 2),
}


def test_dihedral_hashes_are_the_hashes_of_the_transformed_pixels() -> None:
    assert tuple(_OPS) == DIHEDRAL
    for rgb in _photo_like()[:6]:  # the photographs (quality 100), not the texture
        hashes, _ = pdq_dihedral(rgb)
        for name, h in zip(DIHEDRAL, hashes, strict=True):
            moved, _ = pdq(np.ascontiguousarray(_OPS[name](rgb)))
            # not bit-equal: even box windows and floor decimation shift the samples by up
            # to a pixel, which on a 159-pixel side moves up to 44 bits; the transformed
            # pixels' hash is still far nearer than an unrelated image's (about 128)
            assert moved.distance(h) <= 48, name
            assert moved.distance(h) == min(moved.distance(x) for x in hashes), name


def test_dihedral_dct_is_a_group_action() -> None:
    d = np.random.default_rng(4).normal(size=(16, 16)).astype(np.float32)
    all8 = dihedral_dct(d)
    # rotate90 twice is rotate180; flipx then flipy is rotate180
    assert np.array_equal(dihedral_dct(all8[1])[1], all8[2])
    assert np.array_equal(dihedral_dct(all8[4])[5], all8[2])
    # every transform of a transform is one of the eight
    for t in range(8):
        for u in dihedral_dct(all8[t]):
            assert any(np.array_equal(u, x) for x in all8)


def test_batch_path_equals_one_by_one() -> None:
    images = [*_random_images(30, seed=13), VECTORS / "photo.png"]
    one = [pdq(x) for x in images]
    assert pdq_many(images) == one
    assert pdq_many(images, workers=2) == one
    codes = pdq_codes(images, dihedral=True, workers=2)
    assert codes.codes.shape == (len(images), 8, 4)
    assert codes.hashes() == [h for h, _ in one]
    assert codes.quality.tolist() == [q for _, q in one]
    for x, row in zip(images[:5], codes.codes[:5], strict=True):
        assert codes_to_hashes(row) == pdq_dihedral(x)[0]
    assert len(pdq_codes([])) == 0


def test_hash_value_format_and_params() -> None:
    h, _ = pdq(VECTORS / "photo.png")
    assert h.bits == 256 and h.kind == "pdq" and len(str(h)) == 64
    assert ni.ImageHash.from_bytes(h.to_bytes()) == h
    assert ni.ImageHash.from_hex(str(h), h.params) == h
    assert ni.hash_image(VECTORS / "photo.png", ni.ImageHashParams(method="pdq")) == h
    assert ni.hash_many([VECTORS / "photo.png"], method="pdq") == [h]
    with pytest.raises(IncompatibleSketchError):
        h.distance(ni.phash(VECTORS / "photo.png"))


def test_quality_is_low_for_flat_images_and_jpeg_draft_is_close() -> None:
    flat = np.full((100, 100, 3), 77, np.uint8)
    assert pdq(flat)[1] == 0
    with Image.open(VECTORS / "photo.png") as im:
        big = im.convert("RGB").resize((1200, 800))
    buf = io.BytesIO()
    big.save(buf, "JPEG", quality=90)
    full = pdq_codes([buf.getvalue()]).hashes()[0]
    draft = pdq_codes([buf.getvalue()], jpeg_draft=True).hashes()[0]
    assert full.distance(draft) <= 24


def test_variant_codes_are_the_hashes_of_their_pixels() -> None:
    from neardup.image.pdqhashing import _crop_boxes, pdq_variant_codes

    for rgb in _photo_like()[:3] + _random_images(3, seed=17):
        v = pdq_variant_codes([rgb], crops=True).codes[0]
        assert codes_to_hashes(v[:8]) == pdq_dihedral(rgb)[0]
        assert codes_to_hashes(v[8:16]) == pdq_dihedral(np.ascontiguousarray(rgb[:, ::-1]))[0]
        for row, (top, left, h, w) in zip(v[16:], _crop_boxes(*rgb.shape[:2]), strict=True):
            part = np.ascontiguousarray(rgb[top : top + h, left : left + w])
            assert codes_to_hashes(row[None])[0] == pdq(part)[0]
        assert pdq_variant_codes([rgb], dihedral=False).codes.shape == (1, 1, 4)
