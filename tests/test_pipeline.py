"""dedup(): correctness against brute force, determinism, errors."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

import neardup
from neardup.errors import ConfigError, InputError
from neardup.io import Document
from neardup.pipeline import kept_ids

EXAMPLES = Path(__file__).parents[1] / "examples" / "text"


def _corpus(seed: int = 5) -> list[str]:
    rng = random.Random(seed)
    base = [p.read_text(errors="replace") for p in sorted(EXAMPLES.glob("*.txt"))]
    paras = [q for t in base for q in t.split("\n\n") if len(q.split()) > 25]
    docs = list(paras)
    for p in paras[:60]:
        words = p.split()
        for _ in range(rng.choice([1, 2, 4, 8])):
            words[rng.randrange(len(words))] = f"w{rng.randrange(1000)}"
        docs.append(" ".join(words))
    rng.shuffle(docs)
    return docs


def _shingles(text: str) -> set[tuple[str, ...]]:
    toks = neardup.WordTokenizer().tokenize(neardup.Canonicalizer().canonicalize(text))
    if len(toks) < 5:
        return {tuple(toks)} if toks else set()
    return {tuple(toks[i : i + 5]) for i in range(len(toks) - 4)}


def test_minhash_matches_brute_force() -> None:
    docs = _corpus()
    sets = [_shingles(d) for d in docs]
    truth = set()
    for i in range(len(docs)):
        for j in range(i + 1, len(docs)):
            u = len(sets[i] | sets[j])
            if u and len(sets[i] & sets[j]) / u >= 0.8:
                truth.add((i, j))
    result = neardup.dedup(list(enumerate(docs)), method="minhash", threshold=0.8)
    found = {(int(p.a), int(p.b)) for p in result.pairs}
    assert len(truth) > 30
    for p in result.pairs:  # verification: nothing below the threshold is reported
        a, b = sets[int(p.a)], sets[int(p.b)]
        assert len(a & b) / len(a | b) >= 0.8 - 1e-12
    assert len(found & truth) / len(truth) >= 0.99
    assert found <= truth


def test_simhash_is_exact_against_brute_force() -> None:
    docs = _corpus(6)
    hasher = neardup.SimHasher()
    codes = [hasher.sketch(d).value for d in docs]
    truth = {
        (i, j)
        for i in range(len(docs))
        for j in range(i + 1, len(docs))
        if (codes[i] ^ codes[j]).bit_count() <= 6
    }
    result = neardup.dedup(list(enumerate(docs)), method="simhash", threshold=0.9)
    assert {(int(p.a), int(p.b)) for p in result.pairs} == truth


def test_clusters_are_deterministic_and_ordered() -> None:
    docs = [
        "alpha beta gamma delta epsilon zeta eta",
        "x y z",
        "alpha beta gamma delta epsilon zeta eta!",
        "one two three four five six seven",
        "one two three four five six seven.",
    ]
    r = neardup.dedup(docs, method="simhash")
    assert [(c.id, c.representative, c.members) for c in r.clusters] == [
        (0, "0", ("0", "2")),
        (1, "3", ("3", "4")),
    ]
    assert sorted(kept_ids(r)) == ["0", "1", "3"]
    assert r.duplicates == 2


def test_on_error_skip_and_fail() -> None:
    docs = [
        Document("a", "one two three four five six"),
        Document("bad", None),
        Document("c", "one two three four five six"),
    ]
    with pytest.raises(InputError, match="bad"):
        neardup.dedup(docs, method="simhash", batch_size=2)
    r = neardup.dedup(docs, method="simhash", batch_size=2, on_error="skip")
    assert r.stats["skipped"] == 1 and [c.members for c in r.clusters] == [("a", "c")]


def test_bad_arguments() -> None:
    with pytest.raises(ConfigError):
        neardup.dedup(["x"], method="nope")
    with pytest.raises(ConfigError):
        neardup.dedup(["x"], threshold=1.5)
    with pytest.raises(ConfigError):
        neardup.dedup(["x"], jobs=0)
    with pytest.raises(InputError):
        neardup.dedup([42])  # type: ignore[list-item]


def test_empty_corpus() -> None:
    r = neardup.dedup([], method="minhash")
    assert r.clusters == [] and r.pairs == [] and r.n_docs == 0


def _drifting_chain(n: int = 10, seed: int = 3) -> list[str]:
    """Documents each two words away from the previous one: neighbors match, ends do not."""
    rng = random.Random(seed)
    words = [f"w{rng.randrange(10**6)}" for _ in range(200)]
    docs = []
    for _ in range(n):
        docs.append(" ".join(words))
        for _ in range(2):
            words[rng.randrange(len(words))] = f"v{rng.randrange(10**6)}"
    return docs


def test_center_clustering_keeps_members_near_their_representative(
    caplog: pytest.LogCaptureFixture,
) -> None:
    docs = _drifting_chain()
    with caplog.at_level("WARNING", logger="neardup.pipeline"):
        comp = neardup.dedup(docs, threshold=0.8, giant_cluster=5)
    assert [c.size for c in comp.clusters] == [10] and comp.clustering == "components"
    assert "giant cluster 0: 10 members (representative 0), lowest pair similarity" in caplog.text
    assert "--clustering center" in caplog.text
    caplog.clear()
    with caplog.at_level("WARNING", logger="neardup.pipeline"):
        bare = neardup.dedup(docs, threshold=0.8, giant_cluster=5, pairs=False, jobs=2)
    assert [c.members for c in bare.clusters] == [c.members for c in comp.clusters]
    assert (
        "giant cluster 0: 10 members (representative 0), pair similarities not collected"
        in caplog.text
    )
    center = neardup.dedup(docs, threshold=0.8, clustering="center")
    assert center.clustering == "center" and len(center.clusters) > 1
    assert center.pairs == comp.pairs  # the same accepted pairs, clustered differently
    accepted = {(p.a, p.b) for p in center.pairs}
    for c in center.clusters:
        assert c.representative == c.members[0]
        for m in c.members[1:]:
            assert (c.representative, m) in accepted  # within the threshold of the center
    with pytest.raises(ConfigError, match="clustering must be"):
        neardup.dedup(docs, clustering="chain")


def test_a_runs_ids_in_order_whatever_their_batches_held() -> None:
    """Packed batches' ids are kept as bytes until the walk is done, lists as they are; the
    strings come back in input order (also when a store read some packed ids already)."""
    from neardup.packed import PackedIds
    from neardup.pipeline import _Ids

    ids = _Ids()
    read = PackedIds(b"ef", np.array([0, 1, 2]))
    assert list(read) == ["e", "f"] and read.made
    ids.extend(PackedIds(b"ab\xc3\xa7", np.array([0, 1, 2, 4])))
    ids.extend(PackedIds(b"d", np.array([0, 1])))
    ids.extend(["x", "y"])
    ids.extend(read)
    ids.extend(PackedIds(b"gh", np.array([0, 2])))
    assert len(ids) == 9
    want = ["a", "b", "ç", "d", "x", "y", "e", "f", "gh"]
    assert ids.strings() == want
    assert ids.strings() == want  # again: the same


def test_the_walk_reads_only_the_sets_it_compares(tmp_path: Path) -> None:
    """The collector keeps the sets of the rows that share a band key only: a second walk
    over what it holds then gives the same pairs, and a JSONL run the same clusters as the
    same documents given as strings."""
    from neardup.methods import make_method
    from neardup.packed import PackedBatches

    rng = random.Random(7)
    words = [f"w{k}" for k in range(400)]
    base = [" ".join(rng.choice(words) for _ in range(60)) for _ in range(40)]
    docs = base + [t + " extra" for t in base[:10]]
    m = make_method("minhash", 0.7)
    c = m.collector()
    c.add(
        np.arange(len(docs), dtype=np.int64),
        m.sketch([Document(str(i), t) for i, t in enumerate(docs)]),
    )
    first = c.pairs()
    kept = len(c._values)
    second = c.pairs()
    assert len(c._values) == kept < sum(len(t.split()) for t in docs)
    assert first.a.tolist() == second.a.tolist() and first.b.tolist() == second.b.tolist()
    assert first.similarity.tolist() == second.similarity.tolist()
    assert sorted(zip(first.a.tolist(), first.b.tolist(), strict=True)) == [
        (k, k + 40) for k in range(10)
    ]
    with pytest.raises(ConfigError, match="walked already"):  # its dropped sets could match
        c.add(np.array([len(docs)], dtype=np.int64), m.sketch([Document("new", docs[0])]))
    path = tmp_path / "d.jsonl"
    path.write_text("".join(f'{{"id": "d{i}", "text": "{t}"}}\n' for i, t in enumerate(docs)))
    packed = neardup.dedup(PackedBatches(path), threshold=0.7, pairs=False)
    plain = neardup.dedup([(f"d{i}", t) for i, t in enumerate(docs)], threshold=0.7)
    assert [c.members for c in packed.clusters] == [c.members for c in plain.clusters]
    assert packed.doc_ids == [f"d{i}" for i in range(len(docs))]
