"""Format stability: every persisted byte format equals its golden, and reads back."""

from __future__ import annotations

import importlib.util
import json
import sqlite3
from pathlib import Path

import pytest

from neardup import HammingIndex, MinHash, SimHash
from neardup.errors import SchemaVersionError
from neardup.store import Store

FORMATS = Path(__file__).parents[1] / "golden" / "formats"
_spec = importlib.util.spec_from_file_location("make_goldens", FORMATS / "make_goldens.py")
assert _spec is not None and _spec.loader is not None
make_goldens = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_goldens)
BUILT = make_goldens.build()


@pytest.mark.parametrize("name", sorted(BUILT))
def test_bytes_equal_golden(name: str) -> None:
    assert BUILT[name] == (FORMATS / name).read_bytes(), (
        f"{name} changed: a format change needs a version bump and a CHANGELOG entry"
    )


def test_goldens_read_back() -> None:
    for name in sorted(p.name for p in FORMATS.glob("simhash_*_header.bin")):
        data = (FORMATS / name).read_bytes()
        assert SimHash.from_bytes(data).to_bytes(header=True) == data
    for name in ("minhash_xxh3.bin", "minhash_datasketch.bin", "minhash_oph.bin"):
        data = (FORMATS / name).read_bytes()
        assert MinHash.from_bytes(data).to_bytes() == data
    txtfp = (FORMATS / "minhash_txtfp.bin").read_bytes()
    assert MinHash.from_bytes(txtfp).to_bytes(layout="txtfp") == txtfp
    index = HammingIndex.from_bytes((FORMATS / "hamming_index.bin").read_bytes())
    assert sorted(map(str, (k for k, _ in index.query(1, radius=1)))) == ["a", "b"]
    digests = json.loads((FORMATS / "fuzzy_digests.json").read_text())
    assert digests["ctph"].count(":") == 2 and digests["tlsh"].startswith("T1")
    if (FORMATS / "imagehash_phash.bin").exists():
        from neardup.image.value import ImageHash

        data = (FORMATS / "imagehash_phash.bin").read_bytes()
        assert ImageHash.from_bytes(data).to_bytes() == data


def test_newer_store_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with Store.open(path, kind="simhash", params="p"):
        pass
    conn = sqlite3.connect(path)
    (version,) = conn.execute("PRAGMA user_version").fetchone()
    conn.execute(f"PRAGMA user_version = {version + 1}")
    conn.commit()
    conn.close()
    with pytest.raises(SchemaVersionError, match="upgrade neardup"):
        Store.open(path, kind="simhash", params="p")
