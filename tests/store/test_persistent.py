"""PersistentIndex: the stored configuration rebuilds the method, gathered writes, and the
compact blobs verify like the in-memory method."""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

import neardup
from neardup.errors import ConfigError, InputError, StoreError
from neardup.io import Document
from neardup.methods import make_method
from neardup.store.persistent import PersistentIndex
from oracles.store import committed_docs

WORDS = [f"w{i}" for i in range(400)]


def _corpus(n: int = 60, seed: int = 4) -> list[Document]:
    rng = random.Random(seed)
    docs = []
    for i in range(n):
        words = [rng.choice(WORDS) for _ in range(rng.randint(30, 120))]
        docs.append(Document(f"d{i}", " ".join(words)))
        if i % 5 == 0:  # an edited copy
            edited = list(words)
            edited[rng.randrange(len(edited))] = "changed"
            docs.append(Document(f"d{i}-copy", " ".join(edited)))
    return docs


def _clusters(result: neardup.DedupResult) -> list[tuple[str, ...]]:
    return sorted(c.members for c in result.clusters)


@pytest.mark.parametrize("verify", [True, False])
def test_dedup_with_an_index_finds_the_same_clusters(tmp_path: Path, verify: bool) -> None:
    docs = _corpus()
    method = make_method("minhash", 0.7, verify=verify)
    plain = neardup.dedup(docs, method=method)
    with PersistentIndex(tmp_path / "s.db", method, write_docs=7) as index:
        stored = neardup.dedup(docs, index=index, batch_size=5)
    assert _clusters(stored) == _clusters(plain) and plain.clusters
    # a second run against the full store: every document is found stored, same clusters
    with PersistentIndex.open(tmp_path / "s.db") as index:
        again = neardup.dedup(docs, index=index, batch_size=9)
        assert len(index) == len(docs)
    assert _clusters(again) == _clusters(plain)


def test_a_run_does_not_search_its_own_flushed_writes(tmp_path: Path) -> None:
    """Writes flushed during a run are paired by the run's own index, not found stored
    (which would verify each such pair twice); a later run with the same index object finds
    them stored."""
    docs = _corpus()
    method = make_method("minhash", 0.7)
    plain = neardup.dedup(docs, method=method)
    with PersistentIndex(tmp_path / "s.db", method, write_docs=1) as index:
        # a write per batch; batches of 5 put some copies in the batch after their original
        first = neardup.dedup(docs, index=index, batch_size=5)
        assert first.stats["stored_matches"] == 0
        assert [(p.a, p.b) for p in first.pairs] == [(p.a, p.b) for p in plain.pairs]
        copies = [Document(f"{d.id}-again", d.text) for d in docs[:6]]
        second = neardup.dedup(copies, index=index, batch_size=3)
        assert second.stats["stored_matches"] >= len(copies)
        assert ("d0", "d0-again") in {tuple(sorted(c.members))[:2] for c in second.clusters}
    assert _clusters(first) == _clusters(plain)


def test_open_rebuilds_the_method_and_checks_explicit_options(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with pytest.raises(StoreError, match="no index"):
        PersistentIndex.open(path, readonly=True)
    with PersistentIndex.open(path, method="minhash", threshold=0.6, num_perm=64) as index:
        index.add(_corpus(10))
    with PersistentIndex.open(path, readonly=True) as index:
        assert index.method == make_method("minhash", 0.6, num_perm=64)
        assert index.stats()["config"]["num_perm"] == 64  # type: ignore[index]
        hits = index.query([Document("q", _corpus(10)[0].text or "")])
        assert hits and hits[0].key == "d0" and hits[0].similarity == 1.0
    with pytest.raises(ConfigError, match=r"num_perm 128 contradicts the index's num_perm 64"):
        PersistentIndex.open(path, num_perm=128)
    with pytest.raises(ConfigError, match="does not apply"):
        PersistentIndex.open(path, bits=64)
    with PersistentIndex.open(path, threshold=0.6, num_perm=64):
        pass  # agreeing options are fine


def _groups(path: Path) -> list[int]:
    """The documents of each write transaction (a write starts a fresh chunk row)."""
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute("SELECT id, n FROM chunks ORDER BY id").fetchall()
    finally:
        conn.close()
    groups: list[int] = []
    for i, (cid, n) in enumerate(rows):
        if i and cid == rows[i - 1][0] + 1 and rows[i - 1][1] == 32:
            groups[-1] += n
        else:
            groups.append(n)
    return groups


@pytest.mark.parametrize("background", [False, True])
def test_query_then_add_gathers_writes_until_flush(tmp_path: Path, background: bool) -> None:
    method = make_method("simhash")
    docs = _corpus(12)
    # no time budget: only the document count decides (a loaded machine may take seconds)
    inf = float("inf")
    with PersistentIndex(
        tmp_path / "s.db", method, write_docs=8, commit_every_seconds=inf, background=background
    ) as index:
        if background:
            index.begin_run()  # the writer thread takes a run's batches
        index.query_then_add(docs[:5], method.sketch(docs[:5]))
        if not background:
            assert len(index.store) == 0  # gathered, not written yet
        index.query_then_add(docs[5:9], method.sketch(docs[5:9]))
        if not background:  # the writer thread commits it soon after
            assert len(index.store) == 9  # the 8-document threshold was passed: one transaction
        index.query_then_add(docs[9:], method.sketch(docs[9:]))
    with PersistentIndex.open(tmp_path / "s.db") as index:
        assert len(index) == len(docs)  # close() wrote the rest
    assert _groups(tmp_path / "s.db") == [9, len(docs) - 9]  # the same transactions either way


def test_the_writer_thread_writes_the_same_rows(tmp_path: Path) -> None:
    """``dedup(index=...)`` with the writer thread stores the same chunk, segment and block
    rows, in the same write groups, as with the caller's thread writing."""
    docs = _corpus(200)
    rows = []
    for background in (False, True):
        path = tmp_path / f"{background}.db"
        with PersistentIndex(
            path,
            make_method("minhash", 0.7),
            write_docs=40,
            commit_every_seconds=float("inf"),
            background=background,
        ) as index:
            neardup.dedup(docs, index=index, batch_size=16)
        conn = sqlite3.connect(path)
        try:
            rows.append(
                [
                    conn.execute(q).fetchall()
                    for q in (
                        "SELECT id, n, data, checksum FROM chunks ORDER BY id",
                        "SELECT * FROM segs ORDER BY seg",
                        "SELECT * FROM blocks ORDER BY id",
                    )
                ]
            )
        finally:
            conn.close()
        assert _groups(path) == [48] * 5  # batches of 16 until 40 are gathered
    assert rows[0] == rows[1] and rows[0][0]


def test_a_failed_background_write_is_raised_in_the_caller(tmp_path: Path) -> None:
    """A write that fails on the writer thread is raised by the caller's next call, as a
    NeardupError; what was committed before it stays, nothing after it is written."""
    method = make_method("simhash")
    docs = _corpus(12)
    path = tmp_path / "s.db"
    index = PersistentIndex(path, method, write_docs=4, commit_every_seconds=float("inf"))
    index.begin_run()  # a new store: the batches are not searched, the writer encodes them
    index.query_then_add(docs[:4], method.sketch(docs[:4]))  # a group: written
    bad = [Document("\ud800", docs[4].text)]  # a key that is not valid Unicode
    index.query_then_add(bad, method.sketch(bad))
    index.query_then_add(docs[5:8], method.sketch(docs[5:8]))  # its group fails
    with pytest.raises(InputError, match="key"):
        for _ in range(100):  # raised at a later call once the writer got to it
            index.query_then_add(docs[8:9], method.sketch(docs[8:9]))
            index.flush()
    index.close()  # raised once: closing does not raise it again
    assert _visible(path) == 4


def _visible(path: Path) -> int:
    """The documents another connection sees: what was committed."""
    conn = sqlite3.connect(path)
    try:
        return committed_docs(conn)
    finally:
        conn.close()


def test_a_zero_time_budget_commits_every_batch_of_a_run(tmp_path: Path) -> None:
    """With commit_every_seconds=0 each batch of ``dedup(index=...)`` is committed before the
    next is drawn, however large ``write_docs`` is (what a slow run gets every few seconds)."""
    path = tmp_path / "s.db"
    docs = _corpus(40)
    seen: list[tuple[int, int]] = []

    def drawn() -> Iterator[Document]:
        for i, doc in enumerate(docs):
            if i and i % 4 == 0:  # drawing a batch's first document: the one before is done
                seen.append((i, _visible(path)))
            yield doc

    with PersistentIndex(
        path, make_method("simhash"), commit_every_seconds=0, background=False
    ) as index:
        neardup.dedup(drawn(), index=index, batch_size=4)
    assert seen and all(count == i for i, count in seen), seen
    assert _visible(path) == len(docs)
    # the writer thread commits each batch too, in its own transaction, soon after
    path = tmp_path / "b.db"
    with PersistentIndex(path, make_method("simhash"), commit_every_seconds=0) as index:
        neardup.dedup(docs, index=index, batch_size=4)
    assert _visible(path) == len(docs) and _groups(path) == [4] * (len(docs) // 4)


def test_query_then_add_commits_when_the_budget_is_spent(tmp_path: Path) -> None:
    method = make_method("simhash")
    docs = _corpus(12)
    path = tmp_path / "s.db"
    with PersistentIndex(path, method, commit_every_seconds=0, background=False) as index:
        for start in range(0, len(docs), 3):
            part = docs[start : start + 3]
            index.query_then_add(part, method.sketch(part))
            assert _visible(path) == start + len(part)


def test_add_with_a_big_write_size_commits_when_the_budget_is_spent(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    docs = _corpus(20)
    seen: list[tuple[int, int]] = []

    def drawn() -> Iterator[Document]:
        for i, doc in enumerate(docs):
            if i and i % 5 == 0:
                seen.append((i, _visible(path)))
            yield doc

    with PersistentIndex(path, make_method("simhash"), commit_every_seconds=0) as index:
        assert index.add(drawn(), batch_size=5, write_size=10**6) == len(docs)
    assert seen and all(count == i for i, count in seen), seen


def test_an_interrupted_run_keeps_every_gathered_batch(tmp_path: Path) -> None:
    """KeyboardInterrupt in the middle of ``dedup(index=...)``: leaving the ``with`` block
    writes the batches gathered so far (whole batches), as the CLI's Ctrl-C does."""
    path = tmp_path / "s.db"
    docs = _corpus(40)

    def interrupted() -> Iterator[Document]:
        for i, doc in enumerate(docs):
            if i == 20:
                raise KeyboardInterrupt
            yield doc

    inf = float("inf")
    index = PersistentIndex(path, make_method("simhash"), commit_every_seconds=inf)
    with pytest.raises(KeyboardInterrupt), index:
        neardup.dedup(interrupted(), index=index, batch_size=4)
    assert _visible(path) == 20


def test_an_interrupted_write_leaves_the_batch_for_close(tmp_path: Path) -> None:
    method = make_method("simhash")
    docs = _corpus(6)
    path = tmp_path / "s.db"
    index = PersistentIndex(path, method, commit_every_seconds=float("inf"), background=False)
    index.query_then_add(docs, method.sketch(docs))
    real = index.store.add_many

    def interrupted(*args: object, **kwargs: object) -> int:
        raise KeyboardInterrupt

    index.store.add_many = interrupted  # type: ignore[method-assign]
    with pytest.raises(KeyboardInterrupt):
        index.flush()
    index.store.add_many = real  # type: ignore[method-assign]
    index.close()
    assert _visible(path) == len(docs)


@pytest.mark.parametrize("bad", [-1.0, float("nan")])
def test_a_negative_time_budget_is_refused(tmp_path: Path, bad: float) -> None:
    with pytest.raises(ConfigError, match="commit_every_seconds"):
        PersistentIndex(tmp_path / "s.db", make_method("simhash"), commit_every_seconds=bad)


def test_stored_verification_agrees_with_the_exact_jaccard() -> None:
    method = make_method("minhash", 0.5)
    docs = _corpus(40, seed=9)
    blobs = method.blobs(method.sketch(docs))
    for i in range(0, len(docs) - 1):
        exact = method.compare(docs[i], docs[i + 1])[0]
        stored = method.blob_similarity(blobs[i], blobs[i + 1])[0]
        assert abs(exact - stored) < 0.02 and 0.0 <= stored <= 1.0
