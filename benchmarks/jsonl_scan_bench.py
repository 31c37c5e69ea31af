"""The packed JSONL scanner against ``json.loads`` per line (what a user's script does), on
the same file, and optionally against another source tree's scanner.

The scanner is timed on whole 1 MiB-sized chunks as ``neardup.packed`` hands them to it (line
bounds found, text and id fields pulled into buffers); ``json.loads`` decodes every line and
takes the same two fields. Best of ``--repeat`` runs, in this process (kernels loaded first).
The texts are checked to be the same bytes.

    python benchmarks/jsonl_scan_bench.py [FILE.jsonl ...] [--mb 20] [--repeat 7]
        [--baseline TREE]

Without files it writes the machine's documentation pages (``corpus.load_corpus``, ``--mb``
MB) as JSONL twice, as ``json.dumps`` writes them by default (non-ASCII as ``\\uXXXX``
escapes) and with ``ensure_ascii=False`` (raw UTF-8), and measures both.

With ``--baseline TREE`` the scanner of ``TREE/src`` (its kernel cache in ``TREE/.kcache``)
runs the same measurement in a child process, for a before/after ratio from one run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def scan_seconds(path: Path, repeat: int) -> tuple[float, int, bytes]:
    """Best seconds of one scan of the whole file, its bytes, and the texts' bytes (joined)."""
    from neardup._kernels import engine
    from neardup.io import DEFAULT_MAX_LINE_BYTES
    from neardup.packed import _chunks, _line_bounds

    kern = engine.kernels("jsonl")
    chunks = [  # the pieces the packed reader scans
        np.frombuffer(chunk, np.uint8)[:size]
        for chunk, size in _chunks(path, DEFAULT_MAX_LINE_BYTES, [0])
    ]
    id_key = np.frombuffer(b"id", np.uint8)
    text_key = np.frombuffer(b"text", np.uint8)
    bounds = [_line_bounds(c, len(c)) for c in chunks]
    outs = [(np.empty(len(c), np.uint8), np.empty(len(c), np.uint8)) for c in chunks]

    def once() -> list[bytes]:
        texts = []
        for c, (starts, ends), (tbuf, ibuf) in zip(chunks, bounds, outs, strict=True):
            _, toff, _, _ = kern.scan_lines(c, starts, ends, id_key, text_key, tbuf, ibuf)
            texts.append(tbuf[: toff[-1]].tobytes())
        return texts

    got = b"".join(once())
    best = min(_timed(once) for _ in range(repeat))
    return best, sum(len(c) for c in chunks), got


def _timed(fn: object) -> float:
    t = time.perf_counter()
    fn()  # type: ignore[operator]
    return time.perf_counter() - t


def loads_seconds(path: Path, repeat: int) -> tuple[float, bytes]:
    """Best seconds of ``json.loads`` over every line (text and id taken), and the texts."""
    lines = path.read_bytes().splitlines()

    def once() -> list[str]:
        texts = []
        for line in lines:
            if line.strip():
                rec = json.loads(line)
                texts.append(rec["text"])
                str(rec.get("id"))
        return texts

    got = "".join(once()).encode("utf-8", "surrogatepass")
    return min(_timed(once) for _ in range(repeat)), got


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("paths", type=Path, nargs="*")
    ap.add_argument("--mb", type=float, default=20.0, help="pages written when no file is given")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--baseline", type=Path, default=None, help="another source tree")
    ap.add_argument("--only-scan", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.paths:
        for path in args.paths:
            measure(path, args)
        return
    from corpus import load_corpus

    docs = load_corpus(max_mb=args.mb, seed=7)
    with tempfile.TemporaryDirectory() as tmp:
        for ascii_only in (True, False):
            path = Path(tmp) / f"pages-{'ascii' if ascii_only else 'utf8'}.jsonl"
            with open(path, "w", encoding="utf-8") as fh:
                for i, text in enumerate(docs):
                    rec = {"id": str(i), "text": text}
                    fh.write(json.dumps(rec, ensure_ascii=ascii_only) + "\n")
            measure(path, args)
            print()


def measure(path: Path, args: argparse.Namespace) -> None:
    """One file: this scanner, the baseline's (if asked for) and json.loads."""
    scan, size, texts = scan_seconds(path, args.repeat)
    if args.only_scan:  # the baseline's child process
        print(json.dumps({"seconds": scan}))
        return
    loads, loaded = loads_seconds(path, args.repeat)
    if loaded != texts:
        raise SystemExit("the scanner's texts differ from json.loads's")
    print(f"{path.name}: {size / 1e6:.1f} MB, best of {args.repeat}")
    print("| reader | ms | ns per byte | json.loads / this |")
    print("|---|---:|---:|---:|")
    rows = [("neardup scanner", scan)]
    if args.baseline is not None:
        tree = args.baseline.resolve()
        env = dict(
            os.environ, PYTHONPATH=str(tree / "src"), NEARDUP_CACHE_DIR=str(tree / ".kcache")
        )
        cmd = [sys.executable, __file__, str(path), "--repeat", str(args.repeat), "--only-scan"]
        out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
        rows.append((f"baseline scanner ({tree.name})", json.loads(out)["seconds"]))
    rows.append(("json.loads per line", loads))
    for label, sec in rows:
        print(f"| {label} | {1000 * sec:.1f} | {1e9 * sec / size:.2f} | {loads / sec:.1f} |")
    if args.baseline is not None:
        print(f"\nthis scanner / baseline: x{rows[1][1] / scan:.2f} faster")


if __name__ == "__main__":
    main()
