"""The native kernels of ``neardup lines``, ``neardup substrings``, PDQ and static-embedding
pooling against the numba kernels they replace (``neardup._kernels.<family>.fast``), in one
process, on the same inputs, with the outputs checked equal.

Corpus: the documents of ``benchmarks/corpus_bench.py`` (real pages with planted copies, a
shared header and footer, a repeated passage). Timings are CPU seconds of the process
(``time.process_time``: every thread, so a parallel kernel counts its whole work), best of
``--repeat``; numba's kernels are compiled (or loaded from the cache) before timing.

Run: ``python benchmarks/native_corpus_kernels_bench.py --docs 20000`` (release build of the
crate: ``maturin develop --release``).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from corpus_bench import build

from neardup import _native  # type: ignore[attr-defined]
from neardup._kernels.engine import hash_spans
from neardup._kernels.spans import Spans, pack


def best(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    times, out = [], None
    for _ in range(repeat):
        t0 = time.process_time()
        out = fn()
        times.append(time.process_time() - t0)
    return min(times), out


def equal(a: Any, b: Any) -> bool:
    if isinstance(a, tuple | list):
        return len(a) == len(b) and all(equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    return bool(a == b)


ROWS: list[tuple[str, float, float, bool]] = []


def row(name: str, native: Callable[[], Any], numba: Callable[[], Any], repeat: int) -> None:
    numba()  # compiled or loaded before timing
    t_nat, got = best(native, repeat)
    t_nb, want = best(numba, repeat)
    same = equal(got, want)
    ROWS.append((name, t_nat, t_nb, same))
    print(f"{name:<44} native {t_nat * 1e3:9.1f} ms  numba {t_nb * 1e3:9.1f} ms  "
          f"x{t_nb / max(t_nat, 1e-9):5.2f}  same={same}", flush=True)  # fmt: skip


def lines_rows(texts: list[str], repeat: int) -> None:
    from neardup._kernels.lines import fast

    nat = _native.lines
    p = pack(texts)
    buf, off = p.buf, p.offsets
    row("lines.line_spans", lambda: nat.line_spans(buf, off), lambda: fast.line_spans(buf, off),
        repeat)  # fmt: skip
    starts, ends, ts, te, doc = nat.line_spans(buf, off)
    solid = ts < te
    keys = Spans(buf, ts[solid], te[solid], off)
    hashes, _ = hash_spans(keys, "xxh3_64")
    docs = doc[solid]

    def table(twin: Any) -> Any:
        t = twin.UnitTable()
        for a in range(0, len(hashes), 60_000):
            t.add(hashes[a : a + 60_000], docs[a : a + 60_000])
        return t.lookup(hashes), len(t), t.at_least(50)

    row("lines.UnitTable add + lookup", lambda: table(nat), lambda: table(fast), repeat)
    drop_unit = table(nat)[0] >= 50
    keep = np.ones(len(starts), bool)
    keep[np.flatnonzero(solid)[drop_unit]] = False
    args = (buf, off, starts, ends, doc, keep)
    row("lines.kept_text", lambda: nat.kept_text(*args), lambda: fast.kept_text(*args), repeat)
    every = np.arange(len(texts), dtype=np.int64)
    row("lines.json_strings (every document)", lambda: nat.json_strings(buf, off, every),
        lambda: fast.json_strings(buf, off, every), repeat)  # fmt: skip
    unit_off = np.zeros(len(texts) + 1, np.int64)
    np.cumsum(np.bincount(docs, minlength=len(texts)), out=unit_off[1:])
    jargs = (buf, off, drop_unit, unit_off, False)
    row("lines.kept_json", lambda: nat.kept_json(*jargs), lambda: fast.kept_json(*jargs), repeat)


def repeats_rows(texts: list[str], repeat: int, min_length: int) -> None:
    from neardup._kernels.repeats import fast, winnow_width

    nat = _native.repeats
    text = np.frombuffer(b"\xff".join(t.encode() for t in texts), np.uint8).copy()
    row(f"repeats.window_mask (L={min_length})", lambda: nat.window_mask(text, min_length, 0),
        lambda: fast.window_mask(text, min_length, 0), repeat)  # fmt: skip
    half = len(text) // 2
    row(f"repeats.window_mask (L={min_length}, prefix)",
        lambda: nat.window_mask(text, min_length, half),
        lambda: fast.window_mask(text, min_length, half), repeat)  # fmt: skip
    k = min_length - winnow_width(min_length) + 1
    row("repeats.anchors", lambda: nat.anchors(text, min_length, k),
        lambda: fast.anchors(text, min_length, k), repeat)  # fmt: skip
    an = nat.anchors(text, min_length, k)
    row("repeats.regions", lambda: nat.regions(text, *an, min_length, k),
        lambda: fast.regions(text, *an, min_length, k), repeat)  # fmt: skip
    s, e = nat.regions(text, *an, min_length, k)
    row("repeats.gather", lambda: nat.gather(text, s, e), lambda: fast.gather(text, s, e), repeat)
    sub, at = nat.gather(text, s, e)
    m = sub == 0x65
    row("repeats.scatter_counts", lambda: nat.scatter_counts(m, at, s, e, len(text)),
        lambda: fast.scatter_counts(m, at, s, e, len(text)), repeat)  # fmt: skip
    try:
        import pydivsufsort
    except ImportError:
        return
    part = text[:4_000_000].copy()
    sa = pydivsufsort.divsufsort(part)
    row("repeats.repeat_mask (4 MB suffix array)",
        lambda: nat.repeat_mask(part, sa, min_length, 0),
        lambda: fast.repeat_mask(part, sa, min_length, 0), repeat)  # fmt: skip


def pdq_rows(repeat: int) -> None:
    from neardup._kernels.pdq import fast

    nat = _native.pdq
    rng = np.random.default_rng(0)
    for h, w in ((256, 256), (768, 1024), (3000, 4000)):
        small = rng.integers(0, 256, (h // 16, w // 16, 3), dtype=np.uint8)
        rgb = np.repeat(np.repeat(small, 16, axis=0), 16, axis=1)
        rgb = (rgb + rng.integers(0, 8, rgb.shape, dtype=np.uint8)).astype(np.uint8)
        row(f"pdq.pdq_rgb {h}x{w}", lambda rgb=rgb: nat.pdq_rgb(rgb),
            lambda rgb=rgb: fast.pdq_rgb(rgb), repeat)  # fmt: skip


def pooling_rows(repeat: int) -> None:
    from neardup._kernels.pooling import fast

    nat = _native.pooling
    rng = np.random.default_rng(0)
    table = rng.standard_normal((30_000, 256)).astype(np.float32)
    lengths = rng.integers(20, 400, 20_000)
    offsets = np.zeros(len(lengths) + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    ids = rng.integers(0, 30_000, int(offsets[-1])).astype(np.int64)
    row("pooling.mean_pool 20k docs x 210 tokens x 256",
        lambda: nat.mean_pool(table, ids, offsets, 100, True),
        lambda: fast.mean_pool(table, ids, offsets, np.int64(100), True), repeat)  # fmt: skip
    wlen = rng.integers(1, 4, 50_000)
    word_offsets = np.zeros(len(wlen) + 1, np.int64)
    np.cumsum(wlen, out=word_offsets[1:])
    word_ids = rng.integers(0, 30_000, int(word_offsets[-1])).astype(np.int64)
    text_words = np.zeros(20_001, np.int64)
    np.cumsum(rng.integers(10, 300, 20_000), out=text_words[1:])
    index = rng.integers(0, 50_000, int(text_words[-1])).astype(np.int64)
    row("pooling.expand_words 20k texts",
        lambda: nat.expand_words(index, text_words, word_ids, word_offsets, 512),
        lambda: fast.expand_words(index, text_words, word_ids, word_offsets, np.int64(512)),
        repeat)  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--docs", type=int, default=20_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--min-length", type=int, default=100)
    args = ap.parse_args()
    docs = build(args.docs, 0.2)
    texts = [d.text or "" for d in docs]
    mb = sum(len(t.encode()) for t in texts) / 1e6
    print(f"corpus: {len(texts)} docs, {mb:.1f} MB; CPU ms, best of {args.repeat}")
    lines_rows(texts, args.repeat)
    repeats_rows(texts, args.repeat, args.min_length)
    pdq_rows(args.repeat)
    pooling_rows(args.repeat)
    print("\n| kernel | native ms | numba ms | numba / native | same bits |")
    print("|---|---:|---:|---:|---|")
    for name, t_nat, t_nb, same in ROWS:
        print(f"| {name} | {t_nat * 1e3:.1f} | {t_nb * 1e3:.1f} | {t_nb / max(t_nat, 1e-9):.2f} "
              f"| {same} |")  # fmt: skip


if __name__ == "__main__":
    main()
