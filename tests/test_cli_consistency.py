"""The commands behave alike (issue 25): input options, exit codes, thresholds, quiet, summaries."""

from __future__ import annotations

import io
import json
import random
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from neardup.cli import main


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def _text(seed: int, n: int = 150) -> str:
    rng = random.Random(seed)
    return " ".join("".join(rng.choice("abcdefghij") for _ in range(6)) for _ in range(n))


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """Two copies of one text, a near copy, an unrelated text and a Markdown file."""
    root = tmp_path / "docs"
    root.mkdir()
    base = _text(1)
    (root / "a.txt").write_text(base)
    (root / "b.txt").write_text(base)
    words = base.split()
    words[3] = "edited"
    (root / "c.txt").write_text(" ".join(words))
    (root / "d.txt").write_text(_text(2))
    (root / "notes.md").write_text(_text(3))
    return root


def _commands(cmd: click.Command, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    if isinstance(cmd, click.Group):
        return [
            p for name, sub in sorted(cmd.commands.items()) for p in _commands(sub, (*path, name))
        ]
    return [path]


@pytest.mark.parametrize("path", _commands(main), ids=" ".join)
def test_usage_errors_exit_2_on_every_command(path: tuple[str, ...]) -> None:
    code, _, err = run(*path, "--no-such-option")
    assert code == 2 and "No such option" in err


def test_user_errors_exit_1_with_one_line(folder: Path, tmp_path: Path) -> None:
    missing = str(tmp_path / "missing.db")
    for args in (
        ("index", "stats", "--index", missing),
        ("index", "remove", "k", "--index", missing),
        ("dedup", str(folder), "-m", "minhash", "-t", "0"),
        ("eval", str(folder), "--labels", str(folder / "a.txt")),
        ("lines", str(folder), "--min-docs", "2", "-o", str(tmp_path / "out.unknown")),
    ):
        code, _, err = run(*args)
        assert code == 1, (args, err)
        assert err.startswith("Error: ") and err.count("\n") == 1, (args, err)


def test_index_add_and_query_take_the_input_options(folder: Path, tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    code, _, err = run(
        "index", "add", str(folder), "--index", db, "--include", "*.txt", "--exclude", "d.txt"
    )
    assert code == 0, err
    assert "3 documents added; the index holds 3" in err
    assert "left out 2 files" in err and "filtered by --include/--exclude" in err
    code, _, err = run("index", "add", str(folder), "--index", db, "-q", "--include", "d.txt")
    assert code == 0 and err == ""
    # records: the same --id-field / --text-field as dedup, nested paths included
    records = tmp_path / "r.jsonl"
    rows = [{"meta": {"key": "q1"}, "body": (folder / "a.txt").read_text()}, {"bad": 1}]
    records.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    args = ["index", "query", str(records), "--index", db, "--id-field", "meta.key"]
    code, _, err = run(*args, "--text-field", "body")
    assert code == 1 and "body" in err  # the bad record stops the run, naming the field
    code, out, err = run(*args, "--text-field", "body", "--on-error", "skip")
    assert code == 0, err
    hits = {(h["query"], h["match"]) for h in map(json.loads, out.splitlines())}
    assert {("q1", "a.txt"), ("q1", "b.txt")} <= hits
    code, _, err = run("index", "add", str(folder), "--index", db, "--input-format", "nope")
    assert code == 2


def test_eval_takes_include(folder: Path) -> None:
    code, out, err = run("eval", str(folder), "--truth", "exact", "--format", "json")
    assert code == 0, err
    assert json.loads(out)["documents"] == 5
    code, out, err = run(
        "eval", str(folder), "--truth", "exact", "--format", "json", "--include", "*.txt"
    )
    assert code == 0, err
    assert json.loads(out)["documents"] == 4


@pytest.mark.parametrize("method", ["minhash", "simhash", "simhash-go", "exact", "ctph"])
def test_threshold_one_means_identical_for_every_method(folder: Path, method: str) -> None:
    code, out, err = run("dedup", str(folder), "-q", "-m", method, "-t", "1.0")
    assert code == 0, err
    clusters = [json.loads(line)["members"] for line in out.splitlines()]
    # the identical pair; the near copy only where its fingerprint is the same too
    code, same, err = run("compare", str(folder / "a.txt"), str(folder / "c.txt"), "-m", method)
    assert code == 0, err
    near = ["c.txt"] if same.startswith("similarity=1.000000") else []
    assert clusters == [["a.txt", "b.txt", *near]]
    assert method in ("simhash-go", "simhash") or not near
    code, _, err = run("dedup", str(folder), "-m", method, "-t", "1.01")
    assert code == 2 and "0.0<=x<=1.0" in err


def test_summary_with_an_index_adds_up(folder: Path, tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    code, _, err = run("index", "add", str(folder / "a.txt"), str(folder / "b.txt"), "--index", db)
    assert code == 0, err
    # a near copy and an unrelated text, read against the two stored copies
    code, out, err = run("dedup", str(folder / "c.txt"), str(folder / "d.txt"), "--index", db)
    assert code == 0, err
    (row,) = map(json.loads, out.splitlines())
    assert row["size"] == 3 and row["members"][-1].endswith("c.txt")
    # 2 read, 1 of them a duplicate (of the stored ones, which are counted apart)
    assert "neardup: 2 documents (+2 stored that they match), 1 clusters, 1 duplicates" in err


def test_phash_walks_a_folder_for_images_only(tmp_path: Path) -> None:
    image = pytest.importorskip("PIL.Image")
    root = tmp_path / "photos"
    root.mkdir()
    rng = random.Random(4)
    pixels = bytes(rng.randrange(256) for _ in range(64 * 64 * 3))
    picture = image.frombytes("RGB", (64, 64), pixels)
    picture.save(root / "a.png")
    picture.save(root / "b.PNG")
    (root / "notes.txt").write_text("not an image")
    (root / "data.bin").write_bytes(b"\x00\x01")
    code, out, err = run("dedup", str(root), "-m", "phash")
    assert code == 0, err
    assert [json.loads(line)["members"] for line in out.splitlines()] == [["a.png", "b.PNG"]]
    assert "neardup: 2 documents" in err
    assert "left out 2 files: 2 not an image" in err
    # a file named on the command line is read whatever its name (and fails as before)
    code, _, err = run("dedup", str(root / "a.png"), str(root / "notes.txt"), "-m", "phash")
    assert code == 1 and "notes.txt" in err


def test_quiet_hides_the_model_loading_bars(monkeypatch: pytest.MonkeyPatch) -> None:
    transformers_logging = pytest.importorskip("transformers.utils.logging")
    from neardup.embeddings.local import hide_progress_bars

    monkeypatch.delenv("HF_HUB_DISABLE_PROGRESS_BARS", raising=False)
    before = transformers_logging.is_progress_bar_enabled()
    try:
        hide_progress_bars()
        err = io.StringIO()
        for _ in transformers_logging.tqdm(range(3), desc="Loading weights", file=err):
            pass
        assert err.getvalue() == ""  # the bar transformers draws while a model loads
        assert not transformers_logging.is_progress_bar_enabled()
    finally:
        if before:
            transformers_logging.enable_progress_bar()


def test_dedup_quiet_embedding_turns_the_bars_off(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("tokenizers")
    pytest.importorskip("safetensors")
    import os

    monkeypatch.delenv("HF_HUB_DISABLE_PROGRESS_BARS", raising=False)
    calls: list[int] = []
    import neardup.embeddings.local as local

    monkeypatch.setattr(local, "hide_progress_bars", lambda: calls.append(1))
    code, _, err = run("dedup", str(folder), "-m", "embedding")
    assert code == 0, err
    assert calls == []  # not quiet: the bars stay
    code, _, err = run("dedup", str(folder), "-m", "embedding", "-q")
    assert code == 0 and err == "" and calls == [1]
    assert "HF_HUB_DISABLE_PROGRESS_BARS" not in os.environ  # the stand-in set nothing
