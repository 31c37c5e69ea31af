"""The image methods of the registry: ahash, dhash, whash, pdq, crop-resistant, and dihedral."""

from __future__ import annotations

import logging
import pickle
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("PIL")
pytest.importorskip("imagehash")
from PIL import Image

from neardup.errors import ConfigError
from neardup.image import dhash, pdq, pdq_variant_codes
from neardup.image.pdqhashing import codes_to_hashes
from neardup.io import Document
from neardup.methods import REGISTRY, make_method, method_info
from neardup.methods.image import VariantCollector, dihedral_images
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


def test_pdq_quality_gating_is_logged(caplog: pytest.LogCaptureFixture, tmp_path: Path) -> None:
    flat = tmp_path / "flat.png"
    Image.new("RGB", (80, 80), (50, 60, 70)).save(flat)
    flat2 = tmp_path / "flat2.png"
    Image.new("RGB", (90, 70), (50, 60, 70)).save(flat2)
    docs = [Document("flat", path=flat), Document("flat2", path=flat2)]
    assert pdq(flat)[1] < 50
    with caplog.at_level(logging.WARNING, logger="neardup.methods.image"):
        assert _pairs(docs, "pdq") == set()
    assert "flat: PDQ quality 0 is below min_quality 50" in caplog.text
    assert _pairs(docs, "pdq", min_quality=0) == {("flat", "flat2")}


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


def test_variant_collector_takes_the_smallest_distance() -> None:
    c = VariantCollector(64, radius=4)
    codes = np.array([[0b1111, 0xFF00], [0b0111, 0xFF01]], dtype=np.uint64)
    c.add(np.array([0, 1]), codes[:, None, :].reshape(2, 2, 1))
    p = c.pairs()
    assert (p.a.tolist(), p.b.tolist(), p.distance.tolist()) == ([0], [1], [1])
    c.add(np.array([-1]), np.array([[0b1111, 0]], dtype=np.uint64))  # gated: left out
    assert len(c.pairs()) == 1
