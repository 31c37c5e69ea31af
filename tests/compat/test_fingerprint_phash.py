"""neardup.compat.fingerprint pHash half: every shipped Go vector (seed 000, SEEDS.md 1.3-1.6)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

pytest.importorskip("PIL")
from PIL import Image

from neardup.compat.fingerprint import (
    PHashError,
    phash,
    phash_from_hex,
    phash_from_image,
    phash_hex,
)
from neardup.errors import DecodeError, NeardupError
from neardup.image.hashes import _go_grid

VECTORS = Path(__file__).resolve().parents[1] / "golden" / "vectors"
PHASH = json.loads((VECTORS / "go_fingerprint_phash.json").read_text(encoding="utf-8"))
IMAGES = {Path(e["file"]).name: e for e in PHASH["images"]}
#: The vectors say JPEG is decoder-dependent: require a small Hamming distance, not equality.
JPEG_TOLERANCE = 4


def _distance(a: int, b: int) -> int:
    return (a ^ b).bit_count()


@pytest.mark.parametrize("entry", PHASH["images"], ids=lambda e: Path(e["file"]).name)
def test_every_go_vector(entry: dict[str, object]) -> None:
    path = VECTORS / str(entry["file"])
    got = phash(path)
    want = int(str(entry["phash_hex"]), 16)
    if entry["decoded_format"] == "jpeg":
        assert _distance(got, want) <= JPEG_TOLERANCE
    else:
        assert phash_hex(got) == entry["phash_hex"]
        assert got == int(str(entry["phash_dec"]))
    assert got.bit_count() == entry["popcount"] or entry["decoded_format"] == "jpeg"


def test_jpeg_vectors_are_exact_here_too() -> None:
    # Stronger than the file requires: decoding JPEG as YCbCr and applying Go's conversion
    # reproduces Go's bits on both shipped JPEGs.
    for name in ("photo_q90.jpg", "photo_q50.jpg"):
        assert phash_hex(phash(VECTORS / "images" / name)) == IMAGES[name]["phash_hex"]


def test_path_bytes_file_object_and_str_path_agree() -> None:
    path = VECTORS / "images" / "photo.png"
    data = path.read_bytes()
    with path.open("rb") as fh:
        from_file = phash(fh)
    assert phash(path) == phash(str(path)) == phash(data) == from_file == phash(io.BytesIO(data))


@pytest.mark.parametrize("name", sorted(PHASH["intermediates"]))
def test_grid_intermediates_are_byte_identical(name: str) -> None:
    want = PHASH["intermediates"][name]
    with Image.open(VECTORS / "images" / name) as im:
        im.load()
        grid = _go_grid(im)
    assert grid.tobytes().hex() == want["grid_rgba_32x32_hex"]
    with Image.open(VECTORS / "images" / name) as im:
        assert phash_hex(phash_from_image(im)) == want["phash_hex"]


def test_in_memory_cases() -> None:
    cases = PHASH["in_memory_cases"]
    assert (
        phash_hex(phash_from_image(Image.new("RGBA", (0, 0))))
        == cases["zero_size_rgba"]["phash_hex"]
    )
    transparent = Image.new("RGBA", (64, 64), (0, 0, 0, 0))
    assert phash_hex(phash_from_image(transparent)) == cases["transparent_black_64"]["phash_hex"]
    # A SubImage hashes relative to its own bounds: a Pillow crop is the same thing. The crop
    # box (an 80% window) was located by search, since the vectors give only the hash.
    with Image.open(VECTORS / "images" / "photo.png") as im:
        sub = im.crop((22, 15, 214, 142))
    assert phash_hex(phash_from_image(sub)) == cases["photo_subimage_nonzero_origin"]["phash_hex"]


def test_animated_gif_hashes_its_first_frame(tmp_path: Path) -> None:
    with Image.open(VECTORS / "images" / "first_frame_only.gif") as im:
        frame0 = im.convert("RGB")
    frame1 = Image.effect_noise((64, 64), 80).convert("RGB")
    path = tmp_path / "animated.gif"
    frame0.save(path, save_all=True, append_images=[frame1], duration=100, loop=0)
    assert phash(path) == phash(VECTORS / "images" / "first_frame_only.gif")


def test_tiny_images_get_a_hash_and_no_error() -> None:
    assert phash_from_image(Image.new("RGB", (1, 1), (10, 200, 30))) >= 0
    assert (
        phash_hex(phash(VECTORS / "images" / "tiny_4x4.png")) == IMAGES["tiny_4x4.png"]["phash_hex"]
    )


@pytest.mark.parametrize("case", PHASH["decode_errors"], ids=lambda c: c["note"])
def test_decode_errors_raise_phash_error(case: dict[str, str]) -> None:
    data = bytes.fromhex(case["input_hex"])
    with pytest.raises(PHashError) as info:
        phash(data)
    assert isinstance(info.value, DecodeError | NeardupError)
    assert isinstance(info.value, ValueError)
    message = str(info.value)
    assert f"<{len(data)} bytes>" in message
    if case["go_error"] == "image: unknown format":
        assert "image: unknown format" in message
    else:
        assert "truncated or corrupt" in message


def test_file_errors_name_the_file(tmp_path: Path) -> None:
    empty = tmp_path / "empty.png"
    empty.write_bytes(b"")
    with pytest.raises(PHashError, match=r"empty\.png"):
        phash(empty)
    with pytest.raises(PHashError, match=r"missing\.png"):
        phash(tmp_path / "missing.png")
    bmp = tmp_path / "pic.bmp"
    Image.new("RGB", (8, 8)).save(bmp)
    with pytest.raises(PHashError, match="unknown format"):
        phash(bmp)  # Pillow reads BMP, but Go's package registers only PNG, JPEG and GIF


def test_pairs() -> None:
    hashes = {name: phash(VECTORS / "images" / name) for name in IMAGES}
    for pair in PHASH["pairs"]:
        a, b = hashes[pair["a"]], hashes[pair["b"]]
        assert _distance(a, b) == pair["distance"]


@pytest.mark.parametrize("case", PHASH["phash_hex_format"], ids=lambda c: c["output"])
def test_phash_hex(case: dict[str, str]) -> None:
    assert phash_hex(int(case["input"])) == case["output"]
    assert phash_from_hex(case["output"]) == int(case["input"])


@pytest.mark.parametrize("case", PHASH["phash_from_hex"], ids=lambda c: repr(c["input"]))
def test_phash_from_hex(case: dict[str, str]) -> None:
    if "go_error" in case:
        with pytest.raises(PHashError) as info:
            phash_from_hex(case["input"])
        assert str(info.value) == case["go_error"]
    else:
        assert phash_from_hex(case["input"]) == int(case["output"])


@pytest.mark.parametrize("bad", [-1, 1 << 64, 1.5, True, "0"])
def test_phash_hex_rejects_non_uint64(bad: object) -> None:
    with pytest.raises(PHashError, match=r"2\*\*64"):
        phash_hex(bad)  # type: ignore[arg-type]


def test_phash_from_hex_go_byte_rules() -> None:
    with pytest.raises(PHashError, match="odd length"):
        phash_from_hex("abc")
    with pytest.raises(PHashError, match=r"invalid byte: U\+0067 'g'"):
        phash_from_hex("abg")  # an invalid odd last byte is reported before the length
    with pytest.raises(PHashError, match=r"invalid byte: U\+00C3"):
        phash_from_hex("é0000000000000a")  # Go decodes bytes, not characters
    with pytest.raises(PHashError, match="must be a str"):
        phash_from_hex(b"00")  # type: ignore[arg-type]
