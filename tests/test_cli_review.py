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
