"""The README's quick start is the two make commands (its other blocks run in
tests/test_doc_examples.py)."""

from __future__ import annotations

from pathlib import Path

README = Path(__file__).parents[1] / "README.md"


def test_readme_quickstart_commands() -> None:
    text = README.read_text(encoding="utf-8")
    block = text.split("## Quick start", 1)[1].split("```", 2)[1]
    commands = [
        line.split("#")[0].strip().removeprefix("$ ")
        for line in block.splitlines()[1:]
        if line.strip()
    ]
    assert [c for c in commands if c] == ["make run", "make test"]
