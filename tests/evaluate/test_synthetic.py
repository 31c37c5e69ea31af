"""Perturbation suites: the stated kinds, correct labels, and the recall report."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest

from neardup import DedupResult, dedup
from neardup.errors import ConfigError
from neardup.evaluate import (
    IMAGE_KINDS,
    TEXT_KINDS,
    SyntheticCorpus,
    distinct_originals,
    evaluate,
    perturb_text,
    perturbation_report,
    synthetic_images,
    synthetic_text,
)

TEXT = (
    "Alpha beta gamma delta. Epsilon zeta eta theta iota! Kappa lambda mu nu xi omicron? "
    "Pi rho sigma tau upsilon. Phi chi psi omega and the rest of the alphabet follows here."
)


def test_text_kinds_change_text_as_stated() -> None:
    words = TEXT.split()
    for kind in TEXT_KINDS:
        out = perturb_text(TEXT, kind, 0.4, seed=1)
        assert out != TEXT, kind
        assert perturb_text(TEXT, kind, 0.4, seed=1) == out  # deterministic
    assert len(perturb_text(TEXT, "delete", 0.4).split()) < len(words)
    assert len(perturb_text(TEXT, "insert", 0.4).split()) > len(words)
    assert TEXT.startswith(perturb_text(TEXT, "truncate", 0.4))
    reordered = perturb_text(TEXT, "reorder", 0.4)
    assert sorted(reordered.split()) == sorted(words)
    boiler = perturb_text(TEXT, "boilerplate", 0.4)
    assert TEXT in boiler and len(boiler) > len(TEXT)
    homo = perturb_text(TEXT, "homoglyph", 0.4)
    assert len(homo) == len(TEXT) and any(unicodedata.name(c).startswith("CYRILLIC") for c in homo)
    zw = perturb_text(TEXT, "zero-width", 0.4)
    assert (
        zw.replace("\u200b", "")
        .replace("\u200c", "")
        .replace("\u200d", "")
        .replace("\u2060", "")
        .replace("\ufeff", "")
        == TEXT
    )
    assert "\u202e" in perturb_text(TEXT, "bidi", 0.4)
    with pytest.raises(ConfigError):
        perturb_text(TEXT, "smudge", 0.1)
    with pytest.raises(ConfigError):
        perturb_text(TEXT, "typo", 0.0)


def test_synthetic_text_labels() -> None:
    c = synthetic_text(
        [("d1", TEXT), ("d2", TEXT[::-1])], kinds=["typo", "bidi"], strengths=[0.1, 0.2]
    )
    assert c.originals == ["d1", "d2"]
    assert len(c.variants) == 2 * 2 * 2
    assert [d.id for d in c.documents[:2]] == ["d1", "d2"]
    assert {v.kind for v in c.variants} == {"typo", "bidi"}
    lab = c.labels
    assert ("d1", "d1~typo@0.1") in lab.pairs
    assert ("d1~typo@0.1", "d2~typo@0.1") not in lab.pairs
    assert len(lab.pairs) == 2 * 10  # each group of 5 gives C(5, 2) pairs
    assert lab.clusters["d2~bidi@0.2"] == lab.clusters["d2"]


def test_perturbation_report_counts() -> None:
    c = synthetic_text([TEXT * 4], kinds=["truncate", "zero-width"], strengths=[0.05, 0.95])
    r = perturbation_report(c, "minhash", threshold=0.8)
    rows = {(k, s): (n, f) for k, s, n, f in r.rows}
    assert rows[("truncate", 0.05)] == (1, 1)
    assert rows[("truncate", 0.95)] == (1, 0)
    assert rows[("zero-width", 0.95)] == (1, 1)  # the canonicalizer strips zero-width characters
    assert r.original_pairs == 0 and r.cross_pairs == 0
    assert "truncate\t0.05\t1.000\t1/1" in r.to_text()
    assert r.to_dict()["recall"][0]["recall"] == 1.0


def test_false_positives_among_originals() -> None:
    c = synthetic_text([("a", TEXT), ("b", TEXT + " end")], kinds=["delete"], strengths=[0.05])
    r = perturbation_report(c, "simhash", threshold=0.8)
    assert r.original_pairs == 1 and r.originals == 2


def test_distinct_originals_restore_precision() -> None:
    # Three copies of one text among the originals: every variant of one copy matches the
    # other copies and their variants, and all those pairs counted as false positives.
    other = "Completely different words about databases, query planners and index structures. "
    docs = [("a", TEXT * 3), ("b", TEXT * 3 + " a footer"), ("c", "Header. " + TEXT * 3)]
    docs.append(("d", other * 4))
    kinds, strengths = ["typo", "truncate"], [0.05]
    before = synthetic_text(docs, kinds=kinds, strengths=strengths)
    scores = evaluate(dedup_of(before), before.labels)
    report = perturbation_report(before, "minhash", threshold=0.8)
    assert report.original_pairs == 3 and scores.precision < 0.5

    distinct = distinct_originals(docs, "minhash", threshold=0.8)
    assert [d.id for d in distinct.kept] == ["a", "d"]
    assert distinct.groups == [("a", "b", "c")] and distinct.dropped == 2
    after = synthetic_text(distinct.kept, kinds=kinds, strengths=strengths)
    assert evaluate(dedup_of(after), after.labels).precision == 1.0
    report = perturbation_report(after, "minhash", threshold=0.8)
    assert report.original_pairs == 0 and report.cross_pairs == 0


def dedup_of(corpus: SyntheticCorpus) -> DedupResult:
    return dedup(corpus.documents, method="minhash", threshold=0.8)


def test_synthetic_images(tmp_path: Path) -> None:
    pytest.importorskip("PIL")
    from PIL import Image

    src = tmp_path / "src"
    src.mkdir()
    Image.radial_gradient("L").save(src / "grad.png")
    Image.new("RGB", (10, 10), "red").save(src / "tiny.png")
    out = tmp_path / "out"
    out.mkdir()
    c = synthetic_images([src / "grad.png", src / "tiny.png"], out_dir=out, strengths=[0.1, 0.3])
    assert c.originals == ["grad.png"]  # tiny.png is under min_size
    assert {v.kind for v in c.variants} == set(IMAGE_KINDS)
    assert len(c.variants) == 6 * 2 + 1  # flip has no strength
    for d in c.documents:
        assert d.path is not None and d.path.exists()
        with Image.open(d.path) as im:
            assert im.format == ("JPEG" if "~jpeg" in d.id else "PNG")
    with Image.open(out / "grad~resize@0.3.png") as im:
        assert im.size == (179, 179)
    r = perturbation_report(c, "phash", threshold=0.8)
    rows = {(k, s): f for k, s, _, f in r.rows}
    assert rows[("jpeg", 0.1)] == 1 and rows[("resize", 0.1)] == 1
    with pytest.raises(ConfigError):
        synthetic_images([src / "grad.png"], out_dir=out, kinds=["blur"])


def test_planted_scores_count_planted_pairs_only() -> None:
    from neardup.evaluate import planted_scores, planted_sweep

    c = synthetic_text(
        [("a", TEXT * 4), ("b", TEXT[::-1] * 4)], kinds=["truncate"], strengths=[0.05, 0.9]
    )
    a5, a90 = "a~truncate@0.05", "a~truncate@0.9"
    b5 = "b~truncate@0.05"
    # a planted pair, two copies of one original (right, not planted), and a cross pair
    s = planted_scores(c, [("a", a5), (a5, a90), (a90, b5), ("a", "a")], threshold=0.8)
    assert (s.planted, s.found, s.reported, s.within, s.across) == (4, 1, 3, 2, 1)
    assert (s.recall, s.precision) == (0.25, 2 / 3)
    assert s.to_dict()["f1"] == round(2 * 0.25 * (2 / 3) / (0.25 + 2 / 3), 6)
    scores, run = planted_sweep(c, "minhash", [0.9, 0.5])
    assert [x.threshold for x in scores] == [0.5, 0.9] and run.threshold == 0.5
    assert all(x.planted == 4 and x.across == 0 for x in scores)
    assert scores[0].found >= scores[1].found >= 2
