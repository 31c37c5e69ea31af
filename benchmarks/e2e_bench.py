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
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from corpus import load_corpus
from dedup_bench import build

HERE = Path(__file__).resolve().parent
WORD = re.compile(r"\w+")


def shingles(text: str) -> set[str]:
    toks = WORD.findall(text.lower())
    if len(toks) < 5:
        return {" ".join(toks)} if toks else set()
    return {" ".join(toks[i : i + 5]) for i in range(len(toks) - 4)}


def run(cmd: list[str], out_path: Path) -> dict[str, float]:
    """Run ``cmd`` with stdout to ``out_path``; wall, CPU and peak RSS of that process."""
    env = dict(os.environ)
    with open(out_path, "wb") as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.PIPE, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{cmd[:3]} failed:\n{err[-2000:]}")
    return {
        "wall": wall,
        "cpu": usage.ru_utime + usage.ru_stime,
        "rss_mb": usage.ru_maxrss / 1024,
    }


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
    with open(path, "w", encoding="utf-8") as fh:
        for i, text in enumerate(docs):
            fh.write(json.dumps({"id": str(i), "text": text}) + "\n")
    return path.stat().st_size


def bench(
    name: str,
    docs: list[str],
    truth: list[tuple[str, str]] | None,
    threshold: float,
    work: Path,
    skip_datasketch: bool,
) -> None:
    src = work / f"{name}.jsonl"
    size = write_jsonl(src, docs)
    print(
        f"\n## {name}: {len(docs):,} documents, {size / 1e6:.1f} MB of JSONL, threshold {threshold}"
    )
    neardup = [sys.executable, "-m", "neardup", "dedup", str(src), "--threshold", str(threshold)]
    contenders: list[tuple[str, list[str]]] = [
        ("neardup dedup --jobs 1", [*neardup, "--jobs", "1", "-q"]),
        ("neardup dedup --jobs 2", [*neardup, "--jobs", "2", "-q"]),
        (
            "rensa script",
            [sys.executable, str(HERE / "peers" / "rensa_dedup.py"), str(src), str(threshold)],
        ),
    ]
    if not skip_datasketch:
        contenders.append(
            (
                "datasketch script",
                [
                    sys.executable,
                    str(HERE / "peers" / "datasketch_dedup.py"),
                    str(src),
                    str(threshold),
                ],
            )
        )
    rows = []
    for label, cmd in contenders:
        out = work / f"{name}-{len(rows)}.out"
        figures = run(cmd, out)
        cl = clusters_of(out)
        figures["clusters"] = len(cl)
        figures["in_clusters"] = sum(len(c) for c in cl)
        figures["recall"] = recall(cl, truth) if truth is not None else float("nan")
        rows.append((label, figures))
    base = {label: f["wall"] for label, f in rows}
    print()
    print(
        "| command | wall s | CPU s | peak RSS MB | clusters | docs in clusters | recall | rensa wall / this |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for label, f in rows:
        rec = "" if f["recall"] != f["recall"] else f"{f['recall']:.3f}"
        print(
            f"| {label} | {f['wall']:.2f} | {f['cpu']:.2f} | {f['rss_mb']:.0f} | {f['clusters']:,} "
            f"| {f['in_clusters']:,} | {rec} | {base['rensa script'] / f['wall']:.2f} |"
        )
    j1, j2 = base["neardup dedup --jobs 1"], base["neardup dedup --jobs 2"]
    print(f"\n--jobs 2 / --jobs 1 speed-up: x{j1 / j2:.2f}")
    rss = {label: f["rss_mb"] for label, f in rows}
    print(
        f"peak RSS neardup --jobs 2 / rensa script: "
        f"{rss['neardup dedup --jobs 2'] / rss['rensa script']:.2f}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--docs", type=int, default=100_000)
    ap.add_argument("--pages-mb", type=float, default=18.0)
    ap.add_argument("--threshold", type=float, default=0.8)
    ap.add_argument("--skip-datasketch", action="store_true")
    ap.add_argument("--only", choices=["planted", "pages"], default=None)
    args = ap.parse_args()
    print(f"# whole processes, one after another; machine cores: {os.cpu_count()}")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        # warm the kernel cache once, so no contender pays a compile (users pay it at install)
        warm = work / "warm.jsonl"
        write_jsonl(warm, ["a b c d e f g h", "a b c d e f g h"])
        subprocess.run(
            [sys.executable, "-m", "neardup", "dedup", str(warm), "-q", "-t", "0.8"],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        if args.only in (None, "planted"):
            docs, planted = build(args.docs)
            sets = {}
            truth = []
            for a, b in planted:
                sa = sets.setdefault(a, shingles(docs[a]))
                sb = shingles(docs[b])
                if sa | sb and len(sa & sb) / len(sa | sb) >= args.threshold:
                    truth.append((str(a), str(b)))
            print(
                f"planted pairs with Jaccard >= {args.threshold}: {len(truth):,} of {len(planted):,}"
            )
            bench("planted", docs, truth, args.threshold, work, args.skip_datasketch)
        if args.only in (None, "pages"):
            pages = load_corpus(max_mb=args.pages_mb, seed=7)
            bench("pages", pages, None, args.threshold, work, args.skip_datasketch)


if __name__ == "__main__":
    main()
