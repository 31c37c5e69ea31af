"""Every command's and subcommand's ``--help`` against docs/cli.md, both ways.

Each command has a section (``## neardup dedup``, ``### neardup index add``) that names every
option the command takes; an option a section names must be one its command (for a group:
one of its commands) takes, so the page cannot describe an option that is gone.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from neardup.cli import main

DOC = (Path(__file__).resolve().parents[1] / "docs" / "cli.md").read_text(encoding="utf-8")
OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")


def _commands(cmd: click.Command, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    yield path
    if isinstance(cmd, click.Group):
        for name, sub in sorted(cmd.commands.items()):
            yield from _commands(sub, (*path, name))


def _command(path: tuple[str, ...]) -> click.Command:
    cmd: click.Command = main
    for name in path:
        assert isinstance(cmd, click.Group)
        cmd = cmd.commands[name]
    return cmd


def _options(cmd: click.Command) -> set[str]:
    opts = {o for p in cmd.params for o in (*p.opts, *p.secondary_opts) if o.startswith("--")}
    if isinstance(cmd, click.Group):
        for sub in cmd.commands.values():
            opts |= _options(sub)
    return opts


def _section(path: tuple[str, ...]) -> str:
    """The text under the command's heading, up to the next heading (the intro for main)."""
    if not path:
        return DOC[: DOC.index("\n## ")]
    heading = re.compile(rf"^#{{2,3}} neardup {re.escape(' '.join(path))}$", re.MULTILINE)
    found = heading.search(DOC)
    assert found, f"docs/cli.md has no section '## neardup {' '.join(path)}'"
    rest = DOC[found.end() :]
    following = re.search(r"^#{1,3} ", rest, re.MULTILINE)
    return rest[: following.start()] if following else rest


PATHS = list(_commands(main))


def test_every_command_is_walked() -> None:
    names = {" ".join(p) for p in PATHS}
    assert {"dedup", "eval", "index add", "index query", "index remove", "index stats"} <= names


@pytest.mark.parametrize("path", PATHS, ids=lambda p: " ".join(p) or "neardup")
def test_help_and_docs_name_the_same_options(path: tuple[str, ...]) -> None:
    result = CliRunner().invoke(main, [*path, "--help"], terminal_width=200)
    assert result.exit_code == 0, result.output
    cmd = _command(path)
    # what --help shows is what the command takes
    shown = set(OPTION.findall(result.output)) - {"--help"}
    own = {o for p in cmd.params for o in (*p.opts, *p.secondary_opts) if o.startswith("--")}
    assert own <= shown, f"--help of {' '.join(path)} misses {sorted(own - shown)}"
    section = _section(path)
    documented = set(OPTION.findall(section))
    missing = own - documented
    assert not missing, f"docs/cli.md, neardup {' '.join(path)}: undocumented {sorted(missing)}"
    unknown = documented - _options(cmd) - {"--help"}
    assert not unknown, f"docs/cli.md, neardup {' '.join(path)}: no such option {sorted(unknown)}"


def test_input_options_are_the_same_on_every_reading_command() -> None:
    """The commands that read documents take the input options, spelled and defaulted alike."""
    inputs = {"--include", "--exclude", "--follow-symlinks", "--on-error", "--id-field"}
    readers = [("dedup",), ("eval",), ("index", "add"), ("index", "query"), ("lines",)]
    for path in readers:
        assert inputs <= _options(_command(path)), path
    for name in ("--on-error", "--id-field", "--text-field", "--include"):
        shapes = {
            (p.default if not callable(p.default) else None, p.multiple, str(p.type))
            for path in readers
            for p in _command(path).params
            if name in p.opts
        }
        assert len(shapes) == 1, (name, shapes)
