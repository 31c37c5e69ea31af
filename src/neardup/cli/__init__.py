"""The ``neardup`` command line: a thin layer over pipeline, methods, indexes and report writers.

Results go to stdout; logs and progress go to stderr. A :class:`~neardup.errors.NeardupError`
becomes a one-line message and exit code 1; usage errors exit with 2.

One module per command family (``dedup``, ``index``, ``hash``, ``eval``, ``corpus``, ``plan``);
the options they share are defined once, in :mod:`neardup.cli.options`.
"""

from __future__ import annotations

import logging
import sys

import click

from neardup import __version__
from neardup.cli._startup import skip_blas_probe
from neardup.cli.corpus import lines_cmd, substrings_cmd
from neardup.cli.dedup import dedup_cmd
from neardup.cli.eval import eval_cmd
from neardup.cli.hash import compare_cmd, hash_cmd
from neardup.cli.index import index_group
from neardup.cli.plan import plan_cmd, warmup_cmd

__all__ = ["main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="neardup")
@click.option("-v", "--verbose", count=True, help="More log output on stderr (-vv: debug).")
def main(verbose: int) -> None:
    """Find near-duplicate text and images: fingerprints, indexes, dedup and reports."""
    skip_blas_probe()
    level = logging.WARNING if verbose == 0 else logging.INFO if verbose == 1 else logging.DEBUG
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("neardup: %(levelname)s: %(message)s"))
    root = logging.getLogger("neardup")
    root.handlers[:] = [handler]
    root.setLevel(level)
    root.propagate = False
    # the one line saying that kernels compile on this first use (docs/engine.md)
    logging.getLogger("neardup._kernels.cache").setLevel(min(level, logging.INFO))


for _command in (
    compare_cmd,
    dedup_cmd,
    eval_cmd,
    hash_cmd,
    index_group,
    lines_cmd,
    plan_cmd,
    substrings_cmd,
    warmup_cmd,
):
    main.add_command(_command)
