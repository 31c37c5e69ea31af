"""``neardup serve`` under load, next to datasketch's MinHashLSH with Redis storage behind the
same kind of endpoint (a Starlette + uvicorn app this file also holds, on a redis-server it
starts on loopback).

A bounded load generator on 127.0.0.1 (asyncio, raw HTTP/1.1 over keep-alive connections, so
the client costs little next to the servers; every request body is built before the clock
starts) sends ~100-word documents (dedup_bench's corpus: text chunks and 2-10 % edited
copies, shuffled) to ``POST /v1/check`` with policy ``add``, minhash at 0.8:

1. **batch**: 16 clients, requests of 32 documents, as fast as answers come (documents/s);
2. **single**: 16 clients, one document a request (requests/s);
3. and 4. the same two at **half** the rate measured, open loop (requests sent on a fixed
   schedule; a request's latency counts from its scheduled time, so a stall is not hidden):
   p50 and p99.

Each phase sends new documents. Every server runs in its own process; its CPU seconds per
document (from /proc: the neardup process; the peer's process plus its redis-server) are
reported too, a steadier measure than throughput on a shared machine. The peer answers with
LSH candidates (datasketch's Redis storage keeps no signatures, so it cannot verify them);
neardup verifies every candidate against the stored shingle sets. Redis runs with the
append-only file on and ``appendfsync everysec`` (its durable default); neardup commits with
``--synchronous normal`` (its default: an acknowledged document survives a SIGKILL; ``full``
fsyncs each group commit too). Run (modest size):

    python benchmarks/serve_bench.py --docs 20000 [--skip-datasketch] [--clients 16]

``--kills N`` instead runs N cycles of: start ``neardup serve`` on one store, load it, SIGKILL
it mid-load; then checks that every acknowledged document is in the store and that the store
passes ``PRAGMA integrity_check`` and ``neardup index check`` after each kill.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"
WORD = re.compile(r"\w+")
WAIT = 120.0  # seconds any one wait may take at most


# ----------------------------------------------------------------------------- the peer


def peer_app(redis_port: int, threshold: float) -> Any:
    """A Starlette app around datasketch MinHashLSH (Redis storage): POST /v1/check with the
    same body and answer shape (duplicates = LSH candidates; similarity unknown: 0)."""
    from datasketch import MinHash, MinHashLSH
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    lsh = MinHashLSH(
        threshold=threshold,
        num_perm=128,
        storage_config={
            "type": "redis",
            "basename": b"serve_bench",
            "redis": {"host": "127.0.0.1", "port": redis_port},
        },
    )
    lock = threading.Lock()  # one insertion session at a time (they share a pipeline)
    template = MinHash(num_perm=128)

    def shingles(text: str) -> list[bytes]:
        toks = WORD.findall(text.lower())
        if len(toks) < 5:
            return [" ".join(toks).encode()] if toks else [b""]
        return [" ".join(toks[i : i + 5]).encode() for i in range(len(toks) - 4)]

    def work(body: bytes) -> dict[str, Any]:
        data = json.loads(body)
        docs = data["documents"]
        sigs = []
        for d in docs:  # the permutations are made once (MinHash.bulk would make them per call)
            m = MinHash(num_perm=128, permutations=template.permutations, scheme=template.scheme)
            m.update_batch(shingles(d["text"]))
            sigs.append(m)
        results = []
        for d, m in zip(docs, sigs, strict=True):
            found = [k.decode() if isinstance(k, bytes) else k for k in lsh.query(m)]
            results.append(
                {
                    "id": str(d["id"]),
                    "added": True,
                    "duplicates": [{"id": k, "similarity": 0.0} for k in found],
                }
            )
        if len(docs) == 1:  # an insertion session costs ~20 ms to open: one insert is cheaper
            lsh.insert(str(docs[0]["id"]), sigs[0], check_duplication=False)
            return {"results": results}
        with lock, lsh.insertion_session(buffer_size=len(docs) + 1) as session:
            for d, m in zip(docs, sigs, strict=True):
                session.insert(str(d["id"]), m, check_duplication=False)
        return {"results": results}

    async def check(request: Request) -> JSONResponse:
        body = await request.body()
        from starlette.concurrency import run_in_threadpool

        return JSONResponse(await run_in_threadpool(work, body))

    return Starlette(routes=[Route("/v1/check", check, methods=["POST"])])


def run_peer(port_file: str, redis_port: int, threshold: float) -> None:
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(2048)
    Path(port_file).write_text(str(sock.getsockname()[1]))
    config = uvicorn.Config(
        peer_app(redis_port, threshold),
        log_config=None,
        access_log=False,
        lifespan="off",
        timeout_keep_alive=30,  # as neardup serve's
    )
    uvicorn.Server(config).run(sockets=[sock])


# ------------------------------------------------------------------------- load generator


class Conn:
    """One keep-alive HTTP/1.1 connection that posts pre-built JSON bodies."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def post(self, path: bytes, body: bytes, extra: bytes = b"") -> int:
        try:
            return await self._post(path, body, extra)
        except (ConnectionError, IndexError):  # the server closed an idle connection
            self.close()
            self.writer = None
            return await self._post(path, body, extra)

    async def _post(self, path: bytes, body: bytes, extra: bytes = b"") -> int:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        assert self.reader is not None
        self.writer.write(
            b"POST "
            + path
            + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            + extra
            + b"Content-Type: application/json\r\nContent-Length: "
            + str(len(body)).encode()
            + b"\r\n\r\n"
            + body
        )
        line = await self.reader.readline()
        status = int(line.split()[1])
        length = 0
        while True:
            header = await self.reader.readline()
            if header in (b"\r\n", b""):
                break
            if header[:15].lower() == b"content-length:":
                length = int(header[15:])
        await self.reader.readexactly(length)
        return status

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


def _quantile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


async def closed_loop(port: int, bodies: list[bytes], clients: int) -> dict[str, Any]:
    """``clients`` connections send the bodies as fast as answers come."""
    queue = list(reversed(bodies))
    lat: list[float] = []
    statuses: dict[int, int] = {}

    async def worker() -> None:
        conn = Conn(port)
        try:
            while queue:
                body = queue.pop()
                t = time.perf_counter()
                status = await conn.post(b"/v1/check", body)
                lat.append(time.perf_counter() - t)
                statuses[status] = statuses.get(status, 0) + 1
        finally:
            conn.close()

    t0 = time.perf_counter()
    await asyncio.wait_for(asyncio.gather(*(worker() for _ in range(clients))), WAIT * 5)
    wall = time.perf_counter() - t0
    return {"wall": wall, "requests": len(lat), "lat": lat, "statuses": statuses}


async def open_loop(
    port: int, bodies: list[bytes], rate: float, clients: int, tag: str = ""
) -> dict[str, Any]:
    """Send request ``k`` at ``t0 + k / rate`` on one of ``clients`` connections; latency
    from the scheduled time. ``tag``: send ``X-Trace-Id: TAG-k`` and keep each request's
    times (``due``, ``write``: when it was written, ``got``: when its answer was read)."""
    free: asyncio.Queue[Conn] = asyncio.Queue()
    conns = [Conn(port) for _ in range(clients)]
    for c in conns:
        free.put_nowait(c)
    lat: list[float] = []
    statuses: dict[int, int] = {}
    times: dict[str, tuple[float, float, float]] = {}
    t0 = time.perf_counter() + 0.05

    async def one(k: int, body: bytes) -> None:
        due = t0 + k / rate
        await asyncio.sleep(max(0.0, due - time.perf_counter()))
        conn = await free.get()
        extra = f"X-Trace-Id: {tag}-{k}\r\n".encode() if tag else b""
        write = time.perf_counter()
        try:
            status = await conn.post(b"/v1/check", body, extra)
        finally:
            free.put_nowait(conn)
        got = time.perf_counter()
        lat.append(got - due)
        if tag:
            times[f"{tag}-{k}"] = (due, write, got)
        statuses[status] = statuses.get(status, 0) + 1

    await asyncio.wait_for(asyncio.gather(*(one(k, b) for k, b in enumerate(bodies))), WAIT * 5)
    for c in conns:
        c.close()
    return {
        "wall": time.perf_counter() - t0,
        "requests": len(lat),
        "lat": lat,
        "statuses": statuses,
        "times": times,
    }


# ------------------------------------------------------------------------------ servers


def _proc_cpu(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _machine_cpu() -> float:
    """CPU seconds the whole machine has been busy (every process, from /proc/stat)."""
    with open("/proc/stat") as fh:
        fields = [int(x) for x in fh.readline().split()[1:]]
    idle = fields[3] + fields[4]  # idle, iowait
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """A server process (and the other processes whose CPU counts with it)."""

    def __init__(self, proc: subprocess.Popen[bytes], port: int, extra: Sequence[int] = ()) -> None:
        self.proc = proc
        self.port = port
        self.pids = [proc.pid, *extra]

    def cpu(self) -> float:
        return sum(_proc_cpu(p) for p in self.pids)

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(WAIT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def start_neardup(
    folder: Path,
    readers: int,
    synchronous: str = "normal",
    commit_delay: float = 0.0,
    trace: Path | None = None,
) -> Server:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    if trace is not None:  # the server's request timelines and long stretches
        env["NEARDUP_SERVE_TRACE"] = str(trace)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "neardup",
            "serve",
            "--index",
            str(folder / "serve.db"),
            "--port",
            "0",
            "--queue-size",
            "65536",
            "--readers",
            str(readers),
            "--synchronous",
            synchronous,
            "--commit-delay",
            str(commit_delay),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert proc.stderr is not None
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        line = proc.stderr.readline().decode()
        m = re.search(r"listening on http://127\.0\.0\.1:(\d+)", line)
        if m:
            threading.Thread(target=proc.stderr.read, daemon=True).start()  # drain
            return Server(proc, int(m.group(1)))
        if not line and proc.poll() is not None:
            break
    proc.kill()
    raise SystemExit("neardup serve did not start")


def start_peer(folder: Path, threshold: float) -> tuple[Server, subprocess.Popen[bytes]] | str:
    server = shutil.which("redis-server")
    if server is None:
        return "redis-server not found (Debian: apt-get install redis-server)"
    try:
        import datasketch  # noqa: F401
        import redis
    except ImportError as exc:
        return f"{exc.name} not installed (the bench dependency group has it)"
    rport = _free_port()
    data = folder / "redis"
    data.mkdir()
    rproc = subprocess.Popen(
        [
            server,
            "--port",
            str(rport),
            "--bind",
            "127.0.0.1",
            "--dir",
            str(data),
            "--appendonly",
            "yes",
            "--appendfsync",
            "everysec",
            "--save",
            "",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    client = redis.Redis(host="127.0.0.1", port=rport)
    for _ in range(200):
        try:
            client.ping()
            break
        except redis.ConnectionError:
            time.sleep(0.05)
    port_file = folder / "peer.port"
    proc = subprocess.Popen(
        [
            sys.executable,
            __file__,
            "--peer",
            str(port_file),
            "--redis-port",
            str(rport),
            "--threshold",
            str(threshold),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + WAIT
    while not (port_file.exists() and port_file.read_text()):
        if proc.poll() is not None or time.monotonic() > deadline:
            rproc.terminate()
            return "the datasketch peer did not start"
        time.sleep(0.05)
    time.sleep(0.5)  # uvicorn takes the socket
    return Server(proc, int(port_file.read_text()), [rproc.pid]), rproc


# ----------------------------------------------------------------------------- SIGKILLs


async def _load_until_killed(port: int, acked: list[str], tag: str, want: int) -> None:
    """8 connections post batches of 8 new documents until ``want`` are acknowledged (or a
    bounded number of requests); the ids of the answered ones go to ``acked``."""
    sent = 0

    async def worker(w: int) -> None:
        nonlocal sent
        conn = Conn(port)
        try:
            while len(acked) < want and sent < 2000:
                sent += 1
                ids = [f"{tag}-{w}-{sent}-{j}" for j in range(8)]
                body = json.dumps(
                    {"documents": [{"id": i, "text": f"{i} " * 30} for i in ids]}
                ).encode()
                if await conn._post(b"/v1/check", body) == 200:
                    acked.extend(ids)
        except (ConnectionError, IndexError, asyncio.IncompleteReadError):
            return
        finally:
            conn.close()

    await asyncio.wait_for(asyncio.gather(*(worker(w) for w in range(8))), WAIT)


def kill_cycles(folder: Path, cycles: int, readers: int, synchronous: str) -> dict[str, Any]:
    """``cycles`` times: start neardup serve on one store, load it, SIGKILL it mid-load (the
    load goes on while it dies); then check that every acknowledged document is in the
    store and that the store passes its integrity check."""
    import sqlite3

    sys.path.insert(0, str(SRC))
    from neardup.store.persistent import PersistentIndex

    acked: list[str] = []
    db = folder / "serve.db"
    for c in range(cycles):
        server = start_neardup(folder, readers, synchronous)
        want = len(acked) + 200

        def kill(server: Server = server, want: int = want) -> None:
            deadline = time.monotonic() + WAIT
            while len(acked) < want and time.monotonic() < deadline:
                time.sleep(0.005)
            server.proc.send_signal(signal.SIGKILL)

        killer = threading.Thread(target=kill)
        killer.start()
        asyncio.run(_load_until_killed(server.port, acked, f"c{c}", want + 10_000))
        killer.join(WAIT)
        server.proc.wait(WAIT)
        with sqlite3.connect(db) as conn:
            ok = conn.execute("PRAGMA integrity_check").fetchone()[0]
        if ok != "ok":
            return {"cycles": c + 1, "integrity": ok}
        with PersistentIndex.open(db, readonly=True) as idx:  # `neardup index check`
            report = idx.store.check()
        if not report["ok"]:
            return {"cycles": c + 1, "integrity": "ok", "check": report["problems"]}
    with PersistentIndex.open(db, readonly=True) as idx:
        stored = {k for keys, _ in idx.store.iter_sketches() for k in keys}
    lost = [k for k in acked if k not in stored]
    return {
        "cycles": cycles,
        "acknowledged": len(acked),
        "stored": len(stored),
        "lost": len(lost),
        "integrity": "ok",
        "check": "ok",
    }


# ------------------------------------------------------------------------------- trace

# the server's steps of a check, in order (neardup.serve.trace), with the client's around them
_STEPS = (
    ("late", "due", "write"),  # the load generator sent it late (its own loop or the CPU)
    ("to_server", "write", "arrive"),  # loopback, then the server's loop reading it
    ("parse", "arrive", "parsed"),
    ("to_writer", "parsed", "queued"),
    ("writer_wait", "queued", "taken"),  # queued behind a group commit or a tidy step
    ("encode", "taken", "encoded"),
    ("check", "encoded", "checked"),
    ("commit", "checked", "committed"),
    ("to_loop", "committed", "settled"),  # the answers handed back to the event loop
    ("respond", "settled", "sent"),  # the handler resumed, the JSON answer written
    ("to_client", "sent", "got"),  # loopback, then the load generator's loop reading it
)


def trace_report(path: Path, traced: dict[str, dict[str, tuple[float, float, float]]]) -> None:
    """Print where the slowest requests of each traced phase spent their time: the client's
    latency next to the server's own for the same requests, their steps, and the server's
    long stretches (> 5 ms) that overlap them."""
    server: dict[str, dict[str, Any]] = {}
    stretches: list[dict[str, Any]] = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            if rec["kind"] == "request":
                server[rec["id"]] = rec
            else:
                stretches.append(rec)
    for phase, times in traced.items():
        rows = []
        for rid, (due, write, got) in times.items():
            rec = server.get(rid)
            if rec is None or "sent" not in rec:
                continue
            rows.append({**rec, "due": due, "write": write, "got": got})
        if not rows:
            continue
        rows.sort(key=lambda r: r["got"] - r["due"])
        n = len(rows)
        start, end = min(r["due"] for r in rows), max(r["got"] for r in rows)
        client = [r["got"] - r["due"] for r in rows]
        own = sorted(r["sent"] - r["arrive"] for r in rows)
        print(
            f"  trace {phase}: {n} requests; client p50/p99 "
            f"{_quantile(client, 0.5) * 1e3:.1f}/{_quantile(client, 0.99) * 1e3:.1f} ms, "
            f"server's own (arrival to response) p50/p99 {_quantile(own, 0.5) * 1e3:.1f}/"
            f"{_quantile(own, 0.99) * 1e3:.1f} ms",
            flush=True,
        )
        worst = rows[min(n - 1, int(0.99 * n)) :]
        print(f"    the {len(worst)} slowest (ms): " + " ".join(name for name, _, _ in _STEPS))
        for r in worst:
            parts = []
            for _, a, b in _STEPS:
                parts.append(f"{(r[b] - r[a]) * 1e3:.1f}" if a in r and b in r else "-")
            group = f"group {r.get('group_requests', '-')}/{r.get('group_docs', '-')}"
            print(f"    {(r['got'] - r['due']) * 1e3:6.1f}: {' '.join(parts)}  ({group})")
        longs: dict[str, list[float]] = {}
        for st in stretches:
            if st["end"] >= start and st["start"] <= end and st["end"] - st["start"] >= 0.005:
                longs.setdefault(f"{st['where']} {st['what']}", []).append(st["end"] - st["start"])
        summary = ", ".join(
            f"{k}: {len(v)}x, max {max(v) * 1e3:.1f} ms"
            for k, v in sorted(longs.items(), key=lambda kv: -max(kv[1]))
        )
        print(f"    stretches > 5 ms in the phase: {summary or 'none'}")
        # the distributions that load does not move much: what the writer's idle steps
        # cost (wall, stretches of the trace's threshold and up) and how long requests queued
        tidy: dict[str, list[tuple[float, float]]] = {}
        for st in stretches:
            inside = start <= st["start"] and st["end"] <= end
            if inside and st["where"] == "writer" and st["what"].startswith("tidy"):
                tidy.setdefault(st["what"], []).append((st["end"] - st["start"], st["cpu"]))
        for what, walls in sorted(tidy.items()):
            w = sorted(x for x, _ in walls)
            print(
                f"    writer {what}: {len(w)}x, wall p50/p90/max "
                f"{_quantile(w, 0.5) * 1e3:.1f}/{_quantile(w, 0.9) * 1e3:.1f}/{w[-1] * 1e3:.1f} ms,"
                f" cpu max {max(c for _, c in walls) * 1e3:.1f} ms"
            )
        waits = [r["taken"] - r["queued"] for r in rows if "taken" in r and "queued" in r]
        if waits:
            print(
                "    writer_wait p50/p90/p99/max "
                + "/".join(f"{_quantile(waits, q) * 1e3:.1f}" for q in (0.5, 0.9, 0.99, 1.0))
                + f" ms; > 10 ms: {sum(x > 0.01 for x in waits)} of {len(waits)}"
            )
        for r in worst[-3:]:
            over = [
                f"{st['where']} {st['what']} {(st['end'] - st['start']) * 1e3:.1f} ms"
                + (f" (cpu {st['cpu'] * 1e3:.1f})" if st["cpu"] >= 0 else "")
                for st in stretches
                if st["end"] >= r["due"] and st["start"] <= r["got"]
            ]
            print(f"    overlapping {r['id']}: {'; '.join(over) or 'none'}")


# --------------------------------------------------------------------------------- run


def bodies(docs: list[tuple[str, str]], size: int) -> list[bytes]:
    return [
        json.dumps(
            {"documents": [{"id": i, "text": t} for i, t in docs[k : k + size]], "policy": "add"}
        ).encode()
        for k in range(0, len(docs), size)
    ]


def measure(
    server: Server,
    plan: dict[str, Any],
    clients: int,
    half: dict[str, float] | None = None,
    traced: dict[str, dict[str, tuple[float, float, float]]] | None = None,
    whole: bool = False,
    wal: Path | None = None,
) -> dict[str, dict[str, float]]:
    """Run the plan's phases; a half-rate phase sends at half the rate its closed-loop phase
    measured, or at the requests/s ``half`` gives for it, for about 6 s or (``whole``) all
    the requests the plan holds for it. ``traced``: the half-rate phases' client times go
    there, by request id."""
    out: dict[str, dict[str, float]] = {}
    rates: dict[str, float] = {}
    for name, (reqs, per) in plan.items():
        cpu0 = server.cpu()
        mine0 = sum(os.times()[:2])
        machine0 = _machine_cpu()
        if name.startswith("half-"):
            base = name.removeprefix("half-")
            rate = half[base] if half else rates[base] / 2
            tag = name if traced is not None else ""
            if not whole:
                reqs = reqs[: max(50, int(rate * 6))]  # about 6 s at that rate
            got = asyncio.run(open_loop(server.port, reqs, rate, 32, tag))
            if traced is not None:
                traced[name] = got["times"]
        else:
            got = asyncio.run(closed_loop(server.port, reqs, clients))
        cpu = server.cpu() - cpu0
        mine = sum(os.times()[:2]) - mine0
        # the cores the other processes took meanwhile: a busy machine delays both sides
        others = _machine_cpu() - machine0 - cpu - mine
        docs = got["requests"] * per
        req_rate = got["requests"] / got["wall"]
        if not name.startswith("half-"):
            rates[name] = req_rate
        out[name] = {
            "requests": got["requests"],
            "docs_per_s": round(docs / got["wall"], 1),
            "requests_per_s": round(req_rate, 1),
            "p50_ms": round(_quantile(got["lat"], 0.5) * 1e3, 2),
            "p99_ms": round(_quantile(got["lat"], 0.99) * 1e3, 2),
            # the p99 is the n-th worst of the requests: a few stalls decide it
            "p99_nth_worst": got["requests"]
            - min(got["requests"] - 1, int(0.99 * got["requests"])),
            "server_cpu_us_per_doc": round(cpu / docs * 1e6, 1),
            "non_200": sum(v for k, v in got["statuses"].items() if k != 200),
            "cores_server": round(cpu / got["wall"], 2),
            "cores_client": round(mine / got["wall"], 2),
            "cores_others": round(max(0.0, others) / got["wall"], 2),
        }
        if wal is not None and wal.exists():  # the file never shrinks: the most it held
            out[name]["wal_file_mb"] = round(wal.stat().st_size / 1e6, 1)
        print(f"  {name:>12}: {out[name]}", flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--docs", type=int, default=20_000)
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--readers", type=int, default=2)
    ap.add_argument("--threshold", type=float, default=0.8)
    ap.add_argument("--synchronous", choices=["normal", "full"], default="normal")
    ap.add_argument("--commit-delay", type=float, default=0.0, help="neardup serve's")
    ap.add_argument(
        "--half-rates",
        help="DOCS,REQS: send the half-rate phases at DOCS documents/s in batches and REQS "
        "single requests/s (e.g. 2500,500, half of issue 45's targets) instead of half of "
        "the rates measured",
    )
    ap.add_argument(
        "--half-docs",
        type=int,
        help="new documents for EACH half-rate phase, all sent (default: 30 %% and 10 %% of "
        "--docs, for about 6 s at most: at 2500,500 that is 188 batch requests, so the p99 "
        "is their 2nd worst, and 2,000 single ones, the 20th worst)",
    )
    ap.add_argument(
        "--trace",
        action="store_true",
        help="neardup only: the server records each request's steps and its long stretches "
        "(NEARDUP_SERVE_TRACE); print where the half-rate phases' slowest requests waited",
    )
    ap.add_argument("--skip-datasketch", action="store_true")
    ap.add_argument("--skip-neardup", action="store_true")
    ap.add_argument(
        "--kills", type=int, default=0, help="SIGKILL cycles under load (then nothing else)"
    )
    ap.add_argument("--peer", help=argparse.SUPPRESS)
    ap.add_argument("--redis-port", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.peer:
        run_peer(args.peer, args.redis_port, args.threshold)
        return
    if args.kills:
        with tempfile.TemporaryDirectory() as tmp:
            print(json.dumps(kill_cycles(Path(tmp), args.kills, args.readers, args.synchronous)))
        return
    sys.path[:0] = [str(HERE), str(SRC)]
    from dedup_bench import build

    main_docs = args.docs if args.half_docs is None else int(args.docs * 0.6)
    texts, _ = build(main_docs + (0 if args.half_docs is None else 2 * args.half_docs))
    order = list(range(len(texts)))
    random.Random(45).shuffle(order)  # the edited copies are at the end: spread them
    docs = [(f"d{i}", texts[i]) for i in order]
    words = sum(len(t.split()) for t in texts) / len(texts)
    # four slices of new documents: batch, single, then the half-rate runs
    n = len(docs)
    cuts = [0, int(n * 0.45), int(n * 0.6), int(n * 0.9), n]
    if args.half_docs is not None:
        h = args.half_docs
        cuts = [0, int(main_docs * 0.75), main_docs, main_docs + h, main_docs + 2 * h]
    plan = {
        "batch": (bodies(docs[cuts[0] : cuts[1]], args.batch), args.batch),
        "single": (bodies(docs[cuts[1] : cuts[2]], 1), 1),
        "half-batch": (bodies(docs[cuts[2] : cuts[3]], args.batch), args.batch),
        "half-single": (bodies(docs[cuts[3] : cuts[4]], 1), 1),
    }
    print(
        f"corpus: {n} docs, {words:.0f} words each on average; {args.clients} clients, "
        f"batches of {args.batch}; minhash {args.threshold}; neardup --synchronous "
        f"{args.synchronous} --commit-delay {args.commit_delay:g}",
        flush=True,
    )
    half = None
    if args.half_rates:
        batch_docs, single_reqs = (float(x) for x in args.half_rates.split(","))
        half = {"batch": batch_docs / args.batch, "single": single_reqs}
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        if not args.skip_neardup:
            print("neardup serve:", flush=True)
            trace = folder / "trace.jsonl" if args.trace else None
            server = start_neardup(folder, args.readers, args.synchronous, args.commit_delay, trace)
            traced: dict[str, dict[str, tuple[float, float, float]]] | None = (
                {} if args.trace else None
            )
            whole = args.half_docs is not None
            try:
                wal = folder / "serve.db-wal"
                results["neardup"] = measure(server, plan, args.clients, half, traced, whole, wal)
            finally:
                server.stop()
            if trace is not None and traced is not None:
                trace_report(trace, traced)
        if not args.skip_datasketch:
            print("datasketch MinHashLSH + Redis:", flush=True)
            peer = start_peer(folder, args.threshold)
            if isinstance(peer, str):
                print(f"  skipped: {peer}")
            else:
                server, rproc = peer
                try:
                    results["datasketch_redis"] = measure(
                        server, plan, args.clients, half, whole=args.half_docs is not None
                    )
                finally:
                    server.stop()
                    rproc.terminate()
                    rproc.wait(WAIT)
    if "datasketch_redis" in results and "neardup" in results:
        for phase in ("batch", "single"):
            a = results["neardup"][phase]["docs_per_s"]
            b = results["datasketch_redis"][phase]["docs_per_s"]
            print(f"ratio {phase}: neardup / datasketch+redis = {a / b:.2f}x")
    print(json.dumps(results))


if __name__ == "__main__":
    main()
