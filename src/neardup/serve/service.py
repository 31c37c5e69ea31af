"""The service behind the endpoints: reader threads, one writer thread and its group commits.

Readers sketch the documents of a request and answer reads (``/v1/query``, ``query-only``
checks, documents, statistics), each on its own read-only connection to the store, so they
see committed snapshots only. Every write goes through the **one writer thread**: it takes
the check-and-add requests waiting in its queue, checks all their documents in one pass, in
arrival order, against the store *and* against the documents before them in the same group,
writes those that are added in **one transaction** (a group commit), and only then answers
each request. So an acknowledged document is committed (it survives a SIGKILL; with
``synchronous="full"`` the commit is fsynced too, and survives a power loss), and documents
sent one by one get the answers that :func:`neardup.dedup` with ``index=`` gives
for the same order (the first arrival is kept), however the requests were grouped. The
segment merges a group commit would run wait for a moment when no request does.

Admission is bounded: a request whose documents would take the documents in flight past
``queue_documents`` is refused at once (503 with ``Retry-After``), so the queue never grows
without limit.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from neardup.errors import InputTooLargeError, NeardupError, StoreError
from neardup.io import Document
from neardup.methods import Method, method_info
from neardup.serve.config import Limits
from neardup.serve.housekeeper import Housekeeper
from neardup.serve.metrics import Metrics
from neardup.serve.requests import Batch, Policy, RequestError
from neardup.serve.results import Duplicate, Result
from neardup.serve.trace import Record, Tracer, current
from neardup.store import Store

__all__ = ["Service"]

log = logging.getLogger(__name__)

I64 = npt.NDArray[np.int64]
T = TypeVar("T")


@dataclass(slots=True)
class _Encoded:
    """A request's documents as the store keeps them."""

    ids: list[str]
    keys: I64  # (n, bands) lookup keys
    blobs: list[bytes]


@dataclass(slots=True)
class _Job:
    """A write waiting for the writer: a group-committed check, or a delete."""

    kind: str  # "check" or "delete"
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[Any]
    docs: Sequence[Document] = ()  # a check's documents, sketched by the writer if not encoded
    encoded: _Encoded | None = None
    policy: Policy = "add"
    key: str = ""
    queued: float = field(default_factory=time.monotonic)
    trace: Record | None = None  # the request's timeline (when tracing)

    @property
    def size(self) -> int:
        return len(self.docs) if self.kind == "check" else 1


def _answer(job: _Job, value: object, error: BaseException | None) -> None:
    """Hand a job's answer to its request's event loop (from the writer thread)."""
    _answer_all([(job, value, error)])


def _answer_all(answers: Sequence[tuple[_Job, object, BaseException | None]]) -> None:
    """Hand a group's answers to their event loops: one wake-up of each loop for the whole
    group, not one per request (from the writer thread)."""
    by_loop: dict[asyncio.AbstractEventLoop, list[tuple[_Job, object, Any]]] = {}
    for job, value, error in answers:
        by_loop.setdefault(job.loop, []).append((job, value, error))
    for loop, items in by_loop.items():
        # a closed event loop (RuntimeError) has nobody waiting for the answer any more
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(_settle_all, items)


def _settle_all(items: list[tuple[_Job, object, BaseException | None]]) -> None:
    now = time.perf_counter()
    for job, value, error in items:
        if job.trace is not None:
            job.trace["settled"] = now
        _settle(job.future, value, error)


def _settle(future: asyncio.Future[Any], value: object, error: BaseException | None) -> None:
    if future.done():  # the request was cancelled (its client went away)
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(value)


class Service:
    """Near-duplicate checks over one store, for many concurrent requests.

    Args:
        path: The store file; it must exist (made by :class:`~neardup.store.persistent.
            PersistentIndex` with ``method``).
        method: The store's method.
        readers: Reader threads.
        limits: Request and queue limits.
        commit_delay: Seconds the writer waits for more documents to join a group.
        max_group: Most documents in one group commit.
        metrics: Where counts go (a new :class:`Metrics` if None).
        tracer: Where request timelines and long stretches go (:mod:`neardup.serve.trace`;
            None: nowhere).
        synchronous: The writer's ``synchronous`` (:meth:`Store.open`): ``"normal"`` or
            ``"full"``.

    Call :meth:`start` before use and :meth:`close` at the end (it drains the writer).
    """

    def __init__(
        self,
        path: str,
        method: Method,
        *,
        readers: int = 2,
        limits: Limits | None = None,
        commit_delay: float = 0.0,
        max_group: int = 4096,
        metrics: Metrics | None = None,
        tracer: Tracer | None = None,
        synchronous: str = "normal",
    ) -> None:
        self.path = path
        self.method = method
        self.limits = limits or Limits()
        self.metrics = metrics or Metrics()
        self.tracer = tracer
        self.images = method_info(method.name).binary
        self._kind = method.name
        self._params = f"{method.params}|{method.index_params}"
        self._commit_delay = commit_delay
        self._max_group = max_group
        self._synchronous = synchronous
        self._pool = ThreadPoolExecutor(readers, thread_name_prefix="neardup-reader")
        self._local = threading.local()
        self._cond = threading.Condition()
        self._queue: deque[_Job] = deque()
        self._queued_docs = 0
        self._closing = False
        self._inflight = 0  # documents admitted and not answered (event loop thread only)
        self._inflight_bytes = 0
        self._ready = threading.Event()
        self._failure: BaseException | None = None
        self._store_docs = 0
        self._writer = threading.Thread(target=self._write_loop, name="neardup-writer")
        self._housekeeper = Housekeeper(
            path, kind=self._kind, params=self._params, synchronous=synchronous, tracer=tracer
        )

    # --------------------------------------------------------------------------- lifecycle

    def start(self) -> None:
        """Start the writer (it opens the store) and wait until it is ready.

        Raises:
            StoreError: the store cannot be opened for writing.
        """
        if self.images:
            from neardup._extras import require_extra

            require_extra("image", "PIL.Image")  # fail now, not at the first request
        self._housekeeper.start()
        self._writer.start()
        self._ready.wait()
        if self._failure is not None:
            self._writer.join()
            self._housekeeper.close()
            raise self._failure

    @property
    def started(self) -> bool:
        """Whether :meth:`start` ran."""
        return self._ready.is_set()

    @property
    def healthy(self) -> bool:
        """Whether the writer runs and the service takes requests."""
        return self._writer.is_alive() and self._failure is None and not self._closing

    @property
    def inflight(self) -> int:
        """Documents admitted and not yet answered."""
        return self._inflight

    @property
    def stored(self) -> int:
        """Documents in the store after the last commit."""
        return self._store_docs

    def close(self, timeout: float | None = None) -> None:
        """Stop taking requests, let the writer commit what is queued, then stop the threads.

        Args:
            timeout: Seconds to wait for the writer (None: as long as it takes).
        """
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        if self._writer.is_alive():
            self._writer.join(timeout)
        self._housekeeper.close(timeout)
        self._pool.shutdown(wait=True, cancel_futures=True)  # a second call does nothing

    @contextlib.contextmanager
    def admitted(self, n: int, nbytes: int = 0) -> Iterator[None]:
        """Hold the room of ``n`` documents and ``nbytes`` of body in the bounded queue for
        the length of a request.

        Raises:
            RequestError: 503 when the service is shutting down or the room is not there.
        """
        if self._closing:
            raise RequestError(
                503, "shutting_down", "the service is shutting down; retry on another instance"
            )
        limits = self.limits
        n = max(1, n)
        if self._inflight + n > limits.queue_documents:
            raise RequestError(
                503,
                "overloaded",
                f"the service is busy: {self._inflight} documents are in flight and this "
                f"request's {n} would pass the queue limit of {limits.queue_documents} "
                f"(--queue-size); retry after {limits.retry_after} s, or send smaller batches",
            )
        if self._inflight_bytes + nbytes > limits.queue_bytes:
            raise RequestError(
                503,
                "overloaded",
                f"the service is busy: {self._inflight_bytes} bytes of requests are in flight "
                f"and this one's {nbytes} would pass the limit of {limits.queue_bytes}; retry "
                f"after {limits.retry_after} s",
            )
        self._inflight += n
        self._inflight_bytes += nbytes
        try:
            yield
        finally:
            self._inflight -= n
            self._inflight_bytes -= nbytes

    async def in_reader(self, fn: Callable[..., T], *args: object) -> T:
        """Run ``fn(*args)`` on a reader thread (e.g. parsing a large body off the loop)."""
        return await asyncio.get_running_loop().run_in_executor(self._pool, fn, *args)

    # ----------------------------------------------------------------------------- requests

    async def check(self, batch: Batch) -> list[Result]:
        """Check documents against the store and add them as ``batch.policy`` says."""
        if not batch.docs:
            return []
        loop = asyncio.get_running_loop()
        if batch.policy == "query-only":
            out = await loop.run_in_executor(self._pool, self._sketch_and_query, batch.docs, True)
            self.metrics.documents("queried", len(out))
            return out
        job = _Job("check", loop, loop.create_future(), docs=batch.docs, policy=batch.policy)
        job.trace = current.get()
        if self.images:  # decoding images is the costly part: readers do it in parallel
            job.encoded = await loop.run_in_executor(self._pool, self._encode, batch.docs)
        # else the writer sketches its whole group in one call: texts are cheap to sketch,
        # and one call for many small requests saves each its own call and thread hop
        if job.trace is not None:
            job.trace["queued"] = time.perf_counter()
        self._submit(job)
        results: list[Result] = await job.future
        return results

    async def query(self, batch: Batch) -> list[Result]:
        """The stored documents similar to each document (a stored one with the same id
        included); nothing is added."""
        if not batch.docs:
            return []
        loop = asyncio.get_running_loop()
        out = await loop.run_in_executor(self._pool, self._sketch_and_query, batch.docs, False)
        self.metrics.documents("queried", len(out))
        return out

    async def get(self, key: str) -> bytes | None:
        """The stored sketch of ``key`` (None: not stored)."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, lambda: self._reader().get(key))

    async def delete(self, key: str) -> bool:
        """Remove ``key`` (through the writer); whether it was stored."""
        loop = asyncio.get_running_loop()
        job = _Job("delete", loop, loop.create_future(), key=key)
        self._submit(job)
        found: bool = await job.future
        return found

    async def stats(self) -> dict[str, object]:
        """Counts, method, parameters and store size."""
        loop = asyncio.get_running_loop()
        st = await loop.run_in_executor(self._pool, lambda: self._reader().stats())
        params = self.method.config.to_dict()
        params.pop("kind", None)
        threshold = params.pop("threshold", self.method.threshold)
        service: dict[str, object] = dict(self.metrics.snapshot())
        service["queued_documents"] = self._inflight
        return {
            "documents": st["docs"],
            "method": self.method.name,
            "threshold": threshold,
            "parameters": params,
            "fingerprint": st["params"],
            "store": {
                "bytes": st["file_size"],
                "sketch_bytes": st["sketch_bytes"],
                "lookup_entries": st["lookup_rows"],
                "stale_documents": st["stale_docs"],
                "schema_version": st["schema_version"],
            },
            "service": service,
        }

    # ------------------------------------------------------------------------------ readers

    def _reader(self) -> Store:
        """This reader thread's read-only connection (opened on first use)."""
        store: Store | None = getattr(self._local, "store", None)
        if store is None:
            store = Store.open(self.path, kind=self._kind, params=self._params, readonly=True)
            self._local.store = store
        return store

    def _encode(self, docs: Sequence[Document]) -> _Encoded:
        """Sketch documents into the store's lookup keys and blobs.

        Raises:
            RequestError: a document cannot be sketched (400; 413 when too large).
        """
        m = self.method
        if not docs:
            return _Encoded([], np.zeros((0, 1), np.int64), [])
        try:
            payload = m.sketch(docs)
        except NeardupError:
            for i, doc in enumerate(docs):  # find the document at fault, to name it
                try:
                    m.sketch([doc])
                except NeardupError as exc:
                    status = 413 if isinstance(exc, InputTooLargeError) else 400
                    code = "document_too_large" if status == 413 else "invalid_document"
                    raise RequestError(
                        status, code, f"document {i} (id {doc.id[:80]!r}): {exc}"
                    ) from None
            raise
        keys = np.ascontiguousarray(m.lookup_keys(payload)).view(np.int64)
        return _Encoded([d.id for d in docs], keys.reshape(len(docs), -1), m.blobs(payload))

    def _sketch_and_query(self, docs: Sequence[Document], exclude_self: bool) -> list[Result]:
        enc = self._encode(docs)
        found = self._reader().candidates_many(enc.keys)
        owner: list[int] = []
        names: list[str] = []
        mine: list[bytes] = []
        theirs: list[bytes] = []
        for i, (doc_id, blob, stored) in enumerate(zip(enc.ids, enc.blobs, found, strict=True)):
            for key, other in stored:
                if exclude_self and key == doc_id:
                    continue
                owner.append(i)
                names.append(key)
                mine.append(blob)
                theirs.append(other)
        per: list[list[Duplicate]] = [[] for _ in enc.ids]
        if mine:
            threshold = self.method.threshold
            scores = self.method.blob_similarities(mine, theirs)
            for i, key, (sim, _) in zip(owner, names, scores, strict=True):
                if sim >= threshold:
                    per[i].append(Duplicate(key, sim))
        return [Result(d, False, self._best(dups)) for d, dups in zip(enc.ids, per, strict=True)]

    def _best(self, dups: list[Duplicate]) -> tuple[Duplicate, ...]:
        """The most similar first (then by id), at most ``max_duplicates``, rounded."""
        dups.sort(key=lambda d: (-d.similarity, d.id))
        return tuple(
            Duplicate(d.id, round(d.similarity, 6)) for d in dups[: self.limits.max_duplicates]
        )

    # ------------------------------------------------------------------------------- writer

    def _submit(self, job: _Job) -> None:
        with self._cond:
            if self._failure is not None or not self._writer.is_alive():
                raise RequestError(
                    503, "writer_stopped", "the service's writer has stopped; see its log"
                )
            self._queue.append(job)
            self._queued_docs += job.size
            self._cond.notify()

    def _take(self, block: bool = True) -> list[_Job] | None:
        """The next jobs to run together (None: closing and nothing left; ``[]``: nothing
        waiting, when not ``block``)."""
        with self._cond:
            if not block and not self._queue and not self._closing:
                return []
            while not self._queue and not self._closing:
                self._cond.wait()
            if not self._queue:
                return None
            if self._commit_delay > 0 and not self._closing:
                deadline = self._queue[0].queued + self._commit_delay
                while self._queued_docs < self._max_group and not self._closing:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        break
                    self._cond.wait(left)
            jobs = [self._queue.popleft()]
            docs = jobs[0].size
            while self._queue and docs + self._queue[0].size <= self._max_group:
                jobs.append(self._queue.popleft())
                docs += jobs[-1].size
            self._queued_docs -= docs
        if self.tracer is not None:
            now = time.perf_counter()
            for job in jobs:
                if job.trace is not None:
                    job.trace.update(taken=now, group_docs=docs, group_requests=len(jobs))
        return jobs

    def _write_loop(self) -> None:
        try:
            store = Store.open(
                self.path,
                kind=self._kind,
                params=self._params,
                create=False,
                cache=True,
                synchronous=self._synchronous,
                idle_checkpoints=True,  # checkpoints at idle moments (_tidy): no commit waits
            )
        except BaseException as exc:
            self._failure = exc
            self._ready.set()
            return
        try:
            self._store_docs = len(store)
            self._warm_up()
            self._ready.set()
            untidy = True  # segment merges may be waiting
            while (jobs := self._take(block=not untidy)) is not None:
                if jobs:
                    self._run(store, jobs)
                    untidy = True
                else:  # idle: one merge the group commits left, off the requests' path
                    untidy = self._tidy(store)
        except BaseException as exc:  # not one request's error: the writer itself stopped
            log.exception("the writer stopped")
            self._failure = exc
            raise
        finally:
            store.close()
            self._ready.set()  # start() returns (and raises the failure) if it failed early
            with self._cond:  # nothing waits for ever on a writer that is gone
                left, self._queue = list(self._queue), deque()
            stopped = RequestError(503, "writer_stopped", "the service's writer has stopped")
            for job in left:
                _answer(job, None, stopped)

    def _step(self, what: str, where: str = "writer") -> contextlib.AbstractContextManager[None]:
        """Time a step of the writer (or another thread), when tracing."""
        if self.tracer is None:
            return contextlib.nullcontext()
        return self.tracer.step(where, what)

    def _mark(self, jobs: Sequence[_Job], step: str) -> None:
        """Note the time of ``step`` in the timelines of ``jobs``, when tracing."""
        if self.tracer is not None:
            now = time.perf_counter()
            for job in jobs:
                if job.trace is not None:
                    job.trace[step] = now

    def _tidy(self, store: Store) -> bool:
        """Run one step the group commits left: write the merge the housekeeper prepared,
        copy the WAL's last frames when it did not start again, hand the housekeeper the
        checkpoint or merge that is due, or flush the tail; whether there was one."""
        t0, c0 = time.perf_counter(), time.thread_time()
        keeper = self._housekeeper
        try:
            prepared = keeper.prepared()
            if prepared is not None:
                ran = store.apply_merge(prepared)
                what = "merge written" if ran else "merge outdated"
                ran = True
            elif keeper.idle and store.restart_due():  # the WAL did not start again
                store.checkpoint()  # the few frames the housekeeper's passes left
                what, ran = "checkpoint (restart)", True
            elif job := keeper.hand_over(store):
                what, ran = f"{job} handed over", True
            else:  # past a bound, a write checkpoints (and merges) by itself
                alone = not keeper.alive  # no housekeeper: the writer does it all
                ran = store.merge_step(checkpoint=alone, merges=alone)
                what = store.last_step or "nothing"
            if self.tracer is not None:
                end, cpu = time.perf_counter(), time.thread_time() - c0
                self.tracer.stretch("writer", f"tidy: {what}", t0, end, cpu)
            return ran
        except Exception:  # the next group commit merges (or fails) in its own transaction
            log.exception("a deferred segment merge failed")
            return False

    def _warm_up(self) -> None:
        """Load the kernels a check uses now, so that the first request does not wait for
        them (text methods: an image method has no sample to hash)."""
        if self.images:
            return
        enc = self._encode([Document("warm-up", "load the kernels before the first request")])
        self.method.blob_similarities(enc.blobs, enc.blobs)
        _group_pairs(np.concatenate([enc.keys, enc.keys]))

    def _run(self, store: Store, jobs: list[_Job]) -> None:
        """Run jobs in order: consecutive checks as one group commit, deletes one by one."""
        group: list[_Job] = []
        for job in jobs:
            if job.kind == "check":
                group.append(job)
                continue
            if group:
                self._guarded(store, group)
                group = []
            self._guarded(store, [job])
        if group:
            self._guarded(store, group)

    def _guarded(self, store: Store, jobs: list[_Job]) -> None:
        """Run one group (or a delete); its requests get the error if it fails."""
        try:
            if jobs[0].kind == "delete":
                found = store.remove(jobs[0].key)
                self._store_docs = len(store)
                self.metrics.documents("deleted", int(found))
                answers: list[object] = [found]
            else:
                with self._step("encode"):
                    jobs = self._encoded(jobs)
                self._mark(jobs, "encoded")
                answers = list(self._commit(store, jobs)) if jobs else []
        except Exception as exc:
            if not isinstance(exc, NeardupError):
                log.exception("the writer failed on a group of %d requests", len(jobs))
                exc = StoreError(f"the write failed ({type(exc).__name__}); see the server log")
            _answer_all([(job, None, exc) for job in jobs])
            return
        _answer_all([(job, answer, None) for job, answer in zip(jobs, answers, strict=True)])

    def _encoded(self, jobs: list[_Job]) -> list[_Job]:
        """Sketch the jobs not encoded yet, in one call; a job with a document that cannot
        be sketched gets its error, and the others go on."""
        todo = [j for j in jobs if j.encoded is None]
        if not todo:
            return jobs
        try:
            enc = self._encode([d for j in todo for d in j.docs])
        except RequestError:
            failed = set()
            for job in todo:
                try:
                    job.encoded = self._encode(job.docs)
                except RequestError as exc:
                    _answer(job, None, exc)
                    failed.add(id(job))
            return [j for j in jobs if id(j) not in failed]
        at = 0
        for job in todo:
            n = len(job.docs)
            job.encoded = _Encoded(
                enc.ids[at : at + n], enc.keys[at : at + n], enc.blobs[at : at + n]
            )
            at += n
        return jobs

    def _commit(self, store: Store, jobs: list[_Job]) -> Iterator[list[Result]]:
        """Check a group's documents in order, commit the added ones, return each job's
        results (only once committed)."""
        t0 = time.perf_counter()
        encoded = [j.encoded for j in jobs if j.encoded is not None]
        ids = [i for e in encoded for i in e.ids]
        blobs = [b for e in encoded for b in e.blobs]
        keys = np.concatenate([e.keys for e in encoded])
        policies = [j.policy for j in jobs for _ in range(j.size)]
        n = len(ids)
        with self._step("candidates"):
            stored = store.candidates_many(keys)
            earlier = _group_pairs(keys)  # (j, i), j < i: they share a lookup key
        # one verification call for every candidate pair: stored ones, then the group's
        owner: list[int] = []
        mine: list[bytes] = []
        theirs: list[bytes] = []
        names: list[str] = []
        for i, found in enumerate(stored):
            for key, other in found:
                if key != ids[i]:
                    owner.append(i)
                    names.append(key)
                    mine.append(blobs[i])
                    theirs.append(other)
        n_stored = len(owner)
        for j, i in earlier:
            if ids[j] != ids[i]:
                owner.append(i)
                names.append(ids[j])
                mine.append(blobs[i])
                theirs.append(blobs[j])
        threshold = self.method.threshold
        with self._step("verify"):
            scores = self.method.blob_similarities(mine, theirs) if mine else []
        from_store: list[list[tuple[str, float]]] = [[] for _ in range(n)]
        from_group: list[list[tuple[int, float]]] = [[] for _ in range(n)]
        pair_j = [j for j, i in earlier if ids[j] != ids[i]]
        for k, (i, (sim, _)) in enumerate(zip(owner, scores, strict=True)):
            if sim < threshold:
                continue
            if k < n_stored:
                from_store[i].append((names[k], sim))
            else:
                from_group[i].append((pair_j[k - n_stored], sim))
        # the documents one by one, in arrival order: what the store holds when each arrives
        added = [False] * n
        latest: dict[str, int] = {}  # id -> its added position in the group (it replaced)
        results: list[Result] = []
        for i in range(n):
            dups = [Duplicate(key, sim) for key, sim in from_store[i] if key not in latest]
            dups += [
                Duplicate(ids[j], sim)
                for j, sim in from_group[i]
                if added[j] and latest.get(ids[j]) == j
            ]
            if policies[i] == "add" or not dups:
                added[i] = True
                latest[ids[i]] = i
            results.append(Result(ids[i], added[i], self._best(dups)))
        chosen = [i for i in range(n) if added[i]]
        self._mark(jobs, "checked")
        if chosen:
            with self._step("add_many"):
                store.add_many(
                    [ids[i] for i in chosen],
                    [blobs[i] for i in chosen],
                    keys[chosen],
                    defer_merges=True,  # merged while the writer is idle (_tidy)
                    buffered=True,  # a small group's entries: one tail row, not two segments
                )
            self._store_docs = len(store)
        self._mark(jobs, "committed")
        self.metrics.commit(len(chosen), time.perf_counter() - t0)
        self.metrics.documents("added", len(chosen))
        self.metrics.documents("skipped", n - len(chosen))
        at = 0
        for e in encoded:
            yield results[at : at + len(e.ids)]
            at += len(e.ids)


def _group_pairs(keys: I64) -> list[tuple[int, int]]:
    """Rows ``(j, i)``, ``j < i``, that share a value in some column of ``keys`` (the lookup
    rule of the store: an LSH band, a Hamming block), each pair once.

    Examples:
        >>> _group_pairs(np.array([[1, 2], [3, 2], [1, 9], [4, 4]]))
        [(0, 1), (0, 2)]
    """
    n = keys.shape[0]
    if n < 2:
        return []
    bands = keys.shape[1]
    col = np.tile(np.arange(bands, dtype=np.int64), n)
    row = np.repeat(np.arange(n, dtype=np.int64), bands)
    val = keys.reshape(-1)
    order = np.lexsort((row, val, col))
    c, v, r = col[order], val[order], row[order]
    same = (c[1:] == c[:-1]) & (v[1:] == v[:-1])
    if not same.any():
        return []
    starts = np.flatnonzero(np.concatenate(([True], ~same)))
    ends = np.append(starts[1:], len(c))
    multi = ends - starts > 1
    parts = []
    for s, e in zip(starts[multi].tolist(), ends[multi].tolist(), strict=True):
        a, b = np.triu_indices(e - s, 1)
        parts.append(r[s + a] * n + r[s + b])  # rows in a run ascend: r[s+a] < r[s+b]
    flat = np.unique(np.concatenate(parts))
    return list(zip((flat // n).tolist(), (flat % n).tolist(), strict=True))
