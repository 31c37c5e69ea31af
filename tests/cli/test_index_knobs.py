"""``neardup index``: the sketch knobs a new index stores, and queries at another threshold."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from neardup.cli import main
from neardup.errors import ConfigError
from neardup.io import Document
from neardup.methods import make_method
from neardup.store.persistent import PersistentIndex

WORDS = [f"w{i}" for i in range(100)]


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture()
def texts(tmp_path: Path) -> Path:
    """A stored text and queries whose word-set Jaccard with it is 0.905 and 0.667."""
    root = tmp_path / "t"
    root.mkdir()
    (root / "stored.txt").write_text(" ".join(WORDS))
    # 95 shared words of 105: 0.905; 80 shared of 120: 0.667
    (root / "q90.txt").write_text(" ".join(WORDS[:95] + [f"x{i}" for i in range(5)]))
    (root / "q67.txt").write_text(" ".join(WORDS[:80] + [f"y{i}" for i in range(20)]))
    return root


def _config(db: str) -> dict[str, object]:
    code, out, err = run("index", "stats", "--index", db)
    assert code == 0, err
    config = json.loads(out)["config"]
    assert isinstance(config, dict)
    return config


def _matches(out: str) -> dict[str, float]:
    return {Path(h["query"]).name: h["similarity"] for h in map(json.loads, out.splitlines())}


def test_index_add_stores_the_sketch_knobs(texts: Path, tmp_path: Path) -> None:
    db = str(tmp_path / "k.db")
    knobs = ["--ngram", "1", "--seed", "7", "--bands", "32", "--rows", "4", "--num-perm", "128"]
    code, _, err = run("index", "add", str(texts / "stored.txt"), "--index", db, *knobs)
    assert code == 0, err
    config = _config(db)
    assert (config["k"], config["seed"], config["bands"], config["rows"]) == (1, 7, 32, 4)
    # the store reopens from its stored config: no knob needed, and the ones given agree
    code, out, err = run("index", "query", str(texts / "q90.txt"), "--index", db)
    assert code == 0, err
    assert _matches(out) == {"q90.txt": pytest.approx(95 / 105, abs=1e-6)}
    code, _, err = run("index", "add", str(texts / "q90.txt"), "--index", db, *knobs)
    assert code == 0, err
    # a knob that contradicts the stored one is refused, naming the option and both values
    for args, words in [
        (["--ngram", "3"], "--ngram 3 contradicts the index's 1"),
        (["--seed", "8"], "--seed 8 contradicts the index's 7"),
        (["--bands", "16", "--rows", "4"], "--bands 16 contradicts the index's 32"),
    ]:
        code, _, err = run("index", "add", str(texts / "q67.txt"), "--index", db, *args)
        assert code == 1 and words in err, err
    assert json.loads(run("index", "stats", "--index", db)[1])["docs"] == 2


def test_index_knobs_agree_with_planned_defaults(texts: Path, tmp_path: Path) -> None:
    db = str(tmp_path / "d.db")
    code, _, err = run("index", "add", str(texts / "stored.txt"), "--index", db)
    assert code == 0, err
    config = _config(db)
    assert (config["k"], config["seed"], config["bands"], config["rows"]) == (5, None, None, None)
    # the values the index uses, spelled out, agree: the default seed and the planned banding
    planned = make_method("minhash", 0.8)
    args = ["--ngram", "5", "--seed", str(0x00C0FFEE5EED)]
    args += ["--bands", str(planned.bands), "--rows", str(planned.rows)]  # type: ignore[attr-defined]
    code, _, err = run("index", "add", str(texts / "q90.txt"), "--index", db, *args)
    assert code == 0, err


def test_index_knobs_are_minhash_only(texts: Path, tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    code, _, err = run("index", "add", str(texts), "--index", db, "-m", "simhash", "--ngram", "3")
    assert code == 2 and "--ngram applies to --method minhash" in err
    code, _, err = run("index", "add", str(texts), "--index", db, "-m", "simhash")
    assert code == 0, err
    code, _, err = run("index", "add", str(texts), "--index", db, "--seed", "3")
    assert code == 2 and "--seed apply to minhash; the index" in err and "holds simhash" in err


def test_index_query_threshold_both_ways(texts: Path, tmp_path: Path) -> None:
    db = str(tmp_path / "q.db")
    # 32 bands of 4 rows: a pair of Jaccard 0.667 is a candidate with probability 0.996
    build = ["--ngram", "1", "--bands", "32", "--rows", "4", "-t", "0.8"]
    code, _, err = run("index", "add", str(texts / "stored.txt"), "--index", db, *build)
    assert code == 0, err
    queries = [str(texts / "q90.txt"), str(texts / "q67.txt")]
    code, out, err = run("index", "query", *queries, "--index", db)
    assert code == 0, err
    assert set(_matches(out)) == {"q90.txt"}
    # stricter: the index's matches that pass it, nothing else
    code, out, err = run("index", "query", *queries, "--index", db, "-t", "0.95")
    assert code == 0 and out == "" and "below" not in err, err
    code, out, err = run("index", "query", *queries, "--index", db, "-t", "0.9")
    assert code == 0 and set(_matches(out)) == {"q90.txt"}
    # looser: a candidate below the index's threshold is verified against the new one
    code, out, err = run("index", "query", *queries, "--index", db, "--threshold", "0.6")
    assert code == 0, err
    assert _matches(out) == {
        "q90.txt": pytest.approx(95 / 105, abs=1e-6),
        "q67.txt": pytest.approx(80 / 120, abs=1e-6),
    }
    assert "--threshold 0.6 is below the index's 0.8" in err
    assert "LSH bands (32 x 4)" in err and "probability 0.99" in err
    code, out, _ = run("index", "query", *queries, "--index", db, "--threshold", "0.7")
    assert code == 0 and set(_matches(out)) == {"q90.txt"}
    # the query threshold does not change the stored one
    assert _config(db)["threshold"] == 0.8


def test_index_query_threshold_simhash_note(texts: Path, tmp_path: Path) -> None:
    db = str(tmp_path / "h.db")
    code, _, err = run("index", "add", str(texts), "--index", db, "-m", "simhash")
    assert code == 0, err
    code, out, err = run("index", "query", str(texts / "q90.txt"), "--index", db, "-t", "0.5")
    assert code == 0, err
    assert "Hamming blocks" in err
    assert all(h["similarity"] >= 0.5 for h in map(json.loads, out.splitlines()))


def test_persistent_query_threshold(tmp_path: Path) -> None:
    path = tmp_path / "p.db"
    base = " ".join(WORDS)
    with PersistentIndex(path, make_method("minhash", 0.8, k=1, bands=32, rows=4)) as idx:
        idx.add([Document("a", base)])
        q = [Document("q", " ".join(WORDS[:80] + [f"y{i}" for i in range(20)]))]
        assert idx.query(q) == []
        (m,) = idx.query(q, threshold=0.6)
        assert (m.key, round(m.similarity, 6)) == ("a", round(80 / 120, 6))
        assert idx.query(q, threshold=0.7) == []
        for bad in (1.5, -0.1, True):
            with pytest.raises(ConfigError, match="threshold must be a similarity"):
                idx.query(q, threshold=bad)


def test_serve_checks_the_knobs_before_it_listens(texts: Path, tmp_path: Path) -> None:
    pytest.importorskip("starlette")
    pytest.importorskip("uvicorn")
    db = str(tmp_path / "v.db")
    code, _, err = run("index", "add", str(texts / "stored.txt"), "--index", db, "--ngram", "2")
    assert code == 0, err
    code, _, err = run("serve", "--index", db, "--ngram", "3")
    assert code == 1 and "--ngram 3 contradicts the index's 2" in err


def test_dedup_index_stores_and_checks_the_knobs(texts: Path, tmp_path: Path) -> None:
    db = str(tmp_path / "dd.db")
    code, _, err = run("dedup", str(texts), "-q", "--index", db, "--ngram", "3", "--seed", "9")
    assert code == 0, err
    config = _config(db)
    assert (config["k"], config["seed"]) == (3, 9)
    code, _, err = run("dedup", str(texts), "-q", "--index", db, "--ngram", "4")
    assert code == 1 and "--ngram 4 contradicts the index's 3" in err
    code, _, err = run("dedup", str(texts), "-q", "--index", db, "--ngram", "3")
    assert code == 0, err
