"""Fuzzy hashes side by side in one process, on one corpus of files from this machine.

* CTPH: ``neardup.fuzzy.ctph_many`` / ``ctph`` against ppdeep (pure Python), against the
  ``ssdeep`` binary (libfuzzy) on the same files when it is on the PATH (Debian's ``ssdeep``
  package), timed by the CPU time of its process, and against the ssdeep C binding only if
  ``import ssdeep`` already works.
* TLSH: the ``neardup.fuzzy.tlsh`` wrapper against bare ``tlsh.hash`` (its overhead).
* Comparing: ``ctph_compare`` against ``ppdeep.compare``; TLSH all-pairs by the packed numpy
  distance against a ``tlsh.diff`` loop; ``CTPHIndex.pairs`` against all pairs.

Every digest and distance is checked for equality with the peer before timing is reported.

    .venv/bin/python benchmarks/fuzzy_bench.py [--mb 8] [--rounds 3]
"""

from __future__ import annotations

import argparse
import itertools
import os
import random
import shutil
import statistics
import subprocess
import sysconfig
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOTS = [
    ("/usr/share/common-licenses", False),
    ("/usr/share/doc", False),
    (sysconfig.get_paths()["stdlib"], False),
    ("/usr/bin", True),
]


def load_corpus(total_mb: float, seed: int = 7) -> list[bytes]:
    """Files of 256 B .. 256 KB (text and binaries), shuffled, up to ``total_mb`` MB."""
    paths: list[Path] = []
    for root, binaries in ROOTS:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if d not in ("__pycache__", "site-packages"))
            for name in sorted(filenames):
                p = Path(dirpath) / name
                if p.is_symlink() or not p.is_file():
                    continue
                size = p.stat().st_size
                if 256 <= size <= 256 * 1024 and (binaries or not name.endswith(".gz")):
                    paths.append(p)
    random.Random(seed).shuffle(paths)
    docs: list[bytes] = []
    total = 0
    for p in paths:
        try:
            data = p.read_bytes()
        except OSError:
            continue
        docs.append(data)
        total += len(data)
        if total >= total_mb * 1e6:
            break
    return docs


def best_of(fn: Callable[[], Any], rounds: int) -> tuple[float, Any]:
    """Median wall time of ``rounds`` runs and the last result."""
    times = []
    result = None
    for _ in range(rounds):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), result


def _ssdeep_binary(binary: str, docs: list[bytes], rounds: int) -> tuple[float, float, list[str]]:
    """CPU seconds of ``ssdeep -s -c`` over ``docs`` written as files (the child's user +
    system time, median of ``rounds``), of ``ctph_many`` reading the same files, and the
    binary's digests in order."""
    from neardup.fuzzy import ctph_many

    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for i, data in enumerate(docs):
            path = Path(tmp) / f"{i:06d}"
            path.write_bytes(data)
            paths.append(str(path))
        out = b""
        binary_times, ours_times = [], []
        for _ in range(rounds):
            before = os.times()
            out = subprocess.run(
                [binary, "-s", "-c", *paths], capture_output=True, check=True
            ).stdout
            after = os.times()
            binary_times.append(
                after.children_user
                - before.children_user
                + after.children_system
                - before.children_system
            )
            t0 = time.process_time()
            ctph_many([Path(p).read_bytes() for p in paths])
            ours_times.append(time.process_time() - t0)
    # lines after the header: digest,"path"
    digests = [line.rsplit(",", 1)[0] for line in out.decode().splitlines()[1:]]
    return statistics.median(binary_times), statistics.median(ours_times), digests


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=8.0, help="corpus size in MB")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()

    import ppdeep
    import tlsh as pytlsh

    from neardup._kernels.engine import native_families
    from neardup.fuzzy import (
        CTPHIndex,
        TLSHIndex,
        TLSHParams,
        ctph,
        ctph_compare,
        ctph_many,
        tlsh,
        tlsh_many,
    )

    docs = load_corpus(args.mb)
    n_bytes = sum(map(len, docs))
    mb = n_bytes / 1e6
    native = "native" if "ctph" in native_families() else "reference"
    print(f"# corpus: {len(docs)} files, {mb:.1f} MB; CTPH kernels: {native}")

    rows: list[tuple[str, float, str]] = []

    t0 = time.perf_counter()
    ctph(b"warm up the kernel" * 100)
    print(f"first CTPH call: {time.perf_counter() - t0:.3f} s")

    t_many, ours = best_of(lambda: ctph_many(docs), args.rounds)
    t_one, ours_one = best_of(lambda: [ctph(d) for d in docs], args.rounds)
    t_pp, theirs = best_of(lambda: [ppdeep.hash(d) for d in docs], max(1, args.rounds // 2))
    assert ours == ours_one == theirs, "CTPH digests differ from ppdeep"
    rows += [
        ("neardup ctph_many (packed batch)", mb / t_many, f"{t_pp / t_many:.0f}x ppdeep"),
        ("neardup ctph per call", mb / t_one, f"{t_pp / t_one:.0f}x ppdeep"),
        ("ppdeep.hash", mb / t_pp, "1x"),
    ]
    binary = shutil.which("ssdeep")
    if binary is None:
        print("ssdeep binary (libfuzzy) is not on the PATH: skipped")
    else:
        t_bin, t_ours_files, from_bin = _ssdeep_binary(binary, docs, args.rounds)
        assert from_bin == ours, "CTPH digests differ from the ssdeep binary"
        rows += [
            ("ssdeep binary (libfuzzy), CPU", mb / t_bin, "1x"),
            (
                "neardup ctph_many of the files, CPU",
                mb / t_ours_files,
                f"{t_bin / t_ours_files:.2f}x the ssdeep binary",
            ),
        ]
    try:
        import ssdeep  # type: ignore[import-not-found]
    except ImportError:
        print("ssdeep (C binding) is not importable: skipped")
    else:
        t_ss, ss = best_of(lambda: [ssdeep.hash(d) for d in docs], args.rounds)
        assert ss == ours, "CTPH digests differ from ssdeep"
        rows.append(("ssdeep.hash (libfuzzy)", mb / t_ss, f"neardup = {t_ss / t_many:.2f}x"))

    valid = [d for d in docs if pytlsh.hash(d) != "TNULL"]
    vmb = sum(map(len, valid)) / 1e6
    t_bare, bare = best_of(lambda: [pytlsh.hash(d) for d in valid], args.rounds * 2)
    t_wrap, wrapped = best_of(lambda: [tlsh(d) for d in valid], args.rounds * 2)
    lenient = TLSHParams(invalid="none")
    t_tmany, wrapped_many = best_of(lambda: tlsh_many(valid, params=lenient), args.rounds * 2)
    assert bare == wrapped == wrapped_many, "TLSH digests differ from py-tlsh"
    rows += [
        ("py-tlsh tlsh.hash (bare)", vmb / t_bare, "1x"),
        ("neardup tlsh per call", vmb / t_wrap, f"overhead {100 * (t_wrap / t_bare - 1):+.1f}%"),
        ("neardup tlsh_many", vmb / t_tmany, f"overhead {100 * (t_tmany / t_bare - 1):+.1f}%"),
    ]

    print(f"\n{'hashing':<36} {'MB/s':>9}  ratio")
    for name, speed, note in rows:
        print(f"{name:<36} {speed:>9.1f}  {note}")

    # ------------------------------------------------------------------ comparing
    digests = ours[:1500]
    pairs = list(itertools.combinations(range(len(digests)), 2))
    sample = random.Random(3).sample(pairs, min(20000, len(pairs)))
    t_cmp, s1 = best_of(lambda: [ctph_compare(digests[i], digests[j]) for i, j in sample], 1)
    t_ppc, s2 = best_of(
        lambda: [ppdeep.compare(digests[i], digests[j]) for i, j in sample[:2000]], 1
    )
    t_ppc *= len(sample) / 2000
    s3 = [ctph_compare(digests[i], digests[j], scoring="ppdeep") for i, j in sample[:2000]]
    assert s3 == s2, "ppdeep-flavour scores differ from ppdeep"
    differ = sum(a != b for a, b in zip(s1, s2, strict=False))
    print(f"\n{'comparing':<36} {'pairs/s':>12}  ratio")
    print(
        f"{'neardup ctph_compare':<36} {len(sample) / t_cmp:>12,.0f}  {t_ppc / t_cmp:.1f}x ppdeep"
    )
    print(f"{'ppdeep.compare':<36} {len(sample) / t_ppc:>12,.0f}  1x")
    print(f"  (libfuzzy scoring differs from ppdeep.compare on {differ} of 2000 sampled pairs)")

    index = CTPHIndex()
    t_idx, found = best_of(lambda: (index.add_many(digests), list(index.pairs(1)))[1], 1)
    n_pairs = len(pairs)
    t_all = t_cmp / len(sample) * n_pairs
    print(
        f"{'CTPHIndex add + pairs(1)':<36} {n_pairs / t_idx:>12,.0f}  "
        f"{t_all / t_idx:.0f}x exhaustive ctph_compare ({len(found)} pairs of {n_pairs:,})"
    )

    tdigests = bare[:1500]
    tpairs = list(itertools.combinations(range(len(tdigests)), 2))
    t_diff, exact = best_of(
        lambda: [pytlsh.diff(tdigests[i], tdigests[j]) for i, j in tpairs[:200_000]], 1
    )
    t_diff *= len(tpairs) / min(len(tpairs), 200_000)  # the loop timed at most 200k pairs
    tindex = TLSHIndex()
    tindex.add_many(tdigests)
    t_tall, got = best_of(lambda: list(tindex.pairs(10_000)), args.rounds)
    assert [d for _, _, d in got[:200_000]] == exact, "TLSH distances differ from tlsh.diff"
    t_t100, near = best_of(lambda: list(tindex.pairs(100)), args.rounds)
    print(
        f"{'TLSHIndex.pairs (no cutoff)':<36} {len(tpairs) / t_tall:>12,.0f}  "
        f"{t_diff / t_tall:.1f}x tlsh.diff loop"
    )
    print(
        f"{'TLSHIndex.pairs(100) (pruned)':<36} {len(tpairs) / t_t100:>12,.0f}  "
        f"{t_diff / t_t100:.1f}x tlsh.diff loop ({len(near)} pairs)"
    )
    print(f"{'py-tlsh tlsh.diff loop':<36} {len(tpairs) / t_diff:>12,.0f}  1x")


if __name__ == "__main__":
    main()
