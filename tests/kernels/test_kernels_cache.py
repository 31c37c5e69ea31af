"""The kernel cache: filled by other processes, it serves exactly what a fresh compile gives.

The evidence case (issue 16): ``LSHIndex.query`` after ``pairs()`` returned each hit several
times in a process that loaded its kernels from a cache written by earlier processes. These
tests write the cache in child processes (two at once, and one with a patched kernel global)
and check, in another child, that the fast kernels loaded from it agree with the reference.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("numba")

_SCRIPT = r"""
import json, os, sys
import numpy as np

if sys.argv[1] == "patched":  # a global patched before the first compile (numba freezes it)
    import neardup._kernels.minhash.fast as fast_minhash
    fast_minhash._MIX = np.uint64(12345)

from neardup._kernels import cache
from neardup.index.lsh import LSHIndex

rng = np.random.default_rng(0)
base = rng.integers(0, 2**32, size=(1, 128), dtype=np.uint64)
other = rng.integers(0, 2**32, size=(1, 128), dtype=np.uint64)
sigs = np.vstack([base, base, base, other])

def run():
    idx = LSHIndex(threshold=0.8, num_perm=128)
    idx.add_many(["a", "b", "c", "d"], sigs)
    pairs = [[a, b] for a, b, _ in idx.pairs()]
    hits = [key for key, _ in idx.query_many(sigs[:1])[0]]
    return {"pairs": pairs, "hits": hits, "keys": idx.band_keys(sigs).tolist()}

fast = run()
os.environ["NEARDUP_BACKEND"] = "reference"
print(json.dumps({"fast": fast, "ref": run(), "counts": cache.compiles()}))
"""


def _entries(index: Path) -> list[str]:
    """The data files a numba index file names (its format: a pickled version, then a
    pickled ``(stamp, {key: data file})``)."""
    import pickle

    with index.open("rb") as fh:
        pickle.load(fh)
        _, overloads = pickle.loads(fh.read())
    return list(overloads.values())


def _start(script: Path, mode: str, cache_dir: Path) -> subprocess.Popen[str]:
    env = dict(os.environ, NEARDUP_CACHE_DIR=str(cache_dir), NEARDUP_BACKEND="fast")
    return subprocess.Popen(
        [sys.executable, str(script), mode],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _result(proc: subprocess.Popen[str]) -> dict[str, Any]:
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    result: dict[str, Any] = json.loads(out)
    return result


def test_cache_written_by_other_processes_serves_correct_kernels(tmp_path: Path) -> None:
    script = tmp_path / "child.py"
    script.write_text(_SCRIPT, encoding="utf-8")
    cache_dir = tmp_path / "cache"
    # two processes fill an empty cache at the same time: under the lock no entry is lost
    # and every index entry has its own data file (no two signatures share a number)
    first, second = _start(script, "fill", cache_dir), _start(script, "fill", cache_dir)
    results = [_result(first), _result(second)]
    data = sorted(p.name for p in cache_dir.rglob("*.nbc"))
    assert data, "nothing was cached"
    indexed = sorted(name for index in cache_dir.rglob("*.nbi") for name in _entries(index))
    assert indexed == data
    assert sum(r["counts"]["compiled"] for r in results) >= len(data)
    for r in results:
        assert r["fast"] == r["ref"]
        assert r["fast"]["hits"] == ["a", "b", "c"]  # each hit once
        assert r["fast"]["pairs"] == [["a", "b"], ["a", "c"], ["b", "c"]]

    # a process that compiled band_keys while a global was patched writes its own entry...
    patched = _result(_start(script, "patched", cache_dir))
    assert patched["fast"]["keys"] != patched["ref"]["keys"]  # the patch reached the code
    assert patched["counts"]["compiled"] >= 1

    # ...which a later process never loads: it gets the cached kernels of the first two
    check = _result(_start(script, "check", cache_dir))
    assert check["counts"]["compiled"] == 0
    assert check["counts"]["loaded"] > 0
    assert check["fast"] == check["ref"]
    assert check["fast"]["hits"] == ["a", "b", "c"]


def test_build_key_follows_every_kernel_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from neardup._kernels import cache

    copy = tmp_path / "_kernels"
    for path in [*cache._PACKAGE.glob("*/*.py"), *cache._PACKAGE.glob("fast_*.py")]:
        target = copy / path.relative_to(cache._PACKAGE)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(path.read_bytes())
    monkeypatch.setattr(cache, "_PACKAGE", copy)
    key = cache.build_key.__wrapped__()
    assert key == cache.build_key()  # a faithful copy keys alike
    callee = copy / "xxh3" / "fast.py"  # inlined into the MinHash and SimHash kernels
    callee.write_text(callee.read_text(encoding="utf-8") + "\n# changed\n", encoding="utf-8")
    assert cache.build_key.__wrapped__() != key


def test_cache_root_follows_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from neardup._kernels import cache

    monkeypatch.setenv("NEARDUP_CACHE_DIR", "/somewhere/own")
    assert cache.cache_root() == Path("/somewhere/own")
    monkeypatch.delenv("NEARDUP_CACHE_DIR")
    monkeypatch.setenv("NUMBA_CACHE_DIR", "/somewhere/numba")
    assert cache.cache_root() == Path("/somewhere/numba/neardup")
    monkeypatch.delenv("NUMBA_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", "/somewhere/xdg")
    assert cache.cache_root() == Path("/somewhere/xdg/neardup")
