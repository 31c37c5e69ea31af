#!/usr/bin/env python3
"""Bulk paths of a datasketch user, in neardup.compat.datasketch and neardup's native
classes, against rensa's equivalents (and datasketch 2.0.0), side by side in one process.

    .venv/bin/python benchmarks/bulk_bench.py [--mb 1] [--rounds 3] [--repeat 1]
        [--sections sketch,index,query]

Token sets are the word 5-shingles of ``minhash_bench.py``'s corpus (man pages and docs on
the machine), built once: lists of ``str`` for rensa and neardup's native classes, lists of
UTF-8 ``bytes`` for datasketch and the compat package (datasketch's SHA-1 hash takes
bytes). Every path runs interleaved in rounds after a warm-up round; CPU seconds
(``time.process_time``), medians. Each section pairs a datasketch bulk path (compat) and a
native batch path with the rensa path a rensa user would write for the same job:

- many sketches: ``MinHash.bulk`` / ``MinHash.generator`` / ``LeanMinHash`` of each vs
  ``RMinHash.update`` per set and ``RMinHash.from_token_sets``; native ``sketch_token_sets``
  (one array) vs ``RMinHash.digest_matrix_from_token_sets``;
- an index of many: ``insertion_session()`` + ``insert`` per sketch and ``MinHashLSH.insert_many``
  vs ``RMinHashLSH.insert`` per sketch and ``insert_many``; native ``LSHIndex.add_many``;
- queries of many: ``query`` per sketch (of an index a session built: the native table;
  and of one built by per-call inserts: the dicts) and ``MinHashLSH.query_many`` vs
  ``RMinHashLSH.query`` per sketch and ``query_all``; native ``LSHIndex.query_many``, with its
  own plan and with rensa's (b=16 r=8: the same banding work).

The sketch section ends with the SHA-1 floor: datasketch's hashvalues need SHA-1 of every
token (one 64-byte block for a token of at most 55 bytes), which rensa's sketch does not
compute. Measured in the same rounds: the SHA-1 kernel alone on the packed tokens, and
OpenSSL's SHA-1 (``hashlib``, with the CPU's SHA instructions where it has them) streaming
one block per token. Then a per-token table: compat ``MinHash.bulk`` and rensa's paths again,
``--repeat`` calls per timing (1: each call follows the other paths' work, its tokens partly
out of the caches; 10: the same tokens again and again, in the caches), with the ratio to
rensa round by round.

Plans differ by design (datasketch's b=9 r=13 at 0.8 for compat; rensa needs bands dividing
128, b=16 r=8; neardup's native b=16 r=6), so the index rows compare the work each library
does for the same user request; the compat answers are checked equal to datasketch's.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("RAYON_NUM_THREADS", "1")
os.environ.setdefault("NUMBA_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).parent))

import numpy as np
from datasketch_bench import rensa_sketches, token_corpus
from minhash_bench import rounds, table

import neardup.compat.datasketch as nd
from neardup._kernels import engine
from neardup.index.lsh import LSHIndex
from neardup.sketch.tokensets import pack_token_sets, sketch_token_sets

NUM_PERM = 128
THRESHOLD = 0.8


def versus(med: dict[str, float], pairs: list[tuple[str, str]]) -> None:
    """One line per (neardup path, rensa path): the CPU ratio, > 1 when neardup is faster."""
    print()
    for mine, theirs in pairs:
        print(f"{mine}: x{med[theirs] / med[mine]:.2f} {theirs}")


def per_token_rounds(
    impls: dict[str, Callable[[], object]], n_rounds: int, repeat: int, n_tok: int
) -> dict[str, list[float]]:
    """CPU ns per token of each path in each round (``repeat`` calls per timing: the calls of
    one round are a few ms each), every path once per round, interleaved."""
    for fn in impls.values():
        fn()
    out: dict[str, list[float]] = {name: [] for name in impls}
    for _ in range(n_rounds):
        for name, fn in impls.items():
            gc.collect()
            t0 = time.process_time()
            for _ in range(repeat):
                fn()
            out[name].append((time.process_time() - t0) / repeat / n_tok * 1e9)
    return out


def per_token_table(per: dict[str, list[float]], mine: str, theirs: str) -> None:
    """ns per token (median, min-max) of each path, and ``theirs / mine`` round by round."""
    print("\nper token, CPU ns (median, min-max over rounds):")
    for name, ts in per.items():
        print(f"  {name}: {statistics.median(ts):.1f} ({min(ts):.1f}-{max(ts):.1f})")
    ratios = sorted(t / m for m, t in zip(per[mine], per[theirs], strict=True))
    print(
        f"{mine}: x{statistics.median(ratios):.2f} {theirs} per round "
        f"(median; min {ratios[0]:.2f}, max {ratios[-1]:.2f}; {len(ratios)} rounds)"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--mb", type=float, default=1.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument(
        "--chunk", type=int, default=48, help="shingles per token set in the index sections"
    )
    ap.add_argument("--repeat", type=int, default=1, help="calls per timing in the per-token table")
    ap.add_argument(
        "--sections",
        default="sketch,index,query",
        help="comma-separated: sketch (with the per-token table), index, query",
    )
    args = ap.parse_args()
    sections = set(args.sections.split(","))

    import datasketch as ds
    import rensa

    str_sets, byte_sets, mb = token_corpus(args.mb)
    n = len(str_sets)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"# {n} token sets, {sum(map(len, str_sets))} tokens ({mb:.1f} MB of text)")
    print(f"# rensa {rensa.__name__} {_version('rensa')}, datasketch {_version('datasketch')}")
    print(f"# threads = 1; load average at start: {load}")

    # ------------------------------------------------------------------ many sketches
    def rensa_update() -> list[object]:
        return rensa_sketches(str_sets)

    def ds_bulk() -> object:
        return ds.MinHash.bulk(byte_sets, num_perm=NUM_PERM)

    if "sketch" in sections:
        n_tok = sum(map(len, byte_sets))
        raw, lengths, _ = pack_token_sets(byte_sets, text=False)
        ends = np.cumsum(lengths)
        starts, buf = ends - lengths, np.frombuffer(raw, dtype=np.uint8)
        sha1_32 = engine.kernels("sha1").sha1_32
        blocks = bytes(64 * n_tok)  # one SHA-1 block per token, streamed

        med = rounds(
            {
                "compat MinHash.bulk": lambda: nd.MinHash.bulk(byte_sets, num_perm=NUM_PERM),
                "compat MinHash.generator": lambda: list(
                    nd.MinHash.generator(byte_sets, num_perm=NUM_PERM)
                ),
                "compat LeanMinHash of MinHash.bulk": lambda: [
                    nd.LeanMinHash(m) for m in nd.MinHash.bulk(byte_sets, num_perm=NUM_PERM)
                ],
                "neardup sketch_token_sets (str, one array)": lambda: sketch_token_sets(
                    str_sets, num_perm=NUM_PERM
                ),
                "rensa RMinHash.update per set": rensa_update,
                "rensa RMinHash.from_token_sets": lambda: rensa.RMinHash.from_token_sets(
                    str_sets, NUM_PERM, 42
                ),
                "rensa digest_matrix_from_token_sets": lambda: (
                    rensa.RMinHash.digest_matrix_from_token_sets(str_sets, NUM_PERM, 42)
                ),
                "datasketch MinHash.bulk": ds_bulk,
                "floor: packing the bytes tokens (join + lengths)": lambda: pack_token_sets(
                    byte_sets, text=False
                ),
                "floor: SHA-1 kernel alone (packed tokens)": lambda: sha1_32(buf, starts, ends),
                "floor: OpenSSL SHA-1, one 64-byte block per token": lambda: hashlib.sha1(
                    blocks
                ).digest(),
            },
            args.rounds,
        )
        table("MinHash-128 of many token sets", med, "datasketch MinHash.bulk", n, mb)
        print(f"\nper token ({n_tok} tokens), CPU ns:")
        for name in med:
            if name.startswith(("floor", "rensa", "compat MinHash.bulk")):
                print(f"  {name}: {med[name] / n_tok * 1e9:.1f}")
        versus(
            med,
            [
                ("compat MinHash.bulk", "rensa RMinHash.update per set"),
                ("compat MinHash.bulk", "rensa RMinHash.from_token_sets"),
                ("compat MinHash.generator", "rensa RMinHash.update per set"),
                ("compat LeanMinHash of MinHash.bulk", "rensa RMinHash.update per set"),
                (
                    "neardup sketch_token_sets (str, one array)",
                    "rensa digest_matrix_from_token_sets",
                ),
            ],
        )

        per = per_token_rounds(
            {
                "compat MinHash.bulk": lambda: nd.MinHash.bulk(byte_sets, num_perm=NUM_PERM),
                "rensa RMinHash.update per set": rensa_update,
                "rensa RMinHash.from_token_sets": lambda: rensa.RMinHash.from_token_sets(
                    str_sets, NUM_PERM, 42
                ),
            },
            args.rounds,
            args.repeat,
            n_tok,
        )
        per_token_table(per, "compat MinHash.bulk", "rensa RMinHash.update per set")

    if not sections & {"index", "query"}:
        load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
        print(f"\n# load average at end: {load}")
        return

    # ------------------------------------------------------------------ an index of many
    # more, smaller sets for the index: each document's shingles in pieces of --chunk
    step = args.chunk
    str_sets = [t[i : i + step] for t in str_sets for i in range(0, max(len(t), 1), step)]
    byte_sets = [[s.encode() for s in toks] for toks in str_sets]
    n = len(str_sets)
    print(f"\n# index sections: {n} token sets of up to {step} shingles")
    ds_mh = ds.MinHash.bulk(byte_sets, num_perm=NUM_PERM)
    nd_mh = nd.MinHash.bulk(byte_sets, num_perm=NUM_PERM)
    lean = [nd.LeanMinHash(m) for m in nd_mh]
    r_mh = rensa_update()
    sigs = sketch_token_sets(str_sets, num_perm=NUM_PERM)
    assert all(
        np.array_equal(a.hashvalues, b.hashvalues) for a, b in zip(ds_mh, nd_mh, strict=True)
    ), "compat hashvalues differ from datasketch's"
    keys = list(range(n))

    def session(cls: type, mhs: list[object]) -> object:
        lsh = cls(threshold=THRESHOLD, num_perm=NUM_PERM)
        with lsh.insertion_session() as s:
            for key, m in zip(keys, mhs, strict=True):
                s.insert(key, m)
        return lsh

    def compat_insert_many() -> object:
        lsh = nd.MinHashLSH(threshold=THRESHOLD, num_perm=NUM_PERM)
        lsh.insert_many(keys, nd_mh)
        return lsh

    def rensa_insert() -> object:
        lsh = rensa.RMinHashLSH(THRESHOLD, NUM_PERM, 16)
        for key, m in zip(keys, r_mh, strict=True):
            lsh.insert(key, m)
        return lsh

    def rensa_insert_many() -> object:
        lsh = rensa.RMinHashLSH(THRESHOLD, NUM_PERM, 16)
        lsh.insert_many(r_mh)
        return lsh

    def nd_add_many() -> object:
        index = LSHIndex(THRESHOLD, NUM_PERM)
        index.add_many(keys, sigs)
        return index

    med = rounds(
        {
            "compat insertion_session + insert per sketch": lambda: session(nd.MinHashLSH, nd_mh),
            "compat insertion_session, LeanMinHash": lambda: session(nd.MinHashLSH, lean),
            "compat MinHashLSH.insert_many": compat_insert_many,
            "neardup LSHIndex.add_many (array)": nd_add_many,
            "rensa RMinHashLSH.insert per sketch": rensa_insert,
            "rensa RMinHashLSH.insert_many": rensa_insert_many,
            "datasketch insertion_session + insert": lambda: session(ds.MinHashLSH, ds_mh),
        },
        args.rounds,
    )
    table(
        f"an LSH index of many sketches (threshold {THRESHOLD})",
        med,
        "datasketch insertion_session + insert",
        n,
        mb,
    )
    versus(
        med,
        [
            ("compat insertion_session + insert per sketch", "rensa RMinHashLSH.insert per sketch"),
            ("compat MinHashLSH.insert_many", "rensa RMinHashLSH.insert_many"),
            ("neardup LSHIndex.add_many (array)", "rensa RMinHashLSH.insert_many"),
        ],
    )

    # ------------------------------------------------------------------ queries of many
    compat_lsh = session(nd.MinHashLSH, nd_mh)
    compat_dicts = nd.MinHashLSH(threshold=THRESHOLD, num_perm=NUM_PERM)
    for key, m in zip(keys, nd_mh, strict=True):
        compat_dicts.insert(key, m)  # per-call inserts: datasketch's dict layout
    ds_lsh = session(ds.MinHashLSH, ds_mh)
    rensa_lsh = rensa_insert_many()
    nd_index = nd_add_many()
    nd_16x8 = LSHIndex(THRESHOLD, NUM_PERM, bands=16, rows=8)
    nd_16x8.add_many(keys, sigs)
    want = [sorted(ds_lsh.query(m)) for m in ds_mh]  # type: ignore[attr-defined]
    assert [sorted(compat_lsh.query(m)) for m in nd_mh] == want, "compat query differs"  # type: ignore[attr-defined]
    assert [sorted(compat_dicts.query(m)) for m in nd_mh] == want, "compat query differs"
    assert [sorted(q) for q in compat_lsh.query_many(nd_mh)] == want, "query_many differs"  # type: ignore[attr-defined]

    med = rounds(
        {
            "compat query per sketch": lambda: [compat_lsh.query(m) for m in nd_mh],  # type: ignore[attr-defined]
            "compat query per sketch, per-call built index (dicts)": lambda: [
                compat_dicts.query(m) for m in nd_mh
            ],
            "compat MinHashLSH.query_many": lambda: compat_lsh.query_many(nd_mh),  # type: ignore[attr-defined]
            "neardup LSHIndex.query_many (array)": lambda: nd_index.query_many(sigs),  # type: ignore[attr-defined]
            "neardup LSHIndex.query_many (array), b=16 r=8": lambda: nd_16x8.query_many(sigs),
            "rensa RMinHashLSH.query per sketch": lambda: [rensa_lsh.query(m) for m in r_mh],
            "rensa RMinHashLSH.query_all": lambda: rensa_lsh.query_all(r_mh),
            "datasketch query per sketch": lambda: [ds_lsh.query(m) for m in ds_mh],  # type: ignore[attr-defined]
        },
        args.rounds,
    )
    table("queries of many sketches", med, "datasketch query per sketch", n, mb)
    versus(
        med,
        [
            ("compat query per sketch", "rensa RMinHashLSH.query per sketch"),
            (
                "compat query per sketch, per-call built index (dicts)",
                "rensa RMinHashLSH.query per sketch",
            ),
            ("compat MinHashLSH.query_many", "rensa RMinHashLSH.query_all"),
            ("neardup LSHIndex.query_many (array)", "rensa RMinHashLSH.query_all"),
            ("neardup LSHIndex.query_many (array), b=16 r=8", "rensa RMinHashLSH.query_all"),
        ],
    )
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"\n# load average at end: {load}")


def _version(dist: str) -> str:
    from importlib.metadata import version

    return version(dist)


if __name__ == "__main__":
    main()
