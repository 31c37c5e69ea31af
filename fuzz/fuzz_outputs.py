"""Fuzz every output path (issue 43): records built from the fuzzer's bytes, written by each
command (``dedup --output`` to a file or a folder, ``--annotate``, ``--report``, ``lines``,
``substrings``) to a hostile target: a new file, the input itself, another output's path, a
FIFO, a read-only folder, a full disk.

Every run must end with exit code 0 or a one-line NeardupError (never another exception),
leave the input as it was, leave a FIFO a FIFO, and leave no temporary file beside the
target. The read-only folder is a read-only bind mount and the full disk a filled tmpfs when
the harness runs as root (mode 0555 and no full disk otherwise).

Run: ``python fuzz/fuzz_outputs.py -runs=2000``.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import select
import shutil
import stat
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

from _harness import main, scratch_dir

COMMANDS = ("annotate", "output-file", "output-folder", "report", "lines", "substrings")
SITUATIONS = ("new", "input", "other-output", "fifo", "readonly", "full")
FORMATS = (".jsonl", ".csv", ".jsonl.gz", ".jsonl.zst")
LEFTOVER_MARKS = (".tmp-", ".old-", ".neardup-spool", ".neardup-substrings")


@functools.cache
def scratch() -> Path:
    """A private folder: the work folder of each input, and the hostile folders."""
    return scratch_dir("neardup-fuzz-outputs-")


def _mount(*args: str) -> bool:
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    done = subprocess.run(["mount", *args], capture_output=True, timeout=30, check=False)
    return done.returncode == 0


def _umount(where: Path) -> None:
    subprocess.run(["umount", "-l", str(where)], capture_output=True, timeout=30, check=False)


@contextlib.contextmanager
def hostile(situation: str) -> Iterator[Path | None]:
    """A folder nothing can be written in (``readonly``) or on a full file system
    (``full``), made for one input and undone after it (a mount never outlives the input:
    libFuzzer ends the process without Python's exit handlers); None when this user cannot
    make one (a read-only folder is mode 0555 when not root; a full disk needs root)."""
    where = scratch() / situation
    shutil.rmtree(where, ignore_errors=True)
    where.mkdir()
    mounted = False
    try:
        if situation == "readonly":
            (where / "keep.txt").write_text("x")
            if _mount("--bind", str(where), str(where)):
                mounted = True
                yield where if _mount("-o", "remount,ro,bind", str(where)) else None
            else:
                os.chmod(where, 0o555)
                yield None if os.access(where, os.W_OK) else where
        elif situation == "full" and _mount("-t", "tmpfs", "-o", "size=64k", "tmpfs", str(where)):
            mounted = True
            try:
                with open(where / ".filler", "wb") as fh:
                    while True:
                        fh.write(b"\0" * 4096)
                        fh.flush()
            except OSError:
                pass
            yield where
        else:
            yield None
    finally:
        if mounted:
            _umount(where)
        if where.exists():
            os.chmod(where, 0o755)
            shutil.rmtree(where, ignore_errors=True)


def _records(data: bytes) -> bytes:
    """Up to 20 JSONL records whose texts (and some ids) come from ``data``; a few repeat,
    so that dedup, lines and substrings have something to do."""
    parts = data.split(b"\n")[:20] or [b""]
    lines = []
    for i, part in enumerate(parts):
        text = part.decode("utf-8", "surrogateescape")
        body = " ".join([text, "a line every record shares", text][: 1 + i % 3])
        record = {"id": f"r{i}", "text": body}
        lines.append(json.dumps(record).encode() + b"\n")
    return b"".join(lines)


class _Drain:
    """Reads a FIFO while a command writes it (bounded), so that the writer never waits."""

    def __init__(self, fifo: Path) -> None:
        self.fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while True:
            ready, _, _ = select.select([self.fd], [], [], 0.05)
            if ready:
                try:
                    if os.read(self.fd, 1 << 16):
                        continue
                except BlockingIOError:
                    pass
            if self.stop.is_set():
                return

    def close(self) -> None:
        self.stop.set()
        self.thread.join(30)
        os.close(self.fd)


def _snapshot(src: Path) -> dict[str, bytes]:
    """The input's files and their bytes."""
    if src.is_file():
        return {src.name: src.read_bytes()}
    return {p.relative_to(src).as_posix(): p.read_bytes() for p in src.rglob("*") if p.is_file()}


def _args(command: str, src: Path, target: Path, other: Path) -> list[str]:
    s, t = str(src), str(target)
    return {
        "annotate": ["dedup", s, "-q", "--annotate", t, "--report", str(other)],
        "output-file": ["dedup", s, "-q", "--keep", "first", "-o", t, "--annotate", str(other)],
        "output-folder": ["dedup", s, "-q", "--keep", "first", "-o", t, "--force"],
        "report": ["dedup", s, "-q", "--report", t, "--annotate", str(other)],
        "lines": ["lines", s, "--min-docs", "2", "-q", "-o", t],
        "substrings": ["substrings", s, "--min-length", "16", "-q", "-o", t],
    }[command]


def target(data: bytes) -> None:
    """Write the records to a hostile target with one command; check what must hold."""
    if len(data) < 2:
        data = data + b"\0\0"
    command = COMMANDS[data[0] % len(COMMANDS)]
    situation = SITUATIONS[data[1] % len(SITUATIONS)]
    suffix = FORMATS[(data[0] // len(COMMANDS)) % len(FORMATS)]
    work = scratch() / "work"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    src = work / "in.jsonl"
    src.write_bytes(_records(data[2:]))
    if command == "output-folder":  # a copy of files: a folder of them
        src = work / "files"
        src.mkdir()
        for i, line in enumerate(_records(data[2:]).splitlines()[:6]):
            (src / f"f{i}.txt").write_bytes(line)
    before = _snapshot(src)
    name = "out" if command == "output-folder" else "out.html" if command == "report" else "out"
    if command not in ("output-folder", "report"):
        name += suffix
    with hostile(situation) as special:
        _run(command, situation, src, special or work, name)
    if _snapshot(src) != before:
        raise AssertionError(f"{command} to {situation} changed its input")


def _run(command: str, situation: str, src: Path, folder: Path, name: str) -> None:
    """Run ``command`` writing ``folder / name`` in ``situation``; check the target."""
    from click.testing import CliRunner

    from neardup.cli import main as cli

    work = scratch() / "work"
    out = folder / name
    other = work / ("other.html" if command in ("annotate",) else "other.jsonl")
    if situation == "input":
        out = src
    elif situation == "other-output":
        other = out
    drain = None
    if situation == "fifo" and command != "output-folder":
        os.mkfifo(out)
        drain = _Drain(out)
    try:
        result = CliRunner().invoke(cli, _args(command, src, out, other))
    finally:
        if drain is not None:
            drain.close()
    exc = result.exception
    if exc is not None and not isinstance(exc, SystemExit):
        raise exc
    if result.exit_code not in (0, 1):
        raise AssertionError(f"exit {result.exit_code}: {result.output}")
    if drain is not None and not stat.S_ISFIFO(os.stat(out).st_mode):
        raise AssertionError(f"{command} replaced a FIFO")
    left = [p.name for p in folder.iterdir() if any(m in p.name for m in LEFTOVER_MARKS)]
    if left:
        raise AssertionError(f"{command} to {situation} left {left}")


if __name__ == "__main__":
    main(target)
