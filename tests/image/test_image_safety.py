"""Bad input: empty, text, truncated, unsupported, missing and decompression-bomb files."""

from __future__ import annotations

import io
import re
import resource
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

pytest.importorskip("PIL")
from PIL import Image

from neardup import image as ni
from neardup.compat.fingerprint import PHashError, phash
from neardup.errors import (
    ConfigError,
    DecodeError,
    InputError,
    InputTooLargeError,
    NeardupError,
)

VECTORS = Path(__file__).resolve().parents[1] / "golden" / "vectors"


def _chunk(kind: bytes, data: bytes) -> bytes:
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))


def _bomb_png(width: int, height: int) -> bytes:
    """A valid-looking PNG header claiming width x height grey pixels, a few hundred bytes."""
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    rows = zlib.compress(b"\0" * (width + 1) * 4, 9)  # the first 4 rows only
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", rows)
        + _chunk(b"IEND", b"")
    )


@pytest.fixture
def bad_files(tmp_path: Path) -> dict[str, Path]:
    files = {
        "empty.png": b"",
        "notes.txt": b"this is a text file, not an image\n",
        "truncated.png": (VECTORS / "images" / "checker8.png").read_bytes()[:100],
    }
    out = {}
    for name, data in files.items():
        path = tmp_path / name
        path.write_bytes(data)
        out[name] = path
    return out


@pytest.mark.parametrize("name", ["empty.png", "notes.txt", "truncated.png"])
@pytest.mark.parametrize("method", ["phash", "ahash", "dhash", "whash", "colorhash"])
def test_bad_files_raise_decode_error_naming_the_file(
    bad_files: dict[str, Path], name: str, method: str
) -> None:
    with pytest.raises(DecodeError, match=re.escape(name)) as info:
        ni.hash_image(bad_files[name], ni.ImageHashParams(method=method))
    assert isinstance(info.value, NeardupError)
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("name", ["empty.png", "notes.txt", "truncated.png"])
def test_bad_files_in_a_batch_and_in_the_go_facade(bad_files: dict[str, Path], name: str) -> None:
    good = VECTORS / "images" / "photo.png"
    with pytest.raises(DecodeError, match=re.escape(name)):
        ni.hash_many([good, bad_files[name], good])
    with pytest.raises(PHashError, match=re.escape(name)):
        phash(bad_files[name])
    with pytest.raises(DecodeError, match=re.escape(name)):
        ni.phash(bad_files[name], preset="go")


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(DecodeError, match="no such file"):
        ni.phash(tmp_path / "nope.png")


def test_truncated_message_says_so(bad_files: dict[str, Path]) -> None:
    with pytest.raises(DecodeError, match="truncated or corrupt"):
        ni.dhash(bad_files["truncated.png"])


def test_decompression_bomb_is_refused_before_decoding(tmp_path: Path) -> None:
    data = _bomb_png(30000, 30000)
    assert len(data) < 1000
    path = tmp_path / "bomb.png"
    path.write_bytes(data)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(InputTooLargeError, match=r"bomb\.png") as info:
        ni.phash(path)
    assert "max_pixels" in str(info.value) or "MAX_IMAGE_PIXELS" in str(info.value)
    with pytest.raises(InputTooLargeError):
        ni.hash_many([path], method="ahash")
    with pytest.raises(PHashError, match=r"bomb\.png"):
        phash(path)
    with pytest.raises(InputTooLargeError):
        ni.phash(io.BytesIO(data), max_pixels=10**12)  # Pillow's own cap still applies
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kib < 100 * 1024  # 900 Mpixel were never allocated


def test_max_pixels_is_configurable(tmp_path: Path) -> None:
    photo = VECTORS / "images" / "photo.png"  # 240 x 159 = 38160 pixels
    with pytest.raises(InputTooLargeError, match="38160 pixels exceeds max_pixels=38159"):
        ni.phash(photo, max_pixels=38159)
    assert ni.phash(photo, max_pixels=38160) == ni.phash(photo)
    with Image.open(photo) as im:
        im.load()
        with pytest.raises(InputTooLargeError):
            ni.ahash(im, max_pixels=100)
    with pytest.raises(PHashError, match="max_pixels"):
        phash(photo, max_pixels=100)


def test_zero_sized_images() -> None:
    empty = Image.new("RGB", (0, 0))
    with pytest.raises(InputError, match="no pixels"):
        ni.phash(empty)
    assert ni.phash(empty, preset="go").value == 0


def test_bad_batch_arguments() -> None:
    with pytest.raises(ConfigError):
        ni.hash_many([], workers=0)
    with pytest.raises(ConfigError):
        ni.hash_many([], batch_size=0)
    assert ni.hash_many([]) == []


def test_importing_neardup_image_does_not_import_pillow() -> None:
    code = (
        "import sys, neardup, neardup.image, neardup.compat.fingerprint;"
        "bad = [m for m in ('PIL', 'scipy', 'pywt', 'imagehash') if m in sys.modules];"
        "print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
