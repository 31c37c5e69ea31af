"""LSHIndex.merge, get_counts and count against building one index / brute-force buckets."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from neardup.errors import IncompatibleSketchError
from neardup.index.lsh import LSHIndex
from neardup.sketch.minhash import MinHasher


def _sigs(n: int = 80) -> np.ndarray:
    h = MinHasher(num_perm=32)
    rng = np.random.default_rng(0)
    return np.stack(
        [h.sketch_tokens([f"t{x}" for x in rng.integers(0, 40, 12)]).hashvalues for _ in range(n)]
    )


def test_merge_equals_one_index() -> None:
    sigs = _sigs()
    whole = LSHIndex(0.5, 32, bands=8, rows=4)
    whole.add_many(list(range(80)), sigs)
    a, b = LSHIndex(0.5, 32, bands=8, rows=4), LSHIndex(0.5, 32, bands=8, rows=4)
    a.add_many(list(range(50)), sigs[:50])
    b.add_many(list(range(40, 80)), sigs[40:])  # 40..49 in both: b's copy wins
    a.merge(b)
    assert a.count() == len(a) == 80
    assert sorted(a.pairs()) == sorted(whole.pairs())
    assert a.query_many(sigs) == whole.query_many(sigs)
    assert a.get_counts() == whole.get_counts()
    with pytest.raises(IncompatibleSketchError):
        a.merge(LSHIndex(0.5, 32, bands=4, rows=8))


def test_get_counts_against_brute_force() -> None:
    sigs = _sigs(60)
    idx = LSHIndex(0.5, 32, bands=8, rows=4)
    idx.add_many(list(range(60)), sigs)
    idx.remove(3)
    keys = idx.band_keys(np.delete(sigs, 3, axis=0))
    for j, counts in enumerate(idx.get_counts()):
        assert counts == dict(Counter(keys[:, j].tolist()))
        assert sum(counts.values()) == 59
