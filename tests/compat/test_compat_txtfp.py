"""neardup.compat.txtfp equals txtfp 0.2.2's golden files byte for byte."""

from __future__ import annotations

from pathlib import Path

import pytest

from neardup.compat import txtfp
from neardup.errors import EmptyInputError

TXTFP = Path(__file__).parents[1] / "golden" / "vectors" / "txtfp"
CORPORA = sorted((TXTFP / "corpora").iterdir())


@pytest.mark.parametrize("path", CORPORA, ids=lambda p: p.stem)
def test_goldens(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    golden = TXTFP / "golden"
    assert (
        txtfp.canonicalize(text).encode()
        == (golden / "canonical" / f"{path.stem}.txt").read_bytes()
    )
    mh = (golden / "minhash" / f"{path.stem}_h128_k5.bin").read_bytes()
    assert txtfp.minhash(text).to_bytes(layout="txtfp") == mh
    sh = (golden / "simhash" / f"{path.stem}_b64.bin").read_bytes()
    assert txtfp.simhash(text).to_bytes() == sh


def test_empty_input_raises() -> None:
    for fn in (txtfp.minhash, txtfp.simhash):
        with pytest.raises(EmptyInputError):
            fn("")
        with pytest.raises(EmptyInputError):
            fn(" ;.! ")


def test_config_hash_matches_derived_example() -> None:
    assert (
        txtfp.config_hash("nfkc-cf-simple-bidi-fmt", "word-uax29", "h128-mmh3")
        == 0xFDCB1C70A47C7649
    )
