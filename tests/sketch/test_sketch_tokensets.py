"""Token-set MinHash with datasketch's schemes: the reference backend, xxh3, cardinality."""

from __future__ import annotations

import numpy as np
import pytest

from neardup._kernels import engine
from neardup.errors import ConfigError, InputError
from neardup.sketch.tokensets import cardinality, max_hash, pack_token_sets, sketch_token_sets

SETS = [[f"w{i % 97}".encode() for i in range(j, j * 7)] for j in range(0, 12)]


@pytest.mark.parametrize("scheme", ["affine32", "affine64", "legacy"])
def test_reference_backend_gives_same_bits(scheme: str, monkeypatch: pytest.MonkeyPatch) -> None:
    fast = sketch_token_sets(SETS, num_perm=24, scheme=scheme, seed=5)
    monkeypatch.setattr(engine, "_choice", engine.parse_backend("reference"))
    np.testing.assert_array_equal(sketch_token_sets(SETS, num_perm=24, scheme=scheme, seed=5), fast)
    assert (fast[0] == max_hash(scheme)).all()


def test_xxh3_hash_equals_datasketch_with_that_hashfunc() -> None:
    ds = pytest.importorskip("datasketch")
    xxhash = pytest.importorskip("xxhash")
    got = sketch_token_sets(SETS, num_perm=16, hash="xxh3")
    for row, s in zip(got, SETS, strict=True):
        m = ds.MinHash(16, hashfunc=lambda b: xxhash.xxh3_64_intdigest(b) & 0xFFFFFFFF)
        m.update_batch(s)
        np.testing.assert_array_equal(row, m.hashvalues)


def test_cardinality_and_errors() -> None:
    rows = sketch_token_sets([[str(i).encode() for i in range(2000)]], num_perm=512)
    assert abs(cardinality(rows[0]) - 2000) < 400  # sd ~ n / sqrt(k) = 88; 4.5 sd
    with pytest.raises(InputError, match="all bytes or all str"):
        sketch_token_sets([["str", b"and bytes"]])  # type: ignore[list-item]
    with pytest.raises(InputError, match="all bytes or all str"):
        sketch_token_sets([[1, 2]])  # type: ignore[list-item]
    with pytest.raises(InputError, match="must be bytes"):
        pack_token_sets([["str"]], text=False)
    with pytest.raises(InputError, match="iterable of tokens"):
        sketch_token_sets([b"abc"])  # type: ignore[list-item]
    with pytest.raises(ConfigError):
        sketch_token_sets(SETS, num_perm=0)


STR_SETS = [
    ["plain", "ascii"],
    [],
    ["héllo", "wörld", "日本語", "𝄞 clef", "\ud800 lone surrogate", ""],
    ["mixed ascii", "then ünïcode", "x"],
]


@pytest.mark.parametrize("scheme", ["affine32", "affine64", "legacy"])
def test_str_tokens_are_their_utf8_bytes(scheme: str) -> None:
    as_bytes = [[t.encode("utf-8", "surrogatepass") for t in s] for s in STR_SETS]
    raw, lengths, offsets = pack_token_sets(STR_SETS)  # type: ignore[arg-type]
    want = pack_token_sets(as_bytes)  # type: ignore[arg-type]
    assert raw == want[0]
    np.testing.assert_array_equal(lengths, want[1])
    np.testing.assert_array_equal(offsets, want[2])
    np.testing.assert_array_equal(
        sketch_token_sets(STR_SETS, num_perm=32, scheme=scheme),
        sketch_token_sets(as_bytes, num_perm=32, scheme=scheme),
    )


def test_str_tokens_equal_datasketch_of_encoded_tokens() -> None:
    ds = pytest.importorskip("datasketch")
    rows = sketch_token_sets(STR_SETS, num_perm=16)
    for row, s in zip(rows, STR_SETS, strict=True):
        m = ds.MinHash(16)
        m.update_batch([t.encode("utf-8", "surrogatepass") for t in s])
        np.testing.assert_array_equal(row, m.hashvalues)
