"""Option blocks the ``neardup`` commands share, and the error wrapper every command wears.

One definition per option: a command that reads inputs takes :func:`input_options`, one that
reads records :func:`record_options`, and so on, so siblings spell, default and document an
option the same way.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any, TypeVar

import click

from neardup._gc import resume_after_startup
from neardup.errors import NeardupError
from neardup.methods import REGISTRY, method_info

__all__ = [
    "errors",
    "input_format_option",
    "input_options",
    "jobs_option",
    "lsh_options",
    "method_options",
    "ngram_option",
    "on_error_option",
    "progress_option",
    "quiet_models",
    "quiet_option",
    "record_options",
    "seed_option",
    "sketch_options",
    "stack",
    "threshold_option",
]

F = TypeVar("F", bound=Callable[..., Any])


def errors(fn: F) -> F:
    """Turn NeardupError (and, as a last resort, any other OSError) into a one-line message
    and exit code 1; the garbage collector that the ``neardup`` process paused for its
    start-up goes back on as the command starts (:func:`neardup._gc.resume_after_startup`)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        resume_after_startup()  # the command starts: the garbage collector is back on
        try:
            return fn(*args, **kwargs)
        except NeardupError as exc:
            raise click.ClickException(str(exc)) from None
        except BrokenPipeError:
            raise  # stdout closed by its reader (| head): Python's usual quiet end
        except OSError as exc:
            # a last resort: the library names its paths in a NeardupError, but an OS error
            # that reaches here still ends as one line, never a traceback
            where = f"{exc.filename}: " if exc.filename else ""
            raise click.ClickException(
                f"{where}{exc.strerror or exc}; check the paths, their permissions and free "
                "disk space"
            ) from None
        except KeyboardInterrupt:
            # Stores commit one transaction per batch: what was committed is kept.
            click.echo("neardup: interrupted; every batch committed so far is kept", err=True)
            raise click.exceptions.Exit(130) from None

    return wrapper  # type: ignore[return-value]


def stack(*options: Callable[[Any], Any]) -> Callable[[F], F]:
    """Apply option decorators so that ``--help`` lists them in the order given."""

    def apply(fn: F) -> F:
        for opt in reversed(options):
            fn = opt(fn)
        return fn

    return apply


def record_options(fn: F) -> F:
    """``--id-field`` and ``--text-field``: where records keep their id and text."""
    return stack(
        click.option(
            "--id-field",
            default=None,
            help="Record field with the id (nested: a.b); default: id if present, else the row.",
        ),
        click.option(
            "--text-field",
            multiple=True,
            default=("text",),
            show_default=True,
            help="Record field with the text (nested: a.b); repeat to join several with newlines.",
        ),
    )(fn)


def input_options(fn: F) -> F:
    """``--include``, ``--exclude`` and ``--follow-symlinks``: which files a folder walk picks."""
    return stack(
        click.option(
            "--include", multiple=True, help="Glob a walked file must match (repeatable)."
        ),
        click.option("--exclude", multiple=True, help="Glob that leaves a walked file out."),
        click.option(
            "--follow-symlinks",
            is_flag=True,
            help="Follow symbolic links in folders (each real folder once: cycle-safe).",
        ),
    )(fn)


def input_format_option(fn: F) -> F:
    """``--input-format``: how files become text."""
    return click.option(
        "--input-format",
        type=click.Choice(["auto", "text", "html", "markdown", "pdf"]),
        default="auto",
        show_default=True,
        help="How files become text (auto: by extension, then content; needs the markup extra).",
    )(fn)


def on_error_option(fn: F) -> F:
    """``--on-error``: stop at a bad input, or skip and count it."""
    return click.option(
        "--on-error",
        type=click.Choice(["fail", "skip"]),
        default="fail",
        show_default=True,
        help="Stop at a bad record, file or document, or skip it and count it in the summary.",
    )(fn)


def commit_every_option(fn: F) -> F:
    """``--commit-every SECONDS``: how often a run that adds to a store commits."""
    return click.option(
        "--commit-every",
        type=click.FloatRange(min=0),
        default=None,
        metavar="SECONDS",
        help="With an index: commit what was gathered at least this often "
        "[default: 2; 0: every batch].",
    )(fn)


def _quiet_logs(ctx: click.Context, param: click.Parameter, quiet: bool) -> bool:
    """With ``-q`` (and no ``-v``), log only errors: no warnings, no notes on stderr."""
    if quiet:
        root = logging.getLogger("neardup")
        if root.level in (logging.NOTSET, logging.WARNING):
            root.setLevel(logging.ERROR)
    return quiet


def quiet_option(text: str = "No summary line.") -> Callable[[F], F]:
    """``--quiet`` / ``-q``, with its help ``text`` (warnings are silenced too)."""
    return click.option(
        "--quiet",
        "-q",
        is_flag=True,
        callback=_quiet_logs,
        help=f"{text} Warnings are not shown either (errors are).",
    )


def quiet_models(quiet: bool, method: str | None) -> None:
    """With ``--quiet``, hide the embedding model's loading bars too."""
    if quiet and method == "embedding":
        from neardup.embeddings.local import hide_progress_bars

        hide_progress_bars()


def progress_option(fn: F) -> F:
    """``--progress/--no-progress``: a bar with a total and an ETA on stderr."""
    return click.option(
        "--progress/--no-progress",
        default=None,
        help="Show progress with a total and an ETA: a bar on a terminal, else a status line "
        "every 10 s (default: on when stderr is a terminal; off with -q).",
    )(fn)


def jobs_option(fn: F) -> F:
    """``--jobs`` / ``-j``: sketching threads."""
    return click.option(
        "--jobs",
        "-j",
        type=click.IntRange(1, 256),
        default=None,
        help="Threads that sketch in parallel (default: one per core).",
    )(fn)


def threshold_option(text: str) -> Callable[[F], F]:
    """``--threshold`` / ``-t`` in [0, 1], with its help ``text``."""
    return click.option(
        "--threshold", "-t", type=click.FloatRange(0.0, 1.0), default=None, help=text
    )


def sketch_options(*, stored: bool = False) -> Callable[[F], F]:
    """``--num-perm``, ``--bits`` and ``--canonicalize``: the text sketches' parameters.

    With ``stored``, the help says that they set a new index's parameters and must match an
    existing index's.
    """
    new = " of a new index" if stored else ""
    must = "; must match an existing one's" if stored else ""
    canon = (
        "Canonicalizer of a new index (default txtfp); must match an existing one's."
        if stored
        else "Canonicalizer preset for minhash/simhash (default txtfp; secure also undoes "
        "look-alike characters)."
    )
    return stack(
        click.option(
            "--num-perm",
            type=click.IntRange(8, 4096),
            default=None,
            help=f"MinHash slots{new} (default 128){must}.",
        ),
        click.option(
            "--bits",
            type=click.Choice(["64", "128", "256"]),
            default=None,
            help=f"SimHash width{new} (default 64){must}.",
        ),
        click.option(
            "--canonicalize",
            "canonical",
            type=click.Choice(["txtfp", "secure", "none"]),
            default=None,
            help=canon,
        ),
    )


def ngram_option(fn: F) -> F:
    """``--ngram``: words per MinHash shingle (the method's ``k``)."""
    return click.option(
        "--ngram",
        type=click.IntRange(1, 64),
        default=None,
        help="Words per MinHash shingle (default 5; text-dedup's and datatrove's n-gram size).",
    )(fn)


def seed_option(fn: F) -> F:
    """``--seed``: the MinHash permutations' seed."""
    return click.option(
        "--seed",
        type=click.IntRange(0, 2**64 - 1),
        default=None,
        help="Seed of the MinHash permutations (default 0x00C0FFEE5EED).",
    )(fn)


def lsh_options(fn: F) -> F:
    """``--bands`` and ``--rows``: MinHash's LSH banding, instead of the planned one."""
    return stack(
        click.option(
            "--bands",
            type=click.IntRange(1, 4096),
            default=None,
            help="MinHash LSH bands, with --rows (default: planned for 0.99 recall; see plan).",
        ),
        click.option(
            "--rows",
            type=click.IntRange(1, 4096),
            default=None,
            help="Slots per MinHash LSH band, with --bands; bands x rows <= --num-perm.",
        ),
    )(fn)


#: The dedup options that go to the method, by option name and method keyword.
_FLAGS = {
    "bands": "--bands",
    "rows": "--rows",
    "k": "--ngram",
    "seed": "--seed",
    "num_perm": "--num-perm",
    "bits": "--bits",
    "canonicalize": "--canonicalize",
    "bloom_capacity": "--bloom-capacity",
    "bloom_fp_rate": "--bloom-fp-rate",
    "model": "--model",
    "cache": "--embedding-cache",
    "dihedral": "--dihedral",
    "crops": "--crops",
    "min_quality": "--min-quality",
}


def method_options(method: str, **given: Any) -> dict[str, Any]:
    """The method keywords given on the command line; each must be one ``method`` takes."""
    options: dict[str, Any] = {}
    takes = method_info(method).options
    for name, value in given.items():
        if value is None:
            continue
        if name not in takes:
            users = [n for n, info in REGISTRY.items() if name in info.options]
            raise click.UsageError(f"{_FLAGS[name]} applies to --method {' and '.join(users)}")
        options[name] = value
    if given.get("bloom_fp_rate") is not None and given.get("bloom_capacity") is None:
        raise click.UsageError("--bloom-fp-rate goes with --bloom-capacity")
    return options
