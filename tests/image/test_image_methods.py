"""The image methods of the registry: ahash, dhash, whash, pdq, crop-resistant, and dihedral."""

from __future__ import annotations

import logging
import pickle
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("PIL")
pytest.importorskip("imagehash")
from PIL import Image, ImageEnhance

from neardup.errors import ConfigError
from neardup.image import dhash, pdq, pdq_variant_codes
from neardup.image.pdqhashing import codes_to_hashes
from neardup.io import Document
from neardup.methods import REGISTRY, make_method, method_info
from neardup.methods.image import VariantCollector, decoded, dihedral_hashes, dihedral_images
from neardup.pipeline import dedup

VECTORS = Path(__file__).resolve().parents[1] / "golden" / "vectors" / "images"
IMAGE_METHODS = ("phash", "ahash", "dhash", "whash", "pdq", "crop-resistant")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> list[Document]:
    """A photo, its mirror image, its 90-degree rotation, a 10% crop, and unrelated images."""
    d = tmp_path_factory.mktemp("images")
    with Image.open(VECTORS / "photo.png") as im:
        photo = im.convert("RGB").resize((480, 318))
    w, h = photo.size
    photo.save(d / "a_photo.png")
    photo.transpose(Image.Transpose.FLIP_LEFT_RIGHT).save(d / "b_mirror.png")
    photo.transpose(Image.Transpose.ROTATE_90).save(d / "c_rot90.png")
    photo.crop((int(w * 0.05), int(h * 0.05), w, h)).save(d / "d_crop.png")
    dx, dy = int(w * 0.05), int(h * 0.05)
    photo.crop((dx, dy, w - dx, h - dy)).save(d / "e_crop10.png")
    rng = np.random.default_rng(5)
    for i in range(3):  # random blobs: smooth, photo-like quality, unrelated to each other
        small = rng.integers(0, 256, (6, 8, 3), dtype=np.uint8)
        blobs = Image.fromarray(small).resize((260, 200), Image.Resampling.BICUBIC)
        blobs.save(d / f"z{i}.png")
    return [Document(p.name, path=p) for p in sorted(d.iterdir())]


def _pairs(docs: list[Document], method: str, **options: object) -> set[tuple[str, str]]:
    return {(p.a, p.b) for p in dedup(docs, method=method, **options).pairs}


def test_every_image_method_is_registered_as_binary() -> None:
    for name in IMAGE_METHODS:
        info = method_info(name)
        assert info.binary and "dihedral" in info.options
    assert "min_quality" in REGISTRY["pdq"].options
    assert REGISTRY["crop-resistant"].default_threshold == 0.75
    assert make_method("pdq").radius == 31


@pytest.mark.parametrize("method", IMAGE_METHODS)
def test_dihedral_matches_mirror_and_rotation(corpus: list[Document], method: str) -> None:
    plain = _pairs(corpus, method)
    turned = _pairs(corpus, method, dihedral=True)
    assert plain <= turned  # dihedral only adds matches
    assert {("a_photo.png", "b_mirror.png"), ("a_photo.png", "c_rot90.png")} <= turned
    assert ("a_photo.png", "b_mirror.png") not in plain
    if method != "crop-resistant":
        # crop-resistant with imagehash's region_cutoff=1 pairs any two images that share
        # one flat or gradient segment (a 0x00.. or 0xff.. dHash): these blobs do
        assert not any(a.startswith("z") and b.startswith("z") for a, b in turned)


def test_pdq_pairs_and_distances_equal_the_hashes(corpus: list[Document]) -> None:
    result = dedup(corpus, method="pdq", dihedral=True, threshold=0.8)
    by_id = {d.id: d.path for d in corpus}
    assert len(result.pairs) >= 3
    for p in result.pairs:
        ha = codes_to_hashes(pdq_variant_codes([by_id[p.a]]).codes[0])
        hb = codes_to_hashes(pdq_variant_codes([by_id[p.b]]).codes[0])
        want = min(x.distance(y) for x in ha for y in hb)
        assert p.distance == want and p.similarity == pytest.approx(1 - want / 256)


def _faded(tmp_path: Path) -> list[Document]:
    """A faded photo (PDQ quality 36), its mirror image and its 90-degree rotation."""
    with Image.open(VECTORS / "photo.png") as im:
        faded = ImageEnhance.Contrast(im.convert("RGB").resize((480, 318))).enhance(0.1)
    faded.save(tmp_path / "faded.png")
    faded.transpose(Image.Transpose.FLIP_LEFT_RIGHT).save(tmp_path / "mirror.png")
    faded.transpose(Image.Transpose.ROTATE_90).save(tmp_path / "rot90.png")
    return [Document(n, path=tmp_path / f"{n}.png") for n in ("faded", "mirror", "rot90")]


def test_low_quality_images_match_their_mirror_by_default(
    caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    docs = _faded(tmp_path)
    assert docs[0].path is not None and pdq(docs[0].path)[1] < 50
    want = {("faded", "mirror"), ("faded", "rot90"), ("mirror", "rot90")}
    with caplog.at_level(logging.INFO, logger="neardup.methods.image"):
        assert _pairs(docs, "pdq", dihedral=True) == want
    assert "faded: PDQ quality 36 is below low_quality 50; matched only within distance 16" in (
        caplog.text
    )
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="neardup.methods.image"):  # Meta's gate
        assert _pairs(docs, "pdq", dihedral=True, min_quality=50) == set()
    assert "faded: PDQ quality 36 is below min_quality 50; left out" in caplog.text


def test_pdq_quality_gating_is_logged(caplog: pytest.LogCaptureFixture, tmp_path: Path) -> None:
    flat = tmp_path / "flat.png"
    Image.new("RGB", (80, 80), (50, 60, 70)).save(flat)
    flat2 = tmp_path / "flat2.png"
    Image.new("RGB", (90, 70), (50, 60, 70)).save(flat2)
    docs = [Document("flat", path=flat), Document("flat2", path=flat2)]
    assert pdq(flat)[1] == 0
    assert _pairs(docs, "pdq") == {("flat", "flat2")}
    with caplog.at_level(logging.WARNING, logger="neardup.methods.image"):
        assert _pairs(docs, "pdq", min_quality=1) == set()
    assert "flat: PDQ quality 0 is below min_quality 1" in caplog.text


def test_low_quality_pairs_need_the_stricter_distance() -> None:
    m = make_method("pdq")
    assert (m.radius, m.low_radius) == (31, 16)
    assert make_method("pdq", threshold=1 - 10 / 256).low_radius == 10  # never looser
    base = np.zeros(4, dtype=np.uint64)
    near, far = base.copy(), base.copy()
    near[0] = np.uint64((1 << 16) - 1)  # distance 16 from base
    far[0] = np.uint64((1 << 17) - 1)  # distance 17 from base, 1 from near
    codes = np.stack([base, near, far, base, near, far])
    quality = np.array([90, 90, 90, 40, 40, 40])  # rows 3-5 are low quality

    def pairs(method_options: dict[str, int]) -> dict[tuple[int, int], int]:
        c = make_method("pdq", **method_options).collector()
        c.add(np.arange(6), (codes, quality))
        p = c.pairs()
        rows = zip(p.a.tolist(), p.b.tolist(), p.distance.tolist(), strict=True)
        return {(a, b): d for a, b, d in rows}

    everything = pairs({"low_quality": 0})
    assert len(everything) == 15 and everything[(0, 2)] == 17  # all within 31
    # distance 17 with a low-quality image (0-5, 2-3, 3-5) is past 16: left out
    assert pairs({}) == {k: d for k, d in everything.items() if k not in {(0, 5), (2, 3), (3, 5)}}
    assert pairs({"min_quality": 50}) == {(0, 1): 16, (0, 2): 17, (1, 2): 1}


def test_pdq_crops_match_the_centred_crop(corpus: list[Document]) -> None:
    assert ("a_photo.png", "e_crop10.png") not in _pairs(corpus, "pdq")
    assert ("a_photo.png", "e_crop10.png") in _pairs(corpus, "pdq", crops=True)
    sim, d = make_method("pdq", crops=True).compare(corpus[4], corpus[0])
    assert d is not None and d <= 31 and sim == 1 - d / 256


def test_crop_resistant_matches_the_crop(corpus: list[Document]) -> None:
    assert ("a_photo.png", "d_crop.png") in _pairs(corpus, "crop-resistant")
    m = make_method("crop-resistant")
    sim, d = m.compare(corpus[0], corpus[3])
    assert d is not None and sim == 1 - d / 64


@pytest.mark.parametrize(
    ("method", "preset", "mode", "side"),
    [
        ("dhash", "imagehash", "RGB", 1100),  # above 1 Mpixel: hash_image's other path
        ("dhash", "imagehash", "P", 61),
        ("ahash", "imagehash", "L", 61),
        ("whash", "imagehash", "RGB", 61),
        ("phash", "imagehash", "RGB", 61),
        ("phash", "go", "RGB", 61),
    ],
)
def test_dihedral_hashes_equal_hashing_the_transformed_colour_images(
    tmp_path: Path, method: str, preset: str, mode: str, side: int
) -> None:
    """One transform at a time (grey first for imagehash) gives the bits of the 8 colour
    transforms hashed together."""
    from neardup.image import hash_many
    from neardup.image.value import ImageHashParams

    rng = np.random.default_rng(3)
    small = rng.integers(0, 256, (5, 7, 3), dtype=np.uint8)
    size = (side, side * 10 // 11)
    Image.fromarray(small).resize(size, Image.Resampling.BICUBIC).convert(mode).save(
        tmp_path / "im.png"
    )
    doc = Document("im.png", path=tmp_path / "im.png")
    params = ImageHashParams(method=method, preset=preset)
    want = hash_many(dihedral_images(decoded(doc)), params=params)
    assert [int(h) for h in dihedral_hashes(doc, params)] == [int(h) for h in want]


def test_hashes_of_transforms_and_fingerprints(corpus: list[Document]) -> None:
    assert corpus[0].path is not None
    with Image.open(corpus[0].path) as im:
        variants = dihedral_images(im.convert("RGB"))
    m = make_method("dhash", dihedral=True)
    codes = m.sketch([corpus[0]])
    assert codes.shape == (1, 8)
    assert [int(dhash(v)) for v in variants] == codes[0].tolist()
    assert m.fingerprint(corpus[0]).split(",")[0] == str(dhash(corpus[0].path))
    h, q = pdq(corpus[0].path)
    assert make_method("pdq").fingerprint(corpus[0]) == f"{h},{q}"
    assert make_method("ahash", dihedral=True).compare(corpus[0], corpus[1]) == (1.0, 0)


def test_methods_pickle_and_dihedral_phash_is_not_storable(corpus: list[Document]) -> None:
    for name in IMAGE_METHODS:
        m = make_method(name, dihedral=True)
        assert pickle.loads(pickle.dumps(m)) == m
    m = make_method("phash", dihedral=True)
    with pytest.raises(ConfigError, match="dihedral"):
        m.blobs(m.sketch(corpus[:1]))
    with pytest.raises(ConfigError, match="min_quality"):
        make_method("pdq", min_quality=101)
    with pytest.raises(ConfigError, match="low_quality_threshold"):
        make_method("pdq", low_quality_threshold=1.5)


def test_variant_collector_takes_the_smallest_distance() -> None:
    c = VariantCollector(64, radius=4)
    codes = np.array([[0b1111, 0xFF00], [0b0111, 0xFF01]], dtype=np.uint64)
    c.add(np.array([0, 1]), codes[:, None, :].reshape(2, 2, 1))
    p = c.pairs()
    assert (p.a.tolist(), p.b.tolist(), p.distance.tolist()) == ([0], [1], [1])
    c.add(np.array([-1]), np.array([[0b1111, 0]], dtype=np.uint64))  # gated: left out
    assert len(c.pairs()) == 1
