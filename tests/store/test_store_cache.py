"""A store opened with ``cache=True`` answers exactly as one without, whatever happens to the
file: its own adds (new segments, merges), removals, compaction, rolled-back writes, and
commits by another connection."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from neardup.store import Store
from neardup.store._cache import ReadCache

KIND = "minhash"
PARAMS = "minhash-0123456789abcdef"


def _open(path: Path, **kw: bool) -> Store:
    return Store.open(path, kind=KIND, params=PARAMS, **kw)


def _answers(store: Store, lookup: np.ndarray) -> list[list[tuple[str, bytes]]]:
    return store.candidates_many(lookup)


def _batch(
    rng: np.random.Generator, start: int, n: int
) -> tuple[list[str], list[bytes], np.ndarray]:
    keys = [f"k{start + i}" for i in range(n)]
    blobs = [f"s{start + i}".encode() for i in range(n)]
    return keys, blobs, rng.integers(0, 40, size=(n, 4))


def test_cached_reads_equal_uncached(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    rng = np.random.default_rng(7)
    cached = _open(path, cache=True)
    plain = _open(path)
    other = _open(path)  # another connection writing the same file
    queries = rng.integers(0, 40, size=(30, 4))
    at = 0
    for step in range(60):
        writer = other if step % 7 == 3 else cached
        n = int(rng.integers(1, 20))
        writer.add_many(*_batch(rng, at, n))
        at += n
        if step % 11 == 5:  # a re-add of old keys, and a removal
            writer.add_many(*_batch(rng, at - 30, 5))
            cached.remove(f"k{at - 3}")
        if step == 40:
            cached.compact()
        if step == 50:
            other.compact()
        assert _answers(cached, queries) == _answers(plain, queries), step
        keys = [f"k{int(i)}" for i in rng.integers(0, at, size=5)]
        assert [cached.get(k) for k in keys] == [plain.get(k) for k in keys]
    for s in (cached, plain, other):
        s.close()


def test_rolled_back_write_leaves_no_trace_in_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "s.db"
    rng = np.random.default_rng(3)
    cached = _open(path, cache=True)
    plain = _open(path)
    queries = rng.integers(0, 40, size=(20, 4))
    for i in range(6):
        cached.add_many(*_batch(rng, 20 * i, 20))
    assert _answers(cached, queries) == _answers(plain, queries)

    def fail(*args: object, **kwargs: object) -> None:
        raise RuntimeError("disk gone")

    with monkeypatch.context() as m:
        m.setattr(Store, "_set_counters", fail)
        with pytest.raises(RuntimeError):
            cached.add_many(*_batch(rng, 500, 20))  # segments written, merged, rolled back
    assert _answers(cached, queries) == _answers(plain, queries)
    cached.add_many(*_batch(rng, 600, 20))
    assert _answers(cached, queries) == _answers(plain, queries)
    cached.close()
    plain.close()


def test_cache_is_bounded() -> None:
    cache = ReadCache(max_entries=100, max_chunks=2)
    keys = np.arange(40, dtype=np.uint64)
    docs = np.arange(40, dtype=np.int64)
    for seg in range(1, 5):
        cache.hold_segment(seg, ("fields", seg), keys, docs)
    assert cache.segment(1, ("fields", 1)) is None  # the oldest went
    assert cache.segment(4, ("fields", 4)) is not None
    assert cache.segment(4, ("other fields",)) is None  # a rewritten row is not used
    assert not cache.fits(60)


def test_deferred_merges_answer_the_same_and_stay_bounded(tmp_path: Path) -> None:
    from neardup.store._segments import DEFER_LIMIT, read_segments

    rng = np.random.default_rng(11)
    deferred = _open(tmp_path / "d.db", cache=True)
    eager = _open(tmp_path / "e.db")
    queries = rng.integers(0, 40, size=(30, 4))
    at = 0
    for step in range(120):
        batch = _batch(rng, at, int(rng.integers(1, 6)))
        at += len(batch[0])
        deferred.add_many(*batch, defer_merges=True)
        eager.add_many(*batch)
        if step % 9 == 8:  # the service merges when it is idle
            deferred.merge_step()
        assert _answers(deferred, queries) == _answers(eager, queries), step
        levels = [(s.role, s.level) for s in read_segments(deferred._live())]
        assert all(levels.count(level) < DEFER_LIMIT for level in set(levels))
    while deferred.merge_step():
        pass
    assert _answers(deferred, queries) == _answers(eager, queries)
    assert deferred.stats()["lookup_rows"] == eager.stats()["lookup_rows"]
    deferred.close()
    eager.close()


def test_held_segment_list_follows_the_table(tmp_path: Path) -> None:
    """A writer with a cache keeps its list of segments across its own commits (adds with
    deferred merges, merge steps): it must always equal the ``segs`` table."""
    from neardup.store._segments import read_segments

    path = tmp_path / "s.db"
    rng = np.random.default_rng(11)
    cached = _open(path, cache=True)
    plain = _open(path)
    queries = rng.integers(0, 40, size=(30, 4))
    at = checked = 0
    for step in range(80):
        n = int(rng.integers(1, 12))
        cached.add_many(*_batch(rng, at, n), defer_merges=step % 3 != 0)
        at += n
        if step % 5 == 4:
            cached.merge_step()
        if step % 17 == 16:
            cached.remove(f"k{at - 2}")
        assert _answers(cached, queries) == _answers(plain, queries), step
        held = cached._cache.segs if cached._cache is not None else None
        if held is not None:
            assert held == read_segments(plain._live()), step
            checked += 1
    assert checked > 40
    for s in (cached, plain):
        s.close()
