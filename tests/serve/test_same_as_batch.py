"""The same answers as batch: documents sent one by one, in file order, through check-and-add
get the duplicates that ``neardup dedup --index`` finds in that file, and the first arrival of
each cluster is the one kept."""

from __future__ import annotations

import json
import random
from pathlib import Path

from click.testing import CliRunner

from neardup.cli import main
from neardup.cluster import components
from neardup.serve.client import Client

from .serving import near, start_thread_server, text


def _corpus(path: Path) -> list[tuple[str, str]]:
    """Texts with near-duplicates (one word changed), chains of them (each one word from the
    one before: the ends are not duplicates), exact copies, and unrelated texts; shuffled."""
    rng = random.Random(45)
    docs: list[tuple[str, str]] = []
    for b in range(70):
        base = text(5000 + b)
        docs.append((f"b{b}", base))
        prev = base
        for v in range(rng.randrange(4)):
            prev = near(prev if rng.random() < 0.5 else base, 1, 100 * b + v)
            docs.append((f"b{b}v{v}", prev))
        if rng.random() < 0.2:
            docs.append((f"b{b}copy", base))
    rng.shuffle(docs)
    with path.open("w", encoding="utf-8") as f:
        for doc_id, body in docs:
            f.write(json.dumps({"id": doc_id, "text": body}) + "\n")
    return docs


def _cli(*args: str) -> list[dict[str, object]]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in result.stdout.splitlines() if line.strip()]


def test_one_by_one_check_and_add_equals_dedup_index(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    docs = _corpus(corpus)
    order = {doc_id: i for i, (doc_id, _) in enumerate(docs)}
    batch_pairs = {
        (p["a"], p["b"]): p["similarity"]
        for p in _cli("dedup", str(corpus), "--index", str(tmp_path / "b1.db"), "--pairs", "-q")
    }
    batch_clusters = {
        (c["representative"], tuple(c["members"]))  # type: ignore[arg-type]
        for c in _cli("dedup", str(corpus), "--index", str(tmp_path / "b2.db"), "-q")
    }
    assert len(batch_pairs) > 50 and len(batch_clusters) > 20  # the corpus has both kinds

    run = start_thread_server(tmp_path / "online.db")
    try:
        with Client(run.url) as client:
            online = [client.check([doc])[0] for doc in docs]  # one request per document
            # the same file in requests of 32: the group commits check within a group too
            run2 = start_thread_server(tmp_path / "online32.db")
            try:
                with Client(run2.url, batch_size=32) as grouped:
                    in_groups = grouped.check(docs)
            finally:
                run2.stop()
    finally:
        run.stop()

    assert all(r.added for r in online)
    online_pairs = {(d.id, r.id): d.similarity for r in online for d in r.duplicates}
    assert set(online_pairs) == set(batch_pairs)
    for pair, sim in online_pairs.items():
        # the store verifies with its compact sets (hashes cut to log2(n) + 10 bits, see
        # sketch/setcodec.py), dedup with the in-memory ones: a chance equality of two cut
        # hashes moves a similarity by about one shingle in 60
        assert abs(sim - batch_pairs[pair]) < 0.03, pair
    assert [(r.id, r.duplicates) for r in in_groups] == [(r.id, r.duplicates) for r in online]

    # the clusters of the online answers, representative = first arrival, are dedup's
    a = [order[x] for x, _ in online_pairs]
    b = [order[y] for _, y in online_pairs]
    import numpy as np

    roots = components(len(docs), np.array(a, dtype=np.int64), np.array(b, dtype=np.int64))
    groups: dict[int, list[str]] = {}
    for i, root in enumerate(roots.tolist()):
        groups.setdefault(root, []).append(docs[i][0])
    online_clusters = {(m[0], tuple(m)) for m in groups.values() if len(m) > 1}
    assert online_clusters == batch_clusters
    # the first arrival of every cluster had no duplicate when it came: it is the one kept
    first = {r.id for r in online if not r.duplicates}
    assert {rep for rep, _ in batch_clusters} <= first
