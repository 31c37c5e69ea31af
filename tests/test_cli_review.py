"""dedup's review options through the CLI: --clustering, --main-content, --progress, --report."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner

from neardup.cli import main


def run(*args: str, input: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), input=input)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture()
def chain(tmp_path: Path) -> Path:
    """Ten JSONL records, each two words away from the previous one."""
    rng = random.Random(3)
    words = [f"w{rng.randrange(10**6)}" for _ in range(200)]
    lines = []
    for k in range(10):
        lines.append(json.dumps({"id": f"d{k}", "text": " ".join(words)}))
        for _ in range(2):
            words[rng.randrange(len(words))] = f"v{rng.randrange(10**6)}"
    path = tmp_path / "chain.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_clustering_center_names_the_representative(chain: Path) -> None:
    code, out, err = run("dedup", str(chain), "-q")
    assert code == 0, err
    assert [json.loads(x)["size"] for x in out.splitlines()] == [10]
    code, out, err = run("dedup", str(chain), "-q", "--clustering", "center")
    assert code == 0, err
    rows = [json.loads(x) for x in out.splitlines()]
    assert len(rows) > 1
    assert all(r["representative"] == r["members"][0] for r in rows)
    code, _, err = run("dedup", str(chain), "--clustering", "center", "--engine", "spark")
    assert code == 2 and "components only" in err


def _words(rng: random.Random, n: int) -> str:
    return " ".join(f"w{rng.randrange(10**5)}" for _ in range(n))


def test_main_content_drops_shared_navigation(tmp_path: Path) -> None:
    pytest.importorskip("selectolax")
    pytest.importorskip("trafilatura")
    rng = random.Random(5)
    nav = " ".join(f"<li><a href='/p{i}'>Section {_words(rng, 3)}</a></li>" for i in range(80))
    root = tmp_path / "site"
    root.mkdir()
    for name in ("a", "b"):
        article = " ".join(f"<p>{_words(rng, 40)}.</p>" for _ in range(4))
        (root / f"{name}.html").write_text(
            f"<html><head><title>{name}</title></head><body><nav><ul>{nav}</ul></nav>"
            f"<main><article><h1>Page {name}</h1>{article}</article></main>"
            f"<footer>{nav}</footer></body></html>"
        )
    code, out, err = run("dedup", str(root), "-q", "-t", "0.4")
    assert code == 0, err
    assert json.loads(out)["members"] == ["a.html", "b.html"]  # the navigation matches
    code, out, err = run("dedup", str(root), "-q", "-t", "0.4", "--main-content")
    assert code == 0, err
    assert out == ""  # the articles differ


def test_progress_without_a_terminal_prints_status_lines_with_total_and_eta(
    chain: Path, tmp_path: Path
) -> None:
    code, _, err = run("dedup", str(chain), "--progress", "--batch-size", "3")
    assert code == 0, err
    lines = [x for x in err.splitlines() if x.startswith("neardup: sketching")]
    assert lines and "/10 documents (" in lines[0] and "ETA 0:" in lines[0]
    assert "neardup: read 10 documents in" in err
    code, _, err = run("dedup", "-", "--progress", input=chain.read_text())
    assert code == 0 and "ETA" not in err and "neardup: sketching 10 documents" in err
    code, _, err = run("dedup", str(chain), "--batch-size", "3")
    assert code == 0 and "sketching" not in err  # no terminal, no --progress: no status


def test_report_reads_inputs_once_and_shows_every_listed_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import neardup.io as nio
    from neardup.corpus.reading import Corpus

    rng = random.Random(9)
    root = tmp_path / "docs"
    root.mkdir()
    for k in range(6):
        text = _words(rng, 120)
        for v in range(1 + k % 3):
            words = text.split()
            words[v] = "edited"
            (root / f"g{k}-{v}.txt").write_text(" ".join(words))
    (root / "single.txt").write_text(_words(rng, 120))
    reads: list[int] = []
    loads: list[Path] = []
    real_inputs, real_text = Corpus.documents, nio.read_file_text
    monkeypatch.setattr(
        Corpus, "documents", lambda *a, **k: (reads.append(1), real_inputs(*a, **k))[1]
    )
    monkeypatch.setattr(
        nio, "read_file_text", lambda p, **k: (loads.append(p), real_text(p, **k))[1]
    )
    report = tmp_path / "r.html"
    code, out, err = run("dedup", str(root), "-q", "--report", str(report))
    assert code == 0, err
    assert len(reads) == 1  # the run's own read; the report does not read the inputs again
    clustered = {m for line in out.splitlines() for m in json.loads(line)["members"]}
    assert {p.name for p in loads} == clustered  # it reads back only the documents it shows
    page = report.read_text()
    assert "Text not available" not in page and (root / "g2-1.txt").resolve().as_uri() in page
