"""neardup.compat.fingerprint text functions equal the Go package on every shipped vector."""

from __future__ import annotations

import pytest

from conftest import load_vectors
from neardup.compat import fingerprint as fp
from neardup.errors import InputError

GO = load_vectors("go_fingerprint_text.json")
BY_ID = {c["id"]: c for c in GO["cases"]}


def _text(case: dict[str, object]) -> str:
    return bytes.fromhex(str(case["utf8_hex"])).decode("utf-8", "replace")


@pytest.mark.parametrize("case", GO["cases"], ids=lambda c: c["id"])
def test_compute_matches_go(case: dict[str, object]) -> None:
    value = fp.compute(_text(case))
    assert f"{value:016x}" == case["compute_hex"]
    assert value == int(str(case["compute_dec"]))
    assert value.bit_count() == case["popcount"]


@pytest.mark.parametrize("pair", GO["pairs"], ids=lambda p: f"{p['a']}-{p['b']}")
def test_pairs_match_go(pair: dict[str, object]) -> None:
    a = fp.compute(_text(BY_ID[str(pair["a"])]))
    b = fp.compute(_text(BY_ID[str(pair["b"])]))
    assert fp.distance(a, b) == pair["distance"]
    assert fp.similarity(a, b) == pair["similarity"]
    assert (fp.similarity(a, b) >= 0.85) == pair["similarity_ge_0_85"]


def test_similarity_table() -> None:
    for row in GO["similarity_table"]:
        d = int(row["distance"])
        b = (1 << d) - 1
        assert fp.similarity(0, b) == row["similarity"]
        assert (fp.similarity(0, b) >= 0.85) == row["similarity_ge_0_85"]


def test_bad_codes() -> None:
    with pytest.raises(InputError, match="uint64"):
        fp.distance(-1, 0)
    with pytest.raises(InputError):
        fp.similarity(1 << 64, 0)
    with pytest.raises(InputError):
        fp.distance("ff", 0)  # type: ignore[arg-type]
