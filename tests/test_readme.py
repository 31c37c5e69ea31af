"""The README's library example runs and prints what it says."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

README = Path(__file__).parents[1] / "README.md"


def test_readme_quickstart_commands() -> None:
    text = README.read_text(encoding="utf-8")
    block = text.split("## Quick start", 1)[1].split("```", 2)[1]
    commands = [line.split("#")[0].strip() for line in block.splitlines() if line.strip()]
    assert [c for c in commands if c] == ["make run", "make test"]


def test_readme_library_example_runs() -> None:
    text = README.read_text(encoding="utf-8")
    code = text.split("## Library", 1)[1].split("```python", 1)[1].split("```", 1)[0]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})
    expected = re.findall(r"# (\S.*)$", code, flags=re.M)
    printed = out.getvalue().splitlines()
    wanted = [e for e in expected if not e.startswith("the Go")]
    assert printed == wanted
