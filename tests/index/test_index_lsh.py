"""plan_lsh and LSHIndex: txtfp planner values, predicted vs measured rates, recall on real text."""

from __future__ import annotations

import logging
import random
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup._kernels import engine
from neardup.canonicalize import Canonicalizer
from neardup.errors import ConfigError, IncompatibleSketchError, InputError
from neardup.index.lsh import LSHIndex, plan_lsh
from neardup.sketch.minhash import MinHasher
from neardup.tokenize import ShingleTokenizer, WordTokenizer


@contextmanager
def backend(name: str) -> Iterator[None]:
    with engine.pinned(name):
        yield


# ---------------------------------------------------------------- planner

TXTFP_PLANS = [
    (128, 0.5, 32, 4),
    (128, 0.6, 16, 8),
    (128, 0.7, 16, 8),
    (128, 0.75, 16, 8),
    (128, 0.8, 8, 16),
    (128, 0.85, 8, 16),
    (128, 0.9, 4, 32),
    (128, 0.95, 4, 32),
    (64, 0.5, 16, 4),
    (64, 0.7, 8, 8),
    (64, 0.8, 4, 16),
    (64, 0.9, 4, 16),
    (256, 0.7, 32, 8),
    (256, 0.8, 16, 16),
    (256, 0.9, 8, 32),
]


@pytest.mark.parametrize(("num_perm", "threshold", "bands", "rows"), TXTFP_PLANS)
def test_txtfp_for_threshold(num_perm: int, threshold: float, bands: int, rows: int) -> None:
    plan = plan_lsh(threshold, num_perm, method="txtfp")
    assert (plan.bands, plan.rows) == (bands, rows)


def test_weighted_plan_is_the_minimum() -> None:
    plan = plan_lsh(0.8, 128)
    assert plan.bands * plan.rows <= 128
    cost = 0.5 * plan.fp + 0.5 * plan.fn
    for b, r in [(16, 8), (8, 16), (9, 13), (32, 4), (10, 12)]:
        fp, fn = _integrals(0.8, b, r)
        assert cost <= 0.5 * fp + 0.5 * fn + 1e-6, (b, r)
    # more weight on false negatives moves the curve left: more bands, fewer rows
    recall_heavy = plan_lsh(0.8, 128, fp_weight=0.1, fn_weight=0.9)
    assert recall_heavy.fn < plan.fn and recall_heavy.fp > plan.fp


def _integrals(t: float, b: int, r: int) -> tuple[float, float]:
    """Midpoint-rule integrals, independent of the planner's trapezoids."""
    n = 20000
    lo = (np.arange(n) + 0.5) / n * t
    hi = t + (np.arange(n) + 0.5) / n * (1 - t)
    p = lambda s: 1 - (1 - s**r) ** b  # noqa: E731
    return float(p(lo).mean()), float((1 - p(hi)).mean())


def test_plan_rates_match_independent_integrals() -> None:
    for t, n in [(0.5, 64), (0.8, 128), (0.9, 256)]:
        plan = plan_lsh(t, n)
        fp, fn = _integrals(t, plan.bands, plan.rows)
        assert abs(plan.fp - fp) < 1e-5 and abs(plan.fn - fn) < 1e-5


def test_recall_plan(caplog: pytest.LogCaptureFixture) -> None:
    plan = plan_lsh(0.8, 128, method="recall")
    assert plan.recall_at_threshold >= 0.99
    assert plan.probability(0.8) == pytest.approx(plan.recall_at_threshold)
    assert LSHIndex(0.8, 128).plan == plan
    with caplog.at_level(logging.WARNING, logger="neardup.index.lshplan"):
        weak = plan_lsh(0.1, 4, method="recall")
    assert weak.recall_at_threshold < 0.99
    assert "cannot reach recall" in caplog.text
    curve = plan.curve(5)
    assert curve[0] == (0.0, 0.0) and curve[-1] == (1.0, 1.0)


def test_planner_bad_input() -> None:
    for args in [(0.0, 128), (1.0, 128), (1.5, 128), (0.5, 0)]:
        with pytest.raises(ConfigError):
            plan_lsh(*args)
    with pytest.raises(ConfigError):
        plan_lsh(0.5, 128, fp_weight=0, fn_weight=0)
    with pytest.raises(ConfigError):
        plan_lsh(0.5, 128, method="magic")  # type: ignore[arg-type]


# ---------------------------------------------------------------- predicted vs measured


def test_candidate_rates_match_plan() -> None:
    """Fraction of pairs of exact Jaccard s that become candidates is P(s) within 4 sigma."""
    hasher = MinHasher(128)
    rng = random.Random(99)
    n_pairs, union = 250, 150
    for s in (0.5, 0.6, 0.7, 0.8):
        index = LSHIndex(0.8, 128)
        inter = round(s * union)
        for i in range(n_pairs):
            shared = [f"s{i}-{j}-{rng.random()}" for j in range(inter)]
            rest = [f"x{i}-{j}-{rng.random()}" for j in range(union - inter)]
            half = len(rest) // 2
            index.add((i, "a"), hasher.sketch_tokens(shared + rest[:half]))
            index.add((i, "b"), hasher.sketch_tokens(shared + rest[half:]))
        found = {(a[0], b[0]) for a, b, _ in index.pairs() if a[0] == b[0]}
        measured = len(found) / n_pairs
        predicted = index.plan.probability(inter / union)
        sigma = (predicted * (1 - predicted) / n_pairs) ** 0.5
        assert abs(measured - predicted) <= 4 * sigma + 0.01, (s, measured, predicted)


# ---------------------------------------------------------------- recall on prose-like text


def _machine_texts(limit: int) -> list[str]:
    """``limit`` distinct license-sized texts (300 to 700 words, Zipf-distributed over a
    4000-word vocabulary, so texts share common words as real prose does): generated, not
    read from the host, so every machine tests the same documents."""
    rng = random.Random(20240611)
    letters = "etaoinshrdlucmfwypvbgkjqxz"
    vocab = sorted({"".join(rng.choices(letters[:18], k=rng.randint(2, 9))) for _ in range(5000)})
    cum, total = [], 0.0
    for rank in range(len(vocab)):
        total += 1.0 / (rank + 1)
        cum.append(total)
    return [
        " ".join(rng.choices(vocab, cum_weights=cum, k=rng.randint(300, 700))) for _ in range(limit)
    ]


def _edit(text: str, rate: float, rng: random.Random) -> str:
    words = text.split()
    out = []
    for w in words:
        r = rng.random()
        if r < rate / 2:
            continue
        out.append(f"zz{rng.randrange(10**6)}" if r < rate else w)
    return " ".join(out)


def test_recall_on_machine_text() -> None:
    originals = _machine_texts(70)
    rng = random.Random(5)
    docs = list(originals)
    for text in originals:
        for rate in (0.005, 0.01, 0.02, 0.04):
            docs.append(_edit(text, rate, rng))
    canon = Canonicalizer()
    shingler = ShingleTokenizer(5, WordTokenizer("word"))
    sets = [set(shingler.tokenize(canon.canonicalize(d))) for d in docs]
    truth = set()
    sizes = [len(x) for x in sets]
    for i in range(len(docs)):
        for j in range(i + 1, len(docs)):
            a, b = sets[i], sets[j]
            # Jaccard <= min/max of the sizes: skips only pairs that cannot reach 0.8
            if a and b and min(sizes[i], sizes[j]) >= 0.8 * max(sizes[i], sizes[j]):
                inter = len(a & b)
                if inter >= 0.8 * (sizes[i] + sizes[j] - inter):
                    truth.add((i, j))
    assert len(truth) >= 200
    sigs = MinHasher(128).sketch_many(docs)
    index = LSHIndex(threshold=0.8, num_perm=128)
    index.add_many(list(range(len(docs))), sigs)
    found = {(a, b) for a, b, _ in index.pairs()}
    recall = len(truth & found) / len(truth)
    assert recall >= 0.99, recall
    # every hit carries its estimate; filtering with slack keeps nearly every true pair
    kept = {(a, b) for a, b, s in index.pairs(min_similarity=0.7)}
    assert len(truth & kept) / len(truth) >= 0.97


# ---------------------------------------------------------------- index behaviour


def test_index_add_query_remove() -> None:
    h = MinHasher(64)
    text = " ".join(f"w{i}" for i in range(60))
    index = LSHIndex(0.7, 64)
    index.add("a", h.sketch(text))
    index.add("b", h.sketch(text + " extra words here"))
    index.add("c", h.sketch("something else entirely with other words in it"))
    index.add("e", h.sketch(""))
    assert len(index) == 4 and "a" in index and "z" not in index
    hits = index.query(h.sketch(text))
    assert [k for k, _ in hits] == ["a", "b"] and hits[0][1] == 1.0
    assert index.query(h.sketch(text), min_similarity=0.99) == [("a", 1.0)]
    assert index.query(h.sketch("")) == []
    assert [(a, b) for a, b, _ in index.pairs()] == [("a", "b")]
    index.remove("a")
    assert [k for k, _ in index.query(h.sketch(text))] == ["b"]
    assert list(index.pairs()) == []
    index.add("b", h.sketch("something else entirely with other words in it"))  # replace
    again = index.query(h.sketch("something else entirely with other words in it"))
    assert again == [("c", 1.0), ("b", 1.0)]  # ties in insertion order; b was re-added
    with pytest.raises(InputError, match="not in the index"):
        index.remove("a")
    assert index.nbytes > 0 and "LSHIndex" in repr(index)


def test_index_many_adds_and_removes_stay_consistent() -> None:
    rng = np.random.default_rng(3)
    base = rng.integers(0, 2**64 - 1, size=(50, 32), dtype=np.uint64)
    sigs = np.repeat(base, 3, axis=0)
    sigs[1::3, :4] += np.uint64(1)  # near copies
    index = LSHIndex(0.5, 32, bands=8, rows=4)
    for start in range(0, 150, 10):
        index.add_many(list(range(start, start + 10)), sigs[start : start + 10])
        _ = index.query_many(sigs[:5])
    for key in range(0, 150, 3):
        index.remove(key)
    got = index.query_many(sigs[1:3])
    assert {k for k, _ in got[0]} == {1, 2}
    assert len(index) == 100
    pairs = {(a, b) for a, b, _ in index.pairs()}
    assert pairs == {(i + 1, i + 2) for i in range(0, 150, 3)}


def test_index_bad_input() -> None:
    with pytest.raises(ConfigError, match="not divisible"):
        LSHIndex(0.8, 128, bands=10)
    with pytest.raises(ConfigError, match="exceeds"):
        LSHIndex(0.8, 128, bands=20, rows=10)
    index = LSHIndex(0.8, 16, bands=4, rows=4)
    h = MinHasher(16)
    index.add(1, h.sketch("a b c d e f"))
    with pytest.raises(IncompatibleSketchError):
        index.add(2, MinHasher(16, preset="oph").sketch("a b c d e f"))
    with pytest.raises(IncompatibleSketchError):
        index.add(3, MinHasher(32).sketch("a b c d e f"))
    with pytest.raises(IncompatibleSketchError):
        index.add_many([4], np.zeros((1, 8), dtype=np.uint64))
    with pytest.raises(InputError, match="same key twice"):
        index.add_many([5, 5], np.zeros((2, 16), dtype=np.uint64))
    with pytest.raises(InputError, match="keys for"):
        index.add_many([5], np.zeros((2, 16), dtype=np.uint64))


def _naive_pairs(sigs: np.ndarray, bands: int, rows: int) -> set[tuple[int, int]]:
    out = set()
    for i in range(len(sigs)):
        for j in range(i + 1, len(sigs)):
            for band in range(bands):
                sl = slice(band * rows, (band + 1) * rows)
                if np.array_equal(sigs[i, sl], sigs[j, sl]):
                    out.add((i, j))
                    break
    return out


@settings(max_examples=20)
@given(st.lists(st.lists(st.integers(0, 3), min_size=12, max_size=12), min_size=0, max_size=25))
def test_pairs_equal_naive_banding_on_both_backends(rows: list[list[int]]) -> None:
    sigs = np.array(rows, dtype=np.uint64).reshape(-1, 12)
    expect = _naive_pairs(sigs, 4, 3)
    for name in ("fast", "reference"):
        with backend(name):
            index = LSHIndex(0.5, 12, bands=4, rows=3)
            index.add_many(list(range(len(sigs))), sigs)
            got = {(a, b): s for a, b, s in index.pairs()}
            assert set(got) == expect
            for (a, b), s in got.items():
                assert s == float(np.mean(sigs[a] == sigs[b]))
            hits = index.query_many(sigs)
            for q, found in enumerate(hits):
                assert {k for k, _ in found} == {
                    k for pair in expect if q in pair for k in pair
                } | ({q} if len(sigs) else set())


@pytest.mark.parametrize("name", ["fast", "reference"])
def test_candidates_are_the_keys_sharing_a_band(name: str) -> None:
    """candidates / candidates_many: every key with a band equal to the query's (checked
    by brute force), no estimate cut; entries give the keys and slots back in order."""
    rng = np.random.default_rng(3)
    base = rng.integers(0, 50, (40, 24), dtype=np.uint64)
    sigs = np.where(rng.random((40, 24)) < 0.7, base[rng.integers(0, 5, 40)], base)
    with backend(name):
        index = LSHIndex(0.5, 24, bands=5, rows=4)  # 20 of the 24 slots in bands
        keys = [f"k{i}" for i in range(40)]
        index.add_many(keys, sigs)
        index.remove("k7")
        got = index.candidates_many(sigs)
        for q, hits in enumerate(got):
            bands = sigs[:, :20].reshape(40, 5, 4) == sigs[q, :20].reshape(5, 4)
            want = {keys[i] for i in np.flatnonzero(bands.all(axis=2).any(axis=1))} - {"k7"}
            assert set(hits) == want == set(index.candidates(sigs[q].astype(np.uint32)))
        live, rows = index.entries()
        assert live == keys[:7] + keys[8:] and np.array_equal(rows, np.delete(sigs, 7, 0))
        with pytest.raises(IncompatibleSketchError, match="24 slot values"):
            index.candidates(sigs[0, :5])
        assert LSHIndex(0.5, 24, bands=5, rows=4).candidates(sigs[0]) == []


def test_candidates_past_the_buffers_in_chain_order_on_both_backends() -> None:
    """More candidates than the output buffers hold (the single query's ``-n`` and regrow,
    the batch kernel's re-walk): every one comes back once, in the same order on both
    backends (band by band, newest first), and a live query after them is unchanged."""
    rng = np.random.default_rng(5)
    same = rng.integers(0, 1000, 16, dtype=np.uint64)
    sigs = np.vstack([np.tile(same, (300, 1)), rng.integers(0, 1000, (20, 16), dtype=np.uint64)])
    sigs[150:300, 8:] = rng.integers(0, 1000, (150, 8), dtype=np.uint64)  # share band 0 only
    keys = list(range(len(sigs)))
    got = {}
    for name in ("fast", "reference"):
        with backend(name):
            index = LSHIndex(0.5, 16, bands=2, rows=8)
            index.add_many(keys, sigs)
            index.remove(3)
            got[name] = (
                index.candidates_many(sigs[[0, 310, 200]]),
                index.candidates(sigs[0]),
                index.candidates(sigs[310]),
            )
    assert got["fast"] == got["reference"]
    many, one, other = got["fast"]
    assert sorted(one) == sorted(many[0]) == [k for k in keys[:300] if k != 3]
    assert one[:3] == [299, 298, 297]  # band 0's chain, newest first
    assert many[1] == other == [310]
    assert sorted(many[2]) == sorted(many[0])


def test_candidates_of_any_unsigned_dtype_after_queries() -> None:
    """After query() has switched to its compiled entry point (for a MinHash's read-only
    uint64 slots), candidates() still takes uint32 and writable arrays (it failed with
    "can't unbox array" once)."""
    h = MinHasher(num_perm=32)
    texts = [
        "the quick brown fox jumps over the lazy dog again and again",
        "the quick brown fox jumps over the lazy dog again and again today",
    ]
    index = LSHIndex(0.5, 32)
    index.add_many(["a", "b"], np.stack([h.sketch(t).hashvalues for t in texts]))
    for key, text in (("c", texts[0]), ("d", texts[1])):  # add + query twice: the direct path
        index.add(key, h.sketch(text))
        assert index.query(h.sketch(text))
    want = set(index.candidates(h.sketch(texts[0]).hashvalues))
    assert want >= {"a", "c"}
    slots = h.sketch(texts[0]).hashvalues
    assert set(index.candidates(slots.astype(np.uint32))) == want
    assert set(index.candidates(slots.copy())) == want
