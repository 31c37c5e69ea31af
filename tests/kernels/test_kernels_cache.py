"""The kernel cache: filled by other processes, it serves exactly what a fresh compile gives.

The evidence case (issue 16): ``LSHIndex.query`` after ``pairs()`` returned each hit several
times in a process that loaded its kernels from a cache written by earlier processes: numba
names each compiled function after a per-process counter, two writers had given numba's int64
sort and argsort helpers one name, and the reader linked query's sort to pairs()'s argsort.
These tests write the cache in child processes (two at once with those two workloads, and one
with a patched kernel global) and check, in another child, that the fast kernels loaded from
it agree with the reference, and that no cached symbol carries a counter's number.
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
import json, os, pickle, re, sys
import numpy as np

import neardup._kernels.lsh.fast  # makes kernels (compiles nothing)
import numba
from numba.core.registry import cpu_target

mode = sys.argv[1]
if mode == "patched":  # a global patched before the first compile (numba freezes it)
    import neardup._kernels.minhash.fast as fast_minhash
    fast_minhash._MIX = np.uint64(12345)

from neardup._kernels import cache
from neardup._kernels.minhash import fast as minhash_fast, reference as minhash_reference
from neardup.index.lsh import LSHIndex
from neardup.sketch.minhash import fold32

def symbols(module):
    return [g.name for part in (module.functions, module.global_variables) for g in part]

# the first compile of this process: its symbols must not name another process's compiles
first = numba.njit(lambda a: np.sort(a))
first(np.arange(3))
names = [n for n in symbols(first.overloads[first.signatures[0]].library._final_module)
         if re.search(r"B\d+v\d+", n)]

rng = np.random.default_rng(0)
base = rng.integers(0, 2**32, size=(1, 128), dtype=np.uint64)
sigs = np.vstack([base, base, base, rng.integers(0, 2**32, size=(37, 128), dtype=np.uint64)])
sigs[5:, :90] = base[0, :90]  # more near-duplicates: hits with several estimates
keys = [f"k{i}" for i in range(len(sigs))]

def run(parts):
    idx = LSHIndex(threshold=0.5, num_perm=128)
    idx.add_many(keys, sigs)
    # the band keys of the numba twin itself (LSHIndex's come from the compiled core)
    mh = minhash_fast if os.environ["NEARDUP_BACKEND"] == "fast" else minhash_reference
    out = {"keys": mh.band_keys(np.ascontiguousarray(fold32(sigs[:2])), 16, 8).tolist()}
    if "pairs" in parts:  # bucket_pairs: its library holds numba's argsort of int64
        out["pairs"] = [[a, b] for a, b, _ in idx.pairs()]
    if "query" in parts:  # query_rows: np.sort of int64, same helper name when numbered alike
        out["hits"] = [[k, e] for k, e in idx.query_many(sigs[:1])[0]]
    return out

parts = {"query": ["query"], "pairs": ["pairs"]}.get(mode, ["pairs", "query"])
fast = run(parts)
result = {"fast": fast, "counts": cache.compiles(), "names": names,
          "locked": cache._lock().lock_counter}
if mode == "check":  # every cached symbol carries a random id (none numbered by a counter)
    import llvmlite.binding as llvm
    low = 0
    for nbc in cache.kernel_dir().rglob("*.nbc"):
        data = pickle.loads(nbc.read_bytes())
        module = llvm.parse_bitcode(data[0][2][1])
        low += sum(uid < cache._RANDOM_ID for uid in cache._symbol_ids(iter(symbols(module))))
    result["low_ids"] = low
os.environ["NEARDUP_BACKEND"] = "reference"
result["ref"] = run(parts)
print(json.dumps(result))
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
    # two processes fill an empty cache at the same time, one through LSHIndex.query (numba's
    # sort of int64 inside), one through pairs() (its argsort): the evidence case of issue 16,
    # where a third process that ran pairs() then query() linked query's sort to the argsort
    first, second = _start(script, "query", cache_dir), _start(script, "pairs", cache_dir)
    results = [_result(first), _result(second)]
    data = sorted(p.name for p in cache_dir.rglob("*.nbc"))
    assert data, "nothing was cached"
    # under the lock no entry is lost and no two signatures share a data file
    indexed = sorted(name for index in cache_dir.rglob("*.nbi") for name in _entries(index))
    assert indexed == data
    for r in results:
        assert r["fast"] == r["ref"]
        assert r["locked"] == 0  # every lock level taken for a compile was given back
        assert r["counts"]["unsaved"] == 0
    # numba numbers symbols per process: two processes' first compiles must not share a name
    assert results[0]["names"] and not set(results[0]["names"]) & set(results[1]["names"])

    # a process that compiled band keys while a global was patched writes its own entry...
    patched = _result(_start(script, "patched", cache_dir))
    assert patched["fast"]["keys"] != patched["ref"]["keys"]  # the patch reached the code
    assert patched["counts"]["compiled"] >= 1

    # ...which a later process never loads; it loads pairs() first, then query(), each
    # written by another process, and gets exactly the reference results
    check = _result(_start(script, "check", cache_dir))
    assert check["counts"]["compiled"] == 0
    assert check["counts"]["loaded"] > 0
    assert check["low_ids"] == 0
    assert check["fast"] == check["ref"]
    hits = check["fast"]["hits"]
    assert [k for k, _ in hits[:3]] == ["k0", "k1", "k2"]  # each hit once, best first
    assert len({k for k, _ in hits}) == len(hits)
    assert [e for _, e in hits] == sorted((e for _, e in hits), reverse=True)


def test_symbol_ids_read_from_mangled_names() -> None:
    from neardup._kernels import cache

    # the helper that two processes of issue 16 both numbered 136 (sort and argsort)
    name = (
        "_ZN5numba4misc9quicksort19make_quicksort_impl12_3clocals_3e9partitionB4v136"
        "B42c8tJTIeFIjxB2IKSgI4CrvQClcaMQ5hEEUSJJgA_3dE5ArrayIxLi1E1C7mutable7alignedE"
    )
    assert list(cache._symbol_ids(iter([name, "NRT_decref", ".const.picklebuf.ab12"]))) == [136]
    random_name = name.replace("B4v136", f"B20v{cache._RANDOM_ID + 5}")
    assert list(cache._symbol_ids(iter([random_name]))) == [cache._RANDOM_ID + 5]


def test_ids_are_random_once_kernels_exist() -> None:
    from numba.core.bytecode import FunctionIdentity

    import neardup._kernels.sets.fast  # noqa: F401  (makes kernels: installs the ids)

    ids = [next(FunctionIdentity._unique_ids) for _ in range(100)]
    assert min(ids) >= 1 << 62 and max(ids) < 1 << 63
    assert len(set(ids)) == len(ids)


def test_build_key_follows_every_kernel_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from neardup._kernels import cache

    copy = tmp_path / "_kernels"
    for path in cache._keyed_sources():
        target = copy / path.relative_to(cache._PACKAGE)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(path.read_bytes())
    monkeypatch.setattr(cache, "_PACKAGE", copy)
    key = cache.build_key.__wrapped__()
    assert key == cache.build_key()  # a faithful copy keys alike
    callee = copy / "xxh3" / "fast.py"  # inlined into the MinHash and SimHash kernels
    callee.write_text(callee.read_text(encoding="utf-8") + "\n# changed\n", encoding="utf-8")
    assert cache.build_key.__wrapped__() != key
    own = copy / "cache.py"  # the cache's own logic decides what is stored: it keys too
    own.write_text(own.read_text(encoding="utf-8") + "\n# changed\n", encoding="utf-8")
    changed = cache.build_key.__wrapped__()
    assert changed != key


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
