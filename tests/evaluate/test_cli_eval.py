"""``neardup eval`` through click's runner."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from click.testing import CliRunner

from neardup.cli.eval import eval_cmd

BASE = (
    "the quick brown fox jumps over the lazy dog while the cat sleeps on a warm mat "
    "in the afternoon sun near the old stone wall by the river bank and far away"
)


def _corpus(tmp_path: Path) -> Path:
    d = tmp_path / "docs"
    d.mkdir()
    (d / "a.txt").write_text(BASE, encoding="utf-8")
    (d / "b.txt").write_text(BASE + " again", encoding="utf-8")
    (d / "c.txt").write_text(" ".join(reversed(BASE.split())) + " zz", encoding="utf-8")
    return d


def test_eval_with_labels_json(tmp_path: Path) -> None:
    d = _corpus(tmp_path)
    labels = tmp_path / "truth.jsonl"
    labels.write_text('{"a": "a.txt", "b": "b.txt"}\n', encoding="utf-8")
    r = CliRunner().invoke(
        eval_cmd, [str(d), "--labels", str(labels), "-m", "simhash", "--format", "json"]
    )
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["documents"] == 3 and out["true_pairs"] == 1
    (s,) = out["scores"]
    assert (s["tp"], s["fp"], s["fn"], s["precision"], s["recall"]) == (1, 0, 0, 1.0, 1.0)


def test_eval_sweep_plot_synthetic(tmp_path: Path) -> None:
    d = _corpus(tmp_path)
    plot = tmp_path / "pr.svg"
    r = CliRunner().invoke(
        eval_cmd,
        [
            str(d),
            "--synthetic",
            "text",
            "--kinds",
            "truncate,typo",
            "--strengths",
            "0.05,0.5",
            "--sweep",
            "0.5:0.9:0.2",
            "--plot",
            str(plot),
        ],
    )
    assert r.exit_code == 0, r.output
    # a.txt and b.txt are near-duplicates already: b.txt is left out, with a warning.
    assert "left out 1 of 3 originals that are already near-duplicates" in r.stderr
    assert "truncate\t0.05\t1.000\t2/2" in r.output
    assert "LSH S-curve" in r.output and r.output.count("\n0.") >= 3
    assert ET.parse(plot).getroot().tag.endswith("svg")


def test_eval_synthetic_excludes_duplicate_originals(tmp_path: Path) -> None:
    # A folder that holds copies already: a licence-like text three times (one with a header),
    # and two distinct texts. Their pairs were false positives before; now they are left out.
    d = tmp_path / "docs"
    d.mkdir()
    long = " ".join([BASE] * 4)
    (d / "copy1.txt").write_text(long, encoding="utf-8")
    (d / "copy2.txt").write_text(long + " the end", encoding="utf-8")
    (d / "copy3.txt").write_text("Header line. " + long, encoding="utf-8")
    (d / "other.txt").write_text(" ".join(reversed(long.split())) + " zz", encoding="utf-8")
    args = [str(d), "--synthetic", "text", "--kinds", "typo,truncate", "--strengths", "0.05"]
    r = CliRunner().invoke(eval_cmd, [*args, "--format", "json"])
    assert r.exit_code == 0, r.output
    assert "left out 2 of 4 originals" in r.stderr and "(minhash at 0.8, 1 group)" in r.stderr
    out = json.loads(r.stdout)
    assert out["excluded_originals"] == {"documents": 2, "groups": 1}
    assert out["documents"] == 2 * 3
    (s,) = out["scores"]
    assert s["precision"] == 1.0 and s["across"] == 0
    assert out["perturbation"]["original_pairs"] == 0 and out["perturbation"]["cross_pairs"] == 0


def test_eval_truth_exact(tmp_path: Path) -> None:
    r = CliRunner().invoke(eval_cmd, [str(_corpus(tmp_path)), "--truth", "exact", "-t", "0.8"])
    assert r.exit_code == 0, r.output
    assert "truth: exact jaccard >= 0.8" in r.output
    assert "0.8\t1.0000\t1.0000" in r.output


def test_eval_usage_and_input_errors(tmp_path: Path) -> None:
    d = _corpus(tmp_path)
    runner = CliRunner()
    assert runner.invoke(eval_cmd, [str(d)]).exit_code == 2
    assert (
        runner.invoke(
            eval_cmd, [str(d), "--truth", "exact", "-t", "0.5", "--sweep", "0.5:0.9:0.1"]
        ).exit_code
        == 2
    )
    assert runner.invoke(eval_cmd, [str(d), "--truth", "exact", "--plot", "x.png"]).exit_code == 2
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{oops\n", encoding="utf-8")
    r = runner.invoke(eval_cmd, [str(d), "--labels", str(bad)])
    assert r.exit_code == 1 and "bad.jsonl:1" in r.output
    r = runner.invoke(eval_cmd, [str(d), "--truth", "exact", "--sweep", "0.9:0.1:0.1"])
    assert r.exit_code == 1 and "bad sweep" in r.output
    assert "--synthetic" in runner.invoke(eval_cmd, ["--help"]).output


def test_eval_synthetic_headline_is_planted_pairs(tmp_path: Path) -> None:
    """The headline scores the planted pairs (each copy with its original), with counts: not
    every pair inside an original's group, which no method is meant to find."""
    d = tmp_path / "docs"
    d.mkdir()
    words = BASE.split()
    for i in range(3):
        (d / f"t{i}.txt").write_text(" ".join(words[i:] + words[:i]) + f" doc{i}" * 20)
    args = [str(d), "--synthetic", "text", "--kinds", "truncate", "--strengths", "0.05,0.9"]
    r = CliRunner().invoke(eval_cmd, [*args, "--format", "json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert (out["originals"], out["variants"], out["planted_pairs"]) == (3, 6, 6)
    assert "true_pairs" not in out
    (s,) = out["scores"]
    # a 5% cut is found, a 90% cut is not: half the planted pairs, and each reported pair
    # is one original's (its copy, or two copies of it)
    assert (s["planted"], s["found"], s["recall"]) == (6, 3, 0.5)
    assert s["reported"] == s["found"] and s["across"] == 0 and s["precision"] == 1.0
    r = CliRunner().invoke(eval_cmd, args)
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert lines[0] == (
        "method minhash: 3 originals and 6 perturbed copies (9 documents); 6 planted pairs "
        "(each copy with its original)"
    )
    assert "0.8\t0.5000\t3/6\t1.0000\t3\t0" in lines
    code = CliRunner().invoke(eval_cmd, [*args, "--transitive"]).exit_code
    assert code == 2
