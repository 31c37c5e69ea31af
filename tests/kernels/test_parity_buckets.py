"""The native bucket walk against its numpy twin: the same pairs in the same order, the same
roots, the same count of verified pairs and the same errors, on hypothesis inputs."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from twins import both

from conftest import native_pair
from neardup.errors import ConfigError

I64 = np.int64
U64 = np.uint64


@st.composite
def corpora(draw: st.DrawFn) -> dict[str, Any]:
    n = draw(st.integers(0, 28))
    bands = draw(st.integers(1, 4))
    keys = np.array(
        draw(
            st.lists(
                st.lists(st.integers(0, 3), min_size=bands, max_size=bands), min_size=n, max_size=n
            )
        ),
        dtype=U64,
    ).reshape(n, bands)
    # sets from a few shapes: small overlapping ones, a shared core with noise, and (rarely)
    # a set with a full profile cell (255 values of one low-bits class), and sorted runs with
    # repeats (a merge pairs them off one by one; the native walk's 8-wide count takes sets)
    base = draw(st.lists(st.integers(0, 2**32 - 1), min_size=60, max_size=60, unique=True))
    sets = []
    for _ in range(n):
        kind = draw(st.sampled_from(["small", "core", "core", "core", "full", "repeats"]))
        if kind == "small":
            s = set(draw(st.lists(st.integers(0, 12), max_size=10)))
        elif kind == "core":
            keep = draw(st.integers(30, 60))
            s = set(base[:keep]) | set(draw(st.lists(st.integers(0, 2**32 - 1), max_size=8)))
        elif kind == "full":
            s = {64 * k for k in range(draw(st.integers(250, 300)))}
        else:
            keep = draw(st.integers(30, 60))
            sets.append(sorted(base[:keep] + base[: draw(st.integers(1, 20))]))
            continue
        sets.append(sorted(s))
    values = np.array([v for s in sets for v in s], dtype=U64)
    offsets = np.cumsum([0] + [len(s) for s in sets]).astype(I64)
    lo = draw(st.integers(0, bands))
    hi = draw(st.integers(lo, bands))
    return {"keys": keys, "values": values, "offsets": offsets, "band_start": lo, "band_end": hi}


thresholds = st.sampled_from([0.0, 0.3, 0.5, 0.8, 0.9, 1.0]) | st.floats(0.0, 1.0)


@given(
    corpora(),
    thresholds,
    st.booleans(),
    st.booleans(),
    st.sampled_from([np.uint32, np.uint64]),
)
def test_walk_exact(
    data: dict[str, Any], threshold: float, join: bool, filtered: bool, dtype: type
) -> None:
    native, reference = native_pair("buckets")
    keys, offsets = data["keys"], data["offsets"]
    values = data["values"].astype(dtype)
    n = keys.shape[0]
    prof, big = both(native.set_profiles, reference.set_profiles, values, offsets)
    assert prof.shape == (n, 32)
    if not filtered:
        prof, big = np.empty((n, 0), np.uint8), np.zeros(n, np.bool_)
    sigs = np.empty((n, 0), np.uint32)
    both(
        native.bucket_pairs_verified,
        reference.bucket_pairs_verified,
        keys,
        values,
        offsets,
        sigs,
        prof,
        big,
        True,
        threshold,
        join,
        data["band_start"],
        data["band_end"],
    )


@given(corpora(), thresholds, st.booleans(), st.integers(1, 8))
def test_walk_estimate(data: dict[str, Any], threshold: float, join: bool, slots: int) -> None:
    native, reference = native_pair("buckets")
    keys = data["keys"]
    n = keys.shape[0]
    rng = np.random.default_rng(n * 31 + slots)
    sigs = rng.integers(0, 3, size=(n, slots)).astype(np.uint32)
    none = np.empty(0, U64), np.zeros(n + 1, I64)
    prof, big = np.empty((n, 0), np.uint8), np.zeros(n, np.bool_)
    both(
        native.bucket_pairs_verified,
        reference.bucket_pairs_verified,
        keys,
        *none,
        sigs,
        prof,
        big,
        False,
        threshold,
        join,
        data["band_start"],
        data["band_end"],
    )


def test_the_same_errors() -> None:
    native, reference = native_pair("buckets")
    keys = np.zeros((3, 2), dtype=U64)
    values = np.array([1, 2, 3, 4], dtype=U64)
    offsets = np.array([0, 1, 2, 4], dtype=I64)
    sigs = np.zeros((3, 2), np.uint32)
    prof, big = reference.set_profiles(values, offsets)
    good = dict(
        keys=keys, values=values, offsets=offsets, sigs=sigs, prof=prof, big=big, exact=True,
        threshold=0.5, join=False, band_start=0, band_end=2,
    )  # fmt: skip
    both(native.bucket_pairs_verified, reference.bucket_pairs_verified, *good.values())
    bad: list[dict[str, object]] = [
        {"threshold": 1.5},
        {"threshold": float("nan")},
        {"band_start": -1},
        {"band_start": 2, "band_end": 1},
        {"band_end": 3},
        {"offsets": offsets[:-1].copy()},
        {"offsets": np.array([0, 2, 1, 4], I64)},
        {"offsets": np.array([0, 1, 2, 5], I64)},
        {"values": np.array([1, 2, 4, 3], U64)},
        {"exact": False, "sigs": np.zeros((2, 2), np.uint32)},
        {"exact": False, "sigs": np.zeros((3, 0), np.uint32)},
        {"prof": prof[:2].copy()},
        {"big": big[:2].copy()},
    ]
    for change in bad:
        args = {**good, **change}
        with pytest.raises(ConfigError):
            both(native.bucket_pairs_verified, reference.bucket_pairs_verified, *args.values())
        if "band_start" not in change and "band_end" not in change:
            roots_args = {
                k: x for k, x in args.items() if k not in ("join", "band_start", "band_end")
            }
            with pytest.raises(ConfigError):
                both(native.bucket_roots, reference.bucket_roots, *roots_args.values(), 2)
    for threads in (0, -1):
        roots_args = {k: x for k, x in good.items() if k not in ("join", "band_start", "band_end")}
        with pytest.raises(ConfigError):
            both(native.bucket_roots, reference.bucket_roots, *roots_args.values(), threads)
    for o in (offsets[:-1].copy(), np.array([1, 2, 4], I64)):
        with pytest.raises(ConfigError):
            both(native.set_profiles, reference.set_profiles, values, o)


@given(corpora(), thresholds, st.booleans(), st.integers(1, 4))
def test_roots_of_a_shared_walk(
    data: dict[str, Any], threshold: float, filtered: bool, threads: int
) -> None:
    """The bands walked by threads that share one union-find: the roots of the serial walk."""
    native, reference = native_pair("buckets")
    keys, values, offsets = data["keys"], data["values"], data["offsets"]
    n = keys.shape[0]
    prof, big = reference.set_profiles(values, offsets)
    if not filtered:
        prof, big = np.empty((n, 0), np.uint8), np.zeros(n, np.bool_)
    sigs = np.empty((n, 0), np.uint32)
    args = (keys, values, offsets, sigs, prof, big, True, threshold)
    roots = both(native.bucket_roots, reference.bucket_roots, *args, threads)
    serial = reference.bucket_pairs_verified(*args, True, 0, keys.shape[1])
    assert roots.tolist() == serial[3].tolist()


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2**32), st.sampled_from([0.5, 0.8]), st.integers(2, 4))
def test_roots_of_a_shared_walk_on_big_buckets(seed: int, threshold: float, threads: int) -> None:
    """Buckets of many rows of a few families, so that the threads race on the same
    clusters: the roots are still the serial walk's."""
    native, reference = native_pair("buckets")
    rng = np.random.default_rng(seed)
    n, bands = 400, 8
    keys = rng.integers(0, 3, size=(n, bands)).astype(U64)
    family = rng.integers(0, 8, size=n)
    base = [rng.choice(10_000, size=60, replace=False) for _ in range(8)]
    sets = [
        np.unique(np.concatenate((base[f][rng.integers(0, 10) :], rng.integers(0, 10_000, 4))))
        for f in family.tolist()
    ]
    values = np.concatenate(sets).astype(U64)
    offsets = np.zeros(n + 1, I64)
    np.cumsum([len(x) for x in sets], out=offsets[1:])
    prof, big = reference.set_profiles(values, offsets)
    sigs = np.empty((n, 0), np.uint32)
    args = (keys, values, offsets, sigs, prof, big, True, threshold)
    want = native.bucket_pairs_verified(*args, True, 0, bands)[3]
    for _ in range(3):
        assert native.bucket_roots(*args, threads).tolist() == want.tolist()


@given(corpora(), st.integers(1, 3))
def test_shared_rows_and_compaction(data: dict[str, Any], threads: int) -> None:
    native, reference = native_pair("buckets")
    keys = data["keys"]
    masks, shared = both(native.shared_rows, reference.shared_rows, keys, threads)
    n, bands = keys.shape
    # a row is shared when another row has its key in that band
    for b in range(bands):
        want = [(keys[:, b] == keys[r, b]).sum() > 1 for r in range(n)]
        assert [
            bool(masks[b, r // 64] >> np.uint64(r % 64) & np.uint64(1)) for r in range(n)
        ] == want
    assert shared.tolist() == [
        any((keys[:, b] == keys[r, b]).sum() > 1 for b in range(bands)) for r in range(n)
    ]
    values = data["values"].astype(np.uint32)
    compacted = []
    for kern in (native, reference):
        v, o = values.copy(), data["offsets"].copy()
        m = kern.compact_sets(v, o, shared)
        compacted.append((m, v[:m].tolist(), o.tolist()))
    assert compacted[0] == compacted[1]
    m, kept, offsets = compacted[0]
    old = data["offsets"]
    runs = [values[old[r] : old[r + 1]].tolist() if shared[r] else [] for r in range(n)]
    assert [kept[offsets[r] : offsets[r + 1]] for r in range(n)] == runs
    assert m == offsets[-1]


@given(corpora(), thresholds, st.booleans(), st.integers(1, 3))
def test_a_walk_given_the_masks(
    data: dict[str, Any], threshold: float, join: bool, threads: int
) -> None:
    """The walk of the shared rows' compacted sets, given their masks: the walk of every set
    (as a run makes it), on both backends."""
    native, reference = native_pair("buckets")
    keys, offsets = data["keys"], data["offsets"]
    values = data["values"].astype(np.uint32)
    n = keys.shape[0]
    sigs = np.empty((n, 0), np.uint32)
    whole = native.set_profiles(values, offsets)
    lo, hi = data["band_start"], data["band_end"]
    want = both(
        native.bucket_pairs_verified, reference.bucket_pairs_verified,
        keys, values, offsets, sigs, *whole, True, threshold, join, lo, hi,
    )  # fmt: skip
    masks, shared = native.shared_rows(keys, threads)
    v, o = values.copy(), offsets.copy()
    m = native.compact_sets(v, o, shared)
    for kern in (native, reference):
        got = kern.bucket_pairs_verified(
            keys, v[:m], o, sigs, *whole, True, threshold, join, lo, hi, masks
        )
        for g, w in zip(got, want, strict=True):
            assert np.array_equal(g, w)
        roots = kern.bucket_roots(keys, v[:m], o, sigs, *whole, True, threshold, threads, masks)
        full = native.bucket_roots(keys, values, offsets, sigs, *whole, True, threshold, 1)
        assert np.array_equal(roots, full)


def test_masks_of_another_shape() -> None:
    native, reference = native_pair("buckets")
    keys = np.zeros((3, 2), dtype=U64)
    values = np.array([1, 2, 3, 4], dtype=U64)
    offsets = np.array([0, 1, 2, 4], dtype=I64)
    sigs = np.zeros((3, 0), np.uint32)
    prof, big = reference.set_profiles(values, offsets)
    for masks in (np.zeros((1, 1), U64), np.zeros((2, 2), U64)):
        with pytest.raises(ConfigError):
            both(
                native.bucket_pairs_verified, reference.bucket_pairs_verified,
                keys, values, offsets, sigs, prof, big, True, 0.5, False, 0, 2, masks,
            )  # fmt: skip
        with pytest.raises(ConfigError):
            both(
                native.bucket_roots, reference.bucket_roots,
                keys, values, offsets, sigs, prof, big, True, 0.5, 2, masks,
            )  # fmt: skip
    with pytest.raises(ConfigError):
        both(native.shared_rows, reference.shared_rows, keys, 0)


def test_compaction_errors() -> None:
    native, reference = native_pair("buckets")
    values = np.array([1, 2, 3], np.uint32)
    for offsets, keep in (
        (np.array([0, 1, 3], I64), np.array([True], np.bool_)),
        (np.array([0, 2, 1], I64), np.array([True, False], np.bool_)),
        (np.array([0, 1, 2], I64), np.array([True, False], np.bool_)),
    ):
        with pytest.raises(ConfigError):
            both(native.compact_sets, reference.compact_sets, values, offsets, keep)
