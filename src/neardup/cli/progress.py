"""Progress of ``neardup dedup`` on stderr: a bar with a total and an ETA, or status lines.

The total is found before the run, cheaply, when the inputs allow it: walked files are
counted (names only, nothing is read), ``.jsonl`` files by their non-empty lines and ``.csv``
files by their lines (an upper bound: a quoted field may span lines). A record file larger
than 8 MiB is not read through for this: its total is estimated from the lines of its first
MiB and its size, so that the inputs are still read once (the bar's total is then an estimate,
and the bar ends at the true count). stdin has no total;
then the bar shows a count and a rate, and no ETA. On a terminal the bar is tqdm's; without
one, ``--progress`` prints one status line every ``interval`` seconds (and at each stage),
so logs of batch jobs show how far a run is.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TextIO, TypeVar

__all__ = [
    "PassLines",
    "StatusLines",
    "count_documents",
    "counted",
    "make_progress",
    "pass_progress",
]

_CHUNK = 1 << 20
T = TypeVar("T")


#: Record files up to this size are counted line by line; larger ones are estimated.
_EXACT_BYTES = 8 << 20


def _lines(path: Path, *, skip_blank: bool) -> int:
    """Lines of a file (non-blank ones with ``skip_blank``, as the JSONL reader counts); for a
    file over :data:`_EXACT_BYTES`, an estimate from its first MiB (never below 1)."""
    size = path.stat().st_size
    with path.open("rb") as fh:
        if size > _EXACT_BYTES:
            head = fh.read(_CHUNK)
            n = sum(1 for line in head.splitlines() if line.strip() or not skip_blank)
            return max(1, round(n * size / max(len(head), 1)))
        if skip_blank:
            return sum(1 for line in fh if line.strip())
        n = 0
        last = b"\n"
        while chunk := fh.read(_CHUNK):
            n += chunk.count(b"\n")
            last = chunk[-1:]
        return n + (last != b"\n")


def count_documents(
    paths: Sequence[str],
    *,
    binary: bool = False,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    images_only: bool = False,
) -> int | None:
    """How many documents ``paths`` will give, or ``None`` when unknown (stdin, errors).

    Examples:
        >>> count_documents(["-"]) is None
        True
    """
    total = 0
    try:
        for raw in paths:
            if raw == "-":
                return None
            p = Path(raw)
            if p.is_dir():
                from neardup.readers.paths import walk

                walked = walk(p, include=include, exclude=exclude, images_only=images_only)
                total += sum(1 for _ in walked)
            elif p.suffix.lower() == ".jsonl" and not binary:
                total += _lines(p, skip_blank=True)
            elif p.suffix.lower() == ".csv" and not binary:
                total += max(_lines(p, skip_blank=False) - 1, 0)
            else:
                total += 1
    except OSError:
        return None
    return total


def _clock(seconds: float) -> str:
    s = int(seconds)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


def _rate_line(label: str, n: int, total: int | None, secs: float) -> str:
    """``neardup: LABEL n/total documents (pct%), rate documents/s, ETA h:mm:ss`` (without a
    total: the count and the rate)."""
    rate = n / max(secs, 1e-9)
    if not total:
        return f"neardup: {label} {n:,} documents, {rate:,.0f} documents/s"
    eta = (total - n) / rate if rate > 0 else 0.0
    return (
        f"neardup: {label} {n:,}/{total:,} documents ({100 * n / total:.0f}%), "
        f"{rate:,.0f} documents/s, ETA {_clock(max(eta, 0.0))}"
    )


class _Lines:
    """What the status-line printers share: the total, the stream, the interval and clock,
    the current stage and when it started and last printed."""

    def __init__(
        self,
        total: int | None,
        *,
        out: TextIO | None = None,
        interval: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._total = total
        self._out = out if out is not None else sys.stderr
        self._interval = interval
        self._clock = clock
        self._stage = ""
        self._n = 0
        self._start = self._last = clock()

    def _write(self, line: str) -> None:
        self._out.write(line + "\n")
        self._out.flush()


class StatusLines(_Lines):
    """One status line on ``out`` every ``interval`` seconds, and at each new stage.

    Examples:
        >>> import io
        >>> buf = io.StringIO()
        >>> status = StatusLines(10, out=buf, interval=0.0, clock=iter([0.0, 2.0, 3.0]).__next__)
        >>> status("sketch", 4); status.close()
        >>> buf.getvalue().splitlines()[0]
        'neardup: sketching 4/10 documents (40%), 2 documents/s, ETA 0:00:03'
    """

    def __init__(
        self,
        total: int | None,
        *,
        out: TextIO | None = None,
        interval: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(total, out=out, interval=interval, clock=clock)
        self._last -= interval  # the first call prints at once

    def __call__(self, stage: str, n: int) -> None:
        now = self._clock()
        if stage == "sketch":
            self._n = n
        if stage != self._stage or now - self._last >= self._interval:
            self._stage = stage
            self._last = now
            self._write(self._line(stage, n, now))

    def _line(self, stage: str, n: int, now: float) -> str:
        if stage != "sketch":
            return f"neardup: {stage}: {n:,}"
        return _rate_line("sketching", n, self._total, now - self._start)

    def close(self) -> None:
        """Print the final line (documents done and the time taken)."""
        secs = self._clock() - self._start
        self._write(f"neardup: read {self._n:,} documents in {_clock(secs)}")


def make_progress(
    quiet: bool, force: bool | None, total: Callable[[], int | None]
) -> tuple[Callable[[str, int], None] | None, Callable[[], None]]:
    """The progress callback for ``dedup`` and its closer: a bar on a terminal, status
    lines with ``--progress`` elsewhere, nothing with ``--quiet`` or ``--no-progress``.

    ``total`` is called only when progress is shown.
    """
    tty = sys.stderr.isatty()
    if quiet or force is False or (force is None and not tty):
        return None, lambda: None
    n = total()
    if not tty:
        status = StatusLines(n)
        return status, status.close
    from tqdm import tqdm

    bar = tqdm(total=n, desc="sketching", unit="doc", file=sys.stderr, dynamic_ncols=True)

    def update(stage: str, count: int) -> None:
        if stage == "sketch":
            bar.update(count - bar.n)
        else:
            bar.set_postfix_str(f"{stage}: {count:,}")

    return update, bar.close


class PassLines(_Lines):
    """Status lines for a command that runs passes over ``total`` documents: one line when a
    pass starts, one every ``interval`` seconds with the pass's count, rate and ETA, and one
    when it ends.

    Examples:
        >>> import io
        >>> buf = io.StringIO()
        >>> clock = iter([0.0, 0.0, 2.0, 2.0]).__next__
        >>> lines = PassLines(10, out=buf, interval=0.0, clock=clock)
        >>> lines("count", 0); lines("count", 4); lines.close()
        >>> print(buf.getvalue(), end="")
        neardup: count...
        neardup: count 4/10 documents (40%), 2 documents/s, ETA 0:00:03
        neardup: count done: 4/10 documents in 0:00:02
    """

    def __call__(self, stage: str, n: int) -> None:
        now = self._clock()
        if stage != self._stage:  # a new pass: its clock starts here
            self.close()
            self._stage, self._start, self._last, self._n = stage, now, now, n
            self._write(f"neardup: {stage}...")
            return
        self._n = n
        if now - self._last < self._interval:
            return
        self._last = now
        self._write(_rate_line(stage, n, self._total, now - self._start))

    def close(self) -> None:
        """End the current pass: one line with its count and time."""
        if not self._stage:
            return
        secs = self._clock() - self._start
        done = f"{self._n:,}" + (f"/{self._total:,}" if self._total else "")
        self._write(f"neardup: {self._stage} done: {done} documents in {_clock(secs)}")
        self._stage = ""


def pass_progress(
    quiet: bool,
    force: bool | None,
    total: Callable[[], int | None],
    *,
    stages: Sequence[str] | None = None,
) -> tuple[Callable[[str, int], None] | None, Callable[[], None]]:
    """Progress for the passes of ``lines``, ``substrings``, ``index add``, ``eval`` and
    ``hash``: a tqdm bar per pass (with the total and an ETA) on a terminal, status lines with
    ``--progress`` elsewhere, nothing with ``--quiet`` or ``--no-progress``. Each call is
    ``update(pass name, documents done in that pass)``; only the passes in ``stages`` count
    documents (default: every pass), another one's count is shown beside the bar (the pairs
    of a dedup run). ``total`` is called only when progress is shown.
    """
    tty = sys.stderr.isatty()
    if quiet or force is False or (force is None and not tty):
        return None, lambda: None
    n = total()
    if not tty:
        status = PassLines(n)
        if stages is None:
            return status, status.close
        counted = tuple(stages)

        def lines(stage: str, count: int) -> None:
            if stage in counted:
                status(stage, count)

        return lines, status.close
    from tqdm import tqdm

    bars: dict[str, tqdm[None]] = {}

    def update(stage: str, count: int) -> None:
        if stages is not None and stage not in stages:
            for bar in bars.values():
                bar.set_postfix_str(f"{stage}: {count:,}")
            return
        bar = bars.get(stage)
        if bar is None:
            for old in bars.values():
                old.close()
            bar = bars[stage] = tqdm(
                total=n, desc=stage, unit="doc", file=sys.stderr, dynamic_ncols=True
            )
        bar.update(count - bar.n)

    def close() -> None:
        for bar in bars.values():
            bar.close()

    return update, close


def counted(
    items: Iterable[T], update: Callable[[str, int], None] | None, stage: str, every: int = 256
) -> Iterator[T]:
    """``items`` as they are, calling ``update(stage, count)`` every ``every`` items and at
    the end (``update`` None: ``items`` untouched).

    Examples:
        >>> seen = []
        >>> list(counted("abc", lambda s, n: seen.append(n), "read", every=2)), seen
        (['a', 'b', 'c'], [2, 3])
    """
    if update is None:
        yield from items
        return
    n = 0
    for item in items:
        yield item
        n += 1
        if n % every == 0:
            update(stage, n)
    if n % every:
        update(stage, n)
