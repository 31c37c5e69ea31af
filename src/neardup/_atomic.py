"""Writing outputs safely: under a temporary name beside the target, renamed into place.

A killed run leaves no partial output, and the next run that writes into the same folder
removes what it left (:func:`sweep_leftovers`: every temporary name carries its writer's
host and process id, so only a dead writer's files go). A FIFO or a device is written in
place, never replaced. A folder is replaced (``force``) only when it holds nothing but what
neardup wrote there (:data:`MANIFEST`). A read-only folder or a full disk becomes an
:class:`~neardup.errors.OutputError` naming the path and what to do, never a raw ``OSError``.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path

from neardup.errors import ConfigError, NeardupError, OutputError

__all__ = [
    "MANIFEST",
    "atomic_dir",
    "atomic_file",
    "check_target",
    "is_special",
    "output_errors",
    "sweep_leftovers",
    "temp_prefix",
    "write_error",
]

#: The file an output folder holds: the files neardup wrote there, so that ``--force``
#: replaces such a folder and no other (a hidden name: folder walks leave it out).
MANIFEST = ".neardup-output"

# .NAME.tmp-HOST-PID-xxxx, .NAME.old-HOST-PID-xxxx, .neardup-spool-HOST-PID-xxxx.pkl,
# .neardup-substrings-HOST-PID-xxxx (HOST: 8 hex digits of the host name's hash)
_LEFTOVER = re.compile(r"^\..*-(?P<host>[0-9a-f]{8})-(?P<pid>[0-9]+)-[^/]*$")
_KINDS = (".tmp-", ".old-", ".neardup-spool-", ".neardup-substrings-")


def _host() -> str:
    import socket  # here (as shutil and tempfile below): a run that writes no file
    import zlib  # never loads them

    return f"{zlib.crc32(socket.gethostname().encode('utf-8', 'replace')):08x}"


def temp_prefix(stem: str) -> str:
    """The start of a temporary name: ``stem`` (e.g. ``.out.jsonl.tmp``), the host and this
    process's id; :func:`sweep_leftovers` removes such names once their process is gone.

    Examples:
        >>> temp_prefix(".out.jsonl.tmp").startswith(".out.jsonl.tmp-")
        True
    """
    return f"{stem}-{_host()}-{os.getpid()}-"


def _dead(pid: int) -> bool:
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except (PermissionError, OverflowError):
        return False
    return False


def sweep_leftovers(folder: Path) -> int:
    """Remove the temporary files and folders that killed neardup runs left in ``folder``
    (names from :func:`temp_prefix` of this host whose process no longer runs); return how
    many. Anything else, and the files of runs still going, are left alone.

    Examples:
        >>> import tempfile
        >>> d = Path(tempfile.mkdtemp())
        >>> _ = (d / f".out.jsonl.tmp-{_host()}-999999999-abc").write_text("partial")
        >>> sweep_leftovers(d), list(d.iterdir())
        (1, [])
    """
    import shutil

    host = _host()
    removed = 0
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return 0
    for entry in entries:
        name = entry.name
        if not name.startswith(".") or not any(k in name for k in _KINDS):
            continue
        m = _LEFTOVER.match(name)
        if m is None or m["host"] != host or not _dead(int(m["pid"])):
            continue
        try:
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path)
            else:
                os.unlink(entry.path)
            removed += 1
        except OSError:
            continue
    return removed


def write_error(target: Path | str, exc: OSError) -> OutputError:
    """The :class:`OutputError` for an ``OSError`` met while writing ``target``."""
    where = Path(target)
    reason = exc.strerror or str(exc)
    other = exc.filename if exc.filename not in (None, str(target)) else None
    at = f" ({other})" if other is not None and not str(other).startswith(str(where.parent)) else ""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        what = (
            f"cannot write {where}: no space left on its device ({reason}){at}; free space "
            f"there, or write the output to another disk"
        )
    elif exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        what = (
            f"cannot write {where}: its folder {where.parent} is read-only or not writable "
            f"({reason}){at}; choose a writable path"
        )
    elif exc.errno == errno.ENOENT:
        what = (
            f"cannot write {where}: a folder on its path is missing ({reason}){at}; create it "
            "first or choose another path"
        )
    else:
        what = f"cannot write {where}: {reason}{at}; check the path, its folder and the disk"
    return OutputError(what)


@contextlib.contextmanager
def output_errors(target: Path | str) -> Iterator[None]:
    """Turn an ``OSError`` raised inside into :func:`write_error` of ``target``
    (a :class:`NeardupError` passes through)."""
    try:
        yield
    except NeardupError:
        raise
    except OSError as exc:
        raise write_error(target, exc) from exc


def is_special(path: Path) -> bool:
    """Whether ``path`` exists and is neither a regular file nor a folder (a FIFO, a device,
    a socket): an output there is written in place, never replaced."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def _manifest_files(target: Path) -> set[str] | None:
    try:
        data = json.loads((target / MANIFEST).read_text("utf-8"))
        files = data["files"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        return None
    return set(files)


def _contents(target: Path) -> Iterator[str]:
    """The files (and links and other non-folders) under ``target``, relative, except the
    manifest; folders are walked, not listed."""
    for root, dirs, files in os.walk(target):
        here = Path(root)
        for name in dirs:
            if (here / name).is_symlink():
                yield (here / name).relative_to(target).as_posix()
        for name in files:
            rel = (here / name).relative_to(target).as_posix()
            if rel != MANIFEST:
                yield rel


def _inside(child: Path, parent: Path) -> bool:
    return child == parent or parent in child.parents


def check_target(target: Path, *, force: bool, inputs: Iterable[str | Path] = ()) -> None:
    """Refuse, before any work, a folder target that a write would destroy.

    A missing target or an empty folder is fine. A non-empty folder needs ``force``, and even
    then must hold only what neardup wrote there (its :data:`MANIFEST` lists every file)
    and no input. Any other existing target (a file, a link) is replaced only with ``force``.

    Raises:
        ConfigError: the target exists and is not empty, and ``force`` is off; or it holds
            files neardup did not write, or an input.
    """
    if not target.exists() and not target.is_symlink():
        return
    real = Path(os.path.realpath(target))
    for item in inputs:
        if str(item) != "-" and _inside(Path(os.path.realpath(item)), real):
            raise ConfigError(
                f"{target} holds the input {item}; writing there would delete it: choose an "
                "output folder outside the inputs"
            )
    if not target.is_dir() or target.is_symlink():
        if force:
            return
        raise ConfigError(
            f"{target} already exists and is not empty; pick a new path or pass --force to "
            "replace it"
        )
    try:
        found = sorted(_contents(target))
    except OSError as exc:
        raise write_error(target, exc) from exc
    if not found and not (target / MANIFEST).exists() and not any(target.iterdir()):
        return
    if not force:
        raise ConfigError(
            f"{target} already exists and is not empty; pick a new path or pass --force to "
            "replace it"
        )
    listed = _manifest_files(target)
    if listed is None:
        shown = ", ".join(found[:3]) + (" ..." if len(found) > 3 else "")
        raise ConfigError(
            f"{target} is not a folder neardup wrote (no {MANIFEST} in it; it holds {shown}); "
            "--force replaces only an earlier neardup output: move those files away or "
            "choose another folder"
        )
    extra = [f for f in found if f not in listed]
    if extra:
        shown = ", ".join(extra[:3]) + (" ..." if len(extra) > 3 else "")
        raise ConfigError(
            f"{target} holds files neardup did not write there ({shown}); --force replaces "
            "only what neardup wrote: move them away or choose another folder"
        )


def _umask() -> int:
    """The process umask (read by setting it, and set back at once)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _give_default_mode(path: Path, *, folder: bool) -> None:
    """Give a temporary file (0600) or folder (0700) the mode a plain ``open`` / ``mkdir``
    would have given the target, so the renamed output is not private to its writer."""
    os.chmod(path, (0o777 if folder else 0o666) & ~_umask())


def _parent(target: Path) -> None:
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise write_error(target, exc) from exc
    sweep_leftovers(target.parent)


@contextlib.contextmanager
def atomic_dir(
    target: Path, *, force: bool = False, inputs: Iterable[str | Path] = ()
) -> Iterator[Path]:
    """Yield a fresh temporary folder beside ``target``; on success it replaces ``target``,
    with a :data:`MANIFEST` of the files written.

    On an exception the temporary folder is removed and ``target`` is left as it was.

    Raises:
        ConfigError: ``target`` would destroy something (:func:`check_target`).
        OutputError: the folder cannot be written (read-only, disk full).

    Examples:
        >>> import tempfile
        >>> out = Path(tempfile.mkdtemp()) / "clean"
        >>> with atomic_dir(out) as tmp:
        ...     _ = (tmp / "a.txt").write_text("x")
        >>> sorted(p.name for p in out.iterdir())
        ['.neardup-output', 'a.txt']
    """
    import shutil
    import tempfile

    inputs = list(inputs)
    check_target(target, force=force, inputs=inputs)
    _parent(target)
    try:
        tmp = Path(tempfile.mkdtemp(prefix=temp_prefix(f".{target.name}.tmp"), dir=target.parent))
    except OSError as exc:
        raise write_error(target, exc) from exc
    try:
        with output_errors(target):
            _give_default_mode(tmp, folder=True)
            yield tmp
            files = sorted(_contents(tmp))
            (tmp / MANIFEST).write_text(
                json.dumps({"written_by": "neardup", "files": files}, ensure_ascii=False) + "\n",
                "utf-8",
                errors="surrogateescape",
            )
        check_target(target, force=force, inputs=inputs)  # nothing changed it meanwhile
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    with output_errors(target):
        old: Path | None = None
        if target.exists() or target.is_symlink():
            old = Path(
                tempfile.mkdtemp(prefix=temp_prefix(f".{target.name}.old"), dir=target.parent)
            )
            os.replace(target, old / "previous")
        os.replace(tmp, target)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)


@contextlib.contextmanager
def atomic_file(target: Path, *, force: bool = True) -> Iterator[Path]:
    """Yield a temporary file path beside ``target``; on success it is renamed to ``target``.

    A ``target`` that is a FIFO or a device is yielded itself and written in place.

    Raises:
        ConfigError: ``target`` is a folder, or exists and ``force`` is off.
        OutputError: the file cannot be written (read-only folder, disk full).
    """
    import tempfile

    if target.is_dir():
        raise ConfigError(f"{target} is a folder; name a file for this output")
    if is_special(target):
        with output_errors(target):
            yield target
        return
    check_target(target, force=force)
    _parent(target)
    try:
        fd, name = tempfile.mkstemp(prefix=temp_prefix(f".{target.name}.tmp"), dir=target.parent)
    except OSError as exc:
        raise write_error(target, exc) from exc
    os.close(fd)
    tmp = Path(name)
    try:
        with output_errors(target):
            _give_default_mode(tmp, folder=False)
            yield tmp
            os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
