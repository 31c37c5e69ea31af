"""The bucket-walk verifier against brute force, fast against reference, join against all."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup._kernels.buckets import bucket_pairs_verified
from neardup._kernels.sets import unique_per_doc
from neardup.cluster import UnionFind


def _corpus(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n = draw(st.integers(1, 24))
    bands = draw(st.integers(1, 4))
    keys = np.array(
        draw(
            st.lists(
                st.lists(st.integers(0, 3), min_size=bands, max_size=bands), min_size=n, max_size=n
            )
        ),
        dtype=np.uint64,
    )
    sets = draw(st.lists(st.lists(st.integers(0, 9), max_size=8), min_size=n, max_size=n))
    flat = np.array([v for s in sets for v in s], dtype=np.uint64)
    offs = np.zeros(n + 1, dtype=np.int64)
    np.cumsum([len(s) for s in sets], out=offs[1:])
    values, offsets = unique_per_doc(flat, offs)
    return keys, values, offsets


corpora = st.composite(_corpus)


def _brute(keys, values, offsets, t):  # type: ignore[no-untyped-def]
    n = keys.shape[0]
    sets = [set(values[offsets[i] : offsets[i + 1]].tolist()) for i in range(n)]
    pairs = {}
    for i, j in itertools.combinations(range(n), 2):
        if not np.any(keys[i] == keys[j]):
            continue
        u = len(sets[i] | sets[j])
        sim = len(sets[i] & sets[j]) / u if u else 0.0
        if sim >= t:
            pairs[(i, j)] = sim
    uf = UnionFind(n)
    for i, j in pairs:
        uf.union(i, j)
    return pairs, uf.roots().tolist()


@settings(max_examples=60, deadline=None)
@given(
    corpora(), st.sampled_from([0.0, 0.3, 0.5, 0.8, 1.0]), st.sampled_from(["fast", "reference"])
)
def test_bucket_pairs_verified_equals_brute_force(data, t, backend):  # type: ignore[no-untyped-def]
    keys, values, offsets = data
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("NEARDUP_BACKEND", backend)
        want, roots = _brute(keys, values, offsets, t)
        a, b, sim, got_roots, _ = bucket_pairs_verified(
            keys, threshold=t, values=values, offsets=offsets
        )
        got = zip(zip(a.tolist(), b.tolist(), strict=True), sim.tolist(), strict=True)
        assert dict(got) == want
        assert got_roots.tolist() == roots
        a2, b2, _sim2, join_roots, verified = bucket_pairs_verified(
            keys, threshold=t, values=values, offsets=offsets, join=True
        )
        assert join_roots.tolist() == roots
        for jobs in (2, 3):
            a3, b3, sim3, roots3, _ = bucket_pairs_verified(
                keys, threshold=t, values=values, offsets=offsets, jobs=jobs
            )
            assert (a3.tolist(), b3.tolist(), sim3.tolist()) == (
                a.tolist(),
                b.tolist(),
                sim.tolist(),
            )
            assert roots3.tolist() == roots
            joined = bucket_pairs_verified(
                keys, threshold=t, values=values, offsets=offsets, join=True, jobs=jobs
            )
            assert joined[3].tolist() == roots
        # 32-bit sets (what a run keeps) give the same answers as the 64-bit ones
        narrow = values.astype(np.uint32)
        for join in (False, True):
            wide = bucket_pairs_verified(
                keys, threshold=t, values=values, offsets=offsets, join=join
            )
            thin = bucket_pairs_verified(
                keys, threshold=t, values=narrow, offsets=offsets, join=join
            )
            assert [x.tolist() for x in thin[:4]] == [x.tolist() for x in wide[:4]]
        # join mode returns accepted pairs only, a subset of all of them
        assert set(zip(a2.tolist(), b2.tolist(), strict=True)) <= set(want)
        assert verified >= 0


@settings(max_examples=30, deadline=None)
@given(corpora(), st.sampled_from(["fast", "reference"]))
def test_bucket_pairs_verified_estimate_mode(data, backend):  # type: ignore[no-untyped-def]
    keys, _, _ = data
    rng = np.random.default_rng(len(keys))
    sigs = rng.integers(0, 3, size=(keys.shape[0], 8)).astype(np.uint32)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("NEARDUP_BACKEND", backend)
        a, b, sim, _, _ = bucket_pairs_verified(keys, threshold=0.5, sigs=sigs)
    for i, j, s in zip(a.tolist(), b.tolist(), sim.tolist(), strict=True):
        assert np.any(keys[i] == keys[j])
        assert s == np.count_nonzero(sigs[i] == sigs[j]) / 8 >= 0.5
