"""The image methods through the CLI: --method ahash|dhash|whash|pdq|crop-resistant, --dihedral."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("PIL")
pytest.importorskip("imagehash")
from click.testing import CliRunner
from PIL import Image, ImageEnhance

from neardup.cli import main

VECTORS = Path(__file__).resolve().parents[1] / "golden" / "vectors" / "images"


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("cli_images")
    with Image.open(VECTORS / "photo.png") as im:
        photo = im.convert("RGB").resize((480, 318))
    photo.save(d / "a.png")
    photo.transpose(Image.Transpose.FLIP_LEFT_RIGHT).save(d / "b_mirror.png")
    photo.transpose(Image.Transpose.ROTATE_270).save(d / "c_rot.jpg", quality=85)
    Image.new("RGB", (64, 64), (40, 40, 40)).save(d / "flat.png")
    return d


def _clusters(*args: str, quiet: bool = True) -> tuple[list[list[str]], str]:
    flags = ["-q"] if quiet else []
    result = CliRunner().invoke(main, ["dedup", *args, "--format", "jsonl", *flags])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
    return [sorted(r["members"]) for r in rows], result.stderr


@pytest.mark.parametrize("method", ["ahash", "dhash", "whash", "pdq", "crop-resistant", "phash"])
def test_dihedral_clusters_the_mirror_and_the_rotation(folder: Path, method: str) -> None:
    clusters, _ = _clusters(str(folder), "--method", method, "--dihedral")
    assert ["a.png", "b_mirror.png", "c_rot.jpg"] in clusters
    plain, _ = _clusters(str(folder), "--method", method)
    assert ["a.png", "b_mirror.png", "c_rot.jpg"] not in plain


def test_pdq_min_quality_and_usage_errors(folder: Path) -> None:
    result = CliRunner().invoke(main, ["dedup", str(folder), "-m", "pdq", "--format", "text"])
    assert result.exit_code == 0 and "below min_quality" not in result.stderr
    args = ["dedup", str(folder), "-m", "pdq", "--min-quality", "50", "--format", "text"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0
    assert "flat.png: PDQ quality 0 is below min_quality 50" in result.stderr
    result = CliRunner().invoke(main, ["dedup", str(folder), "-m", "minhash", "--dihedral"])
    assert result.exit_code == 2 and "--dihedral applies to --method phash" in result.output
    result = CliRunner().invoke(main, ["dedup", str(folder), "-m", "dhash", "--min-quality", "9"])
    assert result.exit_code == 2 and "--min-quality applies to --method pdq" in result.output


def test_hash_and_compare(folder: Path) -> None:
    result = CliRunner().invoke(main, ["hash", str(folder / "a.png"), "-m", "pdq"])
    assert result.exit_code == 0
    digest, quality = result.stdout.strip().split("\t")[1].split(",")
    assert len(digest) == 64 and quality == "100"
    args = ["compare", str(folder / "a.png"), str(folder / "b_mirror.png"), "-m", "pdq"]
    plain = json.loads(CliRunner().invoke(main, [*args, "--format", "json"]).stdout)
    turned = json.loads(CliRunner().invoke(main, [*args, "--format", "json", "--dihedral"]).stdout)
    assert turned["distance"] < 32 < plain["distance"]
    assert CliRunner().invoke(main, [*args[:3], "--dihedral"]).exit_code == 2


def test_crops_and_the_quality_rule_from_the_cli(tmp_path: Path) -> None:
    with Image.open(VECTORS / "photo.png") as im:
        photo = im.convert("RGB").resize((480, 318))
    photo.save(tmp_path / "a.png")
    photo.crop((24, 15, 456, 303)).save(tmp_path / "b_crop10.png")  # 5% off each side
    faded = ImageEnhance.Contrast(photo).enhance(0.1)  # PDQ quality 36
    faded.save(tmp_path / "c_faded.png")
    faded.transpose(Image.Transpose.FLIP_LEFT_RIGHT).save(tmp_path / "d_faded_mirror.png")
    plain, _ = _clusters(str(tmp_path), "-m", "pdq", "--dihedral")
    assert plain == [["a.png", "c_faded.png", "d_faded_mirror.png"]]  # low quality, matched
    cropped, _ = _clusters(str(tmp_path), "-m", "pdq", "--dihedral", "--crops")
    assert cropped == [["a.png", "b_crop10.png", "c_faded.png", "d_faded_mirror.png"]]
    gated, stderr = _clusters(
        str(tmp_path), "-m", "pdq", "--dihedral", "--min-quality", "50", quiet=False
    )
    assert gated == [] and "c_faded.png: PDQ quality 36 is below min_quality 50" in stderr
    result = CliRunner().invoke(main, ["dedup", str(tmp_path), "-m", "dhash", "--crops"])
    assert result.exit_code == 2 and "--crops applies to --method pdq" in result.output
