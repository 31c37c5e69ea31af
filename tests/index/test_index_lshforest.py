"""LSH Forest: ranked top-k against brute force, removal, mixing errors."""

from __future__ import annotations

import numpy as np
import pytest

from neardup.errors import IncompatibleSketchError, InputError
from neardup.index.lshforest import LSHForest
from neardup.sketch.minhash import MinHasher


def _corpus(n: int = 150) -> tuple[MinHasher, np.ndarray]:
    rng = np.random.default_rng(0)
    h = MinHasher(num_perm=64)
    base = [[f"w{x}" for x in rng.integers(0, 400, 50)] for _ in range(n // 3)]
    sets = base + [b[:40] for b in base] + [[*b[10:], "extra"] for b in base]
    return h, np.stack([h.sketch_tokens(s).hashvalues for s in sets])


def test_topk_against_brute_force() -> None:
    _, sigs = _corpus()
    forest = LSHForest(64, l=8)
    forest.add_many(list(range(len(sigs))), sigs)
    results = forest.query_many(sigs, 3)
    exact = (sigs[:, None, :] == sigs[None, :, :]).mean(axis=2)  # brute-force estimates
    hits = 0
    for qi, res in enumerate(results):
        assert len(res) == 3
        assert res[0] == (qi, 1.0)  # the document itself, found and ranked first
        est = [s for _, s in res]
        assert est == sorted(est, reverse=True)
        for key, s in res:
            assert s == pytest.approx(exact[qi, key])
        best = set(np.argsort(-exact[qi], kind="stable")[:3].tolist())
        hits += len(best & {k for k, _ in res})
    assert hits / (3 * len(sigs)) > 0.9  # the planted near duplicates are found


def test_remove_replace_and_errors() -> None:
    h = MinHasher(num_perm=32)
    forest = LSHForest(32, l=4)
    a = h.sketch_tokens(["a", "b", "c"])
    forest.add("x", a)
    forest.add("y", a)
    forest.remove("x")
    assert [k for k, _ in forest.query(a, 5)] == ["y"] and "x" not in forest
    forest.add("y", h.sketch_tokens(["z"]))
    assert len(forest) == 1
    with pytest.raises(InputError):
        forest.remove("nope")
    with pytest.raises(InputError):
        forest.query(a, 0)
    with pytest.raises(IncompatibleSketchError):
        forest.add("q", MinHasher(num_perm=16).sketch_tokens(["a"]))
    assert LSHForest(32).query(a, 3) == []
