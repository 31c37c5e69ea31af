"""evaluate(): hand-worked precision/recall/F1/ARI, label files, sweeps and plots."""

from __future__ import annotations

import itertools
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from neardup.errors import ConfigError, InputError, OutputError
from neardup.evaluate import (
    Labels,
    adjusted_rand_index,
    evaluate,
    exact_truth,
    lsh_curve,
    lsh_panel,
    parse_range,
    read_labels,
    render_svg,
    sweep,
    sweep_panel,
    synthetic_text,
    write_svg,
)
from neardup.pipeline import dedup
from neardup.report import Pair

BASE = (
    "the quick brown fox jumps over the lazy dog while the cat sleeps on a warm mat "
    "in the afternoon sun near the old stone wall by the river bank"
)
OTHER = (
    "numpy arrays hold typed values in one buffer and vectorized functions run over "
    "them without a python loop for each element of the input data"
)


def test_hand_worked_example() -> None:
    # Truth clusters {a,b,c} and {d,e}; f alone. True pairs: ab ac bc de (4).
    labels = Labels.from_clusters({"a": 1, "b": 1, "c": 1, "d": 2, "e": 2, "f": 3})
    # Predicted pairs: ab (tp), bc (tp), de (tp), ef (fp) -> tp 3, fp 1, fn 1 (ac).
    s = evaluate([("a", "b"), ("b", "c"), ("d", "e"), Pair("e", "f", 0.9)], labels)
    assert (s.tp, s.fp, s.fn) == (3, 1, 1)
    assert s.precision == 0.75 and s.recall == 0.75 and s.f1 == 0.75
    # Predicted clusters {a,b,c} {d,e,f}. Contingency rows: (3,0) (0,2+1).
    # index = C(3,2) + C(2,2) = 4; sum_a = C(3,2)+C(3,2) = 6; sum_b = 3 + 1 + 0 = 4;
    # expected = 6*4/C(6,2) = 1.6; max = 5; ARI = (4 - 1.6) / (5 - 1.6) = 12/17.
    assert s.ari == pytest.approx(12 / 17)
    assert s.n_docs == 6
    # transitive: the predicted cluster {a,b,c} also implies ac; {d,e,f} adds df (fp).
    t = evaluate([("a", "b"), ("b", "c"), ("d", "e"), ("e", "f")], labels, transitive=True)
    assert (t.tp, t.fp, t.fn) == (4, 2, 0)


def test_ari_matches_scikit_learn() -> None:
    metrics = pytest.importorskip("sklearn.metrics")
    a = [0, 0, 1, 1, 2, 2, 2, 3, 4, 4]
    b = [1, 1, 1, 0, 0, 2, 2, 3, 3, 5]
    assert adjusted_rand_index(a, b) == pytest.approx(metrics.adjusted_rand_score(a, b))
    assert adjusted_rand_index(list(range(5)), list(range(5))) == 1.0
    with pytest.raises(ConfigError):
        adjusted_rand_index([1, 2], [1])


def test_empty_prediction_and_truth() -> None:
    s = evaluate([], Labels.from_pairs([]), doc_ids=["x", "y"])
    assert (s.precision, s.recall, s.ari) == (1.0, 1.0, 1.0)
    s = evaluate([], Labels.from_pairs([("x", "y")]))
    assert (s.precision, s.recall, s.f1) == (1.0, 0.0, 0.0)


def test_evaluate_dedup_result() -> None:
    docs = [("a", BASE), ("b", BASE + " indeed"), ("c", OTHER)]
    result = dedup(docs, method="minhash", threshold=0.5)
    s = evaluate(result, Labels.from_pairs([("a", "b")]))
    assert (s.tp, s.fp, s.fn, s.ari, s.threshold) == (1, 0, 0, 1.0, 0.5)
    s = evaluate(result, Labels.from_pairs([("a", "c")]))
    assert (s.tp, s.fp, s.fn) == (0, 1, 1)
    assert s.ari < 0.5


def test_read_labels_pairs_and_clusters(tmp_path: Path) -> None:
    p = tmp_path / "pairs.jsonl"
    p.write_text('{"a": "x", "b": "y"}\n\n{"a": 3, "b": "x"}\n', encoding="utf-8")
    lab = read_labels(p)
    assert lab.pairs == {("x", "y"), ("3", "x")}
    assert lab.clusters["y"] == lab.clusters["3"]
    c = tmp_path / "clusters.csv"
    c.write_text("id,cluster\nd1,A\nd2,A\nd3,B\n", encoding="utf-8")
    assert read_labels(c).pairs == {("d1", "d2")}
    pc = tmp_path / "pairs.csv"
    pc.write_text("a,b\nu,v\n", encoding="utf-8")
    assert read_labels(pc).pairs == {("u", "v")}


@pytest.mark.parametrize(
    ("name", "text", "where"),
    [
        ("bad.jsonl", '{"a": "x", "b": "y"}\nnot json\n', ":2:"),
        ("mixed.jsonl", '{"a": "x", "b": "y"}\n{"id": "x", "cluster": 1}\n', ":2:"),
        ("twice.jsonl", '{"id": "x", "cluster": 1}\n{"id": "x", "cluster": 2}\n', ":2:"),
        ("fields.jsonl", '{"left": "x"}\n', ":1:"),
        ("list.jsonl", "[1, 2]\n", ":1:"),
        ("header.csv", "left,right\nx,y\n", ":1:"),
        ("blank.csv", "a,b\nx,\n", ":2:"),
        ("empty.jsonl", "", "empty"),
    ],
)
def test_read_labels_errors_name_file_and_line(
    tmp_path: Path, name: str, text: str, where: str
) -> None:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=where):
        read_labels(p)


def test_read_labels_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot read"):
        read_labels(tmp_path / "nope.jsonl")


def test_sweep_equals_separate_runs() -> None:
    corpus = synthetic_text(
        [BASE, OTHER], kinds=["typo", "delete", "truncate"], strengths=[0.05, 0.3]
    )
    ts = [0.3, 0.6, 0.9]
    for method in ("simhash", "minhash"):
        swept = sweep(corpus.documents, method, ts, corpus.labels)
        assert [s.threshold for s in swept] == ts
        # recall can only fall as the threshold rises
        assert all(x.recall >= y.recall for x, y in itertools.pairwise(swept))
        if method == "simhash":  # an exact index: the one pass equals a run per threshold
            for t, s in zip(ts, swept, strict=True):
                run = evaluate(dedup(corpus.documents, method=method, threshold=t), corpus.labels)
                assert (s.tp, s.fp, s.fn) == (run.tp, run.fp, run.fn)
    with pytest.raises(ConfigError):
        sweep(corpus.documents, "simhash", [], corpus.labels)


def test_parse_range() -> None:
    assert parse_range("0.5:0.95:0.05")[-1] == 0.95
    assert len(parse_range("0.5:0.95:0.05")) == 10
    for bad in ("0.5:0.4:0.1", "a:b:c", "1.5", "0.5:0.9:0"):
        with pytest.raises(ConfigError):
            parse_range(bad)


def test_exact_truth_jaccard_and_hamming(tmp_path: Path) -> None:
    docs = [("a", BASE), ("b", BASE + " today"), ("c", OTHER)]
    sampled, lab = exact_truth(docs, threshold=0.8, sample=None)
    assert [d.id for d in sampled] == ["a", "b", "c"]
    assert lab.pairs == {("a", "b")}
    _, lab = exact_truth(docs, measure="hamming", method="simhash", threshold=0.9)
    assert ("a", "b") in lab.pairs and ("a", "c") not in lab.pairs
    with pytest.raises(ConfigError):
        exact_truth(docs, measure="hamming", method="minhash")
    with pytest.raises(ConfigError):
        exact_truth(docs, measure="cosine")  # type: ignore[arg-type]


def test_lsh_curve_follows_prediction() -> None:
    corpus = synthetic_text(
        [BASE * 3, OTHER * 3], kinds=["delete", "insert", "truncate"], strengths=[0.1, 0.4, 0.8]
    )
    c = lsh_curve(corpus.documents, threshold=0.8, bins=5, sample=None)
    assert sum(b.pairs for b in c.bins) == len(corpus.documents) * (len(corpus.documents) - 1) // 2
    assert c.bins[0].measured == 0.0  # unrelated pairs never collide
    top = c.bins[-1]
    assert top.pairs > 0 and top.measured == 1.0 and top.predicted > 0.99
    assert c.predicted[0] == (0.0, 0.0) and c.predicted[-1] == (1.0, 1.0)
    with pytest.raises(ConfigError):
        lsh_curve(corpus.documents, bins=0)


def test_svg_plot_is_valid(tmp_path: Path) -> None:
    corpus = synthetic_text([BASE, OTHER], kinds=["typo"], strengths=[0.05, 0.5])
    scores = sweep(corpus.documents, "minhash", [0.5, 0.7, 0.9], corpus.labels)
    curve = lsh_curve(corpus.documents, threshold=0.5, sample=None)
    out = tmp_path / "plot.svg"
    write_svg([sweep_panel(scores), lsh_panel(curve)], out)
    root = ET.parse(out).getroot()
    ns = "{http://www.w3.org/2000/svg}"
    assert root.tag == f"{ns}svg"
    assert len(root.findall(f"{ns}g")) == 2
    assert len(root.iter(f"{ns}polyline").__next__().get("points", "").split()) == 3
    texts = [t.text for t in root.iter(f"{ns}text")]
    assert "precision" in texts and "measured" in texts
    # deterministic: the same input gives the same bytes
    assert render_svg([sweep_panel(scores)]) == render_svg([sweep_panel(scores)])
    with pytest.raises(ConfigError):
        render_svg([])
    (tmp_path / "a-file").write_text("x")
    with pytest.raises(OutputError):  # a path that cannot be written (issue 43: atomic)
        write_svg([sweep_panel(scores)], tmp_path / "a-file" / "p.svg")
