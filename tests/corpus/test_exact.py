"""--method exact (in memory and Bloom mode), the Bloom filter's rate, and exact_first."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.canonicalize import Canonicalizer
from neardup.cli import main
from neardup.corpus.exact import BloomFilter, exact_digests, exact_first
from neardup.io import Document
from neardup.methods import make_method
from neardup.pipeline import dedup


def _reference(texts: list[str]) -> set[tuple[str, ...]]:
    canon = Canonicalizer("txtfp")
    groups: dict[str, list[str]] = {}
    for i, t in enumerate(texts):
        groups.setdefault(canon.canonicalize(t), []).append(str(i))
    return {tuple(g) for g in groups.values() if len(g) > 1}


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(["a b", "A b", "c", "", "dé", "DÉ", "x y z"]), max_size=30))
def test_exact_equals_grouping_by_canonical_text(texts: list[str]) -> None:
    for method in (make_method("exact"), make_method("exact", bloom_capacity=8, bloom_fp_rate=0.2)):
        r = dedup(texts, method=method, batch_size=7)
        assert {c.members for c in r.clusters} == _reference(texts)
        assert all(p.similarity == 1.0 for p in r.pairs)


def test_bloom_mode_equals_memory_mode_beyond_capacity() -> None:
    rng = random.Random(3)
    texts = [f"doc {rng.randrange(400)}" for _ in range(3000)]
    plain = dedup(texts, method="exact")
    bloom = dedup(texts, method=make_method("exact", bloom_capacity=100, bloom_fp_rate=0.01))
    assert [c.members for c in plain.clusters] == [c.members for c in bloom.clusters]
    assert [(p.a, p.b) for p in plain.pairs] == [(p.a, p.b) for p in bloom.pairs]


def test_bloom_false_positive_rate_as_stated() -> None:
    """At capacity, the share of new digests flagged is the stated rate (tolerance 1.5x)."""
    n, p = 20000, 0.01
    bf = BloomFilter(n, p)
    bf.add_and_test(exact_digests([f"in {i}" for i in range(n)]))
    assert bf.expected_fp_rate() <= 1.2 * p
    probe = BloomFilter(n, p)
    probe._words = bf._words.copy()  # test membership only: one add on a copy per item
    flagged = [
        probe.add_and_test(d[None, :])[0] for d in exact_digests([f"o{i}" for i in range(4000)])
    ]
    assert 0.3 * p <= np.mean(flagged) <= 1.5 * p


def test_digest_is_xxh3_128_of_canonical_utf8() -> None:
    import xxhash

    d = exact_digests(["Straße"])
    value = xxhash.xxh3_128_intdigest(Canonicalizer("txtfp").canonicalize("Straße").encode())
    assert (int(d[0, 1]) << 64) | int(d[0, 0]) == value
    assert make_method("exact").fingerprint(Document("a", "Straße")) == f"{value:032x}"


def _corpus() -> list[Document]:
    rng = random.Random(7)
    words = [f"w{i}" for i in range(300)]
    base = [" ".join(rng.choice(words) for _ in range(80)) for _ in range(40)]
    texts = []
    for i in range(200):
        t = base[i % 40]
        if i % 3 == 1:  # a near copy
            t = t.replace(t.split()[5], "edited", 1)
        elif i % 3 == 2 and i > 40:
            t = base[rng.randrange(40)]  # an exact copy
        texts.append(t if i >= 40 else base[i])
    texts += ["", "", "short", "Short"]
    return [Document(str(i), t) for i, t in enumerate(texts)]


def test_exact_first_gives_the_same_clusters() -> None:
    docs = _corpus()
    for name in ("minhash", "simhash"):
        plain = dedup(docs, method=make_method(name))
        fast = exact_first(docs, method=make_method(name))
        assert [c.members for c in fast.clusters] == [c.members for c in plain.clusters], name
        assert fast.stats["exact_copies"] > 0
        assert fast.doc_ids == plain.doc_ids


def test_cli_exact_and_exact_first(tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps({"id": d.id, "text": d.text}) + "\n" for d in _corpus()))
    runner = CliRunner()
    out = runner.invoke(main, ["dedup", str(src), "-m", "exact", "-q"])
    assert out.exit_code == 0, out.stderr
    exact = [json.loads(x)["members"] for x in out.stdout.splitlines()]
    docs = _corpus()
    assert {tuple(m) for m in exact} == _reference([d.text or "" for d in docs])
    out = runner.invoke(main, ["dedup", str(src), "-m", "exact", "-q", "--bloom-capacity", "50"])
    assert (
        out.exit_code == 0 and [json.loads(x)["members"] for x in out.stdout.splitlines()] == exact
    )
    a = runner.invoke(main, ["dedup", str(src), "-q", "--exact-first"])
    b = runner.invoke(main, ["dedup", str(src), "-q"])
    assert a.exit_code == 0 and a.stdout == b.stdout
    bad = runner.invoke(main, ["dedup", str(src), "--bloom-capacity", "5"])
    assert bad.exit_code == 2
    assert np.asarray(exact_digests([])).shape == (0, 2)


def test_exact_first_keeps_center_clusters() -> None:
    """Center clusters stay as the inner run made them (no chaining through their pairs when
    the copies are folded back), and each copy joins its original's cluster."""
    from neardup.corpus.exact import exact_first
    from neardup.io import Document
    from neardup.methods import make_method

    words = [f"w{k}" for k in range(12)]
    texts = [" ".join(words[0:10]), " ".join(words[1:11]), " ".join(words[2:12])]
    docs = [Document(str(i), t) for i, t in enumerate([*texts, texts[2]])]
    m = make_method("minhash", 0.8, k=1)
    got = exact_first(docs, method=m, clustering="center")
    assert [c.members for c in got.clusters] == [("0", "1"), ("2", "3")]
    assert got.clustering == "center"
    chained = exact_first(docs, method=m, clustering="components")
    assert [c.members for c in chained.clusters] == [("0", "1", "2", "3")]
