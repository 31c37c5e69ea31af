"""Every CLI command has help text and a section in docs/cli.md; README links resolve."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

from neardup.cli import main

ROOT = Path(__file__).parents[1]


def test_every_command_documented() -> None:
    cli_doc = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    for name, command in main.commands.items():
        assert command.help, f"command {name} has no help text"
        assert f"## neardup {name}" in cli_doc, f"docs/cli.md lacks a section for {name}"
        result = CliRunner().invoke(main, [name, "--help"])
        assert result.exit_code == 0 and "Usage:" in result.output


def test_every_option_documented() -> None:
    cli_doc = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    for name, command in main.commands.items():
        for param in command.params:
            for opt in getattr(param, "opts", []):
                if opt.startswith("--") and opt != "--help":
                    assert opt in cli_doc, f"{opt} of {name} is not in docs/cli.md"


def test_readme_links_exist() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)#]+)\)", text):
        if not target.startswith("http"):
            assert (ROOT / target).exists(), target


def test_quickstart_names_the_annotation_columns_that_exist() -> None:
    """The quickstart once promised a `keep` column; --annotate writes `is_duplicate`."""
    from neardup.corpus.annotate import ANNOTATION_COLUMNS

    text = (ROOT / "docs" / "quickstart.md").read_text(encoding="utf-8")
    start = text.index("`--annotate out.jsonl` writes")
    sentence = text[start : text.index(":", start + 30)]
    named = [w for w in re.findall(r"`([a-z_]+)`", sentence)]
    assert named and set(named) <= set(ANNOTATION_COLUMNS), named
