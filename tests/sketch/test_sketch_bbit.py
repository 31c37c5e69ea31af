"""b-bit MinHash: packing round trips, the estimator against exact Jaccard, errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.errors import ConfigError, IncompatibleSketchError
from neardup.sketch.bbit import BBitMinHash, pack_blocks, slot_size, unpack_blocks
from neardup.sketch.minhash import MinHasher


@settings(max_examples=50)
@given(st.integers(1, 32), st.lists(st.integers(0, 2**32 - 1), min_size=1, max_size=70))
def test_pack_round_trip(b: int, values: list[int]) -> None:
    size = slot_size(b)
    v = np.array(values, dtype=np.uint64) & np.uint64((1 << b) - 1)
    np.testing.assert_array_equal(unpack_blocks(pack_blocks(v, size), size, len(v)), v)


@pytest.mark.parametrize("b", [1, 2, 4, 8])
def test_estimate_tracks_exact_jaccard(b: int) -> None:
    h = MinHasher(num_perm=1024)
    for overlap in (0, 100, 300, 450):
        x = {f"t{i}" for i in range(500)}
        y = {f"t{i}" for i in range(500 - overlap, 1000 - overlap)}
        exact = len(x & y) / len(x | y)
        est = BBitMinHash.from_minhash(h.sketch_tokens(x), b=b).jaccard(
            BBitMinHash.from_minhash(h.sketch_tokens(y), b=b)
        )
        # the sd of the b=1 estimator is about sqrt(2 / 1024) = 0.044 at J = 0; 4 sd
        assert abs(est - exact) < 0.18


def test_errors_and_values() -> None:
    h = MinHasher(num_perm=16)
    mh = h.sketch_tokens(["a", "b"])
    bb = BBitMinHash.from_minhash(mh, b=4)
    np.testing.assert_array_equal(bb.values, mh.hashvalues & np.uint64(15))
    assert bb.jaccard(bb) == 1.0 and bb == BBitMinHash.from_minhash(mh, b=4)
    with pytest.raises(ConfigError):
        BBitMinHash.from_minhash(mh, b=0)
    with pytest.raises(IncompatibleSketchError):
        bb.jaccard(BBitMinHash.from_minhash(mh, b=2))
