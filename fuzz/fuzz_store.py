"""Fuzz opening and reading store files: ``Store.open`` on mutated SQLite databases (a valid
neardup store, a store of another schema version, a foreign SQLite file), then every read.

Run: ``python fuzz/fuzz_store.py -runs=20000``.
"""

from __future__ import annotations

import functools
import sqlite3
from pathlib import Path

from _harness import attempt, main, mutate, pick, scratch_dir

KIND = "simhash"
PARAMS = "simhash-0123456789abcdef"


@functools.cache
def scratch() -> Path:
    """A private folder for the database files."""
    return scratch_dir("neardup-fuzz-store-")


@functools.cache
def seeds() -> tuple[bytes, ...]:
    """A small valid store (rollback journal, so the file holds everything), and variants."""
    import numpy as np

    from neardup.store import Store

    folder = scratch()
    path = folder / "seed.db"
    with Store.open(path, kind=KIND, params=PARAMS) as store:
        keys = [f"doc{i}" for i in range(20)]
        store.add_many(keys, [k.encode() * 2 for k in keys], np.arange(60).reshape(20, 3))
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=DELETE")
    conn.close()
    valid = path.read_bytes()
    newer = folder / "newer.db"
    newer.write_bytes(valid)
    conn = sqlite3.connect(newer)
    conn.execute("PRAGMA user_version=99")
    conn.close()
    foreign = folder / "foreign.db"
    conn = sqlite3.connect(foreign)
    conn.execute("CREATE TABLE t (x)")
    conn.commit()
    conn.close()
    return (valid, newer.read_bytes(), foreign.read_bytes())


def _use(path: Path) -> None:
    import numpy as np

    from neardup.store import Store

    with Store.open(path, kind=KIND, params=PARAMS, create=False, timeout=1.0) as store:
        len(store)
        store.get("doc3")
        store.get_meta("doc3")
        store.candidates(np.array([1, 5, 40], dtype=np.int64))
        for keys, blobs in store.iter_sketches(batch=7):
            assert len(keys) == len(blobs)
        store.stats()
        store.add("new", b"x", np.array([1, 2, 3]))
        store.remove("doc1")


def target(data: bytes) -> None:
    """Write the mutated seed to a file, open it as a store and use it."""
    seed, rest = pick(seeds(), data)
    path = scratch() / "fuzz.db"
    for suffix in ("-wal", "-shm", "-journal"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    path.write_bytes(mutate(seed, rest))
    attempt(_use, path)


if __name__ == "__main__":
    main(target)
