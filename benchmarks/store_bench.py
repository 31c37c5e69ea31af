"""The persistent store against plain dedup: build time (CPU seconds, the same process), size
and where its bytes go (SQLite's dbstat), bytes per document for every storable method, the
set codecs side by side (Golomb-Rice, pcodec, zstandard), query latency and memory at N and at
a generated 1M-document store; datasketch's MinHashLSH as the peer: in-memory dict storage
(pickled to disk for the size comparison) and Redis storage on a redis-server the benchmark
starts and stops itself (skipped, with a message, when redis-server is not installed).

The corpus is dedup_bench's (~600-byte text chunks plus edited copies). Run:

    python benchmarks/store_bench.py --docs 100000 --big 1000000
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import resource
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np
from dedup_bench import build, shingles

import neardup
from neardup.io import Document
from neardup.methods import make_method
from neardup.store.persistent import WRITE_DOCS, PersistentIndex

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"


def _size(path: Path) -> int:
    return sum(os.path.getsize(p) for p in (path, Path(f"{path}-wal")) if p.exists())


def _docs(texts: list[str], prefix: str = "d") -> list[Document]:
    return [Document(f"{prefix}{i}", t) for i, t in enumerate(texts)]


def _jsonl_bytes(texts: list[str]) -> int:
    return sum(len(json.dumps({"id": f"d{i}", "text": t})) + 1 for i, t in enumerate(texts))


def _cpu() -> float:
    return time.process_time()


def build_times(texts: list[str], folder: Path, threshold: float) -> dict[str, float]:
    """Plain dedup and dedup with a new --index, interleaved (plain, index, plain, index),
    then index add of two halves and dedup --index of the same corpus again: CPU seconds of
    this process (the machine is shared; wall time follows the load); the two plain and the
    two index runs are averaged."""
    out: dict[str, float] = {}
    warm = folder / "warm.db"
    with PersistentIndex(warm, make_method("minhash", threshold)) as index:  # numba kernels
        neardup.dedup(_docs(texts[:500]), index=index)
    plain, indexed = [], []
    for r in range(2):
        docs = _docs(texts)
        t = _cpu()
        neardup.dedup(docs, method="minhash", threshold=threshold)
        plain.append(_cpu() - t)
        path = folder / ("dedup.db" if r == 0 else f"dedup{r}.db")
        docs = _docs(texts)
        t = _cpu()
        with PersistentIndex(path, make_method("minhash", threshold)) as index:
            neardup.dedup(docs, index=index)
        indexed.append(_cpu() - t)
    out["plain"] = sum(plain) / 2
    out["dedup_index"] = sum(indexed) / 2
    out["dedup_index_size"] = _size(folder / "dedup.db")
    half = len(texts) // 2
    path2 = folder / "halves.db"
    t = _cpu()
    with PersistentIndex.open(path2, method="minhash", threshold=threshold) as index:
        index.add(_docs(texts[:half]), write_size=WRITE_DOCS)
    with PersistentIndex.open(path2) as index:
        index.add(_docs(texts[half:], "e"), write_size=WRITE_DOCS)
    out["add_halves"] = _cpu() - t
    t = _cpu()
    with PersistentIndex.open(folder / "dedup.db") as index:  # the same corpus: all stored
        neardup.dedup(_docs(texts), index=index)
    out["dedup_again"] = _cpu() - t
    return out


def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def cli_times(texts: list[str], folder: Path, threshold: float) -> dict[str, float]:
    """``neardup dedup corpus.jsonl`` against ``... --index s.db`` (a new store each time),
    interleaved twice: CPU seconds of the child processes, process start included."""
    corpus = folder / "corpus.jsonl"
    with corpus.open("w", encoding="utf-8") as fh:
        for i, t in enumerate(texts):
            fh.write(json.dumps({"id": f"d{i}", "text": t}) + "\n")
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    base = [sys.executable, "-m", "neardup", "dedup", str(corpus), "--threshold", str(threshold)]
    times: dict[str, list[float]] = {"plain": [], "index": []}
    for r in range(3):  # round 0 warms the kernel cache and the page cache
        for name in ("plain", "index"):
            db = folder / f"cli{r}.db"
            args = [*base, "--index", str(db)] if name == "index" else base
            t = _children_cpu()
            subprocess.run(
                args, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )
            if r:
                times[name].append(_children_cpu() - t)
    return {k: sum(v) / len(v) for k, v in times.items()}


def size_breakdown(path: Path) -> list[tuple[str, float, float]]:
    """(table or index, bytes on disk, payload bytes) from SQLite's dbstat, largest first."""
    import sqlite3

    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        rows = conn.execute(
            "SELECT name, sum(pgsize), sum(payload) FROM dbstat GROUP BY name ORDER BY 2 DESC"
        ).fetchall()
    finally:
        conn.close()
    return [(str(n), float(a), float(b)) for n, a, b in rows]


def codecs(texts: list[str]) -> dict[str, tuple[float, float]]:
    """Bytes per set and encode CPU seconds of the set codecs, on the corpus's own sets (cut
    to the stored width, as the store keeps them)."""
    import zstandard

    from neardup.sketch.setcodec import encode_sets, encode_sets_pcodec, set_width

    method = make_method("minhash")
    _, (top32, offsets) = method.sketch(_docs(texts[: min(len(texts), 20000)]))
    # the sketch keeps each hash's top 32 bits; the codecs take them back in place (as blobs())
    values = top32.astype(np.uint64) << np.uint64(32)
    encode_sets(values[:10], np.array([0, 10]))  # warm the kernel
    out: dict[str, tuple[float, float]] = {}
    for name, encode in [
        ("golomb-rice (format 2)", encode_sets),
        ("pcodec (format 1)", encode_sets_pcodec),
    ]:
        t = _cpu()
        blobs = encode(values, offsets)
        out[name] = (float(np.mean([len(b) for b in blobs])), _cpu() - t)
    zstd = zstandard.ZstdCompressor(level=19)
    t = _cpu()
    sizes = []
    for i in range(len(offsets) - 1):
        v = values[offsets[i] : offsets[i + 1]]
        w = set_width(int(v.size))
        cut = np.unique((v >> np.uint64(64 - w)).astype(np.uint32))
        deltas = np.diff(cut, prepend=np.uint32(0)).astype("<u2" if w <= 16 else "<u4")
        sizes.append(7 + len(zstd.compress(deltas.tobytes())))
    out["zstandard -19 of u16/u32 deltas"] = (float(np.mean(sizes)), _cpu() - t)
    return out


def bytes_per_doc(texts: list[str], folder: Path) -> dict[str, float]:
    """Store bytes per document for every storable method (phash on generated codes)."""
    sample = texts[: min(len(texts), 20000)]
    out: dict[str, float] = {}
    for name, method in [
        ("minhash (verify) 0.8", make_method("minhash")),
        ("minhash (verify) 0.5", make_method("minhash", 0.5)),
        ("minhash (no verify) 0.8", make_method("minhash", verify=False)),
        ("simhash 64", make_method("simhash")),
        ("simhash 256", make_method("simhash", bits=256)),
        ("simhash-go", make_method("simhash-go")),
    ]:
        path = folder / f"{name.split()[0]}-{abs(hash(name)) % 10**6}.db"
        with PersistentIndex(path, method) as index:
            index.add(_docs(sample), write_size=WRITE_DOCS)
            file_size = int(str(index.stats()["file_size"]))
        out[name] = file_size / len(sample)
    phash = make_method("phash")
    codes = np.random.default_rng(5).integers(0, 2**63, size=len(sample), dtype=np.uint64)
    path = folder / "phash.db"
    with PersistentIndex(path, phash) as index:
        index.store.add_many(
            [f"img{i}" for i in range(len(sample))],
            phash.blobs(codes),
            phash.lookup_keys(codes).view(np.int64),
        )
        out["phash"] = int(str(index.stats()["file_size"])) / len(sample)
    return out


def verification_error(texts: list[str]) -> tuple[float, int, int]:
    """Stored-set Jaccard against the 32-bit sets the in-memory run verifies with, on every
    candidate pair of the corpus: (largest absolute error, verdicts that differ at 0.8,
    pairs compared)."""
    from neardup.sketch.sets import jaccard_pairs

    method = make_method("minhash")
    sample = _docs(texts[: min(len(texts), 20000)])
    sigs, (values, offsets) = method.sketch(sample)
    blobs = method.blobs((sigs, (values, offsets)))
    result = neardup.dedup(sample, method=make_method("minhash", 0.5))
    pos = {d.id: i for i, d in enumerate(sample)}
    a = np.array([pos[p.a] for p in result.pairs], dtype=np.int64)
    b = np.array([pos[p.b] for p in result.pairs], dtype=np.int64)
    exact = jaccard_pairs(values, offsets, a, b)
    stored = np.array(
        [method.blob_similarity(blobs[i], blobs[j])[0] for i, j in zip(a, b, strict=True)]
    )
    flips = int(np.count_nonzero((exact >= 0.8) != (stored >= 0.8)))
    return float(np.max(np.abs(exact - stored), initial=0.0)), flips, len(a)


GENERATE = """
import sys, numpy as np
from neardup.sketch.setcodec import encode_sets
from neardup.store.persistent import PersistentIndex
from neardup.methods import make_method
path, n, chunk = sys.argv[1], int(sys.argv[2]), 100000
method = make_method("minhash")
rng = np.random.default_rng(11)
with PersistentIndex(path, method) as index:
    for lo in range(0, n, chunk):
        m = min(chunk, n - lo)
        sizes = rng.integers(60, 140, size=m)
        offsets = np.zeros(m + 1, np.int64)
        np.cumsum(sizes, out=offsets[1:])
        values = rng.integers(0, 2**64, size=int(offsets[-1]), dtype=np.uint64)
        values = values[np.lexsort((values, np.repeat(np.arange(m), sizes)))]  # sorted per doc
        keys = rng.integers(0, 2**63, size=(m, method.bands), dtype=np.int64)
        index.store.add_many([f"g{lo + i}" for i in range(m)], encode_sets(values, offsets), keys)
"""

QUERY = """
import json, resource, sys, time
from neardup.io import Document
from neardup.store.persistent import PersistentIndex
path, queries = sys.argv[1], json.loads(open(sys.argv[2]).read())
docs = [Document(f"q{i}", t) for i, t in enumerate(queries)]
t0 = time.perf_counter()
with PersistentIndex.open(path, readonly=True) as index:
    t1 = time.perf_counter()
    index.query(docs[:8])  # warm: numba kernels, SQLite pages
    t2 = time.perf_counter()
    hits = index.query(docs)
    t3 = time.perf_counter()
    one, cpu = [], []
    for d in docs[:200]:
        s, c = time.perf_counter(), time.thread_time()
        index.query([d])
        one.append(time.perf_counter() - s)
        cpu.append(time.thread_time() - c)
    one.sort()
    cpu.sort()
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
try:  # ru_maxrss keeps the parent's high-water mark across fork + exec; VmHWM does not
    with open("/proc/self/status") as fh:
        rss = next(int(x.split()[1]) for x in fh if x.startswith("VmHWM")) / 1024
except OSError:
    pass
print(json.dumps({"open": t1 - t0, "batch": (t3 - t2) / len(docs), "hits": len(hits),
                  "single_ms": one[len(one) // 2] * 1e3,
                  "p99_ms": one[min(len(one) - 1, int(0.99 * len(one)))] * 1e3,
                  "cpu_p99_ms": cpu[min(len(cpu) - 1, int(0.99 * len(cpu)))] * 1e3,
                  "rss_mb": rss}))
"""


def query_latency(path: Path, queries: list[str]) -> dict[str, float]:
    """Open + query in a fresh process: batched seconds per query, median single-query ms,
    and the process's peak RSS (what a query needs, without the build)."""
    qfile = path.with_suffix(".queries.json")
    qfile.write_text(json.dumps(queries))
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    run = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(QUERY), str(path), str(qfile)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    return dict(json.loads(run.stdout.strip().splitlines()[-1]))


def _ds_minhashes(texts: list[str]) -> list[object]:
    """datasketch MinHashes (128 permutations) of the texts' word 5-shingles."""
    from datasketch import MinHash

    out: list[object] = []
    for d in texts:
        m = MinHash(num_perm=128)
        m.update_batch([s.encode() for s in shingles(d)])
        out.append(m)
    return out


def datasketch_peer(texts: list[str], folder: Path, threshold: float) -> dict[str, float]:
    """datasketch MinHashLSH (in-memory dict storage) build, and its pickle on disk."""
    from datasketch import MinHash, MinHashLSH

    t = _cpu()
    lsh = MinHashLSH(threshold=threshold, num_perm=128)
    for i, d in enumerate(texts):
        m = MinHash(num_perm=128)
        m.update_batch([s.encode() for s in shingles(d)])
        lsh.insert(f"d{i}", m)
    secs = _cpu() - t
    path = folder / "datasketch.pkl"
    with open(path, "wb") as fh:
        pickle.dump(lsh, fh, protocol=pickle.HIGHEST_PROTOCOL)
    return {"build": secs, "size": path.stat().st_size}


def _free_port() -> int:
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _proc_cpu(pid: int) -> float:
    """CPU seconds (user + system) of a running process, from /proc."""
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def redis_peer(
    texts: list[str], queries: list[str], folder: Path, threshold: float
) -> dict[str, float] | str:
    """datasketch MinHashLSH with its Redis storage (band keys and document keys only: no
    signatures, no verification) on a redis-server this function starts (its own folder, a
    free loopback port, the default persistence settings) and stops. CPU of this process
    (the client) and of the server; size = the server's used memory after the build (less
    its empty baseline) and its RDB dump after SAVE. A message instead when it cannot run."""
    import shutil

    server = shutil.which("redis-server")
    if server is None:
        return "redis-server not found (Debian: apt-get install redis-server)"
    try:
        import redis
        from datasketch import MinHashLSH
    except ImportError as exc:
        return f"{exc.name} not installed (the bench dependency group has it)"
    port = _free_port()
    data = folder / "redis"
    data.mkdir()
    proc = subprocess.Popen(
        [server, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(data)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        client = redis.Redis(host="127.0.0.1", port=port)
        for _ in range(100):
            try:
                client.ping()
                break
            except redis.ConnectionError:
                time.sleep(0.1)
        base_mem = int(client.info("memory")["used_memory"])
        cpu0, srv0 = _cpu(), _proc_cpu(proc.pid)
        sketches = _ds_minhashes(texts)
        cpu1 = _cpu()
        config = {
            "type": "redis",
            "basename": b"store_bench",
            "redis": {"host": "127.0.0.1", "port": port},
        }
        lsh = MinHashLSH(threshold=threshold, num_perm=128, storage_config=config)
        with lsh.insertion_session(buffer_size=50000) as session:
            for i, m in enumerate(sketches):
                session.insert(f"d{i}", m)
        cpu2, srv2 = _cpu(), _proc_cpu(proc.pid)
        qs = _ds_minhashes(queries)
        hits = 0
        lat = []
        srv3 = _proc_cpu(proc.pid)
        for m in qs:
            t = time.perf_counter()
            hits += len(lsh.query(m))
            lat.append(time.perf_counter() - t)
        srv4 = _proc_cpu(proc.pid)
        mem = int(client.info("memory")["used_memory"]) - base_mem
        client.save()
        dump = data / "dump.rdb"
        return {
            "sketch": cpu1 - cpu0,
            "insert": cpu2 - cpu1,
            "server_build": srv2 - srv0,
            "single_ms": sorted(lat)[len(lat) // 2] * 1e3,
            "server_ms": (srv4 - srv3) / len(qs) * 1e3,
            "hits": hits,
            "memory": mem,
            "dump": dump.stat().st_size if dump.exists() else 0,
        }
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def big_store(path: Path | None, n: int, queries: list[str]) -> None:
    """Generate a store of ``n`` documents (random sets and band keys; skipped when ``path``
    exists), then time single queries on it in a fresh process: p50 and p99 of 200."""
    with tempfile.TemporaryDirectory() as tmp:
        path = path or Path(tmp) / "big.db"
        if not path.exists():
            env = {**os.environ, "PYTHONPATH": str(SRC)}
            t = time.perf_counter()
            subprocess.run(
                [sys.executable, "-c", textwrap.dedent(GENERATE), str(path), str(n)],
                env=env,
                check=True,
            )
            secs = time.perf_counter() - t
            print(
                f"generated store of {n} docs: {secs:.0f} s to write, "
                f"{_size(path) / 1e6:.0f} MB ({_size(path) / n:.0f} B/doc)"
            )
        q = query_latency(path, queries)
        print(
            f"query at {n} docs: open {q['open']:.2f} s, batched {q['batch'] * 1e3:.2f} ms/query, "
            f"single p50 {q['single_ms']:.2f} ms, p99 {q['p99_ms']:.2f} ms (CPU p99 "
            f"{q['cpu_p99_ms']:.2f} ms), peak RSS "
            f"{q['rss_mb']:.0f} MB (the file is {_size(path) / 1e6:.0f} MB)"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--docs", type=int, default=100_000)
    ap.add_argument("--big", type=int, default=1_000_000, help="generated store size (0: skip)")
    ap.add_argument("--threshold", type=float, default=0.8)
    ap.add_argument("--skip-datasketch", action="store_true")
    ap.add_argument("--only-big", action="store_true", help="only the generated store's queries")
    ap.add_argument("--keep", help="generate the big store at this path (kept; reused if there)")
    args = ap.parse_args()
    texts, planted = build(args.docs)
    if args.only_big:
        queries = [texts[b] for _, b in planted[:200]]
        while len(queries) < 200:
            queries.append(texts[len(queries)])
        big_store(Path(args.keep) if args.keep else None, args.big, queries)
        return
    jsonl = _jsonl_bytes(texts)
    print(f"corpus: {len(texts)} docs, JSONL {jsonl / 1e6:.1f} MB ({jsonl / len(texts):.0f} B/doc)")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        times = build_times(texts, folder, args.threshold)
        print(
            f"load average {os.getloadavg()[0]:.1f}; CPU seconds of this process:\n"
            f"plain dedup            {times['plain']:7.2f} s\n"
            f"dedup --index (new)    {times['dedup_index']:7.2f} s  "
            f"x{times['dedup_index'] / times['plain']:.2f} of plain\n"
            f"index add, two halves  {times['add_halves']:7.2f} s  "
            f"x{times['add_halves'] / times['plain']:.2f} of plain\n"
            f"dedup --index again    {times['dedup_again']:7.2f} s  "
            f"x{times['dedup_again'] / times['plain']:.2f} of plain (every document stored)"
        )
        cli = cli_times(texts, folder, args.threshold)
        print(
            f"CLI, CPU seconds of the child processes (start included), interleaved twice:\n"
            f"neardup dedup          {cli['plain']:7.2f} s\n"
            f"neardup dedup --index  {cli['index']:7.2f} s  "
            f"x{cli['index'] / cli['plain']:.2f} of plain"
        )
        size = times["dedup_index_size"]
        print(
            f"store size: {size / 1e6:.1f} MB = x{size / jsonl:.2f} of the JSONL input "
            f"({size / len(texts):.0f} B/doc); by table (dbstat, B/doc on disk / payload):"
        )
        for name, disk, payload in size_breakdown(folder / "dedup.db"):
            if disk / len(texts) >= 1:
                print(f"  {name:26s} {disk / len(texts):7.1f} / {payload / len(texts):7.1f}")
        print("set codecs on the corpus's sets (B/set, encode CPU s):")
        for name, (per, secs) in codecs(texts).items():
            print(f"  {name:32s} {per:7.1f}  {secs:6.2f}")
        print("bytes per document by method (20k documents, file size / documents):")
        for name, value in bytes_per_doc(texts, folder).items():
            print(f"  {name:22s} {value:7.0f}")
        err, flips, n_pairs = verification_error(texts)
        print(
            f"stored-set verification vs the in-memory 32-bit sets: {n_pairs} candidate pairs "
            f"(J >= 0.5), max |error| {err:.4f}, verdicts flipped at 0.8: {flips}"
        )
        queries = [texts[b] for _, b in planted[:200]]
        q = query_latency(folder / "dedup.db", queries)
        print(
            f"query at {len(texts)} docs: open {q['open']:.2f} s, batched "
            f"{q['batch'] * 1e3:.2f} ms/query, single {q['single_ms']:.2f} ms, hits "
            f"{q['hits']}, peak RSS {q['rss_mb']:.0f} MB"
        )
        if args.big:
            big_store(folder / "big.db", args.big, queries)
        if not args.skip_datasketch:
            ds = datasketch_peer(texts, folder, args.threshold)
            print(
                f"datasketch MinHashLSH (dict storage, in memory), CPU: build {ds['build']:.2f} s "
                f"(x{ds['build'] / times['dedup_index']:.1f} of dedup --index), pickle "
                f"{ds['size'] / 1e6:.1f} MB (x{ds['size'] / size:.1f} of the store)"
            )
            rd = redis_peer(texts, queries, folder, args.threshold)
            if isinstance(rd, str):
                print(f"datasketch MinHashLSH with Redis storage: skipped: {rd}")
            else:
                client = rd["sketch"] + rd["insert"]
                ratio = (client + rd["server_build"]) / times["dedup_index"]
                print(
                    f"datasketch MinHashLSH with Redis storage (disk-backed, band keys only, "
                    f"no verification), CPU: sketch {rd['sketch']:.2f} s + insert "
                    f"{rd['insert']:.2f} s client, {rd['server_build']:.2f} s server "
                    f"(x{ratio:.1f} of dedup --index); query: single {rd['single_ms']:.2f} ms "
                    f"wall ({rd['server_ms']:.2f} ms server CPU), hits {rd['hits']:.0f}; "
                    f"redis memory {rd['memory'] / 1e6:.1f} MB, RDB dump {rd['dump'] / 1e6:.1f} MB "
                    f"(x{rd['dump'] / size:.2f} of the store)"
                )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS of this process: {peak:.0f} MB")


if __name__ == "__main__":
    main()
