"""LSH Ensemble: containment recall against brute force; partitions equal datasketch's."""

from __future__ import annotations

import numpy as np
import pytest

from neardup.errors import ConfigError, InputError
from neardup.index.lshensemble import LSHEnsemble, optimal_partitions
from neardup.sketch.tokensets import sketch_token_sets


def test_containment_recall_against_brute_force() -> None:
    rng = np.random.default_rng(0)
    sets = [
        set(rng.choice(3000, int(n), replace=False).tolist()) for n in rng.integers(10, 400, 200)
    ]
    queries = [set(list(s)[: max(5, len(s) // 3)]) for s in sets[:30]]  # contained in their source
    enc = [[str(x).encode() for x in sorted(s)] for s in sets]
    ens = LSHEnsemble(threshold=0.7, num_perm=128, num_part=8)
    ens.index(list(range(len(sets))), sketch_token_sets(enc), [len(s) for s in sets])
    found = want = 0
    for qi, q in enumerate(queries):
        hits = set(ens.query(sketch_token_sets([[str(x).encode() for x in sorted(q)]])[0], len(q)))
        truth = {i for i, s in enumerate(sets) if len(q & s) / len(q) >= 0.7}
        assert qi in truth
        found += len(truth & hits)
        want += len(truth)
    assert found / want > 0.9


def test_partitions_equal_datasketch() -> None:
    lp = pytest.importorskip("datasketch.lshensemble_partition")
    rng = np.random.default_rng(1)
    sizes = np.unique(rng.integers(1, 500, 60))
    counts = rng.integers(1, 30, len(sizes))
    for parts in (1, 2, 3, 8, 100):
        got = optimal_partitions(sizes, counts, parts)
        want = lp.optimal_partitions(sizes, counts, parts)
        assert got == [(int(a), int(b)) for a, b in want]


def test_errors() -> None:
    ens = LSHEnsemble(threshold=0.5, num_perm=16, num_part=2)
    with pytest.raises(InputError):
        ens.index(["a"], np.zeros((2, 16), dtype=np.uint64), [1])
    ens.index(["a", "b"], np.zeros((2, 16), dtype=np.uint64), [1, 3])
    with pytest.raises(InputError, match="already"):
        ens.index(["c"], np.zeros((1, 16), dtype=np.uint64), [1])
    with pytest.raises(ConfigError):
        ens.query(np.zeros(16, dtype=np.uint64), 0)
