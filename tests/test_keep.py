"""The keep rule: every removed record is within the threshold of the record kept for it
(a chain keeps more than one record), unless one-per-cluster is asked for."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from neardup.cli import main
from neardup.cluster import cluster_labels, components, kept_roots
from neardup.errors import ConfigError
from neardup.keep import kept_for
from neardup.pipeline import kept_ids
from neardup.report import Cluster, DedupResult, PairList

# a chain: 0 ~ 1 ~ 2 ~ 3, each link at 0.9, the ends far apart; 4 ~ 5 a plain pair
ROWS_A = np.array([0, 1, 2, 4])
ROWS_B = np.array([1, 2, 3, 5])
SIMS = np.array([0.9, 0.85, 0.95, 0.99])


def _result(n: int = 7) -> DedupResult:
    ids = [f"d{k}" for k in range(n)]
    roots = components(n, ROWS_A, ROWS_B)
    clusters = [
        Cluster(c, tuple(ids[m] for m in g), ids[g[0]]) for c, g in enumerate(cluster_labels(roots))
    ]
    return DedupResult(
        clusters=clusters,
        pairs=PairList(ids, ROWS_A, ROWS_B, SIMS),
        n_docs=n,
        method="minhash",
        threshold=0.8,
        params="",
        doc_ids=ids,
    )


def test_kept_roots_never_removes_through_a_chain() -> None:
    roots = components(7, ROWS_A, ROWS_B)
    kept, to_kept = kept_roots(roots, ROWS_A, ROWS_B, SIMS)
    # 0 keeps 1; 2 is not paired with 0, so it is kept and takes 3
    assert kept.tolist() == [0, 0, 2, 2, 4, 4, 6]
    assert to_kept.tolist() == [1.0, 0.9, 1.0, 0.95, 1.0, 0.99, 1.0]


def test_kept_roots_in_keep_order() -> None:
    roots = components(7, ROWS_A, ROWS_B)
    order = np.array([1, 0, 2, 3, 5, 4, 6])  # 1 first (say, the longest), then 5 before 4
    kept, _ = kept_roots(roots, ROWS_A, ROWS_B, SIMS, order)
    assert kept.tolist() == [1, 1, 1, 3, 5, 5, 6]
    with pytest.raises(ConfigError, match="permutation"):
        kept_roots(roots, ROWS_A, ROWS_B, SIMS, np.array([0, 0, 1, 2, 3, 4, 5]))


def test_pairs_across_clusters_do_not_count() -> None:
    roots = np.array([0, 0, 2, 2])  # center clusters {0, 1} and {2, 3}, with a pair 1 ~ 2
    kept, _ = kept_roots(roots, np.array([0, 1, 2]), np.array([1, 2, 3]), np.ones(3))
    assert kept.tolist() == [0, 0, 2, 2]


def test_every_removed_record_is_within_the_threshold_of_its_kept_one() -> None:
    r = _result()
    plan = kept_for(r)
    for member, (_, kept, sim) in plan.items():
        if kept != member:
            assert sim is not None and sim >= r.threshold
    assert sorted(kept_ids(r)) == ["d0", "d2", "d4", "d6"]
    # one per cluster, asked for: the chain goes whole
    assert sorted(kept_ids(r, within_threshold=False)) == ["d0", "d4", "d6"]
    assert kept_for(r, within_threshold=False)["d3"] == (0, "d0", None)


def test_longest_keeps_in_size_order() -> None:
    r = _result()
    sizes = {"d0": 1, "d1": 5, "d2": 1, "d3": 1, "d4": 1, "d5": 2}
    assert sorted(kept_ids(r, keep="longest", sizes=sizes)) == ["d1", "d3", "d5", "d6"]


def test_no_chain_keeps_one_per_cluster_as_before() -> None:
    # every member paired with the first: the same records as one-per-cluster
    ids = ["a", "b", "c", "d"]
    a, b, s = np.array([0, 0, 1]), np.array([1, 2, 2]), np.array([0.9, 0.8, 0.85])
    r = DedupResult(
        clusters=[Cluster(0, ("a", "b", "c"), "a")],
        pairs=PairList(ids, a, b, s),
        n_docs=4,
        method="minhash",
        threshold=0.8,
        params="",
        doc_ids=ids,
    )
    assert kept_ids(r) == kept_ids(r, within_threshold=False) == {"a", "d"}


def test_a_result_without_pairs_is_refused() -> None:
    r = _result()
    bare = DedupResult(r.clusters, [], r.n_docs, r.method, r.threshold, "", doc_ids=r.doc_ids)
    with pytest.raises(ConfigError, match="pairs=True"):
        kept_ids(bare)
    assert sorted(kept_ids(bare, within_threshold=False)) == ["d0", "d4", "d6"]


# word sets of a chain: a ~ b and b ~ c at Jaccard 9/11 = 0.82, a and c at 8/12 = 0.67
_WORDS = [f"w{k}" for k in range(12)]
_CHAIN = [
    {"id": "a", "text": " ".join(_WORDS[0:10])},
    {"id": "b", "text": " ".join(_WORDS[1:11])},
    {"id": "c", "text": " ".join(_WORDS[2:12])},
]


def _run(tmp_path: Path, *extra: str) -> dict[str, dict[str, object]]:
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in _CHAIN))
    out = tmp_path / "ann.jsonl"
    res = CliRunner().invoke(
        main,
        ["dedup", str(src), "--ngram", "1", "-t", "0.8", "--annotate", str(out), "-q", *extra],
    )
    assert res.exit_code == 0, res.output
    return {r["id"]: r for r in map(json.loads, out.read_text().splitlines())}


def test_cli_annotate_does_not_remove_through_a_chain(tmp_path: Path) -> None:
    got = _run(tmp_path)
    assert got["b"]["is_duplicate"] is True and got["b"]["duplicate_of"] == "a"
    assert got["c"]["is_duplicate"] is False  # 0.67 from a: kept
    for r in got.values():
        assert r["similarity"] is None or r["similarity"] >= 0.8
    # components asked for: the whole chain goes for a (the old behavior)
    old = _run(tmp_path, "--clustering", "components")
    assert old["c"]["duplicate_of"] == "a" and old["c"]["similarity"] < 0.8


def test_cli_output_keeps_the_end_of_a_chain(tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in _CHAIN))
    out = tmp_path / "kept.jsonl"
    res = CliRunner().invoke(
        main, ["dedup", str(src), "--ngram", "1", "-t", "0.8", "-o", str(out), "-q"]
    )
    assert res.exit_code == 0, res.output
    assert [json.loads(x)["id"] for x in out.read_text().splitlines()] == ["a", "c"]


def test_summary_says_how_many_records_the_keep_rule_removed(tmp_path: Path) -> None:
    """The chain a ~ b ~ c is one cluster: 2 duplicates (one kept per cluster), 1 removed
    (c is kept); with --clustering components both are 2; without an output, no count."""
    from neardup.corpus import dedup_corpus, read_corpus

    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in _CHAIN))
    args = ["dedup", str(src), "--ngram", "1", "-t", "0.8"]
    runs = {
        "default": ["-o", str(tmp_path / "kept.jsonl")],
        "components": ["--annotate", str(tmp_path / "a.jsonl"), "--clustering", "components"],
        "none": [],
    }
    err = {}
    for name, extra in runs.items():
        res = CliRunner().invoke(main, [*args, *extra])
        assert res.exit_code == 0, res.output
        err[name] = res.stderr
    assert "1 clusters, 2 duplicates, 1 removed, " in err["default"]
    assert "1 clusters, 2 duplicates, 2 removed, " in err["components"]
    assert "2 duplicates, " in err["none"] and "removed" not in err["none"]
    run = dedup_corpus(
        read_corpus([src]), threshold=0.8, k=1, annotate=tmp_path / "b.jsonl", keep="first"
    )
    assert (run.duplicates, run.removed) == (2, 1)
    assert dedup_corpus(read_corpus([src]), threshold=0.8, k=1).removed is None
