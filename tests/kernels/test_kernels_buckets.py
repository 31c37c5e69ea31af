"""The bucket-walk verifier against brute force, fast against reference, join against all."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup._kernels import engine
from neardup.cluster import UnionFind
from neardup.index.buckets import bucket_pairs_verified
from neardup.sketch.sets import unique_per_doc


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
        mp.setattr(engine, "_choice", engine.parse_backend(backend))
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
        mp.setattr(engine, "_choice", engine.parse_backend(backend))
        a, b, sim, _, _ = bucket_pairs_verified(keys, threshold=0.5, sigs=sigs)
    for i, j, s in zip(a.tolist(), b.tolist(), sim.tolist(), strict=True):
        assert np.any(keys[i] == keys[j])
        assert s == np.count_nonzero(sigs[i] == sigs[j]) / 8 >= 0.5


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.lists(st.integers(0, 1 << 40), max_size=40), min_size=1, max_size=12),
    st.sampled_from([np.uint32, np.uint64]),
)
def test_set_profiles_fast_equals_reference(sets, dtype):  # type: ignore[no-untyped-def]
    from conftest import native_pair

    fast, reference = native_pair("buckets")
    flat = np.array([v for s in sets for v in s], dtype=np.uint64).astype(dtype)
    offsets = np.zeros(len(sets) + 1, dtype=np.int64)
    np.cumsum([len(s) for s in sets], out=offsets[1:])
    prof, big = fast.set_profiles(flat, offsets)
    want_prof, want_big = reference.set_profiles(flat, offsets)
    assert prof.tolist() == want_prof.tolist()
    assert big.tolist() == want_big.tolist()
    # each cell counts the values with those low bits; nothing is lost below the cap
    assert prof.sum(axis=1).tolist() == [len(s) for s in sets]


def _sets(*rows: list[int]) -> tuple[np.ndarray, np.ndarray]:
    values = np.array([v for r in rows for v in sorted(r)], dtype=np.uint32)
    offsets = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum([len(r) for r in rows], out=offsets[1:])
    return values, offsets


@pytest.mark.parametrize("join", [False, True])
def test_profile_filter_rejects_only_pairs_below_the_threshold(join):  # type: ignore[no-untyped-def]
    # rows 0 and 1 share 90 of 100 values (Jaccard 90/110 = 0.818); row 2 has the sizes of
    # row 0 but every value in other profile cells (its bound is 0): one band key for all
    shared = [64 * k for k in range(90)]
    a = shared + [64 * k + 1 for k in range(10)]
    b = shared + [64 * k + 2 for k in range(10)]
    c = [64 * k + 3 for k in range(100)]
    values, offsets = _sets(a, b, c)
    keys = np.zeros((3, 2), dtype=np.uint64)
    for t, want in ((0.8, [(0, 1)]), (0.82, [])):
        got = bucket_pairs_verified(keys, threshold=t, values=values, offsets=offsets, join=join)
        assert list(zip(got[0].tolist(), got[1].tolist(), strict=True)) == want
        if not join:
            assert got[4] <= 1  # row 2 was rejected by its profile, never merged


def test_profile_filter_is_off_for_rows_with_a_full_cell():  # type: ignore[no-untyped-def]
    # 300 values in one profile cell each (the count would not fit a byte): the bound would
    # be 255, below the 280 that the pair needs; such rows are verified by the merge
    a = [64 * k for k in range(300)]
    b = [64 * k for k in range(290)] + [64 * k for k in range(1000, 1010)]
    values, offsets = _sets(a, b)
    keys = np.zeros((2, 1), dtype=np.uint64)
    for backend in ("fast", "reference"):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(engine, "_choice", engine.parse_backend(backend))
            got = bucket_pairs_verified(keys, threshold=0.9, values=values, offsets=offsets)
            assert got[0].tolist() == [0] and got[1].tolist() == [1]
            assert got[2].tolist() == [290 / 310]
