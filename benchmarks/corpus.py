"""A deterministic benchmark corpus built from text already on the machine (no downloads).

Man pages (gunzipped), Debian's licence and copyright texts, /usr/share/doc text files and the
Python standard library, each document 1-20 KB, shuffled with a fixed seed and cut at a size
cap. ``near_duplicates()`` adds edited copies with known edits for recall measurements.
"""

from __future__ import annotations

import gzip
import os
import random
import sysconfig
from collections.abc import Iterator
from pathlib import Path

MIN_BYTES = 1024
MAX_BYTES = 20 * 1024
ROOTS = [
    Path("/usr/share/man"),
    Path("/usr/share/common-licenses"),
    Path("/usr/share/doc"),
    Path(sysconfig.get_paths()["stdlib"]),
]


def _files(root: Path) -> Iterator[Path]:
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d not in ("site-packages", "__pycache__"))
        for name in sorted(filenames):
            p = Path(dirpath) / name
            if not p.is_symlink() and p.is_file():
                yield p


def _read(path: Path) -> str | None:
    try:
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rb") as fh:
            raw = fh.read(4 * MAX_BYTES)
    except (OSError, EOFError):
        return None
    if b"\x00" in raw[:4096] or len(raw) < MIN_BYTES:
        return None
    if len(raw) > MAX_BYTES:
        cut = raw.rfind(b"\n", 0, MAX_BYTES)
        raw = raw[: cut if cut > MIN_BYTES else MAX_BYTES]
    return raw.decode("utf-8", errors="ignore")


def load_corpus(max_mb: float = 10.0, *, seed: int = 1) -> list[str]:
    """Return documents from the machine totalling about ``max_mb`` MB of UTF-8."""
    paths = [p for root in ROOTS if root.exists() for p in _files(root)]
    random.Random(seed).shuffle(paths)
    docs: list[str] = []
    total = 0
    cap = int(max_mb * 1e6)
    for p in paths:
        text = _read(p)
        if text is None:
            continue
        docs.append(text)
        total += len(text.encode("utf-8"))
        if total >= cap:
            break
    return docs


def edit_words(text: str, rate: float, rng: random.Random) -> str:
    """Replace, delete or insert about ``rate`` of the words."""
    words = text.split()
    out: list[str] = []
    for w in words:
        r = rng.random()
        if r < rate / 3:
            continue
        if r < 2 * rate / 3:
            out.append(f"x{rng.randrange(10**6)}")
            continue
        out.append(w)
        if r < rate:
            out.append(f"y{rng.randrange(10**6)}")
    return " ".join(out)


def near_duplicates(docs: list[str], n: int, rate: float = 0.02, *, seed: int = 2) -> list[str]:
    """Edited copies of the first ``n`` documents (each with about ``rate`` word edits)."""
    rng = random.Random(seed)
    return [edit_words(d, rate, rng) for d in docs[:n]]
