"""CPU per document of ``neardup serve``'s writer alone, by group size (no HTTP, no clients).

The writer's cost of a group commit has a fixed part (SQL statements, two new lookup segments,
their merges, the per-segment lookups) and a part per document; small groups pay the fixed part
over fewer documents. This measures the writer thread's CPU (``time.thread_time``) for
check-and-add groups of ``G`` documents, one after the other, on a store seeded with
``--seed-docs`` documents, with the idle segment merges run after each group (``--idle``, as
at a low rate) or after every fourth (the default, closer to a loaded service):

    PYTHONPATH=src python benchmarks/serve_writer_bench.py --groups 1,32,512 [--docs 6400] [--idle]

Timings on a shared machine are noisy: run it a few times, alternating the trees compared.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import tempfile
import time
from pathlib import Path

from neardup.io import Document
from neardup.serve.service import Service, _Job
from neardup.store import Store
from neardup.store.persistent import PersistentIndex


def _docs(rng: random.Random, prefix: str, n: int) -> list[Document]:
    words = [f"w{i}" for i in range(5000)]
    return [Document(f"{prefix}{i}", " ".join(rng.choices(words, k=100))) for i in range(n)]


def _run(svc: Service, store: Store, docs: list[Document], group: int, idle: bool) -> float:
    loop = asyncio.new_event_loop()  # never run: the answers are only queued on it
    t = time.thread_time()
    for a in range(0, len(docs), group):
        job = _Job("check", loop, loop.create_future(), docs=docs[a : a + group], policy="add")
        svc._guarded(store, [job])
        if idle:
            while svc._tidy(store):
                pass
        elif (a // group) % 4 == 3:
            svc._tidy(store)
    loop.close()
    return (time.thread_time() - t) / len(docs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--groups", default="1,32,512")
    ap.add_argument("--docs", type=int, default=6400)
    ap.add_argument("--seed-docs", type=int, default=20000)
    ap.add_argument("--idle", action="store_true")
    args = ap.parse_args()
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "s.db")
        PersistentIndex.open(path, method="minhash", threshold=0.8).close()
        method = PersistentIndex.open(path).method
        svc = Service(path, method)
        store = Store.open(
            path,
            kind=svc._kind,
            params=svc._params,
            create=False,
            cache=True,
            synchronous="normal",
        )
        svc._warm_up()
        _run(svc, store, _docs(rng, "seed", args.seed_docs), 512, True)
        for g in (int(x) for x in args.groups.split(",")):
            docs = _docs(rng, f"g{g}-", args.docs if g > 1 else min(args.docs, 1600))
            per = _run(svc, store, docs, g, args.idle)
            print(f"group {g:5d}: writer CPU {per * 1e6:8.1f} µs/doc")
        store.close()


if __name__ == "__main__":
    main()
