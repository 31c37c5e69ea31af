"""Every code block of README.md and docs/*.md runs, and prints what the page shows.

The convention (docs/quickstart.md, "The examples in these pages", says it for readers):

* A fence names its language. ``python`` and ``console`` blocks are run; ``text`` blocks are
  output or a synopsis; ``sql`` is shown as is.
* A ```` ```python ```` block is one complete script, run in a fresh namespace. When a
  ```` ```text ```` block follows it (only blank lines between), the script's stdout must
  equal that block.
* A ```` ```console ```` block is a shell session: ``$ command`` lines (continued by a
  trailing ``\\``) and, under each, the output it prints: stdout and stderr, either one
  first. A
  command with no output shown is only checked to succeed. Output that begins ``Error:`` or
  ``Usage:`` means the command must fail.
* In shown output, ``...`` inside a line matches any text (timings, temporary paths) and a
  line of only ``...`` matches any number of lines.
* All blocks of a page run in order in one fresh folder holding a copy of ``examples/`` (so a
  block may read what an earlier block of the same page wrote).
* Info-string words after the language: ``needs=MOD[,MOD]`` skips the block when a module
  (an extra's package) cannot be imported, ``needs=cmd:NAME`` when a program is not on
  ``PATH``; ``slow`` (Spark, a model load) marks the costly blocks, which run too
  (``NEARDUP_DOC_SLOW=0`` leaves them out while editing docs); ``norun`` marks commands a
  test cannot run (``make``, ``pip``, ``spark-submit`` to a cluster, a browser), and only
  those may carry it.

``neardup`` commands run in this process through click's runner (one kernel load for the
whole file); any other shell command runs in bash with a ``neardup`` on ``PATH``.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

ROOT = Path(__file__).parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
RUN = {"python", "console"}
SHOWN = {"text", "sql"}
NORUN_COMMANDS = ("make ", "pip ", "spark-submit ", "chromium ")
FENCE = re.compile(r"^```(\S*)(.*)$")


@dataclass(frozen=True)
class Block:
    page: str
    line: int
    lang: str
    words: tuple[str, ...]
    body: str
    output: str | None  # the text block right after a python block

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"

    def option(self, name: str) -> str | None:
        for w in self.words:
            if w == name or w.startswith(name + "="):
                return w.partition("=")[2] or w
        return None


def blocks(page: Path) -> list[Block]:
    lines = page.read_text(encoding="utf-8").splitlines()
    raw: list[tuple[int, str, tuple[str, ...], str, int]] = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if m is None:
            i += 1
            continue
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        assert j < len(lines), f"{page.name}:{i + 1}: unclosed code fence"
        body = "\n".join(lines[i + 1 : j]) + "\n"
        raw.append((i + 1, m.group(1), tuple(m.group(2).split()), body, j))
        i = j + 1
    out: list[Block] = []
    rel = str(page.relative_to(ROOT))
    for n, (line, lang, words, body, end) in enumerate(raw):
        output = None
        if lang == "python" and n + 1 < len(raw):
            nline, nlang, _, nbody, _ = raw[n + 1]
            between = lines[end + 1 : nline - 1]
            if nlang == "text" and not any(s.strip() for s in between):
                output = nbody
        out.append(Block(rel, line, lang, words, body, output))
    return out


def matches(expected: str, printed: str) -> bool:
    """``printed`` equals ``expected`` line by line (trailing spaces ignored), with ``...``
    matching any text inside a line and a ``...`` line matching any lines."""
    want = [x.rstrip() for x in expected.rstrip("\n").splitlines()]
    got = "\n".join(x.rstrip() for x in printed.rstrip("\n").splitlines())
    parts = []
    for w in want:
        if w.strip() == "...":
            parts.append(r"(?:[^\n]*\n)*?")
        else:
            parts.append(".*".join(re.escape(p) for p in w.split("...")) + r"\n")
    return re.fullmatch("".join(parts), got + "\n", flags=0) is not None


def run_python(block: Block) -> None:
    code = compile(block.body, block.where, "exec")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(code, {"__name__": "__main__"})
    if block.output is not None:
        assert matches(block.output, out.getvalue()), (
            f"{block.where}: printed\n{out.getvalue()}\nbut the page shows\n{block.output}"
        )


def session(body: str) -> list[tuple[str, str]]:
    """``(command, shown output)`` pairs of a console block."""
    steps: list[tuple[str, list[str]]] = []
    lines = body.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("$ "):
            cmd = [line[2:]]
            while cmd[-1].rstrip().endswith("\\") and i + 1 < len(lines):
                i += 1
                cmd[-1] = cmd[-1].rstrip()[:-1]
                cmd.append(lines[i].strip())
            steps.append((" ".join(c.strip() for c in cmd), []))
        else:
            assert steps, f"console output before any command: {line!r}"
            steps[-1][1].append(line)
        i += 1
    return [(c, "\n".join(o).strip("\n")) for c, o in steps]


def neardup_args(command: str) -> tuple[list[str], str | None] | None:
    """The arguments and ``> file`` target of a plain ``neardup`` command, or None."""
    try:
        words = shlex.split(command, comments=True)
    except ValueError:
        return None
    if not words or words[0] != "neardup":
        return None
    target = None
    if len(words) >= 3 and words[-2] == ">":
        target, words = words[-1], words[:-2]
    if any(w in {"|", "&&", ";", ">", ">>", "<", "2>&1"} or "$(" in w for w in words):
        return None
    return words[1:], target


def run_command(command: str, bindir: Path) -> tuple[int, list[str]]:
    """Run one command; its exit code and what it printed: stdout then stderr, and the other
    order too (a warning comes before the results, a summary after them)."""
    from neardup.cli import main

    parsed = neardup_args(command)
    if parsed is not None:
        args, target = parsed
        result = CliRunner().invoke(main, args, catch_exceptions=False)
        out, err = result.stdout, result.stderr
        if target is not None:
            Path(target).write_text(out, encoding="utf-8")
            out = ""
        code = result.exit_code
    else:
        env = dict(os.environ, PATH=f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}")
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
        proc = subprocess.run(
            ["bash", "-c", command],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
            check=False,
        )
        out, err, code = proc.stdout, proc.stderr, proc.returncode
    return code, [_joined(out, err), _joined(err, out)]


def _joined(first: str, second: str) -> str:
    if first and not first.endswith("\n"):
        first += "\n"
    return first + second


def run_console(block: Block, bindir: Path) -> None:
    for command, shown in session(block.body):
        code, printed = run_command(command, bindir)
        failing = shown.startswith(("Error:", "Usage:"))
        assert (code != 0) == failing, f"{block.where}: `{command}` exited {code}\n{printed[0]}"
        if shown:
            assert any(matches(shown, p) for p in printed), (
                f"{block.where}: `{command}` printed\n{printed[0]}\nbut the page shows\n{shown}"
            )


def workspace(tmp: Path) -> Path:
    shutil.copytree(ROOT / "examples", tmp / "examples")
    bindir = tmp / ".bin"
    bindir.mkdir()
    shim = bindir / "neardup"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m neardup "$@"\n', encoding="utf-8")
    shim.chmod(0o755)
    return bindir


def check_fence(block: Block) -> None:
    assert block.lang in RUN | SHOWN, (
        f"{block.where}: fence language {block.lang!r}; use python, console, text or sql"
    )
    if block.option("norun") is not None:
        commands = [c for c, _ in session(block.body)] if block.lang == "console" else []
        assert block.lang == "console" and commands, f"{block.where}: norun on a non-console"
        bad = [c for c in commands if not c.startswith(NORUN_COMMANDS)]
        assert not bad, f"{block.where}: norun, yet these could run: {bad}"


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_page_examples_run(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bindir = workspace(tmp_path)
    monkeypatch.chdir(tmp_path)
    skipped: list[str] = []
    ran = 0
    for block in blocks(page):
        check_fence(block)
        if block.lang not in RUN or block.option("norun") is not None:
            continue
        needs = block.option("needs")
        missing = [m for m in (needs or "").split(",") if m and not _importable(m)]
        if missing:
            skipped.append(f"{block.where} (needs {', '.join(missing)})")
            continue
        if block.option("slow") is not None and os.environ.get("NEARDUP_DOC_SLOW") == "0":
            skipped.append(f"{block.where} (slow; NEARDUP_DOC_SLOW=0 left it out)")
            continue
        if block.lang == "python":
            run_python(block)
        else:
            run_console(block, bindir)
        ran += 1
    if skipped:
        pytest.skip(f"ran {ran} blocks; skipped " + "; ".join(skipped))


def _importable(module: str) -> bool:
    if module.startswith("cmd:"):
        return shutil.which(module[4:]) is not None
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


def test_matcher() -> None:
    assert matches("a ... c\n", "a b b c\n")
    assert matches("x\n...\nz\n", "x\ny\ny\nz\n")
    assert matches("x\n...\nz\n", "x\nz\n")
    assert not matches("a\n", "a\nb\n")
    assert not matches("a 1\n", "a 2\n")
    assert session(
        textwrap.dedent("""\
        $ neardup plan \\
            --threshold 0.8   # comment
        out 1
        $ ls
        """)
    ) == [("neardup plan --threshold 0.8   # comment", "out 1"), ("ls", "")]
    assert neardup_args("neardup dedup x -q > y.jsonl") == (["dedup", "x", "-q"], "y.jsonl")
    assert neardup_args("neardup hash $(ls)") is None
