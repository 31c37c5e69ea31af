"""A writer's housekeeping done on another connection: WAL checkpoints and segment merges
prepared on a snapshot, then written by the writer (``neardup serve``'s housekeeper)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from neardup.store import Store

KIND, PARAMS = "minhash", "minhash-keep"


def _open(path: Path, **kw: object) -> Store:
    return Store.open(path, kind=KIND, params=PARAMS, **kw)  # type: ignore[arg-type]


def _segments(path: Path) -> int:
    with _open(path, readonly=True) as r:
        return int(r._live().execute("SELECT count(*) FROM segs").fetchone()[0])


def _add(w: Store, start: int, n: int) -> None:
    keys = np.arange(start, start + n, dtype=np.int64)[:, None] * np.array([[1, 7]])
    w.add_many([f"k{i}" for i in range(start, start + n)], [b"x"] * n, keys, defer_merges=True)


def test_a_merge_prepared_elsewhere_is_written_by_the_writer(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with _open(path, cache=True, synchronous="normal") as w:
        for b in range(4):  # four small batches: a full size class, its merge deferred
            _add(w, 100 * b, 50)
        assert w.merge_due()
        before = _segments(path)
        with _open(path, synchronous="normal", quick_check=False) as keeper:
            prepared = keeper.prepare_merge()
        assert prepared is not None and len(prepared.group) >= 4
        assert _segments(path) == before  # nothing written yet
        assert w.apply_merge(prepared)
        assert _segments(path) < before
        assert not w.apply_merge(prepared)  # its segments are gone: outdated, not written
        for i in (0, 149, 349):
            assert (f"k{i}", b"x") in w.candidates(np.array([i, 7 * i]))
        assert w.check()["problems"] == []


def test_a_merge_outdated_by_the_writers_own_merge_is_dropped(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with _open(path, cache=True, synchronous="normal") as w:
        for b in range(4):
            _add(w, 100 * b, 50)
        with _open(path, synchronous="normal", quick_check=False) as keeper:
            prepared = keeper.prepare_merge()
        assert prepared is not None
        assert w.merge_step()  # the writer merged them itself meanwhile
        w.remove("k3")
        assert not w.apply_merge(prepared)
        assert w.get("k3") is None and w.get("k4") == b"x"
        assert w.check()["problems"] == []


def test_deletes_after_the_snapshot_stay_stale_and_are_not_found(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with _open(path, cache=True, synchronous="normal") as w:
        for b in range(4):
            _add(w, 100 * b, 50)
        with _open(path, synchronous="normal", quick_check=False) as keeper:
            prepared = keeper.prepare_merge()
        assert prepared is not None
        w.remove("k5")  # after the snapshot: its entries stay in the merged segment
        assert w.apply_merge(prepared)
        assert ("k5", b"x") not in w.candidates(np.array([5, 35]))
        assert ("k6", b"x") in w.candidates(np.array([6, 42]))
        assert w.check()["problems"] == []
        w.compact()
        assert w.check()["problems"] == []
