#!/usr/bin/env python3
"""The datasketch family: neardup.compat.datasketch and neardup's native classes vs datasketch
2.0.0 and rensa, side by side in one process, one core.

    .venv/bin/python benchmarks/datasketch_bench.py [--mb 3] [--rounds 3]

Token sets are the word 5-shingles of the corpus of ``minhash_bench.py`` (man pages and
docs already on the machine), built once in Python: bytes for datasketch and the compat
package, str for rensa. Each implementation gets the input type its users pass and runs
interleaved in rounds after a warm-up round; medians are reported and ratios compare
implementations of the same run. Sections: MinHash-128 sketching (per call and bulk), LSH
at threshold 0.8 (per call: ``insert`` then ``query`` of every document; bulk), LSH Forest
top-10, weighted MinHash, HyperLogLog.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("RAYON_NUM_THREADS", "1")
os.environ.setdefault("NUMBA_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).parent))

import numpy as np
from minhash_bench import build_corpus, peer_shingles, rounds, table

import neardup.compat.datasketch as nd
from neardup.canonicalize import Canonicalizer
from neardup.index.lsh import LSHIndex
from neardup.index.lshforest import LSHForest
from neardup.sketch.hyperloglog import HyperLogLog
from neardup.sketch.tokensets import sketch_token_sets
from neardup.sketch.weighted import WeightedMinHasher

NUM_PERM = 128


def ratio_line(med: dict[str, float], name: str, ref: str) -> None:
    print(f"{name}: x{med[ref] / med[name]:.2f} {ref}")


def token_corpus(megabytes: float) -> tuple[list[list[str]], list[list[bytes]], float]:
    """The word 5-shingles of ``megabytes`` MB of documents, as str and as UTF-8 bytes, and
    the text's size in MB."""
    docs = build_corpus(megabytes)
    canon = Canonicalizer()
    str_sets = [peer_shingles(d, canon) for d in docs]
    byte_sets = [[s.encode() for s in toks] for toks in str_sets]
    return str_sets, byte_sets, sum(len(d.encode()) for d in docs) / 1e6


def rensa_sketches(str_sets: list[list[str]]) -> list[object]:
    """What a rensa user writes: one ``RMinHash`` and one ``update`` per token set."""
    import rensa

    out = []
    for toks in str_sets:
        m = rensa.RMinHash(NUM_PERM, 42)
        m.update(toks)
        out.append(m)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--mb", type=float, default=3.0)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()

    import datasketch as ds
    import rensa

    str_sets, byte_sets, mb = token_corpus(args.mb)
    n = len(str_sets)
    tokens = sum(map(len, str_sets))
    print(f"# {n} token sets, {tokens} tokens ({mb:.1f} MB of text); threads = 1")

    # ------------------------------------------------------------------ sketching
    def ds_per_call() -> object:
        out = []
        for toks in byte_sets:
            m = ds.MinHash(num_perm=NUM_PERM)
            m.update_batch(toks)
            out.append(m)
        return out

    def nd_per_call() -> object:
        out = []
        for toks in byte_sets:
            m = nd.MinHash(num_perm=NUM_PERM)
            m.update_batch(toks)
            out.append(m)
        return out

    def rensa_per_call() -> list[object]:
        return rensa_sketches(str_sets)

    med = rounds(
        {
            "neardup sketch_token_sets (bulk array)": lambda: sketch_token_sets(
                byte_sets, num_perm=NUM_PERM
            ),
            "neardup sketch_token_sets(hash='xxh3') (bulk array)": lambda: sketch_token_sets(
                byte_sets, num_perm=NUM_PERM, hash="xxh3"
            ),
            "compat MinHash.bulk": lambda: nd.MinHash.bulk(byte_sets, num_perm=NUM_PERM),
            "compat MinHash update_batch per set": nd_per_call,
            "rensa digest_matrix_from_token_sets (bulk)": lambda: (
                rensa.RMinHash.digest_matrix_from_token_sets(str_sets, NUM_PERM, 42)
            ),
            "rensa RMinHash.update per set": rensa_per_call,
            "datasketch MinHash.bulk": lambda: ds.MinHash.bulk(byte_sets, num_perm=NUM_PERM),
            "datasketch update_batch per set": ds_per_call,
        },
        args.rounds,
    )
    table(
        "MinHash-128 of token sets (datasketch's hashvalues)",
        med,
        "datasketch update_batch per set",
        n,
        mb,
    )
    ratio_line(med, "compat MinHash.bulk", "rensa digest_matrix_from_token_sets (bulk)")
    ratio_line(
        med, "neardup sketch_token_sets (bulk array)", "rensa digest_matrix_from_token_sets (bulk)"
    )
    ratio_line(
        med,
        "neardup sketch_token_sets(hash='xxh3') (bulk array)",
        "rensa digest_matrix_from_token_sets (bulk)",
    )

    # ------------------------------------------------------------------ LSH per call
    ds_mh = ds.MinHash.bulk(byte_sets, num_perm=NUM_PERM)
    nd_mh = nd.MinHash.bulk(byte_sets, num_perm=NUM_PERM)
    r_mh = rensa_per_call()
    assert all(
        np.array_equal(a.hashvalues, b.hashvalues) for a, b in zip(ds_mh, nd_mh, strict=True)
    )
    keys = list(range(n))

    def per_call(cls: type, mhs: list[object]) -> object:
        lsh = cls(threshold=0.8, num_perm=NUM_PERM)
        for i, m in zip(keys, mhs, strict=True):
            lsh.insert(i, m)
        return [lsh.query(m) for m in mhs]

    def rensa_calls() -> object:
        lsh = rensa.RMinHashLSH(0.8, NUM_PERM, 16)
        for i, m in zip(keys, r_mh, strict=True):
            lsh.insert(i, m)
        return [lsh.query(m) for m in r_mh]

    sigs = sketch_token_sets(byte_sets, num_perm=NUM_PERM)

    def nd_index_calls() -> object:
        index = LSHIndex(0.8, NUM_PERM)
        for i in keys:
            index.add_many([i], sigs[i : i + 1])
        return [index.query_many(sigs[i : i + 1]) for i in keys]

    a = ds.MinHashLSH(threshold=0.8, num_perm=NUM_PERM)
    b = nd.MinHashLSH(threshold=0.8, num_perm=NUM_PERM)
    print(f"\n# plans: datasketch and compat b={a.b} r={a.r} (equal: {(a.b, a.r) == (b.b, b.r)})")
    assert [sorted(x) for x in per_call(ds.MinHashLSH, ds_mh)] == [  # type: ignore[attr-defined]
        sorted(x)
        for x in per_call(nd.MinHashLSH, nd_mh)  # type: ignore[attr-defined]
    ], "compat and datasketch query results differ"
    med = rounds(
        {
            "compat MinHashLSH insert + query per doc": lambda: per_call(nd.MinHashLSH, nd_mh),
            "neardup LSHIndex add + query per doc": nd_index_calls,
            "rensa RMinHashLSH insert + query per doc": rensa_calls,
            "datasketch MinHashLSH insert + query per doc": lambda: per_call(ds.MinHashLSH, ds_mh),
        },
        args.rounds,
    )
    table(
        "LSH threshold 0.8, one insert then one query per document",
        med,
        "datasketch MinHashLSH insert + query per doc",
        n,
        mb,
    )

    # ------------------------------------------------------------------ LSH bulk
    def nd_bulk() -> object:
        index = LSHIndex(0.8, NUM_PERM)
        index.add_many(keys, sigs)
        return index.query_many(sigs)

    def nd_bulk_pairs() -> object:
        index = LSHIndex(0.8, NUM_PERM)
        index.add_many(keys, sigs)
        return index.pair_rows()

    def rensa_bulk() -> object:
        lsh = rensa.RMinHashLSH(0.8, NUM_PERM, 16)
        lsh.insert_many(r_mh)
        return lsh.query_all(r_mh)

    def compat_session() -> object:
        lsh = nd.MinHashLSH(threshold=0.8, num_perm=NUM_PERM)
        with lsh.insertion_session() as session:
            for i, m in zip(keys, nd_mh, strict=True):
                session.insert(i, m)
        return [lsh.query(m) for m in nd_mh]

    med = rounds(
        {
            "neardup LSHIndex add_many + query_many": nd_bulk,
            "neardup LSHIndex add_many + pair_rows": nd_bulk_pairs,
            "compat MinHashLSH insertion_session + query": compat_session,
            "rensa RMinHashLSH insert_many + query_all": rensa_bulk,
        },
        args.rounds,
    )
    table(
        "LSH threshold 0.8, bulk build + query every document",
        med,
        "rensa RMinHashLSH insert_many + query_all",
        n,
        mb,
    )

    # ------------------------------------------------------------------ LSH Forest
    def forest(cls: type, mhs: list[object]) -> object:
        f = cls(num_perm=NUM_PERM)
        for i, m in zip(keys, mhs, strict=True):
            f.add(i, m)
        f.index()
        return [f.query(m, 10) for m in mhs]

    def nd_forest() -> object:
        f = LSHForest(NUM_PERM)
        f.add_many(keys, sigs)
        return f.query_many(sigs, 10)

    med = rounds(
        {
            "neardup LSHForest add_many + query_many (top-10, ranked)": nd_forest,
            "compat MinHashLSHForest add + index + query": lambda: forest(
                nd.MinHashLSHForest, nd_mh
            ),
            "datasketch MinHashLSHForest add + index + query": lambda: forest(
                ds.MinHashLSHForest, ds_mh
            ),
        },
        args.rounds,
    )
    table(
        "LSH Forest top-10 of every document",
        med,
        "datasketch MinHashLSHForest add + index + query",
        n,
        mb,
    )

    # ------------------------------------------------------------------ weighted, HLL
    rng = np.random.default_rng(3)
    dim = 512
    mat = rng.random((max(200, n // 4), dim)) * (rng.random((max(200, n // 4), dim)) < 0.1)
    mat = mat.astype(np.float32)
    gen_ds = ds.WeightedMinHashGenerator(dim, NUM_PERM)
    gen_nd = nd.WeightedMinHashGenerator(dim, NUM_PERM)
    hasher = WeightedMinHasher(dim, sample_size=NUM_PERM)
    med = rounds(
        {
            "neardup WeightedMinHasher.sketch_many": lambda: hasher.sketch_many(mat),
            "compat minhash_many": lambda: gen_nd.minhash_many(mat),
            "compat minhash per row": lambda: [gen_nd.minhash(v) for v in mat if v.any()],
            "datasketch minhash_many": lambda: gen_ds.minhash_many(mat),
            "datasketch minhash per row": lambda: [gen_ds.minhash(v) for v in mat if v.any()],
        },
        args.rounds,
    )
    table(
        f"weighted MinHash-128 of {len(mat)} vectors of {dim} (10 % nonzero)",
        med,
        "datasketch minhash_many",
        len(mat),
        mat.nbytes / 1e6,
    )

    flat = [t for toks in byte_sets for t in toks]

    def ds_hll() -> object:
        h = ds.HyperLogLogPlusPlus(12)
        for t in flat:
            h.update(t)
        return h.count()

    def nd_hll() -> object:
        h = nd.HyperLogLogPlusPlus(12)
        h.update_batch(flat)
        return h.count()

    med = rounds(
        {
            "neardup HyperLogLog.sketch_many (one sketch per set)": lambda: HyperLogLog.sketch_many(
                byte_sets, p=12, plus=True
            ),
            "compat HyperLogLogPlusPlus.update_batch": nd_hll,
            "datasketch HyperLogLogPlusPlus.update per token": ds_hll,
        },
        args.rounds,
    )
    table(
        f"HyperLogLog++ p=12 of {len(flat)} tokens",
        med,
        "datasketch HyperLogLogPlusPlus.update per token",
        n,
        mb,
    )


if __name__ == "__main__":
    main()
