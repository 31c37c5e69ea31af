"""Token-set MinHash with datasketch's schemes: the reference backend, xxh3, cardinality."""

from __future__ import annotations

import numpy as np
import pytest

from neardup.errors import ConfigError, InputError
from neardup.sketch.tokensets import cardinality, max_hash, sketch_token_sets

SETS = [[f"w{i % 97}".encode() for i in range(j, j * 7)] for j in range(0, 12)]


@pytest.mark.parametrize("scheme", ["affine32", "affine64", "legacy"])
def test_reference_backend_gives_same_bits(scheme: str, monkeypatch: pytest.MonkeyPatch) -> None:
    fast = sketch_token_sets(SETS, num_perm=24, scheme=scheme, seed=5)
    monkeypatch.setenv("NEARDUP_BACKEND", "reference")
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
    with pytest.raises(InputError, match="bytes"):
        sketch_token_sets([["not bytes"]])  # type: ignore[list-item]
    with pytest.raises(InputError, match="iterable of tokens"):
        sketch_token_sets([b"abc"])  # type: ignore[list-item]
    with pytest.raises(ConfigError):
        sketch_token_sets(SETS, num_perm=0)
