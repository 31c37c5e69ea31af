"""Timelines of the service's requests and its long stretches: a debug aid for finding what
slow requests wait for (off unless ``NEARDUP_SERVE_TRACE`` names a file).

With ``NEARDUP_SERVE_TRACE=PATH``, ``neardup serve`` keeps, per request, the times
(``time.perf_counter()``, the same clock in every process on Linux) of its steps: ``arrive``
(the ASGI call), ``parsed`` (body read and parsed), ``queued`` (handed to the writer),
``taken`` (the writer took its group), ``encoded`` (the group sketched), ``checked`` (its
candidates verified), ``committed``, ``settled`` (its answer set on the event loop) and
``sent`` (the response handed to the transport), with the id of the ``X-Trace-Id`` header
and the size of its group. It also keeps the **stretches** longer than
``NEARDUP_SERVE_TRACE_MS`` (2 ms unless set): each step of the writer (with its thread CPU
time: wall minus CPU is time spent waiting for the GIL or a core), each garbage collection,
and each late wake-up of the event loop (a heartbeat every millisecond: the loop was busy or
waited for the GIL). Everything is written as JSON lines to ``PATH`` when the service
stops; ``benchmarks/serve_bench.py --trace`` reads it next to the client's own times.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import gc
import json
import os
import threading
import time
from collections.abc import Iterator
from typing import Any

__all__ = ["ENV", "Tracer", "current", "mark", "tracer_from_env"]

ENV = "NEARDUP_SERVE_TRACE"
ENV_MS = "NEARDUP_SERVE_TRACE_MS"

Record = dict[str, Any]

current: contextvars.ContextVar[Record | None] = contextvars.ContextVar(
    "neardup_serve_trace", default=None
)
"""The timeline of the request the running task serves (None when not tracing)."""


def mark(step: str) -> None:
    """Note the time of ``step`` in the running request's timeline, if traced."""
    rec = current.get()
    if rec is not None:
        rec[step] = time.perf_counter()


class Tracer:
    """Request timelines and long stretches, kept in memory and written at :meth:`close`.

    Args:
        path: The JSON-lines file written at :meth:`close`.
        long: Seconds from which a stretch is kept.
    """

    def __init__(self, path: str, long: float = 0.002) -> None:
        self.path = path
        self.long = long
        self.requests: list[Record] = []
        self.stretches: list[Record] = []
        self._lock = threading.Lock()
        self._seq = 0
        self._gc_start = 0.0
        self._heart: asyncio.Task[None] | None = None

    def request(self, headers: list[tuple[bytes, bytes]], path: str) -> Record:
        """A new request's timeline (its id from the ``X-Trace-Id`` header, else a number)."""
        now = time.perf_counter()
        self._seq += 1
        rid = str(self._seq)
        for name, value in headers:
            if name == b"x-trace-id":
                rid = value.decode("latin-1")
                break
        rec: Record = {"id": rid, "path": path, "arrive": now}
        self.requests.append(rec)
        return rec

    def stretch(self, where: str, what: str, start: float, end: float, cpu: float = -1.0) -> None:
        """Keep a stretch of ``where`` (a thread, ``loop`` or ``gc``) if it was long."""
        if end - start >= self.long:
            with self._lock:
                self.stretches.append(
                    {"where": where, "what": what, "start": start, "end": end, "cpu": cpu}
                )

    @contextlib.contextmanager
    def step(self, where: str, what: str) -> Iterator[None]:
        """Time a step of a thread (wall and the thread's CPU time)."""
        t0, c0 = time.perf_counter(), time.thread_time()
        try:
            yield
        finally:
            self.stretch(where, what, t0, time.perf_counter(), time.thread_time() - c0)

    # ------------------------------------------------------------------------ monitors

    def _gc(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._gc_start = time.perf_counter()
        else:
            self.stretch("gc", f"gen{info.get('generation')}", self._gc_start, time.perf_counter())

    async def _heartbeat(self) -> None:
        while True:
            t = time.perf_counter()
            await asyncio.sleep(0.001)
            now = time.perf_counter()
            if now - t - 0.001 >= self.long:
                self.stretch("loop", "late wake-up", t + 0.001, now)

    def start(self) -> None:
        """Start the event loop's heartbeat and the collector's timing (on the loop)."""
        gc.callbacks.append(self._gc)
        self._heart = asyncio.get_running_loop().create_task(self._heartbeat())

    def close(self) -> None:
        """Stop the monitors and write everything to :attr:`path`."""
        if self._heart is not None:
            self._heart.cancel()
            self._heart = None
        with contextlib.suppress(ValueError):
            gc.callbacks.remove(self._gc)
        with open(self.path, "w", encoding="utf-8") as fh:
            for rec in self.requests:
                fh.write(json.dumps({"kind": "request", **rec}) + "\n")
            for rec in self.stretches:
                fh.write(json.dumps({"kind": "stretch", **rec}) + "\n")


def tracer_from_env() -> Tracer | None:
    """A :class:`Tracer` when ``NEARDUP_SERVE_TRACE`` names a file, else None."""
    path = os.environ.get(ENV, "")
    if not path:
        return None
    ms = os.environ.get(ENV_MS, "")
    return Tracer(path, float(ms) / 1e3 if ms else 0.002)
