"""On-disk cache of the Unicode lookup tables the kernels build from :mod:`unicodedata`.

Building a dense table means a Python loop over every assigned code point (about 0.25-1 s
per table family); doing that at every process start would dominate short runs. A family's
tables are therefore built once and written to one uncompressed ``.npz`` file whose name
holds everything its content depends on: the family, its table format version, the Unicode
version of :mod:`unicodedata` and the Python version (``str.casefold`` and ``str.lower`` come
from the interpreter's own Unicode database). Later processes load the file in a few
milliseconds.

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
import logging
import os
import sys
import tempfile
import unicodedata
import zipfile
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
    return root / f"unicode-{family}-v{version}-{unicodedata.unidata_version}-{py}.npz"


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


def _load(path: Path, layout: Layout) -> Tables | None:
    if not path.is_file():
        return None
    try:
        with path.open("rb") as fh, np.load(fh, allow_pickle=False) as data:
            tables = {name: data[name] for name in data.files}
    except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile) as exc:
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
    for arr in tables.values():
        arr.setflags(write=False)
    return tables


def _save(path: Path, tables: Tables) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=path.stem + ".", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        log.debug("Unicode table cache not written (%s): %s", path.parent, exc)
        return
    try:
        with os.fdopen(fd, "wb") as fh:
            np.savez(fh, allow_pickle=False, **tables)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except OSError as exc:
        log.debug("Unicode table cache not written (%s): %s", path, exc)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
