"""ImageHash values and ImageHashParams: serialisation, comparison rules, validation."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from neardup.errors import ConfigError, FormatError, IncompatibleSketchError
from neardup.image import ImageHash, ImageHashParams

PARAMS = [
    ImageHashParams(),
    ImageHashParams(preset="go"),
    ImageHashParams(method="ahash", hash_size=16),
    ImageHashParams(method="dhash", hash_size=5),
    ImageHashParams(method="whash", image_scale=64),
    ImageHashParams(method="colorhash", binbits=3),
    ImageHashParams(method="phash", exif_transpose=True, jpeg_draft=True),
]


@st.composite
def hashes(draw: st.DrawFn) -> ImageHash:
    params = draw(st.sampled_from(PARAMS))
    return ImageHash(draw(st.integers(0, (1 << params.bits) - 1)), params)


@given(hashes())
def test_bytes_round_trip(h: ImageHash) -> None:
    assert ImageHash.from_bytes(h.to_bytes()) == h


@given(hashes())
def test_hex_round_trip_and_width(h: ImageHash) -> None:
    text = h.to_hex()
    assert text == str(h) == text.lower()
    assert len(text) == (h.bits + 3) // 4
    assert ImageHash.from_hex(text, h.params) == h
    assert ImageHash.from_hex(text.upper(), h.params) == h


@given(hashes(), st.data())
def test_distance_symmetric_and_bounded(h: ImageHash, data: st.DataObject) -> None:
    other = ImageHash(data.draw(st.integers(0, (1 << h.bits) - 1)), h.params)
    assert h.distance(other) == other.distance(h)
    assert 0 <= h.distance(other) <= h.bits
    assert h.distance(h) == 0
    assert h.similarity(h) == 1.0
    assert h.similarity(other) == pytest.approx(1 - h.distance(other) / h.bits)


def test_different_kinds_or_params_refuse_to_compare() -> None:
    a = ImageHash(5, ImageHashParams(method="phash"))
    with pytest.raises(IncompatibleSketchError, match="different parameters"):
        a.distance(ImageHash(5, ImageHashParams(method="ahash")))
    with pytest.raises(IncompatibleSketchError):
        a.similarity(ImageHash(5, ImageHashParams(preset="go")))
    with pytest.raises(IncompatibleSketchError):
        a.distance(5)  # type: ignore[arg-type]


def test_values_are_checked() -> None:
    with pytest.raises(FormatError):
        ImageHash(1 << 64, ImageHashParams())
    with pytest.raises(FormatError):
        ImageHash(-1, ImageHashParams())
    with pytest.raises(FormatError):
        ImageHash(True, ImageHashParams())


@pytest.mark.parametrize(
    "text", ["", "123", "0x00000000000000", "zzzzzzzzzzzzzzzz", " 000000000000000"]
)
def test_bad_hex(text: str) -> None:
    with pytest.raises(FormatError):
        ImageHash.from_hex(text)


def test_bad_bytes() -> None:
    good = ImageHash(7, ImageHashParams()).to_bytes()
    for bad in [b"", b"XXXX" + good[4:], good[:-1], good + b"\0", good[:4] + b"\x09" + good[5:]]:
        with pytest.raises(FormatError):
            ImageHash.from_bytes(bad)
    corrupt_params = good.replace(b'"phash"', b'"qhash"')
    with pytest.raises(FormatError, match="invalid"):
        ImageHash.from_bytes(corrupt_params)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"method": "xhash"}, "method"),
        ({"preset": "rust"}, "preset"),
        ({"hash_size": 1}, "hash_size"),
        ({"method": "ahash", "preset": "go"}, "preset 'go'"),
        ({"preset": "go", "hash_size": 16}, "preset 'go'"),
        ({"preset": "go", "exif_transpose": True}, "EXIF"),
        ({"method": "whash", "hash_size": 6}, "power of two"),
        ({"method": "whash", "image_scale": 48}, "power of two"),
        ({"method": "whash", "hash_size": 16, "image_scale": 8}, "at least hash_size"),
        ({"method": "ahash", "binbits": 4}, "binbits does not apply"),
        ({"method": "colorhash", "hash_size": 16}, "hash_size does not apply"),
        ({"method": "phash", "image_scale": 64}, "image_scale does not apply"),
    ],
)
def test_params_validation(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        ImageHashParams(**kwargs)  # type: ignore[arg-type]


def test_fingerprints_are_stable_and_distinct() -> None:
    prints = {p.fingerprint() for p in PARAMS}
    assert len(prints) == len(PARAMS)
    assert ImageHashParams().fingerprint() == ImageHashParams().fingerprint()
    assert ImageHashParams(method="colorhash").bits == 42
