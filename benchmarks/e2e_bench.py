"""Whole-process dedup: the ``neardup dedup`` command against the scripts users write instead.

Each contender runs as its own process on the same JSONL file, so process start, reading,
tokenizing, sketching, indexing, verification, clustering and writing are all counted:

- ``neardup dedup IN.jsonl --threshold T`` with ``--jobs 1`` and ``--jobs 2``;
- ``peers/rensa_dedup.py``: regex tokens, 5-shingles, rensa ``RMinHash`` + ``RMinHashLSH``,
  union-find (the 30-line script of issue #16);
- ``peers/datasketch_dedup.py``: the same with datasketch ``MinHash`` + ``MinHashLSH``.

Two corpora: ``planted`` (N documents of ~100 words cut from the machine's text, a tenth of
them edited copies with 2-10% word edits) and ``pages`` (whole documentation pages from the
machine, 1-20 KB each, as they are). For each run: wall and CPU seconds, peak RSS of the
process, clusters, documents in clusters, and (``planted``) the recall of the planted pairs
whose true Jaccard of word 5-shingles is at least T. Ratios are the peer's wall time over
neardup's, from the same run. Run:

    python benchmarks/e2e_bench.py [--docs 100000] [--pages-mb 18] [--skip-datasketch]
        [--work DIR] [--contenders j1,j2,rensa,datasketch] [--rounds R] [--baseline TREE]

With ``--work DIR`` the corpora (and the planted pairs) are written there once and reused by
later runs with the same options; ``--rounds R`` runs the contenders interleaved R times and
reports each one's median run; ``--baseline TREE`` also runs the command from another
source tree (``git archive main src | tar -x -C TREE``, its own kernel cache in
``TREE/.kcache``) as ``baseline --jobs 1/2``, for a before/after from one run. The table
is followed by whether every neardup command (baseline included) printed byte-identical
clusters in every round. ``e2e_stages.py`` times one run's stages.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from dedup_bench import build

from corpus import load_corpus

HERE = Path(__file__).resolve().parent
WORD = re.compile(r"\w+")


def shingles(text: str) -> set[str]:
    toks = WORD.findall(text.lower())
    if len(toks) < 5:
        return {" ".join(toks)} if toks else set()
    return {" ".join(toks[i : i + 5]) for i in range(len(toks) - 4)}


# Peak RSS is read in a small launcher process, not in this one: a child's ru_maxrss starts at
# its parent's RSS at fork (Linux copies the high-water mark through fork and exec), so a child
# of this process, which holds the corpus and the clusters, would report at least this
# process's size. The launcher (python -S, ~8 MB) spawns the command, waits for it and writes
# its wall, CPU and peak RSS to a pipe; 8 MB is therefore the floor of every figure.
_LAUNCHER = """
import os, sys, time
t0 = time.perf_counter()
pid = os.posix_spawn(sys.argv[2], sys.argv[2:], os.environ)
_, status, u = os.wait4(pid, 0)
wall = time.perf_counter() - t0
figures = (os.waitstatus_to_exitcode(status), wall, u.ru_utime + u.ru_stime, u.ru_maxrss)
os.write(int(sys.argv[1]), " ".join(map(str, figures)).encode())
"""


#: Compile the imported neardup package's modules to bytecode (what `pip install` does).
_COMPILE_PACKAGE = (
    "import compileall, os, neardup; "
    "compileall.compile_dir(os.path.dirname(neardup.__file__), quiet=1)"
)


def run(
    cmd: list[str], out_path: Path, env_extra: dict[str, str] | None = None
) -> dict[str, float]:
    """Run ``cmd`` with stdout to ``out_path``; wall, CPU and peak RSS of that process."""
    env = dict(os.environ)
    env.update(env_extra or {})
    exe = cmd[0] if os.sep in cmd[0] else (shutil.which(cmd[0]) or cmd[0])
    read_end, write_end = os.pipe()
    with open(out_path, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-S", "-c", _LAUNCHER, str(write_end), exe, *cmd[1:]],
            stdout=out,
            stderr=subprocess.PIPE,
            env=env,
            pass_fds=(write_end,),
        )
        os.close(write_end)
        err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
        proc.wait()
    with os.fdopen(read_end, "rb") as figures:
        code, wall, cpu, rss = figures.read().decode().split()
    if proc.returncode != 0 or int(code) != 0:
        raise SystemExit(f"{cmd[:3]} failed:\n{err[-2000:]}")
    return {"wall": float(wall), "cpu": float(cpu), "rss_mb": int(rss) / 1024}


def clusters_of(path: Path) -> list[list[str]]:
    out = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            line = line.strip()
            if line:
                out.append([str(m) for m in json.loads(line)["members"]])
    return out


def recall(clusters: list[list[str]], truth: list[tuple[str, str]]) -> float:
    label = {m: n for n, c in enumerate(clusters) for m in c}
    if not truth:
        return float("nan")
    hit = sum(1 for a, b in truth if a in label and label.get(a) == label.get(b))
    return hit / len(truth)


def write_jsonl(path: Path, docs: list[str]) -> int:
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        for i, text in enumerate(docs):
            fh.write(json.dumps({"id": str(i), "text": text}) + "\n")
    tmp.replace(path)
    return path.stat().st_size


def count_lines(path: Path) -> int:
    with open(path, "rb") as fh:
        return sum(1 for line in fh if line.strip())


CONTENDERS = ("base-j1", "base-j2", "j1", "j2", "rensa", "datasketch")


def bench(
    name: str,
    src: Path,
    truth: list[tuple[str, str]] | None,
    threshold: float,
    work: Path,
    chosen: tuple[str, ...],
    rounds: int,
    baseline: Path | None,
) -> None:
    size = src.stat().st_size
    print(
        f"\n## {name}: {count_lines(src):,} documents, {size / 1e6:.1f} MB of JSONL, "
        f"threshold {threshold}; load average before: {os.getloadavg()[0]:.2f}"
    )
    neardup = [sys.executable, "-m", "neardup", "dedup", str(src), "--threshold", str(threshold)]
    every: dict[str, tuple[str, list[str]]] = {
        "base-j1": ("baseline --jobs 1", [*neardup, "--jobs", "1", "-q"]),
        "base-j2": ("baseline --jobs 2", [*neardup, "--jobs", "2", "-q"]),
        "j1": ("neardup dedup --jobs 1", [*neardup, "--jobs", "1", "-q"]),
        "j2": ("neardup dedup --jobs 2", [*neardup, "--jobs", "2", "-q"]),
        "rensa": (
            "rensa script",
            [sys.executable, str(HERE / "peers" / "rensa_dedup.py"), str(src), str(threshold)],
        ),
        "datasketch": (
            "datasketch script",
            [sys.executable, str(HERE / "peers" / "datasketch_dedup.py"), str(src), str(threshold)],
        ),
    }
    contenders = [
        every[c] for c in CONTENDERS if c in chosen and (baseline or not c.startswith("base"))
    ]
    # the baseline runs the same command from another source tree, with its own kernel cache
    base_env = {"PYTHONPATH": str(baseline / "src")} if baseline is not None else None
    runs: dict[str, list[dict[str, float]]] = {label: [] for label, _ in contenders}
    outputs: dict[str, set[str]] = {}  # each neardup command's output digests
    for _ in range(rounds):
        for label, cmd in contenders:
            out = work / f"{name}-{label.replace(' ', '_')}.out"
            figures = run(cmd, out, base_env if label.startswith("baseline") else None)
            if "neardup" in label or label.startswith("baseline"):
                outputs.setdefault(label, set()).add(hashlib.sha256(out.read_bytes()).hexdigest())
            cl = clusters_of(out)
            figures["clusters"] = len(cl)
            figures["in_clusters"] = sum(len(c) for c in cl)
            figures["recall"] = recall(cl, truth) if truth is not None else float("nan")
            runs[label].append(figures)
    rows = [
        (label, sorted(rs, key=lambda f: f["wall"])[len(rs) // 2]) for label, rs in runs.items()
    ]
    base = {label: f["wall"] for label, f in rows}
    cpu = {label: f["cpu"] for label, f in rows}
    print()
    print(
        "| command | wall s | CPU s | peak RSS MB | clusters | docs in clusters | recall "
        "| rensa wall / this | rensa CPU / this |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    ref = "rensa script"
    for label, f in rows:
        rec = "" if f["recall"] != f["recall"] else f"{f['recall']:.3f}"
        vs = f"{base[ref] / f['wall']:.2f} | {cpu[ref] / f['cpu']:.2f}" if ref in base else "- | -"
        print(
            f"| {label} | {f['wall']:.2f} | {f['cpu']:.2f} | {f['rss_mb']:.0f} | {f['clusters']:,} "
            f"| {f['in_clusters']:,} | {rec} | {vs} |"
        )
    one, two = "neardup dedup --jobs 1", "neardup dedup --jobs 2"
    if one in base and two in base:
        print(f"\n--jobs 2 / --jobs 1 speed-up: x{base[one] / base[two]:.2f}")
    rss = {label: f["rss_mb"] for label, f in rows}
    for label in (one, two):
        if label in rss and ref in rss:
            print(f"peak RSS {label} / rensa script: {rss[label] / rss[ref]:.2f}")
    if outputs:
        same = len(set().union(*outputs.values())) == 1
        print(
            f"clusters byte-identical across {', '.join(outputs)} and rounds: "
            f"{'yes' if same else 'NO'}"
        )
    print(f"load average after: {os.getloadavg()[0]:.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--docs", type=int, default=100_000)
    ap.add_argument("--pages-mb", type=float, default=18.0)
    ap.add_argument("--threshold", type=float, default=0.8)
    ap.add_argument("--skip-datasketch", action="store_true")
    ap.add_argument("--only", choices=["planted", "pages"], default=None)
    ap.add_argument("--work", type=Path, default=None, help="keep and reuse the corpora here")
    ap.add_argument("--contenders", default=",".join(CONTENDERS), help="comma-separated subset")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument(
        "--baseline",
        type=Path,
        default=None,
        help="a checkout (its src/) to run as 'baseline' too, e.g. `git archive main src`",
    )
    args = ap.parse_args()
    chosen = tuple(c for c in args.contenders.split(",") if c)
    if args.skip_datasketch:
        chosen = tuple(c for c in chosen if c != "datasketch")
    unknown = set(chosen) - set(CONTENDERS)
    if unknown:
        raise SystemExit(f"unknown contenders {sorted(unknown)}; pick from {CONTENDERS}")
    print(f"# whole processes, one after another; machine cores: {os.cpu_count()}")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        store = args.work if args.work is not None else work
        store.mkdir(parents=True, exist_ok=True)
        # each tree's modules are compiled to bytecode as `pip install` leaves them (under
        # PYTHONDONTWRITEBYTECODE, set on these machines, a source tree would be compiled
        # anew in every run)
        pyc_cmd = [sys.executable, "-c", _COMPILE_PACKAGE]
        for tree in (None, args.baseline):
            env = dict(os.environ)
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            if tree is not None:
                env.update(PYTHONPATH=str(tree / "src"))
            subprocess.run(pyc_cmd, check=True, stdout=subprocess.DEVNULL, env=env)
        if args.only in (None, "planted"):
            src = store / f"planted-{args.docs}.jsonl"
            truth_file = store / f"planted-{args.docs}-truth-{args.threshold}.json"
            if src.exists() and truth_file.exists():
                saved = json.loads(truth_file.read_text())
                truth, n_planted = [tuple(p) for p in saved["truth"]], saved["planted"]
            else:
                docs, planted = build(args.docs)
                sets: dict[int, set[str]] = {}
                truth = []
                for a, b in planted:
                    sa = sets.setdefault(a, shingles(docs[a]))
                    sb = shingles(docs[b])
                    if sa | sb and len(sa & sb) / len(sa | sb) >= args.threshold:
                        truth.append((str(a), str(b)))
                n_planted = len(planted)
                write_jsonl(src, docs)
                truth_file.write_text(json.dumps({"truth": truth, "planted": n_planted}))
            print(
                f"planted pairs with Jaccard >= {args.threshold}: {len(truth):,} of {n_planted:,}"
            )
            bench("planted", src, truth, args.threshold, work, chosen, args.rounds, args.baseline)  # type: ignore[arg-type]
        if args.only in (None, "pages"):
            src = store / f"pages-{args.pages_mb}.jsonl"
            if not src.exists():
                write_jsonl(src, load_corpus(max_mb=args.pages_mb, seed=7))
            bench("pages", src, None, args.threshold, work, chosen, args.rounds, args.baseline)


if __name__ == "__main__":
    main()
