"""Small CLI fixes: `neardup dedup ... | head` ends quietly with 0, -q silences warnings, and
with --exact-first the giant-cluster warning names the cluster of the result."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from neardup.cli import main

SRC = Path(__file__).resolve().parents[1] / "src"
BASE = " ".join(f"word{i} alpha{i % 7} beta{i % 11}" for i in range(70))


def _write(path: Path, rows: list[tuple[str, str]]) -> Path:
    path.write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in rows))
    return path


def test_a_closed_pipe_ends_the_run_with_status_0_and_no_message(tmp_path: Path) -> None:
    # 3,000 exact pairs print ~150 KB, more than a pipe holds: the writer meets the closed end
    rows = [(f"doc-{i:05d}", f"text number {i // 2} with some words") for i in range(6000)]
    data = _write(tmp_path / "many.jsonl", rows)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.Popen(
        [sys.executable, "-m", "neardup", "dedup", str(data), "-m", "exact", "-q"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.readline().startswith(b'{"cluster": 0')
    proc.stdout.close()  # what `head -1` does
    err = proc.stderr.read().decode()
    proc.stderr.close()
    assert proc.wait(timeout=120) == 0, err
    assert err == ""


def _giant_corpus(tmp_path: Path) -> Path:
    """An exact pair first (a cluster only through the copy), then 110 near-duplicates of one
    text with 20 exact copies among them: the result's cluster 1, of 130 members."""
    rows = [("a0", "a short text that is copied once"), ("a1", "a short text that is copied once")]
    rows += [(f"b{i:03d}", f"{BASE} tail{i}") for i in range(110)]
    rows += [(f"c{i:03d}", f"{BASE} tail{i}") for i in range(20)]
    return _write(tmp_path / "giant.jsonl", rows)


def test_exact_first_warns_about_the_clusters_it_reports(tmp_path: Path) -> None:
    data = str(_giant_corpus(tmp_path))
    result = CliRunner().invoke(main, ["dedup", data, "--exact-first", "--format", "jsonl"])
    assert result.exit_code == 0, result.output
    clusters = [json.loads(line) for line in result.stdout.splitlines()]
    assert [c["size"] for c in clusters] == [2, 130]
    assert "giant cluster 1: 130 members (representative b000)" in result.stderr
    assert "giant cluster 0" not in result.stderr


def test_quiet_silences_warnings(tmp_path: Path) -> None:
    data = str(_giant_corpus(tmp_path))
    loud = CliRunner().invoke(main, ["dedup", data, "--format", "jsonl"])
    assert "WARNING: giant cluster" in loud.stderr
    quiet = CliRunner().invoke(main, ["dedup", data, "--format", "jsonl", "-q"])
    assert quiet.exit_code == 0 and quiet.stderr == ""
    verbose = CliRunner().invoke(main, ["-v", "dedup", data, "--format", "jsonl", "-q"])
    assert "WARNING: giant cluster" in verbose.stderr  # -v asks for the logs: it wins


def test_output_without_keep_keeps_the_first(tmp_path: Path) -> None:
    data = _write(tmp_path / "d.jsonl", [("x1", BASE), ("x2", BASE), ("y", "something else")])
    out = tmp_path / "kept.jsonl"
    result = CliRunner().invoke(main, ["dedup", str(data), "--output", str(out), "-q"])
    assert result.exit_code == 0, result.output
    assert [json.loads(line)["id"] for line in out.read_text().splitlines()] == ["x1", "y"]


def test_ngram_sets_the_minhash_shingle_size(tmp_path: Path) -> None:
    """Word 2-shingles of two texts that differ every 4th word overlap; 5-shingles do not."""
    words = [f"w{i}" for i in range(200)]
    other = [w if i % 4 else "x" for i, w in enumerate(words)]
    data = str(_write(tmp_path / "d.jsonl", [("a", " ".join(words)), ("b", " ".join(other))]))
    args = ["dedup", data, "-t", "0.3", "--format", "jsonl", "-q"]
    assert CliRunner().invoke(main, args).stdout == ""
    two = CliRunner().invoke(main, [*args, "--ngram", "2"])
    assert json.loads(two.stdout)["members"] == ["a", "b"]
    wrong = CliRunner().invoke(main, [*args, "-m", "simhash", "--ngram", "2"])
    assert wrong.exit_code == 2 and "--ngram applies to --method minhash" in wrong.output


def test_seed_goes_to_minhash_and_into_its_params(tmp_path: Path) -> None:
    from neardup.methods import make_method

    assert make_method("minhash", seed=7).params != make_method("minhash").params
    assert make_method("minhash", seed=0x00C0FFEE5EED).params == make_method("minhash").params
    data = str(_write(tmp_path / "d.jsonl", [("a", BASE), ("b", BASE + " end"), ("c", "other")]))
    args = ["dedup", data, "--format", "jsonl", "-q", "--seed", "7"]
    result = CliRunner().invoke(main, args)
    assert json.loads(result.stdout)["members"] == ["a", "b"]
    wrong = CliRunner().invoke(main, [*args, "-m", "simhash"])
    assert wrong.exit_code == 2 and "--seed applies to --method minhash" in wrong.output


def test_bands_and_rows_replace_the_planned_banding(tmp_path: Path) -> None:
    """Jaccard ~0.6: the planned banding finds the pair; 2 bands of 64 rows almost never do."""
    words = [f"w{i}" for i in range(300)]
    other = [w if i % 20 else "x" for i, w in enumerate(words)]
    data = str(_write(tmp_path / "d.jsonl", [("a", " ".join(words)), ("b", " ".join(other))]))
    args = ["dedup", data, "-t", "0.5", "--format", "jsonl", "-q"]
    assert json.loads(CliRunner().invoke(main, args).stdout)["members"] == ["a", "b"]
    assert CliRunner().invoke(main, [*args, "--bands", "2", "--rows", "64"]).stdout == ""
    alone = CliRunner().invoke(main, [*args, "--bands", "2"])
    assert alone.exit_code == 1 and "bands and rows go together" in alone.output
    big = CliRunner().invoke(main, [*args, "--bands", "20", "--rows", "8"])
    assert big.exit_code == 1 and "exceeds num_perm=128" in big.output
