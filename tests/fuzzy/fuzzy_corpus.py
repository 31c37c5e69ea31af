"""The fuzzy tests' corpus: real files from this machine plus edited copies (built once)."""

from __future__ import annotations

import random
import sysconfig
from functools import cache
from pathlib import Path

_SOURCES: list[tuple[str, str, int]] = [
    # (directory, glob, how many files to take)
    ("/usr/share/common-licenses", "*", 20),
    ("/usr/share/doc", "**/*", 90),
    (sysconfig.get_paths()["stdlib"], "*.py", 90),
    ("/usr/bin", "*", 40),
]
_MAX_FILE = 400_000  # ppdeep is pure Python (~5 MB/s): keep the corpus quick to check


def _pick(directory: str, pattern: str, count: int, rng: random.Random) -> list[Path]:
    root = Path(directory)
    if not root.is_dir():
        return []
    files = sorted(
        p
        for p in root.glob(pattern)
        if p.is_file() and not p.is_symlink() and p.stat().st_size <= _MAX_FILE
    )
    small = [p for p in files if p.stat().st_size < 4096]
    rng.shuffle(files)
    rng.shuffle(small)
    chosen = files[: count - count // 4] + small[: count // 4]
    return sorted(set(chosen))


def _edits(data: bytes, rng: random.Random) -> list[bytes]:
    """Edited copies: an insertion, a deletion, a few flipped bytes, an append, a truncation."""
    if len(data) < 16:
        return [data + b"x"]
    mid = rng.randrange(len(data))
    flipped = bytearray(data)
    for _ in range(3):
        k = rng.randrange(len(flipped))
        flipped[k] ^= 0x5A
    return [
        data[:mid] + b"inserted text right here " * 3 + data[mid:],
        data[: mid // 2] + data[mid:],
        bytes(flipped),
        data + data[: len(data) // 8],
        data[: len(data) * 3 // 4],
    ]


@cache
def machine_files() -> list[tuple[str, bytes]]:
    """A few hundred (name, content) pairs read from files on this machine (text and binary)."""
    rng = random.Random(20240605)
    out: list[tuple[str, bytes]] = []
    for directory, pattern, count in _SOURCES:
        for path in _pick(directory, pattern, count, rng):
            try:
                out.append((str(path), path.read_bytes()))
            except OSError:
                continue
    synthetic = [
        ("empty", b""),
        ("one byte", b"a"),
        ("six bytes", b"abcdef"),
        ("seven zero bytes", b"\0" * 7),
        ("text then zeros", b"some text before a run of zeros " * 40 + b"\0" * 64),
        ("all zeros 5000", b"\0" * 5000),
        ("all 0xff 20000", b"\xff" * 20000),
        ("random 100k", random.Random(1).randbytes(100_000)),
        ("random 3000", random.Random(2).randbytes(3000)),
        ("periodic", b"0123456789abcdef" * 8000),
    ]
    out.extend(synthetic)
    assert len(out) >= 150, "the machine corpus should hold a few hundred files"
    return out


@cache
def edited_files() -> list[tuple[str, bytes, bytes]]:
    """(name, original, edited copy) for every corpus file with edits."""
    rng = random.Random(99)
    out: list[tuple[str, bytes, bytes]] = []
    for name, data in machine_files():
        edits = _edits(data, rng)
        if len(data) > 60_000:  # ppdeep is slow: fewer edits of the big files
            edits = edits[::2]
        for k, edited in enumerate(edits):
            out.append((f"{name}#edit{k}", data, edited))
    return out
