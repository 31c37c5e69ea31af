"""``neardup hash`` and ``neardup compare``: one file's fingerprint, two files' similarity."""

from __future__ import annotations

import json
from itertools import islice
from typing import TYPE_CHECKING

import click

from neardup.cli.inputs import documents
from neardup.cli.options import errors, progress_option, quiet_option
from neardup.errors import InputError
from neardup.methods import REGISTRY, make_method, method_info, method_names

if TYPE_CHECKING:
    from collections.abc import Callable

    from neardup.io import Document

__all__ = ["HASH_METHODS", "compare_cmd", "hash_cmd"]

#: ``neardup hash`` computes every method's fingerprint, and FuzzySum's.
HASH_METHODS = (*method_names(streams=True), *method_names(streams=False), "fuzzysum")


@click.command("hash")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option(
    "--method",
    "-m",
    type=click.Choice(HASH_METHODS),
    default="simhash-go",
    show_default=True,
    help="Fingerprint to compute.",
)
@quiet_option("No progress.")
@progress_option
@errors
def hash_cmd(files: tuple[str, ...], method: str, quiet: bool, progress: bool | None) -> None:
    """Print one line per file: path <TAB> fingerprint."""
    from neardup.cli.progress import pass_progress

    for path in files:
        _regular(path)
    update, close = pass_progress(quiet, progress, lambda: len(files))
    try:
        _hash(files, method, update)
    finally:
        close()


def _hash(files: tuple[str, ...], method: str, update: Callable[[str, int], None] | None) -> None:
    """One line per file on stdout, ``update("hash", files done)`` as they go."""
    from neardup.cli.progress import counted

    every = 16  # a file can be a large image
    if method == "fuzzysum":
        from neardup.fuzzy import legacy_fuzzysum

        for doc in counted(documents(files, binary=False), update, "hash", every):
            a, b = legacy_fuzzysum(doc.text or "")
            click.echo(f"{doc.id}\t{a}:{b}")
        return
    if method_info(method).streams:
        # streamed in 1 MiB chunks: memory stays flat however large the file
        from neardup.sketch.stream import hash_file

        for path in counted(files, update, "hash", every):
            click.echo(f"{path}\t{hash_file(path, method)}")
        return
    m = make_method(method)
    for doc in counted(documents(files, binary=method_info(m.name).binary), update, "hash", every):
        click.echo(f"{doc.id}\t{m.fingerprint(doc)}")


def _regular(path: str) -> None:
    """Refuse what is not a regular file: a FIFO would wait for a writer and a device such
    as ``/dev/urandom`` never ends."""
    import os
    import stat

    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}; check the path") from None
    if not stat.S_ISREG(mode):
        raise InputError(
            f"{path} is not a regular file (a FIFO, a device or a folder); save what it holds "
            "to a file and hash that"
        )


def _one_document(path: str, binary: bool) -> Document:
    """The one document a file is (a record file holding several is refused)."""
    docs = list(islice(documents((path,), binary=binary), 2))
    if len(docs) != 1:
        raise InputError(
            f"{path} holds {'no' if not docs else 'several'} documents (records); compare takes "
            "two files of one document each: use neardup dedup for record files"
        )
    return docs[0]


@click.command("compare")
@click.argument("a", type=click.Path(exists=True, dir_okay=False))
@click.argument("b", type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--method",
    "-m",
    type=click.Choice(list(REGISTRY)),
    default="minhash",
    show_default=True,
    help="How to compare.",
)
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
@click.option(
    "--dihedral",
    is_flag=True,
    default=False,
    help="Image methods: the smallest distance over A's rotations and mirror images.",
)
@errors
def compare_cmd(a: str, b: str, method: str, fmt: str, dihedral: bool) -> None:
    """Similarity (and distance, where it is a count) of two files."""
    if dihedral and "dihedral" not in method_info(method).options:
        users = [n for n, info in REGISTRY.items() if "dihedral" in info.options]
        raise click.UsageError(f"--dihedral applies to --method {', '.join(users)}")
    m = make_method(method, dihedral=True) if dihedral else make_method(method)
    binary = method_info(m.name).binary
    # each file on its own: a file compared with itself (under any name) is read twice
    da, db = (_one_document(path, binary) for path in (a, b))
    sim, dist = m.compare(da, db)
    if fmt == "json":
        click.echo(
            json.dumps({"a": a, "b": b, "method": method, "similarity": sim, "distance": dist})
        )
    else:
        extra = f"\tdistance={dist}" if dist is not None else ""
        click.echo(f"similarity={sim:.6f}{extra}")
