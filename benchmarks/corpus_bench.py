"""Corpus stages side by side: exact, lines and substrings against datatrove's equivalents on
the same corpus, and each stage per document against the minhash method.

Corpus: real documents from this machine (benchmarks/corpus.py) with planted exact copies,
near copies (word edits), a shared header/footer on a share of the documents (boilerplate
lines) and a repeated passage (for substrings). Timings are CPU seconds of the process
(``time.process_time``), best of ``--repeat``.

Peers (datatrove, installed from the ``bench`` dependency group):
- exact: ExactDedupSignature -> ExactFindDedups -> ExactDedupFilter (xxhash64 of the text).
- lines: SentenceDedupSignature -> SentenceFindDedups -> SentenceDedupFilter with
  ``split_sentences=False, n_sentences=1`` (line spans; sha1-64 hashes: datatrove 0.10's
  xxhash path fails on str input). Its rule differs: it drops every
  line already seen in an earlier document, not lines in >= N documents; the time is the
  comparable part.
- substrings: datatrove's ExactSubstr steps and text-dedup's suffix array both drive Lee et
  al.'s Rust tool (google-research/deduplicate-text-datasets), and datatrove's also needs a
  Hugging Face tokenizer download. The tool is compared directly when ``--google-bin`` names
  a built ``dedup_dataset`` binary (it is not a Python package; crates.io is not reachable
  here, see benchmarks/RESULTS.md for how it was built); without it the line says it was
  not run.

``--whole-process`` runs each command as its own process on one JSONL file and reports the
CPU seconds of the whole process (``wait4``: user + system, children included), which load
from other programs hardly changes: ``neardup dedup`` (minhash, ``--jobs 1``), ``neardup
dedup --keep first --output`` (the same, writing the kept copy: issue 42's yardstick for
``lines`` and ``substrings``, which also write one), ``neardup dedup --method exact``,
``neardup lines``, ``neardup substrings``, and with ``--google-bin``
the tool's ``make`` + ``self-similar`` + ``collect`` (their byte ranges are then cut out in
this script, uncounted).

Run: ``python benchmarks/corpus_bench.py --docs 20000`` or
``python benchmarks/corpus_bench.py --docs 5000 --whole-process --google-bin PATH``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import neardup
from corpus import edit_words, load_corpus
from neardup.corpus.exact import exact_first
from neardup.corpus.lines import LinesSummary, remove_frequent_units
from neardup.corpus.substrings import SubstringSummary, remove_repeated_substrings
from neardup.io import Document
from neardup.methods import make_method

HEADER = "Home | About | Products | Contact us | Log in"
FOOTER = "Copyright 2024 Example Media. All rights reserved. Privacy policy. Cookie settings."
PASSAGE = (
    "This article is provided for informational purposes only and does not constitute legal, "
    "financial or medical advice; always consult a qualified professional before acting on it."
)


def build(n_docs: int, copy_rate: float, seed: int = 4) -> list[Document]:
    rng = random.Random(seed)
    base = load_corpus(max_mb=n_docs * 0.004 + 2)
    out: list[str] = []
    i = 0
    while len(out) < n_docs:
        r = rng.random()
        if out and r < copy_rate:
            out.append(out[rng.randrange(len(out))])  # exact copy
            continue
        text = base[i % len(base)]
        i += 1
        if out and r < copy_rate + 0.1:
            text = edit_words(out[rng.randrange(len(out))], 0.03, rng)  # near copy
        elif rng.random() < 0.4:
            text = f"{HEADER}\n{text}\n{FOOTER}"
        if rng.random() < 0.1:
            text = f"{text}\n{PASSAGE}"
        out.append(text)
    return [Document(str(k), t) for k, t in enumerate(out)]


def best(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """Best CPU seconds of this process (every stage and peer here runs in one thread)."""
    times, result = [], None
    for _ in range(repeat):
        t0 = time.process_time()
        result = fn()
        times.append(time.process_time() - t0)
    return min(times), result


def datatrove_exact(docs: list[Document]) -> int:
    from datatrove.data import Document as DtDoc
    from datatrove.pipeline.dedup.exact_dedup import (
        ExactDedupConfig,
        ExactDedupFilter,
        ExactDedupSignature,
        ExactFindDedups,
    )

    def content(doc: DtDoc) -> bytes:
        # (with postponed annotations datatrove sees a string here and hashes raw bytes)
        return doc.text.encode("utf-8")

    config = ExactDedupConfig(content_getter=content)
    with tempfile.TemporaryDirectory() as tmp:
        data = [DtDoc(text=d.text or "", id=d.id) for d in docs]
        ExactDedupSignature(f"{tmp}/sigs", config).run(iter(data))
        ExactFindDedups(f"{tmp}/sigs", f"{tmp}/dups", config).run()
        kept = sum(1 for _ in ExactDedupFilter(f"{tmp}/dups", config).run(iter(data)))
    return len(docs) - kept


def datatrove_lines(docs: list[Document]) -> int:
    from datatrove.data import Document as DtDoc
    from datatrove.pipeline.dedup.sentence_dedup import (
        SentDedupConfig,
        SentenceDedupFilter,
        SentenceDedupSignature,
        SentenceFindDedups,
    )
    from datatrove.utils.hashing import HashConfig

    # datatrove 0.10's xxhash path hashes str unencoded and fails; its sha1 path works
    config = SentDedupConfig(
        n_sentences=1,
        split_sentences=False,
        min_doc_words=0,
        min_num_sentences=0,
        hash_config=HashConfig(hash_fc="sha1", precision=64),
    )
    with tempfile.TemporaryDirectory() as tmp:
        data = [DtDoc(text=d.text or "", id=d.id) for d in docs]
        SentenceDedupSignature(f"{tmp}/sigs", config=config).run(iter(data))
        SentenceFindDedups(f"{tmp}/sigs", f"{tmp}/dups", config=config).run()
        out = list(SentenceDedupFilter(f"{tmp}/dups", config=config).run(iter(data)))
    return sum(len(d.text) for d in docs) - sum(len(d.text) for d in out)


def _run(cmd: list[str], env: dict[str, str] | None = None) -> float:
    """CPU seconds (user + system) of ``cmd`` as a whole process; stdout discarded."""
    from e2e_bench import run

    with tempfile.NamedTemporaryFile() as out:
        return run(cmd, Path(out.name), env)["cpu"]


def google_substrings(docs: list[Document], binary: Path, min_length: int) -> tuple[float, int]:
    """Lee et al.'s tool on the corpus: CPU seconds of make + self-similar + collect, and the
    bytes its ranges remove (it strikes every copy, the first too)."""
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "corpus.bin"
        starts: list[tuple[int, int]] = []
        with open(data, "wb") as fh:
            pos = 0
            for i, d in enumerate(docs):
                head = b"\xff\xff" + struct.pack("<I", i)  # their load_dataset.py separator
                body = (d.text or "").encode("utf-8", "surrogatepass")
                fh.write(head + body)
                starts.append((pos + len(head), pos + len(head) + len(body)))
                pos += len(head) + len(body)
        cache = Path(tmp) / "cache"
        exe = str(binary)
        cpu = _run([exe, "make", "--data-file", str(data)])
        cpu += _run(
            [exe, "self-similar", "--data-file", str(data), "--length-threshold",
             str(min_length), "--cache-dir", str(cache), "--num-threads", "1"]
        )  # fmt: skip
        out = Path(tmp) / "ranges.txt"
        from e2e_bench import run

        cpu += run(
            [exe, "collect", "--data-file", str(data), "--cache-dir", str(cache),
             "--length-threshold", str(min_length)],
            out,
        )["cpu"]  # fmt: skip
        text = out.read_text().split("out\n", 1)
        ranges = [tuple(map(int, line.split())) for line in text[1].split("\n") if line.strip()]
        removed = 0
        for a, b in ranges if len(text) > 1 else []:
            for lo, hi in starts:  # text bytes only (their separators are not the corpus)
                if hi > a and lo < b:
                    removed += min(hi, b) - max(lo, a)
        return cpu, removed


def whole_process(docs: list[Document], args: argparse.Namespace) -> None:
    """Each stage as one process over one JSONL file: CPU seconds, per document vs minhash."""
    n = len(docs)
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "corpus.jsonl"
        with open(src, "w", encoding="utf-8") as fh:
            for d in docs:
                fh.write(json.dumps({"id": d.id, "text": d.text}) + "\n")
        nd = [sys.executable, "-m", "neardup"]
        subprocess.run([*nd, "warmup"], check=True, capture_output=True)  # kernels compiled
        rows = [
            ("neardup dedup (minhash) --jobs 1", [*nd, "dedup", str(src), "--jobs", "1", "-q"]),
            (
                "neardup dedup --keep first --output --jobs 1",
                [
                    *nd,
                    "dedup",
                    str(src),
                    "--keep",
                    "first",
                    "-o",
                    f"{tmp}/d.jsonl",
                    "--jobs",
                    "1",
                    "-q",
                ],
            ),
            (
                "neardup dedup --method exact",
                [*nd, "dedup", str(src), "--method", "exact", "--jobs", "1", "-q"],
            ),
            (
                f"neardup lines --min-docs {args.min_docs}",
                [
                    *nd,
                    "lines",
                    str(src),
                    "-o",
                    f"{tmp}/l.jsonl",
                    "--min-docs",
                    str(args.min_docs),
                    "-q",
                ],
            ),
            (
                f"neardup substrings --min-length {args.min_length}",
                [
                    *nd,
                    "substrings",
                    str(src),
                    "-o",
                    f"{tmp}/s.jsonl",
                    "--min-length",
                    str(args.min_length),
                    "-q",
                ],
            ),
        ]
        envs: dict[str, dict[str, str] | None] = {label: None for label, _ in rows}
        if args.baseline:  # the same exact / lines / substrings commands from another tree
            for label, cmd in rows[2:5]:
                rows.append((f"{label} (baseline)", cmd))
                envs[f"{label} (baseline)"] = {"PYTHONPATH": str(Path(args.baseline).resolve())}
        small = Path(tmp) / "small.jsonl"  # compiles every command's kernels, untimed
        small.write_text("".join(src.read_text(encoding="utf-8").splitlines(True)[:300]))
        for label, cmd in rows:
            _run([str(small) if c == str(src) else c for c in cmd], envs[label])
            for out in ("l", "s", "d"):
                Path(f"{tmp}/{out}.jsonl").unlink(missing_ok=True)
        runs: dict[str, list[float]] = {label: [] for label, _ in rows}
        load = [os.getloadavg()[0]]
        for _ in range(args.repeat):  # interleaved: A B C D A B C D ...
            for label, cmd in rows:
                runs[label].append(_run(cmd, envs[label]))
                for out in ("l", "s", "d"):
                    Path(f"{tmp}/{out}.jsonl").unlink(missing_ok=True)
            load.append(os.getloadavg()[0])
        cpu = {label: min(r) for label, r in runs.items()}
        base = cpu[rows[0][0]]
        kept = cpu[rows[1][0]]  # dedup --keep first --output: the yardstick of issue 42
        print(
            f"\nwhole process, CPU s (user + system), best of {args.repeat} interleaved rounds, "
            f"{n} documents; load average (1 min) {' '.join(f'{x:.1f}' for x in load)}"
        )
        for label, r in runs.items():
            print(f"  {label}: {' '.join(f'{x:.2f}' for x in r)}")
        print(
            "| command | CPU s | ms per document | minhash CPU / this "
            "| dedup --keep first CPU / this |"
        )
        print("|---|---:|---:|---:|---:|")
        for label, c in cpu.items():
            print(f"| {label} | {c:.2f} | {1000 * c / n:.3f} | {base / c:.2f} | {kept / c:.2f} |")
        if args.google_bin:
            ours = SubstringSummary(args.min_length)
            sum(
                1
                for _ in remove_repeated_substrings(docs, min_length=args.min_length, summary=ours)
            )
            g_cpu, g_removed = min(
                (google_substrings(docs, Path(args.google_bin), args.min_length)
                 for _ in range(args.repeat)),
                key=lambda r: r[0],
            )  # fmt: skip
            sub = cpu[rows[4][0]]
            print(
                f"| Lee et al.'s tool (make + self-similar + collect, 1 thread) | {g_cpu:.2f} "
                f"| {1000 * g_cpu / n:.3f} | {base / g_cpu:.2f} |"
            )
            print(
                f"\nneardup substrings / Lee et al.'s tool CPU: x{g_cpu / sub:.2f} faster; "
                f"bytes removed: neardup {ours.bytes_removed} (first copy kept), tool "
                f"{g_removed} (every copy struck), of {ours.bytes_in}"
            )
        else:
            print("Lee et al.'s tool: not run (give --google-bin PATH to a built dedup_dataset)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--docs", type=int, default=20_000)
    ap.add_argument("--copy-rate", type=float, default=0.2)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--min-docs", type=int, default=50)
    ap.add_argument("--min-length", type=int, default=100)
    ap.add_argument("--skip-datatrove", action="store_true")
    ap.add_argument("--whole-process", action="store_true", help="CPU of each command alone")
    ap.add_argument("--google-bin", default=None, help="Lee et al.'s built dedup_dataset")
    ap.add_argument(
        "--baseline",
        default=None,
        help="with --whole-process: also run exact / lines / substrings "
        "from this src folder (PYTHONPATH), interleaved, for a before / after ratio",
    )
    args = ap.parse_args()
    docs = build(args.docs, args.copy_rate)
    mb = sum(len((d.text or "").encode()) for d in docs) / 1e6
    n = len(docs)
    print(f"corpus: {n} docs, {mb:.1f} MB, copy rate {args.copy_rate}")
    if args.whole_process:
        whole_process(docs, args)
        return

    def rate(name: str, seconds: float, extra: str = "") -> float:
        print(f"{name:<34} {seconds:8.2f} s {n / seconds:10.0f} docs/s  {extra}")
        return seconds

    neardup.dedup(docs[:500], method="minhash")  # compile the kernels once
    neardup.dedup(docs[:500], method="exact")
    sum(1 for _ in remove_frequent_units(lambda: docs[:200], min_docs=5))
    sum(1 for _ in remove_repeated_substrings(docs[:200], min_length=args.min_length))
    t_min, r_min = best(lambda: neardup.dedup(docs, method="minhash", pairs=False), args.repeat)
    rate("neardup minhash", t_min, f"clusters={len(r_min.clusters)}")
    t_ef, r_ef = best(lambda: exact_first(docs, method=make_method("minhash")), args.repeat)
    same = [c.members for c in r_ef.clusters] == [c.members for c in r_min.clusters]
    rate("neardup minhash --exact-first", t_ef, f"same clusters={same} x{t_min / t_ef:.2f}")
    t_ex, r_ex = best(lambda: neardup.dedup(docs, method="exact"), args.repeat)
    dups = r_ex.duplicates
    rate("neardup exact", t_ex, f"duplicates={dups} vs minhash x{t_min / t_ex:.1f}")
    raw = make_method("exact", canonicalize="none")
    t_raw, r_raw = best(lambda: neardup.dedup(docs, method=raw), args.repeat)
    rate("neardup exact --canonicalize none", t_raw, f"duplicates={r_raw.duplicates}")
    bloom = make_method("exact", bloom_capacity=n, bloom_fp_rate=1e-3)
    t_bl, r_bl = best(lambda: neardup.dedup(docs, method=bloom), args.repeat)
    rate("neardup exact (bloom 0.001)", t_bl, f"duplicates={r_bl.duplicates}")
    if not args.skip_datatrove:
        t_dt, dt_dups = best(lambda: datatrove_exact(docs), args.repeat)
        rate(
            "datatrove exact (raw text)",
            t_dt,
            f"duplicates={dt_dups}; neardup x{t_dt / t_ex:.1f}, raw x{t_dt / t_raw:.1f}",
        )

    summary = LinesSummary("line", args.min_docs)

    def lines() -> int:
        s = LinesSummary("line", args.min_docs)
        out = sum(1 for _ in remove_frequent_units(lambda: docs, min_docs=args.min_docs, summary=s))
        summary.__dict__.update(s.__dict__)
        return out

    t_ln, _ = best(lines, args.repeat)
    rate(
        f"neardup lines --min-docs {args.min_docs}",
        t_ln,
        f"{summary.line()}; vs minhash x{t_min / t_ln:.1f}",
    )
    if not args.skip_datatrove:
        t_dl, removed = best(lambda: datatrove_lines(docs), args.repeat)
        rate(
            "datatrove sentence dedup (lines)",
            t_dl,
            f"chars removed={removed}; neardup x{t_dl / t_ln:.1f}",
        )

    ssum = SubstringSummary(args.min_length)

    def substrings() -> int:
        s = SubstringSummary(args.min_length)
        out = sum(
            1 for _ in remove_repeated_substrings(docs, min_length=args.min_length, summary=s)
        )
        ssum.__dict__.update(s.__dict__)
        return out

    t_ss, _ = best(substrings, args.repeat)
    rate(
        f"neardup substrings --min-length {args.min_length}",
        t_ss,
        f"{ssum.line()}; vs minhash x{t_min / t_ss:.1f}",
    )
    print(
        "datatrove / text-dedup exact substrings: they drive Lee et al.'s Rust tool; see "
        "--whole-process --google-bin for the tool itself"
    )


if __name__ == "__main__":
    main()
