"""Checks of output paths, made before a run reads anything, and the safe target of a copy.

A report or a deduplicated copy that cannot be written should fail in the first second, not
after an hour of sketching; and a copy must never overwrite its own input or land outside
the folder it was asked to go to.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path, PurePath

from neardup._atomic import check_target, is_special
from neardup.errors import InputError, OutputError

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


def _check_record_file(option: str, path: str) -> None:
    out = Path(path)
    if out.is_dir():
        raise InputError(f"{option} {path} is a folder; name a file for the records")
    if not out.parent.is_dir():
        raise InputError(
            f"{option} {path}: the folder {out.parent} does not exist; create it first"
        )


def _writable(option: str, path: str) -> None:
    """Refuse an output whose folder cannot be written (a FIFO or device is written in
    place: its folder does not matter)."""
    out = Path(path)
    if is_special(out):
        return
    folder = out.parent
    if folder.is_dir() and not os.access(folder, os.W_OK | os.X_OK):
        raise OutputError(
            f"{option} {path}: the folder {folder} is read-only or not writable; choose a "
            "writable path"
        )


def _same_file(a: Path, b: Path) -> bool:
    """Whether two paths name one file (resolved, or one inode: a hard link)."""
    if Path(os.path.realpath(a)) == Path(os.path.realpath(b)):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def check_outputs(
    inputs: Iterable[str],
    *,
    report: str | None = None,
    output: str | None = None,
    annotate: str | None = None,
    force: bool = False,
) -> None:
    """Refuse, before any work, an output that cannot be written or would destroy something.

    Every output must be writable, must not be (or, for an ``output`` folder, hold) an
    input, and must not share a path with another output (nor sit inside the ``output``
    folder, which is replaced whole).

    Args:
        inputs: The input paths (``-`` is stdin).
        report: Where the HTML report goes.
        output: Where the deduplicated or cleaned copy goes: a record file
            (:data:`RECORD_SUFFIXES`) or a folder.
        annotate: Where the annotated records go (a record file).
        force: ``--force``: an existing ``output`` folder may be replaced, when neardup
            wrote it (:func:`neardup._atomic.check_target`).

    Raises:
        InputError: the report's folder is missing or the report is a folder; the output is
            an existing file where a folder is wanted (or a folder where a record file is),
            its folder is missing, or it would overwrite or sit inside an input; two outputs
            share a path.
        ConfigError: an existing ``output`` folder that ``--force`` may not replace.
        OutputError: an output's folder is read-only.

    Examples:
        >>> check_outputs(["notes.txt"], output="/nonexistent-dir/kept.jsonl")
        Traceback (most recent call last):
        ...
        neardup.errors.InputError: --output /nonexistent-dir/kept.jsonl: the folder ...
    """
    inputs = [p for p in inputs if p != "-"]
    named = {"--report": report, "--output": output, "--annotate": annotate}
    wanted = {option: path for option, path in named.items() if path is not None}
    if report is not None:
        _check_report(report)
    if annotate is not None:
        _check_record_file("--annotate", annotate)
    if output is not None and record_file(output):
        _check_record_file("--output", output)
    for option, path in wanted.items():
        for source in inputs:
            if Path(source).exists() and _same_file(Path(path), Path(source)):
                raise InputError(
                    f"{option} {path} is the input {source}; writing it would destroy the "
                    "input: write to a new file"
                )
    options = list(wanted.items())
    for i, (a, pa) in enumerate(options):
        for b, pb in options[i + 1 :]:
            if _same_file(Path(pa), Path(pb)):
                raise InputError(
                    f"{a} {pa} and {b} {pb} are the same path; each output needs its own file"
                )
    if output is not None and not record_file(output):
        where = Path(os.path.realpath(output))
        for option, path in wanted.items():
            if option != "--output" and _inside(Path(os.path.realpath(path)), where):
                raise InputError(
                    f"{option} {path} is inside the --output folder {output}, which is "
                    "replaced whole; write it elsewhere"
                )
        _check_copy_folder(inputs, output, force)
    for option, path in wanted.items():
        _writable(option, path)


def _check_copy_folder(inputs: list[str], output: str, force: bool) -> None:
    out = Path(output)
    if (out.exists() and not out.is_dir()) or is_special(out):
        raise InputError(
            f"--output {output} is an existing file; a copy of files needs a folder (or name "
            "a .jsonl, .jsonl.gz, .jsonl.zst, .csv or .parquet file for records)"
        )
    where = out.resolve()
    sources = [Path(p).resolve() for p in inputs if Path(p).exists()]
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
    check_target(out, force=force, inputs=inputs)


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
