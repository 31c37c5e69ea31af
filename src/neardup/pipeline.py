"""``dedup()``: compose read -> sketch -> index -> pairs -> verify -> cluster over a stream.

Documents are consumed in batches; only the collector (band keys, and the shingle-hash sets
when MinHash verification is on) grows with the corpus, never the text. Pairs stay arrays of
row numbers from the index through verification to clustering; a :class:`~neardup.report.Pair`
is made only for a pair that is looked at. See ``docs/dedup.md``.
"""

from __future__ import annotations

import logging
import time
from array import array
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from itertools import islice
from operator import itemgetter
from typing import TYPE_CHECKING, Any, Protocol, cast, runtime_checkable

import numpy as np
import numpy.typing as npt

from neardup._gc import collector_paused
from neardup._memory import give_back_free_heap
from neardup.cluster import CLUSTERINGS, ClusterStats, cluster_groups, cluster_roots, cluster_stats
from neardup.errors import ConfigError, InputError, NeardupError
from neardup.io import Document
from neardup.methods import Method, PairArrays, make_method, method_info
from neardup.packed import PackedBatches, PackedDocs, PackedIds
from neardup.report import Cluster, DedupResult, PairList
from neardup.report.results import many_clusters
from neardup.types import DocId

if TYPE_CHECKING:
    from concurrent.futures import Executor, Future

__all__ = ["KnownDocuments", "Progress", "StoredMatch", "dedup", "kept_ids", "to_documents"]

log = logging.getLogger(__name__)

#: dedup()'s clustering unless the method's registry entry says otherwise (see docs/dedup.md
#: for the measurement; embeddings default to ``center``).
DEFAULT_CLUSTERING = "components"
#: Clusters of at least this many members are logged as a warning.
GIANT_CLUSTER = 100
#: After collecting at least this many documents, a run gives the C allocator's free heap
#: back to the system before its walk (a smaller run holds little, and a process calling
#: dedup() often on a few documents would pay for a trim of its whole heap each time).
TRIM_AFTER = 10_000

#: Progress callback: ``(stage, items_done)``; called after each batch.
Progress = Callable[[str, int], None]

DocLike = Document | str | tuple[DocId, str] | Mapping[str, Any]
I64 = npt.NDArray[np.int64]


class StoredMatch(Protocol):
    """A stored document that matched a new one (what :class:`KnownDocuments` returns)."""

    @property
    def key(self) -> str: ...
    @property
    def query(self) -> str: ...
    @property
    def similarity(self) -> float: ...
    @property
    def distance(self) -> int | None: ...


class KnownDocuments(Protocol):
    """Documents seen before (a persistent index): the pipeline asks it for the stored
    documents that match each new batch and hands it the batch to keep."""

    @property
    def method(self) -> Method: ...

    def begin_run(self) -> None: ...

    def query_then_add(
        self, batch: Sequence[Document] | PackedDocs, payload: Any
    ) -> Sequence[StoredMatch]: ...


@runtime_checkable
class _EndsRuns(Protocol):
    """Known documents that also want to hear when a run handed over its last batch (a
    store then starts its last write, beside the clustering)."""

    def end_run(self) -> None: ...


def to_documents(
    docs: Iterable[DocLike], *, id_key: str = "id", text_key: str = "text"
) -> Iterator[Document]:
    """Accept Documents, plain strings (ids 0, 1, ...), ``(id, text)`` pairs, or mappings
    with ``id_key`` (optional: the position is the id) and ``text_key``; a mapping's other
    fields ride along in :attr:`Document.fields`.

    Raises:
        InputError: an item of another type, or a mapping without a string text.

    Examples:
        >>> [d.id for d in to_documents(["a", ("x", "b"), {"id": 7, "text": "c"}])]
        ['0', 'x', '7']
    """
    for n, d in enumerate(docs):
        if isinstance(d, Document):
            yield d
        elif isinstance(d, str):
            yield Document(str(n), d)
        elif isinstance(d, tuple) and len(d) == 2 and isinstance(d[1], str):
            yield Document(str(d[0]), d[1])
        elif isinstance(d, Mapping):
            text = d.get(text_key)
            if not isinstance(text, str):
                raise InputError(
                    f"document {n}: key {text_key!r} is missing or not a string; "
                    "pass text_key= to name the field that holds the text"
                )
            doc_id = d.get(id_key, n)
            if doc_id is None:
                raise InputError(f"document {n}: its id ({id_key!r}) is null; give it an id")
            rest = {k: v for k, v in d.items() if k not in (id_key, text_key)}
            yield Document(str(doc_id), text, fields=rest or None)
        else:
            raise InputError(
                f"document {n} is a {type(d).__name__}; pass str, (id, text), a mapping or Document"
            )


def _sketch_or_error(m: Method, batch: Sequence[Document]) -> Any:
    try:
        return m.sketch(batch)
    except NeardupError as exc:
        return exc


#: A part of the input, made in order by the reading thread: called (on a sketching thread
#: when ``jobs > 1``), it gives its batches.
_Part = Callable[[], Sequence[Sequence[Document]]]


def _whole(batch: Sequence[Document]) -> Sequence[Sequence[Document]]:
    return (batch,)


class _Later:
    """The calls a run leaves to the sketching threads (the collector's copies of each
    batch's rows), or makes at once when it has none."""

    def __init__(self) -> None:
        self.pool: Executor | None = None  # the sketching threads, while they run
        self._calls: deque[Future[None]] = deque()

    def __call__(self, call: Callable[[], None]) -> None:
        if self.pool is None:
            call()
            return
        self._calls.append(self.pool.submit(call))
        while self._calls and self._calls[0].done():
            self._calls.popleft().result()  # raises the call's error

    def wait(self) -> None:
        """Wait for every call left (and raise the first error)."""
        while self._calls:
            self._calls.popleft().result()


def _sketched(
    m: Method,
    parts: Iterator[_Part],
    jobs: int,
    check: Callable[[Sequence[Document], Any], None] | None = None,
    prepare: Callable[[Any], Any] | None = None,
    later: _Later | None = None,
    before_check: Callable[[Sequence[Document]], Any] | None = None,
) -> Iterator[tuple[Sequence[Document], Any]]:
    """Yield ``(batch, payload)`` in input order; a payload that failed is the NeardupError.

    Each part (a batch already read, or a chunk of a JSONL file still to scan) is made in this
    thread; with ``jobs > 1`` parts are turned into batches and sketched by ``jobs`` threads
    (the kernels release the GIL; reading goes on in this thread meanwhile), at most
    ``2 * jobs`` parts in flight. ``check(batch, before_check(batch))`` sees every batch in
    order before it is yielded (``before_check`` on the thread that made the batch);
    ``prepare`` (the collector's) takes each payload on the thread that made it; ``later``
    gets those threads while they run.
    """
    if jobs > 1 and not method_info(m.name).parallel:
        log.info("method %s sketches in one thread; --jobs ignored", m.name)
        jobs = 1

    def job(part: _Part) -> list[tuple[Sequence[Document], Any, Any]]:
        out = []
        for batch in part():
            p = _sketch_or_error(m, batch)
            if prepare is not None and not isinstance(p, NeardupError):
                p = prepare(p)
            out.append((batch, p, None if before_check is None else before_check(batch)))
        return out

    for done in _in_order(job, parts, jobs, later):
        for batch, payload, ready in done:
            if check is not None:
                check(batch, ready)
            yield batch, payload


def _in_order(
    job: Callable[[_Part], list[tuple[Sequence[Document], Any, Any]]],
    parts: Iterator[_Part],
    jobs: int,
    later: _Later | None = None,
) -> Iterator[list[tuple[Sequence[Document], Any, Any]]]:
    """``job`` of each part, in order: here, or on ``jobs`` threads with ``2 * jobs`` in flight
    (which also run the calls left to ``later`` meanwhile, and finish them before the end)."""
    if jobs == 1:
        yield from map(job, parts)
        return
    from concurrent.futures import ThreadPoolExecutor  # only for jobs > 1

    with ThreadPoolExecutor(jobs, thread_name_prefix="neardup-sketch") as pool:
        if later is not None:
            later.pool = pool
        pending: deque[Future[list[tuple[Sequence[Document], Any, Any]]]] = deque()
        for part in parts:
            pending.append(pool.submit(job, part))
            if len(pending) >= 2 * jobs:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
        if later is not None:
            later.wait()
            later.pool = None


class _Ids:
    """A run's ids in input order. The ids of packed batches (:class:`~neardup.packed.PackedIds`)
    are copied as bytes into one buffer with their lengths, made into strings by
    :meth:`strings`, which a run calls after its bucket walk: the walk's peak memory then
    holds no string per document, and no small buffer per batch stays behind in the
    sketching threads' allocator arenas, between their big transient ones, to keep them
    from shrinking."""

    __slots__ = ("_bytes", "_lengths", "_n", "_parts")

    def __init__(self) -> None:
        # lists of strings, or the number of ids that come next from the packed buffer
        self._parts: list[Sequence[DocId] | int] = []
        self._bytes = bytearray()
        self._lengths = array("i")  # of the packed ids, in bytes
        self._n = 0

    def extend(self, ids: Sequence[DocId]) -> None:
        if isinstance(ids, PackedIds) and not ids.made:  # (read already by a store: strings)
            self._bytes += ids.buf
            self._lengths.frombytes(ids.lengths().tobytes())
            if self._parts and isinstance(self._parts[-1], int):
                self._parts[-1] += len(ids)
            else:
                self._parts.append(len(ids))
        else:
            self._parts.append(list(ids))
        self._n += len(ids)

    def __len__(self) -> int:
        return self._n

    def strings(self) -> list[DocId]:
        """Every id, as strings (kept: the bytes are let go)."""
        from neardup._kernels import engine

        packed: list[DocId] = []
        if self._lengths:
            lengths = np.frombuffer(self._lengths, dtype=np.int32)
            offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
            np.cumsum(lengths, out=offsets[1:])
            n = len(lengths)
            packed = engine.kernels("jsonl").row_ids(
                np.frombuffer(self._bytes, np.uint8),
                offsets,
                np.ones(n, np.uint8),
                np.arange(n, dtype=np.int64),
                first_line=0,
            )
            del lengths  # (a view of the array)
        parts, self._parts = self._parts, []
        self._bytes, self._lengths = bytearray(), array("i")
        if len(parts) == 1 and isinstance(parts[0], int):
            out = packed
        else:
            out = []
            at = 0
            for part in parts:
                if isinstance(part, int):
                    out.extend(packed[at : at + part])
                    at += part
                else:
                    out.extend(part)
        self._parts = [out]
        return out


@dataclass
class _Run:
    """What one run gathers besides the collector: ids, skips, stored matches, fields."""

    ids: _Ids
    skipped: int
    seen: list[tuple[str, int, float, int | None]]  # (stored key, position, sim, dist)
    fields: list[Mapping[str, Any] | None] | None


def _collect(
    m: Method,
    docs: Iterable[DocLike] | PackedBatches,
    *,
    batch_size: int,
    jobs: int,
    on_error: str,
    known: KnownDocuments | None,
    progress: Progress | None,
    id_key: str,
    text_key: str,
) -> tuple[Any, _Run]:
    collector = m.collector()
    run = _Run(_Ids(), 0, [], None)
    later = _Later()  # the collector's copies of each batch's rows, on the sketching threads

    def remember(batch: Sequence[Document]) -> None:
        if isinstance(batch, PackedDocs):
            if run.fields is not None:
                run.fields.extend([None] * len(batch))
            run.ids.extend(batch.id_source())  # packed ids stay bytes until the walk is done
            return
        if run.fields is None and any(d.fields for d in batch):
            run.fields = [None] * len(run.ids)
        if run.fields is not None:
            run.fields.extend(d.fields for d in batch)
        run.ids.extend([d.id for d in batch])

    def stored(batch: Sequence[Document], payload: Any, base: int) -> None:
        if known is None:
            return
        # a packed batch goes as it is: the store reads its ids, no Document is made
        hits = known.query_then_add(
            batch if isinstance(batch, PackedDocs) else list(batch), payload
        )
        if not hits:
            return
        ids = batch.ids if isinstance(batch, PackedDocs) else [d.id for d in batch]
        pos = {doc_id: base + k for k, doc_id in enumerate(ids)}
        for hit in hits:
            run.seen.append((hit.key, pos[hit.query], hit.similarity, hit.distance))

    if known is not None:
        known.begin_run()  # from here on it answers from what was stored before this run
    if isinstance(docs, PackedBatches):
        # the sketching threads also read and scan the file's chunks (the JSON decoding,
        # about a fifth of reading and sketching on one core) and hash the ids; the ids are
        # checked here, in file order
        check_ids = docs.id_check()
        sketched = _sketched(
            m,
            docs.scans(),
            jobs,
            lambda batch, hashes: check_ids(cast(PackedDocs, batch).id_source(), hashes),
            collector.prepare,
            later,
            lambda batch: docs.id_hashes(cast(PackedDocs, batch).id_source()),
        )
    else:
        stream = to_documents(docs, id_key=id_key, text_key=text_key)
        batches = iter(lambda: list(islice(stream, batch_size)), [])
        parts = (partial(_whole, batch) for batch in batches)
        sketched = _sketched(m, parts, jobs, prepare=collector.prepare, later=later)
    for batch, payload in sketched:
        base = len(run.ids)
        if not isinstance(payload, NeardupError):
            later(collector.add_later(np.arange(base, base + len(batch), dtype=np.int64), payload))
            stored(batch, payload, base)
            remember(batch)
        elif on_error == "fail":
            raise payload
        else:
            for d in batch:
                try:
                    one = m.sketch([d])
                except NeardupError as exc:
                    run.skipped += 1
                    log.warning("skipped %s: %s", d.id, exc)
                    continue
                collector.add(np.array([len(run.ids)], dtype=np.int64), one)
                stored([d], one, len(run.ids))
                remember([d])
        if progress is not None:
            progress("sketch", len(run.ids))
    later.wait()
    if isinstance(known, _EndsRuns):
        known.end_run()
    return collector, run


def _with_stored(
    ids: list[DocId], pairs: PairArrays, seen: list[tuple[str, int, float, int | None]]
) -> tuple[list[DocId], PairArrays]:
    """Put the stored documents that matched first (positions ``0..k-1``, as they were seen
    before) and add their pairs; a stored key that is also a new document's id was re-read:
    it is that document."""
    new_pos = {str(d): i for i, d in enumerate(ids)}
    stored = list(dict.fromkeys(key for key, _, _, _ in seen if key not in new_pos))
    k = len(stored)
    at: dict[str, int] = {key: i for i, key in enumerate(stored)}
    at.update({key: p + k for key, p in new_pos.items()})
    extra = [(at[key], p + k, sim, -1 if dist is None else dist) for key, p, sim, dist in seen]
    extra = [row for row in extra if row[0] != row[1]]
    if extra:
        a, b, s, d = (list(col) for col in zip(*extra, strict=True))
        merged = PairArrays.concat([pairs.shifted(k), PairArrays.of(a, b, s, d)])
    else:
        merged = pairs.shifted(k)
    return [*stored, *ids], merged.sorted()


def dedup(
    docs: Iterable[DocLike] | PackedBatches,
    *,
    method: str | Method = "minhash",
    threshold: float | None = None,
    batch_size: int = 2048,
    on_error: str = "fail",
    progress: Progress | None = None,
    jobs: int = 1,
    index: KnownDocuments | None = None,
    pairs: bool = True,
    id_key: str = "id",
    text_key: str = "text",
    clustering: str | None = None,
    giant_cluster: int = GIANT_CLUSTER,
    **options: Any,
) -> DedupResult:
    """Find the near-duplicate clusters of a corpus.

    Args:
        docs: Documents: :class:`~neardup.io.Document`, strings, ``(id, text)`` pairs, or
            mappings such as ``{"id": ..., "text": ...}`` (their other fields are kept in
            :attr:`DedupResult.records`), or a :class:`~neardup.packed.PackedBatches` file
            (read in batches whose texts never become Python strings).
        method: ``minhash`` (default), ``simhash``, ``simhash-go``, ``ctph``, ``tlsh``,
            ``phash``, ``embedding`` (see :mod:`neardup.methods.registry`), or a
            :class:`~neardup.methods.Method`.
        threshold: Similarity threshold in [0, 1] (default: the method's, see
            :data:`neardup.methods.DEFAULT_THRESHOLDS`).
        batch_size: Documents sketched per batch.
        on_error: ``"fail"`` (default) stops at the first bad document; ``"skip"`` logs it
            and goes on (the document is left out of the result).
        progress: Called as ``progress(stage, count)`` after each batch and stage.
        jobs: Threads that sketch batches in parallel (1 = this thread only). Indexing and
            clustering do not depend on ``jobs``: the results are the same.
        index: Documents seen before (a :class:`~neardup.store.PersistentIndex`): stored
            documents join the clusters of the new documents that match them (and come
            first in them, as they were seen before), and every new document is added to
            it, one transaction per batch. Its method is used (``method`` is ignored).
        pairs: Collect every accepted pair (``result.pairs``). With ``False`` only the
            clusters are computed, which lets MinHash skip verifying candidates already in
            one cluster (the clusters are the same); ``result.pairs`` is then empty.
        id_key: The id key of mapping documents.
        text_key: The text key of mapping documents.
        clustering: ``"center"`` (every member has a pair with its representative, so it
            is within the threshold of it; needs every pair, so MinHash verifies all
            candidates) or ``"components"`` (union-find: documents can chain); see
            :mod:`neardup.cluster`. Default: the method's (``MethodInfo.clustering``):
            ``center`` for ``embedding``, ``components`` for the others.
        giant_cluster: Clusters of at least this many members are logged as a warning with
            their lowest similarity (they often chain through boilerplate).
        **options: The method's options (``num_perm``, ``verify``, ``bits``, ``model``...).

    Returns:
        A :class:`~neardup.report.DedupResult`: clusters (representative = the member that
        came first in the input; clusters numbered in representative order) and pairs.

    Raises:
        ConfigError: bad method, threshold or option.
        InputError: a bad document (with ``on_error="fail"``).

    Examples:
        >>> r = dedup(["the cat sat on the mat today", "the cat sat on the mat today!", "x y"],
        ...           method="simhash")
        >>> [c.members for c in r.clusters]
        [('0', '1')]
    """
    if on_error not in ("fail", "skip"):
        raise ConfigError(f"on_error must be 'fail' or 'skip', got {on_error!r}")
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ConfigError(f"batch_size must be a positive integer, got {batch_size!r}")
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ConfigError(f"jobs must be a positive integer, got {jobs!r}")
    if clustering is not None and clustering not in CLUSTERINGS:
        raise ConfigError(f"clustering must be one of {', '.join(CLUSTERINGS)}, got {clustering!r}")
    if index is not None:
        m = index.method
    elif isinstance(method, Method):
        m = method
    else:
        m = make_method(method, threshold, **options)
    if clustering is None:
        clustering = _method_clustering(m.name)
    t0 = time.perf_counter()
    collector, run = _collect(
        m,
        docs,
        batch_size=batch_size,
        jobs=jobs,
        on_error=on_error,
        known=index,
        progress=progress,
        id_key=id_key,
        text_key=text_key,
    )
    if len(run.ids) >= TRIM_AFTER:
        # what collection freed (its batches' buffers, the id check's table; with --jobs N
        # also in the sketching threads' own allocator arenas) goes back before the walk
        give_back_free_heap()
    t_sketch = time.perf_counter()
    n_new = len(run.ids)
    to_root = None
    if pairs or run.seen or clustering != "components":
        found = collector.pairs(jobs=jobs)
        del collector  # its band keys and sets (most of a run's memory) are not read again
        ids = run.ids.strings()  # after the walk: its peak holds no string per document
        if run.seen:
            ids, found = _with_stored(ids, found, run.seen)
        roots, to_root = cluster_roots(
            len(ids), found.a, found.b, found.similarity, clustering=clustering
        )
    else:
        found = PairArrays.empty()
        roots = collector.components(n_new, jobs=jobs)
        del collector
        ids = run.ids.strings()
    shown = found if pairs else PairArrays.empty()
    pair_list = PairList(ids, shown.a, shown.b, shown.similarity, shown.distance)
    t_pairs = time.perf_counter()
    if progress is not None:
        progress("pairs", len(pair_list))
    clusters, sizes = _clusters(ids, roots)
    if len(sizes) and int(sizes.max()) >= giant_cluster:
        if len(found) or to_root is not None:
            st = cluster_stats(roots, found.a, found.b, found.similarity, to_root)
        else:  # no pairs: the sizes are all there is (no sort of every root)
            nan = np.full(len(clusters), np.nan)
            st = ClusterStats(sizes, np.zeros(len(clusters), np.int64), nan, nan.copy(), None)
        _warn_giant(clusters, st, giant_cluster, clustering)
    t_end = time.perf_counter()
    stats = {
        "documents": float(len(ids)),
        "skipped": float(run.skipped),
        "stored_matches": float(len(run.seen)),
        "pairs": float(len(pair_list)),
        "clusters": float(len(clusters)),
        "seconds_sketch": t_sketch - t0,
        "seconds_pairs": t_pairs - t_sketch,
        "seconds_total": t_end - t0,
    }
    return DedupResult(
        clusters=clusters,
        pairs=pair_list,
        n_docs=n_new,
        method=m.name,
        threshold=m.threshold,
        params=m.params,
        stats=stats,
        doc_ids=ids,
        records=run.fields,
        clustering=clustering,
    )


def _clusters(ids: list[DocId], roots: npt.NDArray[np.int64]) -> tuple[list[Cluster], I64]:
    """The clusters of ``roots`` with their ids, and their sizes.

    The groups come from two counting passes and each cluster's members tuple straight from
    the ids (``clusterjson.member_tuples``: no list of positions, no tuple of every clustered
    id to slice); the cyclic collector is paused meanwhile (a 1M-document run makes ~100k
    clusters, and every 700 new tuples would start a collection)."""
    from neardup._kernels import engine

    order, starts = cluster_groups(roots)
    if len(starts) == 0:
        return [], np.zeros(0, dtype=np.int64)
    sizes = np.diff(starts, append=len(order))
    with collector_paused():
        members = engine.kernels("clusterjson").member_tuples(ids, order, starts)
        clusters = many_clusters(len(members), members, map(itemgetter(0), members))
    return clusters, sizes


def _method_clustering(name: str) -> str:
    """The clustering a method's registry entry asks for (components for unknown names)."""
    from neardup.methods import REGISTRY

    info = REGISTRY.get(name)
    return info.clustering if info is not None else DEFAULT_CLUSTERING


def _warn_giant(clusters: list[Cluster], st: ClusterStats, giant: int, clustering: str) -> None:
    """Log each cluster of ``giant`` or more members with its lowest similarity."""
    for k in np.flatnonzero(st.sizes >= giant).tolist():
        c = clusters[k]
        low = float(st.min_similarity[k])
        lowest = (
            f"lowest pair similarity {low:.3f}"
            if low == low  # not nan: the pairs were collected
            else "pair similarities not collected (pairs=False)"
        )
        if st.min_to_root is not None:
            lowest += f", lowest similarity to the representative {st.min_to_root[k]:.3f}"
        hint = (
            "; --clustering center keeps every member within the threshold of its representative"
            if clustering == "components"
            else ""
        )
        log.warning(
            "giant cluster %d: %d members (representative %s), %s%s",
            c.id,
            c.size,
            c.representative,
            lowest,
            hint,
        )


def kept_ids(
    result: DedupResult,
    *,
    keep: str = "first",
    sizes: dict[DocId, int] | None = None,
    within_threshold: bool = True,
) -> set[DocId]:
    """The ids a deduplicated copy keeps: every document outside clusters, and in each cluster
    the members that are not within the threshold of a kept one (see :mod:`neardup.keep`).

    Args:
        result: A dedup result (with its pairs: ``dedup(pairs=True)``, the default).
        keep: ``"first"`` / ``"representative"`` prefer the member that came first in the
            input (the two rules coincide); ``"longest"`` the member with the largest
            ``sizes`` value (ties: the earlier one).
        sizes: Document sizes, needed for ``"longest"``.
        within_threshold: A member is removed only for a kept member it has an accepted pair
            with, so a chain never removes a document far from every kept one (default);
            ``False`` keeps exactly one member per cluster.

    Raises:
        ConfigError: unknown rule, ``"longest"`` without sizes, or a result without pairs
            (with ``within_threshold``).

    Examples:
        >>> r = dedup(["a b c d e f", "a b c d e f", "z"], method="simhash")
        >>> sorted(kept_ids(r))
        ['0', '2']
    """
    from neardup.keep import kept_for

    plan = kept_for(result, keep=keep, sizes=sizes, within_threshold=within_threshold)
    dropped = {m for m, (_, w, _) in plan.items() if w != m}
    return {d for d in result.doc_ids if d not in dropped}
