"""Server CPU per document of ``neardup serve`` in a small closed loop (few clients, small
requests: the small group commits of a lightly loaded service), from /proc.

A steadier figure than latency on a shared machine: ``--clients`` connections each send
``--batch`` documents a request, as fast as answers come, ``--docs`` documents in all (new
ones, ~100 words, dedup_bench's corpus), to ``POST /v1/check`` (policy ``add``); the server's
user + system CPU seconds over the run, divided by the documents:

    python benchmarks/serve_cpu_bench.py [--clients 2] [--batch 32] [--docs 12800] [--rounds 3]

The tree measured is the one this file sits in (its ``src``): to compare two trees, copy the
file into the other and alternate.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "src")]

from serve_bench import bodies, closed_loop, start_neardup  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clients", type=int, default=2)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--docs", type=int, default=12800)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--readers", type=int, default=2)
    args = ap.parse_args()
    from dedup_bench import build

    texts, _ = build(args.docs * args.rounds)
    order = list(range(len(texts)))
    random.Random(45).shuffle(order)
    docs = [(f"d{i}", texts[i]) for i in order]
    with tempfile.TemporaryDirectory() as tmp:
        server = start_neardup(Path(tmp), args.readers)
        try:
            for r in range(args.rounds):
                part = docs[r * args.docs : (r + 1) * args.docs]
                cpu0 = server.cpu()
                got = asyncio.run(closed_loop(server.port, bodies(part, args.batch), args.clients))
                cpu = server.cpu() - cpu0
                n = got["requests"] * args.batch
                print(
                    f"round {r + 1}: {args.clients} clients x {args.batch} documents: "
                    f"{n / got['wall']:8.1f} docs/s, server CPU {cpu / n * 1e6:7.1f} us/doc",
                    flush=True,
                )
        finally:
            server.stop()


if __name__ == "__main__":
    main()
