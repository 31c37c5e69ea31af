"""The ``neardup`` command line: a thin layer over pipeline, methods, indexes and report writers.

Results go to stdout; logs and progress go to stderr. A :class:`~neardup.errors.NeardupError`
becomes a one-line message and exit code 1; usage errors exit with 2.

One module per command family (``dedup``, ``index``, ``hash``, ``eval``, ``corpus``, ``plan``,
``serve``); the options they share are defined once, in :mod:`neardup.cli.options`.
"""

from __future__ import annotations

import importlib
import logging
import os
import sys
from collections.abc import Mapping
from typing import Any

import click

from neardup import __version__
from neardup._gc import pause_for_startup
from neardup.cli._startup import end_process, one_blas_thread

__all__ = ["main", "run"]

#: Each command, by name: the module that defines it and the object's name there.
_COMMANDS = {
    "compare": ("neardup.cli.hash", "compare_cmd"),
    "dedup": ("neardup.cli.dedup", "dedup_cmd"),
    "eval": ("neardup.cli.eval", "eval_cmd"),
    "hash": ("neardup.cli.hash", "hash_cmd"),
    "index": ("neardup.cli.index", "index_group"),
    "lines": ("neardup.cli.corpus", "lines_cmd"),
    "plan": ("neardup.cli.plan", "plan_cmd"),
    "serve": ("neardup.cli.serve", "serve_cmd"),
    "substrings": ("neardup.cli.corpus", "substrings_cmd"),
    "warmup": ("neardup.cli.plan", "warmup_cmd"),
}


class _LazyGroup(click.Group):
    """A group that imports a command's module only when that command runs (or when every
    command is asked for: ``--help``, ``.commands``), so that ``neardup dedup`` does not load
    the modules (and their dependencies) of ``eval``, ``index``, ``lines``..."""

    def __init__(self, *args: Any, lazy: Mapping[str, tuple[str, str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._lazy = dict(lazy)

    def _load(self, name: str) -> click.Command | None:
        where = self._lazy.pop(name, None)
        if where is not None:
            self._commands[name] = getattr(importlib.import_module(where[0]), where[1])
        return self._commands.get(name)

    def invoke(self, ctx: click.Context) -> Any:
        """Run the command; a reader that closed stdout early (``neardup dedup ... | head``)
        ends the run quietly with status 0, as ``cat`` and ``grep`` do."""
        try:
            result = super().invoke(ctx)
            sys.stdout.flush()  # inside the try: a closed pipe often shows only here
        except BrokenPipeError:
            _closed_stdout()
            raise click.exceptions.Exit(0) from None
        return result

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        one_blas_thread(args)  # before the command's module imports numpy
        return super().parse_args(ctx, args)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return self._load(cmd_name)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self._commands, *self._lazy})

    @property  # type: ignore[override]
    def commands(self) -> dict[str, click.Command]:
        """Every command (importing each one's module)."""
        for name in list(self._lazy):
            self._load(name)
        return self._commands

    @commands.setter
    def commands(self, value: dict[str, click.Command]) -> None:
        self._commands = value


def _closed_stdout() -> None:
    """Point stdout at /dev/null, so that the interpreter's last flush of what is still
    buffered for the closed pipe does not print an error at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # no real stdout (a test runner's buffer): nothing to do
        pass


@click.group(
    cls=_LazyGroup,
    lazy=_COMMANDS,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.version_option(__version__, prog_name="neardup")
@click.option("-v", "--verbose", count=True, help="More log output on stderr (-vv: debug).")
def main(verbose: int) -> None:
    """Find near-duplicate text and images: fingerprints, indexes, dedup and reports."""
    level = logging.WARNING if verbose == 0 else logging.INFO if verbose == 1 else logging.DEBUG
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("neardup: %(levelname)s: %(message)s"))
    root = logging.getLogger("neardup")
    root.handlers[:] = [handler]
    root.setLevel(level)
    root.propagate = False


def run() -> None:
    """The ``neardup`` program (the console script and ``python -m neardup``): :func:`main`,
    then the process ends at once when the command succeeded
    (:func:`~neardup.cli._startup.end_process`); a failure exits as usual, with its status."""
    pause_for_startup()  # till the command starts (its modules' imports, numpy's...)
    try:
        main(prog_name="neardup")
    except SystemExit as exc:
        if exc.code is None or exc.code == 0:
            end_process()
        raise
