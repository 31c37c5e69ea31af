"""Dedup methods: bucket keys keep the pigeonhole guarantee; thresholds map as documented."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.errors import ConfigError
from neardup.index.hamming import hamming_block_keys
from neardup.methods import DEFAULT_THRESHOLDS, METHODS, make_method


@settings(max_examples=60)
@given(st.sampled_from([64, 128, 256]), st.integers(0, 7), st.integers(0, 2**32), st.data())
def test_block_keys_share_a_key_within_radius(
    bits: int, radius: int, seed: int, data: st.DataObject
) -> None:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2**63, size=bits // 64, dtype=np.uint64)
    b = a.copy()
    flips = data.draw(st.lists(st.integers(0, bits - 1), max_size=radius, unique=True))
    for f in flips:
        b[f // 64] ^= np.uint64(1) << np.uint64(f % 64)
    codes = np.stack([a, b]) if bits > 64 else np.array([a[0], b[0]], dtype=np.uint64)
    keys = hamming_block_keys(codes, bits, radius)
    assert keys.shape == (2, radius + 1)
    assert (keys[0] == keys[1]).any()


def test_thresholds_and_radii() -> None:
    assert set(DEFAULT_THRESHOLDS) == set(METHODS)
    assert make_method("simhash", 0.9).radius == 6  # type: ignore[attr-defined]
    assert make_method("phash").radius == 10  # type: ignore[attr-defined]
    assert make_method("tlsh").max_distance == 45  # type: ignore[attr-defined]
    with pytest.raises(ConfigError):
        make_method("minhash", num_perm=128, bogus=1)
    with pytest.raises(ConfigError, match="no bucket keys"):
        make_method("ctph").lookup_keys([])


def test_minhash_lookup_keys_match_lsh_candidates() -> None:
    from neardup.io import Document

    m = make_method("minhash", 0.8)
    text = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron"
    payload = m.sketch([Document("a", text), Document("b", text + " pi"), Document("c", "x y")])
    keys = m.lookup_keys(payload)
    assert keys.shape[0] == 3
    assert (keys[0] == keys[1]).any() and not (keys[0] == keys[2]).any()


def test_pickled_methods_compute_the_same_keys() -> None:
    import pickle

    from neardup.io import Document

    docs = [Document("a", "one two three four five six seven eight nine ten")]
    for name in ("minhash", "simhash"):
        m = make_method(name)
        worker = pickle.loads(pickle.dumps(m))
        assert not hasattr(worker, "_index")
        np.testing.assert_array_equal(
            worker.lookup_keys(worker.sketch(docs)), m.lookup_keys(m.sketch(docs))
        )


def test_prepared_minhash_payloads_carry_the_set_profiles() -> None:
    """A run's collector makes each batch's set profiles on the sketching thread
    (``prepare``); they pickle with the payload and are those of the whole run's sets."""
    import pickle

    from neardup._kernels import engine
    from neardup.io import Document

    m = make_method("minhash", 0.5)
    docs = [Document(str(k), f"w{k} a b c d e f g h i j k{k}") for k in range(5)]
    col = m.collector()
    payload = col.prepare(m.sketch(docs))
    again = pickle.loads(pickle.dumps(payload))
    assert again.profiles is not None and payload.profiles is not None
    np.testing.assert_array_equal(again.profiles[0], payload.profiles[0])
    col.add(np.arange(5), payload)
    col.add(np.arange(5, 10), m.sketch(docs))  # not prepared: made when added
    values, offsets = payload[1]
    prof, big = engine.kernels("buckets").set_profiles(values, offsets)
    got_prof, got_big = col._profiles()
    np.testing.assert_array_equal(got_prof, np.concatenate([prof, prof]))
    np.testing.assert_array_equal(got_big, np.concatenate([big, big]))
    assert col.components(10, jobs=2).tolist() == col.components(10).tolist()


@pytest.mark.parametrize("verify", [True, False])
def test_minhash_collector_grows_across_batches(verify: bool) -> None:
    """A run fed in many small batches (its columns regrow several times) finds what one
    batch finds; the kept sets are 32-bit."""
    from neardup.io import Document

    rng = np.random.default_rng(5)
    words = [f"w{i}" for i in range(400)]
    base = [" ".join(rng.choice(words, 700)) for _ in range(60)]
    texts = base + [t.replace(t.split()[3], "edited", 1) for t in base[:40]]
    docs = [Document(str(i), t) for i, t in enumerate(texts)]
    m = make_method("minhash", 0.8, verify=verify)
    whole, parts = m.collector(), m.collector()
    payload = m.sketch(docs)
    if verify:
        assert payload[1][0].dtype == np.uint32  # type: ignore[index]
        assert len(payload[1][0]) > 1 << 16  # type: ignore[index]
    whole.add(np.arange(len(docs)), payload)
    for s in range(0, len(docs), 7):
        parts.add(np.arange(s, min(s + 7, len(docs))), m.sketch(docs[s : s + 7]))
    a, b = whole.pairs(), parts.pairs()
    assert (a.a.tolist(), a.b.tolist(), a.similarity.tolist()) == (
        b.a.tolist(),
        b.b.tolist(),
        b.similarity.tolist(),
    )
    assert len(a) >= 40
    assert parts.components(len(docs)).tolist() == whole.components(len(docs)).tolist()


@pytest.mark.parametrize("verify", [True, False])
def test_minhash_collector_copies_later_on_threads_in_any_order(verify: bool) -> None:
    """Rows reserved in input order and copied later, by threads, in any order (the columns
    regrowing meanwhile): the same pairs and roots as batches added one after the other."""
    from concurrent.futures import ThreadPoolExecutor

    from neardup.io import Document

    rng = np.random.default_rng(6)
    words = [f"w{i}" for i in range(400)]
    base = [" ".join(rng.choice(words, 700)) for _ in range(80)]
    texts = base + [t.replace(t.split()[3], "edited", 1) for t in base[:50]]
    docs = [Document(str(i), t) for i, t in enumerate(texts)]
    m = make_method("minhash", 0.8, verify=verify)
    whole, later = m.collector(), m.collector()
    whole.add(np.arange(len(docs)), m.sketch(docs))
    calls = [
        later.add_later(np.arange(s, min(s + 3, len(docs))), m.sketch(docs[s : s + 3]))
        for s in range(0, len(docs), 3)
    ]
    with ThreadPoolExecutor(3) as pool:
        for f in [pool.submit(c) for c in reversed(calls)]:
            f.result()
    a, b = whole.pairs(), later.pairs()
    assert (a.a.tolist(), a.b.tolist(), a.similarity.tolist()) == (
        b.a.tolist(),
        b.b.tolist(),
        b.similarity.tolist(),
    )
    assert len(a) >= 50
    assert later.components(len(docs)).tolist() == whole.components(len(docs)).tolist()


@pytest.mark.parametrize("threshold", [0.5, 0.8, 1.0])
def test_minhash_lookup_keys_are_lsh_index_band_keys(threshold: float) -> None:
    from neardup.index.lsh import LSHIndex
    from neardup.io import Document

    m = make_method("minhash", threshold, num_perm=64)
    docs = [Document(str(i), f"w{i} shared words of the test corpus x{i % 3}") for i in range(9)]
    sigs = m.sketch(docs)[0]
    index = LSHIndex(threshold=min(threshold, 0.99), num_perm=64)
    assert (m.bands, m.rows) == (index.bands, index.rows)  # type: ignore[attr-defined]
    np.testing.assert_array_equal(m.lookup_keys((sigs, None)), index.band_keys(sigs))


def test_minhash_collector_adds_after_its_pairs_were_read() -> None:
    """Reading the pairs takes views of the columns; a later batch (which regrows them past
    their first capacity) leaves those results intact and is part of the next read."""
    from neardup.io import Document

    words = [f"w{i}" for i in range(3000)]
    first = [Document(str(i), " ".join(words[i : i + 2000])) for i in range(3)]
    later = [Document(str(i + 3), " ".join(words[i : i + 2000])) for i in range(40)]
    m = make_method("minhash", 0.8)
    col = m.collector()
    col.add(np.arange(3), m.sketch(first))
    before = col.pairs()
    snapshot = (before.a.tolist(), before.b.tolist(), before.similarity.tolist())
    col.add(np.arange(3, 43), m.sketch(later))  # 40 * 1996 values: past 65536
    after = col.pairs()
    assert (before.a.tolist(), before.b.tolist(), before.similarity.tolist()) == snapshot
    old = set(zip(before.a.tolist(), before.b.tolist(), strict=True))
    new = set(zip(after.a.tolist(), after.b.tolist(), strict=True))
    assert len(new) > len(old) and old <= new
    assert (0, 3) in new  # document 3 repeats document 0 exactly
