"""Walking input folders: sorted, filtered, symlink-aware and cycle-safe, with ids that stay
unique across several roots and a record of every file left out and why."""

from __future__ import annotations

import fnmatch
import logging
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from neardup.errors import InputError

__all__ = ["IMAGE_SUFFIXES", "ReadStats", "root_labels", "walk"]

log = logging.getLogger(__name__)

#: Reasons a walked file is left out, as the summary line words them.
SYMLINK = "symbolic link (add --follow-symlinks)"
CYCLE = "symbolic link cycle"
HIDDEN = "hidden"
FILTERED = "filtered by --include/--exclude"
UNREADABLE = "unreadable"
SPECIAL = "not a regular file"
NOT_IMAGE = "not an image (the method reads images)"

#: What a folder walk for an image method picks (Pillow's formats; case-insensitive).
IMAGE_SUFFIXES = (
    ".bmp",
    ".dib",
    ".gif",
    ".ico",
    ".jfif",
    ".jpe",
    ".jpeg",
    ".jpg",
    ".pbm",
    ".pgm",
    ".png",
    ".pnm",
    ".ppm",
    ".tga",
    ".tif",
    ".tiff",
    ".webp",
)


@dataclass
class ReadStats:
    """What reading saw besides the documents: files left out (by reason) and bad records.

    Attributes:
        documents: Documents yielded.
        bad_records: Records skipped under ``on_error="skip"``.
        left_out: Reason -> paths of the files and folders left out.
        current: The file being read and its name as an input (relative to its folder for a
            walked file, as given otherwise), while its documents stream; ``None`` before the
            first file and for stdin. Sharded outputs use it to send a record to its shard.
    """

    documents: int = 0
    bad_records: int = 0
    left_out: dict[str, list[str]] = field(default_factory=dict)
    current: tuple[Path, str] | None = None

    def leave_out(self, path: str | Path, reason: str) -> None:
        """Record that ``path`` was not read, and why."""
        self.left_out.setdefault(reason, []).append(str(path))
        log.info("left out %s: %s", path, reason)

    @property
    def files_left_out(self) -> int:
        """How many files and folders were left out, all reasons together."""
        return sum(len(v) for v in self.left_out.values())

    def summary(self, *, show: int = 3) -> str | None:
        """One line naming what was left out and why (``None`` when nothing was).

        Examples:
            >>> s = ReadStats()
            >>> s.leave_out("a/x", SYMLINK); s.bad_records = 2
            >>> s.summary()
            'left out 1 file: 1 symbolic link (add --follow-symlinks): a/x; skipped 2 bad records'
        """
        parts = []
        for reason, paths in sorted(self.left_out.items()):
            shown = ", ".join(paths[:show]) + (", ..." if len(paths) > show else "")
            parts.append(f"{len(paths)} {reason}: {shown}")
        out = []
        if parts:
            n = self.files_left_out
            out.append(f"left out {n} file{'s' if n != 1 else ''}: " + "; ".join(parts))
        if self.bad_records:
            out.append(
                f"skipped {self.bad_records} bad record{'s' if self.bad_records != 1 else ''}"
            )
        return "; ".join(out) or None


def _matches(rel: str, patterns: Sequence[str]) -> bool:
    name = rel.rsplit("/", 1)[-1]
    return any(fnmatch.fnmatch(rel, p) or fnmatch.fnmatch(name, p) for p in patterns)


def walk(
    root: Path,
    *,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    follow_symlinks: bool = False,
    stats: ReadStats | None = None,
    strict: bool = True,
    images_only: bool = False,
) -> Iterator[tuple[Path, str]]:
    """Yield ``(path, relative id)`` for the regular files under ``root``, sorted.

    Hidden names (starting with ``.``) are left out; so, with ``images_only``, are files
    whose names do not end with one of :data:`IMAGE_SUFFIXES`. Symbolic links are left out unless
    ``follow_symlinks``; then each real folder is entered once (a link back up the tree is a
    cycle, left out and recorded). Every file or folder left out is recorded in ``stats``.

    Raises:
        InputError: a folder cannot be listed and ``strict`` (else it is recorded and skipped).
    """
    stats = stats if stats is not None else ReadStats()
    seen: set[tuple[int, int]] = set()

    def onerror(exc: OSError) -> None:
        where = exc.filename or root
        if strict:
            raise InputError(
                f"cannot list {where}: {exc.strerror or exc}; fix its permissions, leave it out "
                "(--exclude) or pass --on-error skip"
            ) from exc
        stats.leave_out(where, f"{UNREADABLE} folder")

    try:
        st = root.stat()
        seen.add((st.st_dev, st.st_ino))
    except OSError as exc:
        onerror(exc)
        return
    for dirpath, dirnames, filenames in os.walk(root, onerror=onerror, followlinks=follow_symlinks):
        here = Path(dirpath)
        keep = []
        for d in sorted(dirnames):
            full = here / d
            if d.startswith("."):
                stats.leave_out(full, HIDDEN)
                continue
            if full.is_symlink():
                if not follow_symlinks:
                    stats.leave_out(full, SYMLINK)
                    continue
                try:
                    st = full.stat()
                except OSError:
                    stats.leave_out(full, f"{UNREADABLE} (dangling link)")
                    continue
            else:
                try:
                    st = full.lstat()
                except OSError:
                    stats.leave_out(full, UNREADABLE)
                    continue
            key = (st.st_dev, st.st_ino)
            if key in seen:
                stats.leave_out(full, CYCLE)
                continue
            seen.add(key)
            keep.append(d)
        dirnames[:] = keep
        for fname in sorted(filenames):
            path = here / fname
            if fname.startswith("."):
                stats.leave_out(path, HIDDEN)
                continue
            if path.is_symlink() and not follow_symlinks:
                stats.leave_out(path, SYMLINK)
                continue
            if not path.is_file():
                stats.leave_out(path, SPECIAL if path.exists() else f"{UNREADABLE} (dangling link)")
                continue
            rel = path.relative_to(root).as_posix()
            if (include and not _matches(rel, include)) or (exclude and _matches(rel, exclude)):
                stats.leave_out(path, FILTERED)
                continue
            if images_only and not fname.lower().endswith(IMAGE_SUFFIXES):
                stats.leave_out(path, NOT_IMAGE)
                continue
            yield path, rel


def root_labels(roots: Sequence[str]) -> list[str]:
    """A distinct label per root, for prefixing ids when roots' files collide: the root's last
    folder name, or more of its path when two roots share that name.

    Examples:
        >>> root_labels(["data/a", "other/a/", "b"])
        ['data/a', 'other/a', 'b']
    """
    parts = [Path(r).as_posix().rstrip("/").split("/") for r in roots]
    depth = [1] * len(parts)
    while True:
        labels = ["/".join(p[-d:]) for p, d in zip(parts, depth, strict=True)]
        clash = {x for x in labels if labels.count(x) > 1}
        if not clash:
            return labels
        grew = False
        for i, label in enumerate(labels):
            if label in clash and depth[i] < len(parts[i]):
                depth[i] += 1
                grew = True
        if not grew:  # the same root twice: number them
            return [f"{x}#{i}" if x in clash else x for i, x in enumerate(labels)]
