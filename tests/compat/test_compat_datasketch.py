"""neardup.compat.datasketch against the real datasketch 2.0.0 (the oracle): same values."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import neardup.compat.datasketch as nd
from neardup.errors import ConfigError

ds = pytest.importorskip("datasketch")

SCHEMES = ("affine32", "affine64", "legacy")


def test_oracle_is_the_real_datasketch() -> None:
    # the datasketch_suite conftest maps `datasketch` to the compat package only while its
    # own files import and run; here it must be the installed datasketch
    assert ds.MinHash is not nd.MinHash and ds.__name__ == "datasketch"
    assert not ds.__file__.startswith(nd.__file__.rsplit("/", 1)[0])


def _sets(n: int, seed: int = 0, vocab: int = 300, size: int = 40) -> list[list[bytes]]:
    rng = np.random.default_rng(seed)
    return [
        [f"w{x}".encode() for x in rng.integers(0, vocab, int(rng.integers(0, size)))]
        for _ in range(n)
    ]


def _pair(tokens: list[bytes], num_perm: int = 64, scheme: str = "affine32", seed: int = 1):
    a = ds.MinHash(num_perm, seed=seed, scheme=scheme)
    b = nd.MinHash(num_perm, seed=seed, scheme=scheme)
    a.update_batch(tokens)
    b.update_batch(tokens)
    return a, b


@pytest.mark.parametrize("scheme", SCHEMES)
def test_hashvalues_equal_datasketch(scheme: str) -> None:
    for tokens in _sets(8, seed=1):
        a, b = _pair(tokens, scheme=scheme, seed=7)
        assert b.hashvalues.dtype == a.hashvalues.dtype
        np.testing.assert_array_equal(b.hashvalues, a.hashvalues)
        one_a, one_b = ds.MinHash(32, scheme=scheme), nd.MinHash(32, scheme=scheme)
        for t in tokens[:5]:
            one_a.update(t)
            one_b.update(t)
        np.testing.assert_array_equal(one_b.hashvalues, one_a.hashvalues)
        assert b.count() == pytest.approx(a.count())


@pytest.mark.parametrize("scheme", SCHEMES)
def test_bulk_and_custom_hash_equal_datasketch(scheme: str) -> None:
    sets = _sets(10, seed=2)
    got = nd.MinHash.bulk(sets, num_perm=32, scheme=scheme)
    want = ds.MinHash.bulk(sets, num_perm=32, scheme=scheme)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g.hashvalues, w.hashvalues)

    def myhash(x: int) -> int:
        return (x * 2654435761) & 0xFFFFFFFF

    a = ds.MinHash(16, hashfunc=myhash, scheme=scheme)
    b = nd.MinHash(16, hashfunc=myhash, scheme=scheme)
    a.update_batch(range(50))
    b.update_batch(range(50))
    np.testing.assert_array_equal(b.hashvalues, a.hashvalues)


@pytest.mark.parametrize("scheme", SCHEMES)
def test_generator_and_lean_of_many_equal_datasketch(scheme: str) -> None:
    sets = _sets(600, seed=4, size=12)  # past the generator's 256-set chunks
    want = list(ds.MinHash.generator(sets, num_perm=16, scheme=scheme, seed=3))
    got = list(nd.MinHash.generator(iter(sets), num_perm=16, scheme=scheme, seed=3))
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.hashvalues.dtype == w.hashvalues.dtype
        np.testing.assert_array_equal(g.hashvalues, w.hashvalues)
        lean, lean_ds = nd.LeanMinHash(g), ds.LeanMinHash(w)
        assert lean.hashvalues is not g.hashvalues and lean.seed == 3 and lean.scheme == scheme
        np.testing.assert_array_equal(lean.hashvalues, lean_ds.hashvalues)
        assert lean.hashvalues.dtype == lean_ds.hashvalues.dtype
    # the sets before a str token are still yielded; the str raises datasketch's TypeError
    it = nd.MinHash.generator([[b"a"], [b"b"], ["c"], [b"d"]], num_perm=8, scheme=scheme)
    assert len([next(it), next(it)]) == 2
    with pytest.raises(TypeError, match="encoded"):
        next(it)


def test_empty_jaccard_is_one_and_errors_match() -> None:
    assert nd.MinHash().jaccard(nd.MinHash()) == ds.MinHash().jaccard(ds.MinHash()) == 1.0
    with pytest.raises(ValueError, match="different seeds"):
        nd.MinHash(seed=1).jaccard(nd.MinHash(seed=2))
    with pytest.raises(ValueError, match="permutation schemes"):
        nd.MinHash().jaccard(nd.MinHash(scheme="legacy"))
    with pytest.raises(ValueError, match="scheme must be specified"):
        nd.MinHash(hashvalues=[1, 2, 3])
    m = nd.MinHash(8)
    m.update(b"x")
    u = nd.MinHash.union(m, nd.MinHash(8))
    assert u == m and pickle.loads(pickle.dumps(m)) == m


@pytest.mark.parametrize("scheme", SCHEMES)
def test_lean_and_bbit_bytes_equal_datasketch(scheme: str) -> None:
    a, b = _pair(_sets(1, seed=3, size=30)[0] + [b"x"], 40, scheme)
    la, lb = ds.LeanMinHash(a), nd.LeanMinHash(b)
    for order in ("@", "<", ">"):
        ba, bb = bytearray(la.bytesize(order)), bytearray(lb.bytesize(order))
        la.serialize(ba, order)
        lb.serialize(bb, order)
        assert ba == bb
        assert nd.LeanMinHash.deserialize(bb, order) == lb
    assert hash(pickle.loads(pickle.dumps(lb))) == hash(lb)
    for bits in (1, 2, 3, 8, 32):
        assert nd.bBitMinHash(b, bits).__getstate__() == ds.bBitMinHash(a, bits).__getstate__()
        restored = pickle.loads(pickle.dumps(nd.bBitMinHash(b, bits)))
        assert restored == nd.bBitMinHash(b, bits)


@pytest.mark.parametrize(("threshold", "num_perm"), [(0.5, 128), (0.8, 64), (0.9, 128)])
def test_lsh_matches_datasketch(threshold: float, num_perm: int) -> None:
    sets = _sets(120, seed=4, vocab=80, size=30)
    sets += [s[:-1] for s in sets[:30]]  # near duplicates
    a = ds.MinHashLSH(threshold=threshold, num_perm=num_perm)
    b = nd.MinHashLSH(threshold=threshold, num_perm=num_perm)
    assert (a.b, a.r) == (b.b, b.r)
    ma = ds.MinHash.bulk(sets, num_perm=num_perm)
    mb = nd.MinHash.bulk(sets, num_perm=num_perm)
    for i, (x, y) in enumerate(zip(ma, mb, strict=True)):
        a.insert(i, x)
        b.insert(i, y)
    for x, y in zip(ma, mb, strict=True):
        assert set(a.query(x)) == set(b.query(y))
    assert a.get_counts() == b.get_counts()
    assert a.get_subset_counts(1, 2, 3) == b.get_subset_counts(1, 2, 3)
    for i in range(0, 40, 3):
        a.remove(i)
        b.remove(i)
    assert sorted(a.keys.keys()) == sorted(b.keys.keys())
    assert a.get_counts() == b.get_counts() and a.is_empty() == b.is_empty()
    b2 = pickle.loads(pickle.dumps(b))
    assert set(b2.query(mb[50])) == set(b.query(mb[50]))


def _buckets(lsh: object) -> list[dict[bytes, set[object]]]:
    tables = lsh.hashtables  # type: ignore[attr-defined]
    return [{h: set(t.get(h)) for h in t.keys()} for t in tables]  # noqa: SIM118  # datasketch storage is no dict


def _key_lists(lsh: object) -> dict[object, list[bytes]]:
    keys = lsh.keys  # type: ignore[attr-defined]
    return {k: list(keys.get(k)) for k in keys.keys()}  # noqa: SIM118


@pytest.mark.parametrize("seed", range(4))
def test_lsh_random_ops_match_datasketch(seed: int) -> None:
    """Inserts (duplicate and falsy keys, frozensets), removes, queries in both orders,
    buffers and pickles in a random order: the same buckets, counts and answers."""
    rng = np.random.default_rng(seed)
    sets = _sets(40, seed=seed, vocab=30, size=12)
    ma = ds.MinHash.bulk(sets, num_perm=32)
    mb = nd.MinHash.bulk(sets, num_perm=32)
    a = ds.MinHashLSH(threshold=0.5, num_perm=32)
    b = nd.MinHashLSH(threshold=0.5, num_perm=32)
    pool: list[object] = [0, "", None, 1, 1.0, "k", frozenset({"k"}), (2, 3), False, 7]
    for _ in range(160):
        op = int(rng.integers(0, 6))
        i = int(rng.integers(0, len(sets)))
        key = pool[int(rng.integers(0, len(pool)))]
        if op <= 1:
            a.insert(key, ma[i], check_duplication=False)
            b.insert(key, mb[i], check_duplication=False)
        elif op == 2 and a.keys.has_key(key):
            a.remove(key)
            b.remove(key)
        elif op == 3:
            a.add_to_query_buffer(ma[i])
            b.add_to_query_buffer(mb[i])
            if rng.random() < 0.5:
                assert set(a.collect_query_buffer()) == set(b.collect_query_buffer())
        elif op == 4:
            b = pickle.loads(pickle.dumps(b))
        assert set(a.query(ma[i])) == set(b.query(mb[i]))
        assert a.get_counts() == b.get_counts()
        assert _buckets(a) == _buckets(b)
        assert _key_lists(a) == _key_lists(b) and a.is_empty() == b.is_empty()
    assert set(a.collect_query_buffer()) == set(b.collect_query_buffer())


@pytest.mark.parametrize("seed", range(4))
def test_lsh_bulk_paths_match_datasketch(seed: int) -> None:
    """Sessions and insert_many (the native table), then per-call inserts, removes,
    queries one by one and many at once, pickles and reads of datasketch's layout in a
    random order: the same answers, buckets and key order as datasketch's."""
    rng = np.random.default_rng(seed)
    sets = [*_sets(60, seed=seed, vocab=30, size=12), []]
    ma = ds.MinHash.bulk(sets, num_perm=32)
    mb = nd.MinHash.bulk(sets, num_perm=32)
    a = ds.MinHashLSH(threshold=0.5, num_perm=32)
    b = nd.MinHashLSH(threshold=0.5, num_perm=32)
    next_key = 0
    for _ in range(60):
        op = int(rng.integers(0, 9))
        if op <= 2:  # a session of a few new keys, now and then an empty sketch among them
            with a.insertion_session() as sa, b.insertion_session() as sb:
                for _ in range(int(rng.integers(1, 8))):
                    i = int(rng.integers(0, len(sets) - (op != 0)))
                    sa.insert(next_key, ma[i])
                    sb.insert(next_key, mb[i])
                    next_key += 1
        elif op == 3:
            idx = rng.integers(0, len(sets) - 1, 5).tolist()
            for i in idx:
                a.insert(next_key, ma[i])
                next_key += 1
            b.insert_many(list(range(next_key - 5, next_key)), [mb[i] for i in idx])
        elif op == 4 and next_key:
            i = int(rng.integers(0, len(sets)))
            a.insert(next_key, ma[i])
            b.insert(next_key, mb[i])
            next_key += 1
        elif op == 5 and next_key:
            key = int(rng.integers(0, next_key))
            assert (key in a) == (key in b)
            if key in a:
                a.remove(key)
                b.remove(key)
        elif op == 6:
            b = pickle.loads(pickle.dumps(b))
        elif op == 7:
            assert _key_lists(a) == _key_lists(b) and list(a.keys.keys()) == list(b.keys.keys())
            assert _buckets(a) == _buckets(b) and a.get_counts() == b.get_counts()
        idx = rng.integers(0, len(sets), 6).tolist()
        many = b.query_many([mb[i] for i in idx])
        assert [set(a.query(ma[i])) for i in idx] == [set(b.query(mb[i])) for i in idx]
        assert [set(q) for q in many] == [set(b.query(mb[i])) for i in idx]
        assert a.is_empty() == b.is_empty()
    assert list(a.keys.keys()) == list(b.keys.keys()) and _buckets(a) == _buckets(b)
    assert a.get_counts() == b.get_counts()


def test_lsh_session_checks_each_insert() -> None:
    """A session raises datasketch's errors at the insert, and keeps each sketch's values
    as they were then."""
    mb = nd.MinHash.bulk(_sets(3, seed=9), num_perm=32)
    lsh = nd.MinHashLSH(threshold=0.5, num_perm=32)
    with lsh.insertion_session() as s:
        s.insert("a", mb[0])
        with pytest.raises(ValueError, match="already exists"):
            s.insert("a", mb[1])
        with pytest.raises(ValueError, match="Expecting minhash with length 32"):
            s.insert("b", nd.MinHash(64))
    assert lsh._native is not None and lsh.query(mb[0]) == ["a"]  # the native table
    m = mb[2].copy()
    lsh.insert_many(["c"], [m])
    m.hashvalues[:] = 0
    assert lsh.query(mb[2]) == ["c"] and "c" in lsh and lsh.query(m) == []
    with pytest.raises(ValueError, match="does not match"):
        lsh.insert_many(["d"], [nd.MinHash(32, scheme="legacy")])


def test_lsh_insert_many_and_query_many_fall_back_one_by_one() -> None:
    """insert_many and query_many go in one step, and one by one when a key or a sketch needs
    it: the keys before a repeated one go in, and the errors are insert's and query's."""
    sets = _sets(6, seed=3)
    ma, mb = ds.MinHash.bulk(sets, num_perm=32), nd.MinHash.bulk(sets, num_perm=32)
    a, b = ds.MinHashLSH(threshold=0.5, num_perm=32), nd.MinHashLSH(threshold=0.5, num_perm=32)
    b.insert_many([0, 1], mb[:2])  # one step into an empty index: it takes their scheme
    assert b._minhash_scheme == mb[0].scheme and b._native is not None
    for keys in ([2, 2], [3, 0]):  # a repeat within the call, a key indexed before
        with pytest.raises(ValueError, match="already exists"):
            b.insert_many(keys, [mb[k] for k in keys])
    for k in range(4):
        a.insert(k, ma[k])
    assert [set(q) for q in b.query_many(mb)] == [set(a.query(m)) for m in ma]
    with pytest.raises(ValueError, match="does not match"):
        b.query_many([mb[0], nd.MinHash(32, scheme="legacy")])
    with pytest.raises(AttributeError):
        b.query_many([mb[0], object()])
    with pytest.raises(ValueError, match="Expecting minhash with length 32"):
        b.insert_many([8, 9], [mb[4], nd.MinHash(64)])
    assert 8 in b and 9 not in b


def test_lsh_reads_a_pickle_of_the_dict_of_sets_layout() -> None:
    """Pickles made before the tables changed layout (``hashtables`` in the state) load."""
    m = nd.MinHash(32)
    m.update_batch([b"a", b"b"])
    lsh = nd.MinHashLSH(threshold=0.5, num_perm=32)
    lsh.insert("x", m)
    lsh.insert("y", m)
    state = lsh.__getstate__()
    state["hashtables"] = _buckets(lsh)
    for name in ("_tables", "_view", "_last", "_select"):
        del state[name]
    old = nd.MinHashLSH.__new__(nd.MinHashLSH)
    old.__setstate__(state)
    assert sorted(old.query(m)) == ["x", "y"] and _buckets(old) == _buckets(lsh)


def test_lsh_merge_matches_datasketch() -> None:
    sets = _sets(60, seed=5, vocab=60)
    ma = ds.MinHash.bulk(sets, num_perm=64)
    mb = nd.MinHash.bulk(sets, num_perm=64)
    pairs = []
    for cls, ms in ((ds.MinHashLSH, ma), (nd.MinHashLSH, mb)):
        one, two = cls(threshold=0.5, num_perm=64), cls(threshold=0.5, num_perm=64)
        for i, m in enumerate(ms):
            (one if i % 2 else two).insert(i, m)
        one.merge(two)
        pairs.append(one)
        with pytest.raises(ValueError, match="overlapping"):
            one.merge(two, check_overlap=True)
    a, b = pairs
    assert a.get_counts() == b.get_counts()
    assert all(set(a.query(x)) == set(b.query(y)) for x, y in zip(ma, mb, strict=True))
    with pytest.raises(ValueError, match="different initialization"):
        b.merge(nd.MinHashLSH(threshold=0.5, num_perm=128))


def test_lsh_weighted_prepickle_and_storage() -> None:
    rng = np.random.default_rng(6)
    ga, gb = ds.WeightedMinHashGenerator(20, 32), nd.WeightedMinHashGenerator(20, 32)
    a = ds.MinHashLSH(threshold=0.5, num_perm=32, prepickle=True)
    b = nd.MinHashLSH(threshold=0.5, num_perm=32, prepickle=True)
    vecs = rng.random((30, 20)) + 0.01
    for i, v in enumerate(vecs):
        a.insert(("k", i), ga.minhash(v))
        b.insert(("k", i), gb.minhash(v))
    for v in vecs[:5]:
        assert set(a.query(ga.minhash(v))) == set(b.query(gb.minhash(v)))
    with pytest.raises(ConfigError, match="in-memory"):
        nd.MinHashLSH(storage_config={"type": "redis", "redis": {}})


def test_forest_matches_datasketch() -> None:
    sets = _sets(150, seed=7, vocab=100, size=40)
    fa, fb = ds.MinHashLSHForest(num_perm=64), nd.MinHashLSHForest(num_perm=64)
    ma = ds.MinHash.bulk(sets, num_perm=64)
    mb = nd.MinHash.bulk(sets, num_perm=64)
    for i, (x, y) in enumerate(zip(ma, mb, strict=True)):
        fa.add(i, x)
        fb.add(i, y)
    fa.index()
    fb.index()
    for k in (1, 5, 20):
        for x, y in zip(ma[:40], mb[:40], strict=True):
            assert set(fa.query(x, k)) == set(fb.query(y, k))
    np.testing.assert_array_equal(fb.get_minhash_hashvalues(3), mb[3].hashvalues)


def test_ensemble_matches_datasketch() -> None:
    rng = np.random.default_rng(8)
    sets = [
        [f"t{x}".encode() for x in rng.choice(500, n, replace=False)]
        for n in rng.integers(5, 200, 80)
    ]
    ma = ds.MinHash.bulk(sets, num_perm=64)
    mb = nd.MinHash.bulk(sets, num_perm=64)
    ea = ds.MinHashLSHEnsemble(threshold=0.6, num_perm=64, num_part=4)
    eb = nd.MinHashLSHEnsemble(threshold=0.6, num_perm=64, num_part=4)
    ea.index([(i, m, len(set(s))) for i, (m, s) in enumerate(zip(ma, sets, strict=True))])
    eb.index([(i, m, len(set(s))) for i, (m, s) in enumerate(zip(mb, sets, strict=True))])
    assert ea.uppers == eb.uppers and np.array_equal(ea.params, eb.params)
    for x, y, s in zip(ma[:30], mb[:30], sets[:30], strict=True):
        assert set(ea.query(x, len(s))) == set(eb.query(y, len(s)))


def test_weighted_matches_datasketch() -> None:
    sp = pytest.importorskip("scipy.sparse")
    rng = np.random.default_rng(9)
    ga, gb = ds.WeightedMinHashGenerator(40, 64, 5), nd.WeightedMinHashGenerator(40, 64, 5)
    x = rng.random((25, 40)) * (rng.random((25, 40)) < 0.4)
    x[4] = 0
    for v in x:
        if v.any():
            np.testing.assert_array_equal(gb.minhash(v).hashvalues, ga.minhash(v).hashvalues)
    for mat in (x, sp.csr_matrix(x)):
        for w, g in zip(ga.minhash_many(mat), gb.minhash_many(mat), strict=True):
            assert (w is None) == (g is None)
            if w is not None and g is not None:
                np.testing.assert_array_equal(g.hashvalues, w.hashvalues)
                assert g.jaccard(g) == 1.0
    v = x[0].astype(np.float32)
    before = v.copy()
    gb.minhash(v)
    np.testing.assert_array_equal(v, before)


@pytest.mark.parametrize("plus", [False, True])
def test_hyperloglog_matches_datasketch(plus: bool) -> None:
    cls_a = ds.HyperLogLogPlusPlus if plus else ds.HyperLogLog
    cls_b = nd.HyperLogLogPlusPlus if plus else nd.HyperLogLog
    for p in (4, 9, 12):
        for n in (0, 3, 200, 5000):
            tokens = [f"v{i}".encode() for i in range(n)]
            a, b, c = cls_a(p), cls_b(p), cls_b(p)
            for t in tokens:
                a.update(t)
                b.update(t)
            c.update_batch(tokens)
            np.testing.assert_array_equal(b.reg, a.reg)
            np.testing.assert_array_equal(c.reg, a.reg)
            with pytest.warns(UserWarning) if _near(a) else _nothing():
                assert b.count() == a.count()
            buf = bytearray(b.bytesize())
            b.serialize(buf)
            assert cls_b.deserialize(buf) == b and pickle.loads(pickle.dumps(b)) == b


def _near(h: object) -> bool:
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        h.count()  # type: ignore[attr-defined]
    return bool(caught)


class _nothing:  # noqa: N801  # a no-op context manager
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None
