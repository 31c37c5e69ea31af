"""Checks of output paths, made before a run reads anything, and the safe target of a copy.

A report or a deduplicated copy that cannot be written should fail in the first second, not
after an hour of sketching; and a copy must never overwrite its own input or land outside
the folder it was asked to go to.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path, PurePath

from neardup.errors import InputError

__all__ = ["RECORD_SUFFIXES", "check_outputs", "copy_target", "record_file"]

#: The extensions of record files that ``--output`` and ``--annotate`` write.
RECORD_SUFFIXES = (".parquet", ".jsonl", ".jsonl.gz", ".jsonl.zst", ".csv")


def record_file(path: str | PurePath) -> bool:
    """Whether ``path`` names a record file (:data:`RECORD_SUFFIXES`), not a folder.

    Examples:
        >>> record_file("clean.jsonl.zst"), record_file("clean.parquet"), record_file("clean")
        (True, True, False)
    """
    return str(path).lower().endswith(RECORD_SUFFIXES)


def _inside(child: Path, parent: Path) -> bool:
    return child == parent or parent in child.parents


def _check_report(report: str) -> None:
    target = Path(report)
    if target.is_dir():
        raise InputError(f"--report {report} is a folder; name a file, e.g. {target / 'r.html'}")
    folder = target.parent
    if not folder.is_dir():
        raise InputError(
            f"--report {report}: the folder {folder} does not exist; create it first "
            "(mkdir -p) or write the report elsewhere"
        )


def check_outputs(
    inputs: Iterable[str], *, report: str | None = None, output: str | None = None
) -> None:
    """Refuse, before any work, a ``--report`` or ``--output`` that cannot be written.

    Args:
        inputs: The input paths (``-`` is stdin).
        report: Where the HTML report goes.
        output: Where the deduplicated copy goes: a record file (:data:`RECORD_SUFFIXES`)
            or a folder.

    Raises:
        InputError: The report's folder is missing or the report is a folder; the output is
            an existing file where a folder is wanted (or a folder where a record file is),
            its folder is missing, or it would overwrite or sit inside an input.

    Examples:
        >>> check_outputs(["notes.txt"], output="/nonexistent-dir/kept.jsonl")
        Traceback (most recent call last):
        ...
        neardup.errors.InputError: --output /nonexistent-dir/kept.jsonl: the folder ...
    """
    if report is not None:
        _check_report(report)
    if output is None:
        return
    out = Path(output)
    sources = [Path(p).resolve() for p in inputs if p != "-" and Path(p).exists()]
    if record_file(out):
        if out.is_dir():
            raise InputError(f"--output {output} is a folder; name a file for the records")
        if not out.parent.is_dir():
            raise InputError(
                f"--output {output}: the folder {out.parent} does not exist; create it first"
            )
        if out.resolve() in sources:
            raise InputError(
                f"--output {output} is one of the inputs; write the copy to a new file"
            )
        return
    if out.exists() and not out.is_dir():
        raise InputError(
            f"--output {output} is an existing file; a copy of files needs a folder (or name "
            "a .jsonl, .jsonl.gz, .jsonl.zst, .csv or .parquet file for records)"
        )
    where = out.resolve()
    for source in sources:
        if source.is_dir() and _inside(where, source):
            raise InputError(
                f"--output {output} is inside the input folder {source}; the copy would be "
                "read back as input: choose a folder outside it"
            )
        if source.is_file() and copy_target(where, str(source), source).resolve() == source:
            raise InputError(
                f"--output {output} would overwrite the input {source} with itself; choose "
                "another folder"
            )


def copy_target(output: Path, doc_id: str, source: Path) -> Path:
    """Where the copy of document ``doc_id`` (read from ``source``) goes under ``output``.

    The id's relative path is kept, minus ``..`` and ``.`` parts; an absolute id keeps only the
    file name. The result is always inside ``output``.

    Raises:
        InputError: The target would leave ``output`` (through a symbolic link inside it).

    Examples:
        >>> copy_target(Path("out"), "../../etc/x.txt", Path("x.txt")).as_posix()
        'out/etc/x.txt'
        >>> copy_target(Path("out"), "/data/a/b.txt", Path("/data/a/b.txt")).as_posix()
        'out/b.txt'
    """
    rel = PurePath(doc_id)
    if rel.is_absolute() or rel.anchor:
        parts: tuple[str, ...] = (source.name,)
    else:
        parts = tuple(p for p in rel.parts if p not in ("..", "."))
    if not parts:
        parts = (source.name,)
    target = output.joinpath(*parts)
    real_out = Path(os.path.realpath(output))
    if not _inside(Path(os.path.realpath(target)), real_out):
        raise InputError(
            f"the copy of {doc_id!r} would be written outside {output} ({target} leads "
            "elsewhere through a symbolic link); remove the link or choose another --output"
        )
    return target
