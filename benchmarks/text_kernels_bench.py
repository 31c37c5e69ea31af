#!/usr/bin/env python3
"""The native text-front kernels (``neardup._native.jsonl``, ``.canonicalize``, ``.text``)
against the numba kernels they were ported from, on the same arrays, in one process.

    python benchmarks/text_kernels_bench.py [--mb 20] [--repeat 7]

Corpus: the machine's documentation pages (:mod:`corpus`, ``--mb`` MB), as JSON lines
written by ``json.dumps`` (non-ASCII as ``\\uXXXX`` escapes) and with raw UTF-8; the same
pages rewritten with accents, Greek, Cyrillic, CJK, compatibility and format characters
(``canonicalize_bench.build``'s ``mixed`` corpus) for the canonicalizer and the tokenizer.
Every kernel is called once first (numba compiles or loads it then), then timed best of
``--repeat``; both results are checked to be the same bits. Needs numba for the comparison
(the numba kernels are what is compared against); MB/s are of the input bytes, per second of
the calling thread's CPU time (every kernel here runs on that thread alone), so that other
work on a shared machine counts less than in wall time.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("NEARDUP_BACKGROUND_COMPILE", "0")
sys.path.insert(0, str(Path(__file__).parent))

import numpy as np

from neardup import _native  # type: ignore[attr-defined]
from neardup._kernels import tables
from neardup._kernels.canonicalize import tables as ctables
from neardup._kernels.spans import pack, shingle_spans


def best(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    out = fn()
    times = []
    for _ in range(repeat):
        t = time.thread_time()
        fn()
        times.append(time.thread_time() - t)
    return min(times), out


def same(a: Any, b: Any) -> None:
    if isinstance(a, np.ndarray):
        a, b = (a,), (b,)
    for x, y in zip(a, b, strict=True):
        if isinstance(x, bytes):
            assert x == y
        else:
            assert x.dtype == y.dtype and np.array_equal(x, y)


def row(name: str, size: int, native: float, numba: float) -> None:
    print(
        f"  {name:<34} native {size / native / 1e6:8.0f} MB/s  numba {size / numba / 1e6:8.0f} "
        f"MB/s  native/numba {numba / native:5.2f}x"
    )


def jsonl(docs: list[str], repeat: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for ascii_only in (True, False):
            path = Path(tmp) / "pages.jsonl"
            with open(path, "w", encoding="utf-8") as fh:
                for i, text in enumerate(docs):
                    fh.write(json.dumps({"id": str(i), "text": text}, ensure_ascii=ascii_only))
                    fh.write("\n")
            jsonl_file(path, "ascii (\\u escapes)" if ascii_only else "raw UTF-8", repeat)


def jsonl_file(path: Path, kind: str, repeat: int) -> None:
    from neardup._kernels.jsonl import fast, reference
    from neardup.io import DEFAULT_MAX_LINE_BYTES
    from neardup.packed import _chunks, _line_bounds

    keys = (np.frombuffer(b"id", np.uint8), np.frombuffer(b"text", np.uint8))
    chunks = [np.frombuffer(c, np.uint8)[:n] for c, n in _chunks(path, DEFAULT_MAX_LINE_BYTES, [0])]
    size = sum(len(c) for c in chunks)
    bounds = [_line_bounds(c, len(c)) for c in chunks]
    outs = [(np.empty(len(c), np.uint8), np.empty(len(c), np.uint8)) for c in chunks]

    def scan(kern: Any) -> Callable[[], list[Any]]:
        def run() -> list[Any]:
            found = []
            for c, (s, e), (t, i) in zip(chunks, bounds, outs, strict=True):
                status, toff, ioff, kind = kern.scan_lines(c, s, e, *keys, t, i)
                found += [status, toff, ioff, kind, t[: toff[-1]].tobytes()]
            return found

        return run

    def bounds_of(fn: Callable[[np.ndarray, int], Any]) -> Callable[[], list[Any]]:
        return lambda: [x for c in chunks for x in fn(c, len(c))]

    print(f"jsonl, {kind}: {size / 1e6:.1f} MB, {len(chunks)} chunks")
    tn, a = best(scan(_native.jsonl), repeat)
    tf, b = best(scan(fast), repeat)
    same(a, b)
    row("scan_lines", size, tn, tf)
    tn, a = best(bounds_of(_native.jsonl.line_bounds), repeat)
    tf, b = best(bounds_of(fast.line_bounds), repeat)
    tp, c = best(bounds_of(reference.line_bounds), repeat)
    same(a, b)
    same(a, c)
    row("line_bounds", size, tn, tf)
    print(f"  {'line_bounds, numpy twin':<34} numpy  {size / tp / 1e6:8.0f} MB/s")


def canonicalize(docs: dict[str, list[str]], repeat: int) -> None:
    from neardup._kernels.canonicalize import fast

    t = ctables.tables()
    for name, texts in docs.items():
        p = pack(texts)
        args = (
            p.buf, p.offsets, t["flags"], ctables.BIDI | ctables.FORMAT, t["ccc"], t["dec_off"],
            t["dec_data"], t["cf_off"], t["cf_data"], t["one_off"], t["one_data"],
            t["pair_keys"], t["pair_vals"], True, 1 << 20,
        )  # fmt: skip
        tn, a = best(lambda args=args: _native.canonicalize.canonicalize(*args), repeat)
        tf, b = best(lambda args=args: fast.canonicalize(*args), repeat)
        same(a, b)
        rewritten = float(np.mean(a[2] == 1))
        print(f"canonicalize, {name}: {len(p.buf) / 1e6:.1f} MB, {rewritten:.0%} rewritten")
        row("canonicalize", len(p.buf), tn, tf)


def text(docs: dict[str, list[str]], repeat: int) -> None:
    from neardup._kernels.text import fast

    classes, lower = tables.char_classes(), tables.simple_lower()
    for name, texts in docs.items():
        p = pack(texts)
        print(f"text, {name}: {len(p.buf) / 1e6:.1f} MB")
        for label, mask, min_bytes in (("word", 0x3F, 1), ("go", 0x1F, 1)):
            args = (p.buf, p.offsets, classes, lower, mask, min_bytes, True)
            tn, a = best(lambda args=args: _native.text.tokenize_words(*args), repeat)
            tf, b = best(lambda args=args: fast.tokenize_words(*args), repeat)
            same(a, b)
            row(f"tokenize_words ({label})", len(p.buf), tn, tf)
        toks = a
        from neardup._kernels.spans import Spans

        sh = shingle_spans(Spans(*toks), 5)
        tn, a = best(lambda sh=sh: _native.text.fnv1a_ranges(sh.buf, sh.starts, sh.ends), repeat)
        tf, b = best(lambda sh=sh: fast.fnv1a_ranges(sh.buf, sh.starts, sh.ends), repeat)
        same(a, b)
        hashed = int(np.sum(sh.ends - sh.starts))
        row("fnv1a_ranges (5-shingles)", hashed, tn, tf)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--mb", type=float, default=20.0)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--only", choices=["jsonl", "canonicalize", "text"], default=None)
    args = ap.parse_args()
    from canonicalize_bench import build

    from corpus import load_corpus

    if args.only in (None, "jsonl"):
        jsonl(load_corpus(args.mb, seed=7), args.repeat)
    if args.only in (None, "canonicalize", "text"):
        built = build(args.mb)
        built["pages"] = load_corpus(args.mb, seed=7)
        if args.only in (None, "canonicalize"):
            canonicalize({k: built[k] for k in ("mixed", "accented", "canonical")}, args.repeat)
        if args.only in (None, "text"):
            text({k: built[k] for k in ("pages", "mixed")}, args.repeat)


if __name__ == "__main__":
    main()
