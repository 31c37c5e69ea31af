"""``pdq`` with ``crops=True`` keeps its promise: copies cropped by up to 10%, centred or at
any corner, match (the crop ladder of 98-90% in steps of 2%)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("PIL")

from PIL import Image

from neardup.image.pdqhashing import CROP_ANCHORS, CROP_KEEPS, pdq_variant_codes
from neardup.io import Document
from neardup.methods import make_method

VECTORS = Path(__file__).resolve().parents[1] / "golden" / "vectors" / "images"


def _crop(im: Image.Image, share: float, where: str) -> Image.Image:
    w, h = im.size
    cw, ch = round(w * (1 - share)), round(h * (1 - share))
    if where == "centre":
        left, top = (w - cw) // 2, (h - ch) // 2
    else:
        left = 0 if "left" in where else w - cw
        top = 0 if "top" in where else h - ch
    return im.crop((left, top, left + cw, top + ch))


@pytest.fixture(scope="module")
def photo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Image.Image]:
    with Image.open(VECTORS / "photo.png") as im:
        big = im.convert("RGB").resize((480, 318))
    path = tmp_path_factory.mktemp("crops") / "a.png"
    big.save(path)
    return path, big


@pytest.mark.parametrize(
    "where", ["top-left", "top-right", "bottom-left", "bottom-right", "centre"]
)
@pytest.mark.parametrize("share", [0.03, 0.05, 0.07, 0.10])
def test_crops_up_to_ten_percent_match(
    photo: tuple[Path, Image.Image], tmp_path: Path, where: str, share: float
) -> None:
    path, im = photo
    target = tmp_path / "b.png"
    _crop(im, share, where).save(target)
    a, b = Document("a", path=path), Document("b", path=target)
    plain = make_method("pdq").compare(a, b)[1]
    cropped = make_method("pdq", crops=True).compare(a, b)[1]
    assert cropped is not None and cropped <= 31, (where, share, cropped)
    if share >= 0.05:
        assert plain is not None and plain > 31  # the plain hash alone does not match them


def test_the_ladder_is_25_crops() -> None:
    assert CROP_KEEPS == (0.98, 0.96, 0.94, 0.92, 0.90) and len(CROP_ANCHORS) == 5
    with Image.open(VECTORS / "photo.png") as im:
        rgb = im.convert("RGB")
    assert pdq_variant_codes([rgb], crops=True).codes.shape == (1, 16 + 25, 4)
    assert pdq_variant_codes([rgb], dihedral=False, crops=True).codes.shape == (1, 1 + 25, 4)
    assert make_method("pdq", crops=True).params.endswith("+crops25")
