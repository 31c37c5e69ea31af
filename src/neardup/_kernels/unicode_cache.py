"""On-disk cache of the Unicode lookup tables the kernels build from :mod:`unicodedata`.

Building a dense table means a Python loop over every assigned code point (about 0.25-1 s
per table family); doing that at every process start would dominate short runs. A family's
tables are therefore built once and written to one file whose name holds everything its
content depends on: the family, its table format version, the Unicode version of
:mod:`unicodedata` and the Python version (``str.casefold`` and ``str.lower`` come from the
interpreter's own Unicode database). Later processes map the file into memory read-only (no
read, no copy): a table of 0x110000 entries takes memory only for the pages of it that a run's
text touches (a few for mostly-ASCII text, instead of 10 MB for the two families).

Format (``.tables``): the line ``neardup-tables 1``, one line of JSON listing each array's
name, dtype, length and byte offset, then the raw arrays (native byte order), each at an
offset that is a multiple of 4096.

Where: the root of the kernel cache (:func:`neardup._kernels.cache.cache_root`:
``$NEARDUP_CACHE_DIR``, else ``$NUMBA_CACHE_DIR/neardup``, else ``$XDG_CACHE_HOME/neardup``,
``~/.cache/neardup``), next to the compiled kernels.

Safety: a file is written to a temporary name in the same directory and moved into place
with :func:`os.replace` (atomic on POSIX and Windows), so readers never see half a file and
concurrent writers (parallel test runs, worker processes) simply race to write the same
bytes. A file that fails to load, or whose arrays do not have the names, dtypes and shapes
the builder gives, is ignored and rebuilt. An unwritable cache directory only costs the
rebuild; it is never an error.
"""

from __future__ import annotations

import contextlib
import json
import logging
import mmap
import os
import sys
import unicodedata
from collections.abc import Callable
from pathlib import Path

import numpy as np
import numpy.typing as npt

__all__ = ["cache_dir", "cache_path", "cached_tables"]

log = logging.getLogger(__name__)

Tables = dict[str, npt.NDArray[np.generic]]
#: name -> (dtype, length or None for any length) of every 1-D array a family holds.
Layout = dict[str, tuple[str, int | None]]


def cache_dir() -> Path:
    """The directory holding the table files: the kernel cache's root."""
    from neardup._kernels.cache import cache_root

    return cache_root()


def cache_path(family: str, version: int) -> Path:
    """The file for ``family``'s tables of format ``version``."""
    root = cache_dir()
    py = f"py{sys.version_info[0]}{sys.version_info[1]}"
    return root / f"unicode-{family}-v{version}-{unicodedata.unidata_version}-{py}.tables"


def cached_tables(family: str, version: int, build: Callable[[], Tables], layout: Layout) -> Tables:
    """Return ``family``'s tables: loaded from the cache file, or built and then saved.

    Args:
        family: Short name of the table family (part of the file name).
        version: The family's table format version; bump it whenever ``build`` changes.
        build: Builds the tables from :mod:`unicodedata` (called on a cache miss).
        layout: The arrays a file must hold (name -> dtype and length); a file that differs
            is ignored and rebuilt.

    Returns:
        Arrays by name, read-only.
    """
    path = cache_path(family, version)
    loaded = _load(path, layout)
    if loaded is not None:
        return loaded
    tables = build()
    for arr in tables.values():
        arr.setflags(write=False)
    _save(path, tables)
    return tables


#: The first line of a table file.
_MAGIC = b"neardup-tables 1\n"
#: Each array starts at a multiple of this (a page: the maps of two arrays never share one).
_ALIGN = 4096


def _read(path: Path) -> Tables:
    """The arrays of a table file, as read-only views of its memory map."""
    with path.open("rb") as fh:
        if fh.readline() != _MAGIC:
            raise ValueError("not a neardup table file")
        header = json.loads(fh.readline(1 << 20))
        mapped = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    tables: Tables = {}
    for name, dtype, length, offset in header["arrays"]:
        dt = np.dtype(dtype)
        if offset % _ALIGN or offset + dt.itemsize * length > len(mapped):
            raise ValueError(f"array {name!r} lies outside the file (truncated?)")
        tables[name] = np.frombuffer(mapped, dtype=dt, count=length, offset=offset)
    return tables


def _load(path: Path, layout: Layout) -> Tables | None:
    if not path.is_file():
        return None
    try:
        tables = _read(path)
    except (OSError, ValueError, EOFError, KeyError, TypeError) as exc:
        log.warning("ignoring unreadable Unicode table cache %s (%s); rebuilding", path, exc)
        return None
    for name, (dtype, length) in layout.items():
        arr = tables.get(name)
        if (
            arr is None
            or arr.dtype != np.dtype(dtype)
            or arr.ndim != 1
            or (length is not None and arr.shape[0] != length)
        ):
            log.warning("ignoring Unicode table cache %s with a stale layout", path)
            return None
    return tables


def _save(path: Path, tables: Tables) -> None:
    import tempfile  # only on a miss: a warm process never writes

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=path.stem + ".", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        log.debug("Unicode table cache not written (%s): %s", path.parent, exc)
        return
    entries: list[tuple[str, str, int, int]] = []
    offset = _ALIGN  # the two header lines fit in the first page
    for name, arr in tables.items():
        entries.append((name, arr.dtype.str, int(arr.shape[0]), offset))
        offset += -(-arr.nbytes // _ALIGN) * _ALIGN
    header = _MAGIC + json.dumps({"arrays": entries}).encode() + b"\n"
    try:
        with os.fdopen(fd, "wb") as fh:
            if len(header) > _ALIGN:
                raise OSError(f"{len(tables)} tables: too many names for the header page")
            fh.write(header)
            for (_name, _dtype, _length, at), arr in zip(entries, tables.values(), strict=True):
                fh.seek(at)
                fh.write(np.ascontiguousarray(arr).tobytes())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except OSError as exc:
        log.debug("Unicode table cache not written (%s): %s", path, exc)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
