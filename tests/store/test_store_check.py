"""A store that never answers wrong (issue 43): a tampered schema version is refused and left
as it was; ``Store.check`` / ``neardup index check`` find damage below the blob checksums (a
flipped B-tree byte, rows deleted or moved by hand, a corrupt counter); a cheap consistency
test on every open refuses counters the rows do not support; a clean store on read-only
media is queried."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from neardup.cli import main
from neardup.errors import StoreError
from neardup.store import Store

KIND, PARAMS = "minhash", "minhash-0123456789abcdef"
N = 200  # documents: 7 chunks, two segments of each role


def _store(path: Path, n: int = N) -> Path:
    rng = np.random.default_rng(7)
    with Store.open(path, kind=KIND, params=PARAMS) as store:
        for lo in range(0, n, 100):
            keys = [f"doc{i:04d}" for i in range(lo, min(n, lo + 100))]
            store.add_many(
                keys,
                [k.encode() * 3 for k in keys],
                rng.integers(0, 1 << 40, size=(len(keys), 4)),
            )
    return path


def _edit(path: Path, *sql: str) -> None:
    conn = sqlite3.connect(path)
    for statement in sql:
        conn.execute(statement)
    conn.commit()
    conn.close()


def _open(path: Path, **kw: object) -> Store:
    return Store.open(path, kind=KIND, params=PARAMS, create=False, **kw)  # type: ignore[arg-type]


def test_a_clean_store_checks_out(tmp_path: Path) -> None:
    path = _store(tmp_path / "s.db")
    with _open(path) as store:
        report = store.check()
        store.remove("doc0003")
        store.add("doc0004", b"again", np.array([1, 2, 3, 4]))
        assert store.check()["problems"] == []
        store.compact()
        after = store.check()
    assert report["problems"] == [] and report["docs"] == N
    assert after["problems"] == [] and after["docs"] == N - 1


@pytest.mark.parametrize("version", [0, 1, 2, 3, 4])
def test_a_tampered_schema_version_is_refused_and_left_alone(tmp_path: Path, version: int) -> None:
    path = _store(tmp_path / "s.db")
    before = path.read_bytes()
    _edit(path, f"PRAGMA user_version = {version}")
    tampered = path.read_bytes()
    with pytest.raises(StoreError, match="schema version"):
        _open(path)
    with pytest.raises(StoreError, match="schema version"):
        _open(path, readonly=True)
    assert path.read_bytes() == tampered != before  # nothing was migrated away
    _edit(path, "PRAGMA user_version = 5")  # the header put back: every document is there
    with _open(path) as store:
        assert len(store) == N and store.check()["problems"] == []


@pytest.mark.parametrize(
    "damage",
    [
        "DELETE FROM chunks WHERE id = (SELECT min(id) FROM chunks)",
        "DELETE FROM chunks WHERE id = (SELECT max(id) FROM chunks)",
        "UPDATE meta SET value = '999' WHERE name = 'docs'",
        "UPDATE meta SET value = '3' WHERE name = 'docs'",
        "UPDATE meta SET value = '-1' WHERE name = 'docs'",
        "UPDATE meta SET value = '0' WHERE name = 'last_doc'",
        "DELETE FROM segs WHERE role = 1",
        "INSERT INTO gone (doc) VALUES (40)",
    ],
)
def test_counters_the_rows_do_not_support_are_refused_on_open(tmp_path: Path, damage: str) -> None:
    path = _store(tmp_path / "s.db")
    _edit(path, damage)
    with pytest.raises(StoreError, match="damaged"):
        _open(path, readonly=True)
    code, _, err = _cli("index", "stats", "--index", path)
    assert code == 1 and "damaged" in err  # never the old count


@pytest.mark.parametrize(
    "damage",
    [
        "DELETE FROM blocks WHERE id = (SELECT min(id) FROM blocks)",
        "UPDATE blocks SET id = id + 1 WHERE id = (SELECT max(id) FROM blocks)",
        "UPDATE chunks SET id = id + 100 WHERE id = (SELECT min(id) FROM chunks)",
        "DELETE FROM chunks WHERE id = (SELECT min(id) FROM chunks)",
        "UPDATE meta SET value = '999' WHERE name = 'sketch_bytes'",
        "UPDATE segs SET entries = entries + 1 WHERE seg = (SELECT min(seg) FROM segs)",
        "INSERT INTO blocks (id, data, checksum) VALUES (999 << 32, x'00', 0)",
    ],
)
def test_check_finds_rows_deleted_or_moved_by_hand(tmp_path: Path, damage: str) -> None:
    path = _store(tmp_path / "s.db")
    _edit(path, damage)
    code, out, err = _cli("index", "check", "--index", path)
    assert code == 1 and "damaged" in err, (out, err)


def _page_of(path: Path, table: str) -> tuple[int, int]:
    conn = sqlite3.connect(path)
    root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)).fetchone()
    size = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.close()
    return int(root[0]), int(size)


@pytest.mark.parametrize("table", ["blocks", "chunks"])
def test_check_finds_a_flipped_byte_in_a_btree_page(tmp_path: Path, table: str) -> None:
    path = _store(tmp_path / "s.db", n=2000)
    page, size = _page_of(path, table)
    data = bytearray(path.read_bytes())
    at = (page - 1) * size + (100 if page == 1 else 0)
    data[at + 3] ^= 0x01  # the page's cell count: cells (and the pages below them) vanish
    path.write_bytes(bytes(data))
    code, _, err = _cli("index", "check", "--index", path)
    assert code == 1 and "damaged" in err, err


def _cli(*args: object) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def test_index_check_cli(tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text(
        "".join(
            json.dumps({"id": f"d{i}", "text": f"text {i} with words"}) + "\n" for i in range(9)
        )
    )
    db = tmp_path / "i.db"
    assert _cli("index", "add", src, "-q", "--index", db)[0] == 0
    code, out, err = _cli("index", "check", "--index", db)
    assert code == 0, err
    report = json.loads(out)
    assert report["ok"] is True and report["docs"] == 9 and report["problems"] == []
    code, _, err = _cli("index", "check", "--index", tmp_path / "missing.db")
    assert code == 1 and "no store" in err


def test_a_clean_store_on_read_only_media_is_queried(
    tmp_path: Path, make_readonly: Callable[[Path], Path]
) -> None:
    folder = tmp_path / "media"
    folder.mkdir()
    src = tmp_path / "in.jsonl"
    src.write_text(
        "".join(
            json.dumps({"id": f"d{i}", "text": f"the text {i} of words"}) + "\n" for i in range(9)
        )
    )
    db = folder / "i.db"
    assert _cli("index", "add", src, "-q", "--index", db)[0] == 0
    assert sorted(p.name for p in folder.iterdir()) == ["i.db"]  # checkpointed at close
    make_readonly(folder)
    code, out, err = _cli("index", "query", src, "--index", db)
    assert code == 0, err
    assert len(out.splitlines()) == 9
    code, out, err = _cli("index", "stats", "--index", db)
    assert code == 0 and json.loads(out)["docs"] == 9, err
    code, out, err = _cli("index", "check", "--index", db)
    assert code == 0 and json.loads(out)["ok"], err
    code, _, err = _cli("index", "add", src, "-q", "--index", db)
    assert code == 1 and "read-only" in err
    assert sorted(p.name for p in folder.iterdir()) == ["i.db"]


KILLED_WRITER = textwrap.dedent(
    """
    import os, signal, sys
    import numpy as np
    from neardup.store import Store
    s = Store.open(sys.argv[1], kind="minhash", params="minhash-0123456789abcdef")
    s.add_many(["late"], [b"x"], np.array([[1, 2, 3, 4]]))
    os.kill(os.getpid(), signal.SIGKILL)  # committed to the WAL, never checkpointed
    """
)


def _killed_in(script: str, db: Path) -> None:
    """Run ``script`` on ``db`` in a child process and check that it died by SIGKILL."""
    src = str(Path(__file__).resolve().parents[2] / "src")
    done = subprocess.run(
        [sys.executable, "-c", script, str(db)],
        env={**os.environ, "PYTHONPATH": src},
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == -9, done.stderr.decode()


def test_unfinished_wal_on_read_only_media_is_refused(
    tmp_path: Path, make_readonly: Callable[[Path], Path]
) -> None:
    folder = tmp_path / "media"
    folder.mkdir()
    db = _store(folder / "s.db", n=40)
    _killed_in(KILLED_WRITER, db)
    assert (folder / "s.db-wal").stat().st_size > 0
    make_readonly(folder)
    with pytest.raises(StoreError, match="-wal"):
        _open(db, readonly=True)


KILLED_BULK_WRITER = textwrap.dedent(
    """
    import os, signal, sys
    import numpy as np
    from neardup.store import Store
    s = Store.open(sys.argv[1], kind="minhash", params="minhash-0123456789abcdef", bulk=True)
    s.add_many(["a"], [b"x"], np.array([[1, 2, 3, 4]]))

    def trace(sql):
        if sql.startswith("INSERT INTO meta"):  # mid-write: the journal holds its undo record
            os.kill(os.getpid(), signal.SIGKILL)

    s._conn.set_trace_callback(trace)
    s.add_many(["late"], [b"y"], np.array([[5, 6, 7, 8]]))
    """
)


def test_unfinished_bulk_write_on_read_only_media_is_refused(
    tmp_path: Path, make_readonly: Callable[[Path], Path]
) -> None:
    """A bulk load (rollback journal) killed mid-write leaves a hot journal, which an
    ``immutable`` open would ignore: refused on read-only media, rolled back elsewhere."""
    folder = tmp_path / "media"
    folder.mkdir()
    db = folder / "s.db"
    _killed_in(KILLED_BULK_WRITER, db)
    assert (folder / "s.db-journal").stat().st_size > 0
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)
    make_readonly(folder)
    with pytest.raises(StoreError, match="-journal"):
        _open(db, readonly=True)
    with _open(copy / "s.db") as store:  # where it can be written: the write is rolled back
        assert len(store) == 1 and store.check()["ok"]
