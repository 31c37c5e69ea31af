"""Python's cyclic garbage collector paused around blocks that make many new objects."""

from __future__ import annotations

import atexit
import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["collector_paused", "off_for_the_command", "pause_for_startup", "resume_after_startup"]


@contextmanager
def collector_paused() -> Iterator[None]:
    """Turn the cyclic garbage collector off for the block (left off if it was off).

    For blocks that build tens of thousands of new tuples or objects (a batch's store rows,
    the clusters of a run): every 700 allocations would otherwise start a collection that
    walks the caller's young objects (measured: ~10 % of a library ``dedup(index=...)``, and
    17 % of the instructions that turn a walk's roots into clusters).

    Examples:
        >>> with collector_paused():
        ...     gc.isenabled()
        False
        >>> gc.isenabled()
        True
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


#: Whether :func:`pause_for_startup` turned the collector off.
_startup_paused = False
#: Whether this is the ``neardup`` process (:func:`pause_for_startup` turned the collector off
#: for its start-up); stays set.
_own_process = False


def pause_for_startup() -> None:
    """Turn the collector off while a process starts: its imports make ~100k objects (modules,
    classes, functions) and no garbage cycles, but every 700 of them start a collection that
    walks the young ones (0.017 G of the 0.59 G instructions of a short ``neardup dedup``). Only
    the ``neardup`` process calls this, before its imports (never the library: a caller's
    collector is the caller's); :func:`resume_after_startup` turns it back on. Left alone when
    something else turned it off."""
    global _startup_paused, _own_process
    if gc.isenabled():
        gc.disable()
        _startup_paused = True
        _own_process = True


def resume_after_startup() -> None:
    """The start-up is over (a command's function starts): the collector paused by
    :func:`pause_for_startup` goes back on, with the objects made so far (modules, classes,
    functions: alive until the process ends) frozen out of its later walks (another 0.011 G
    instructions: the first full collection would walk them all), and thawed at exit, so
    that an exit through the interpreter's teardown finalizes them as usual. Does nothing when
    the start-up did not pause it (a test runner, a library caller)."""
    global _startup_paused
    if _startup_paused:
        _startup_paused = False
        gc.freeze()
        atexit.register(gc.unfreeze)
        gc.enable()


def off_for_the_command() -> None:
    """Turn the collector off for the rest of the ``neardup`` process's command (a dedup run
    and its output): the run makes few garbage cycles, but its clusters (two objects each,
    ~190k at 1M documents) are made with the collector paused and the first collection after
    it walks them all (0.05 CPU-s at 1M, on the main thread after the walk, while the other
    cores wait). The process ends with ``os._exit`` after a successful command
    (:func:`neardup.cli._startup.end_process`), so it is never turned back on. Does nothing
    outside the ``neardup`` process (a test runner, a library caller: their collector is
    theirs)."""
    if _own_process and not _startup_paused:
        gc.disable()
