"""``dedup()``: compose read -> sketch -> index -> pairs -> verify -> cluster over a stream.

Documents are consumed in batches; only the index (sketches, and the shingle-hash sets when
MinHash verification is on) grows with the corpus, never the text. See ``docs/dedup.md``.
"""

from __future__ import annotations

import logging
import multiprocessing
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from itertools import islice
from typing import TYPE_CHECKING, Any

import numpy as np

from neardup.cluster import CLUSTERINGS, ClusterStats, cluster_labels, cluster_roots, cluster_stats
from neardup.errors import ConfigError, InputError, NeardupError
from neardup.io import Document
from neardup.methods import Method, make_method
from neardup.report import Cluster, DedupResult, Pair
from neardup.types import DocId

if TYPE_CHECKING:  # the store sits to the right of the pipeline; only its type is needed
    from neardup.store.persistent import PersistentIndex

__all__ = ["Progress", "dedup", "kept_ids", "to_documents"]

log = logging.getLogger(__name__)

#: dedup()'s clustering unless told otherwise (see docs/dedup.md for the measurement).
DEFAULT_CLUSTERING = "components"
#: Clusters of at least this many members are logged as a warning.
GIANT_CLUSTER = 100

#: Progress callback: ``(stage, items_done)``; called after each batch.
Progress = Callable[[str, int], None]

DocLike = Document | str | tuple[DocId, str]


def to_documents(docs: Iterable[DocLike]) -> Iterator[Document]:
    """Accept Documents, plain strings (ids 0, 1, ...) or ``(id, text)`` pairs.

    Examples:
        >>> [d.id for d in to_documents(["a", ("x", "b")])]
        ['0', 'x']
    """
    for n, d in enumerate(docs):
        if isinstance(d, Document):
            yield d
        elif isinstance(d, str):
            yield Document(str(n), d)
        elif isinstance(d, tuple) and len(d) == 2 and isinstance(d[1], str):
            yield Document(str(d[0]), d[1])
        else:
            raise InputError(
                f"document {n} is a {type(d).__name__}; pass str, (id, text) or Document"
            )


_WORKER: Method | None = None


def _worker_init(method: Method) -> None:
    global _WORKER
    _WORKER = method


def _worker_sketch(batch: list[Document]) -> Any:
    assert _WORKER is not None
    try:
        return _WORKER.sketch(batch)
    except NeardupError as exc:
        return exc


def _sketched(
    m: Method, stream: Iterator[Document], batch_size: int, jobs: int
) -> Iterator[tuple[list[Document], Any]]:
    """Yield ``(batch, payload)`` in input order; a payload that failed is the NeardupError.

    With ``jobs > 1`` batches are sketched by a pool of spawned processes, at most
    ``2 * jobs`` batches in flight, so memory stays bounded.
    """
    batches = iter(lambda: list(islice(stream, batch_size)), [])
    if jobs > 1 and not m.parallel:
        log.info("method %s sketches in this process; --jobs ignored", m.name)
        jobs = 1
    if jobs == 1:
        for batch in batches:
            try:
                yield batch, m.sketch(batch)
            except NeardupError as exc:
                yield batch, exc
        return
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(jobs, mp_context=ctx, initializer=_worker_init, initargs=(m,)) as pool:
        pending: deque[tuple[list[Document], Future[Any]]] = deque()
        for batch in batches:
            pending.append((batch, pool.submit(_worker_sketch, batch)))
            if len(pending) >= 2 * jobs:
                done, fut = pending.popleft()
                yield done, fut.result()
        while pending:
            done, fut = pending.popleft()
            yield done, fut.result()


def dedup(
    docs: Iterable[DocLike],
    *,
    method: str | Method = "minhash",
    threshold: float | None = None,
    batch_size: int = 2048,
    on_error: str = "fail",
    progress: Progress | None = None,
    jobs: int = 1,
    index: PersistentIndex | None = None,
    clustering: str = DEFAULT_CLUSTERING,
    giant_cluster: int = GIANT_CLUSTER,
    **options: Any,
) -> DedupResult:
    """Find the near-duplicate clusters of a corpus.

    Args:
        docs: Documents: :class:`~neardup.io.Document`, strings, or ``(id, text)`` pairs.
        method: ``minhash`` (default), ``simhash``, ``ctph``, ``tlsh``, ``phash``,
            ``embedding``, or a :class:`~neardup.methods.Method` instance.
        threshold: Similarity threshold in [0, 1] (default: the method's, see
            :data:`neardup.methods.DEFAULT_THRESHOLDS`).
        batch_size: Documents sketched per batch.
        on_error: ``"fail"`` (default) stops at the first bad document; ``"skip"`` logs it
            and goes on (the document is left out of the result).
        progress: Called as ``progress(stage, count)`` after each batch and stage.
        index: A persistent index to deduplicate against: documents already stored there
            join the clusters of the new documents that match them (and come first in them,
            as they were seen before), and every new document is added to it afterwards,
            one transaction per batch. Its method is used (``method`` is ignored).
        jobs: Processes that sketch batches in parallel (1 = in this process). Indexing and
            clustering stay in this process, so results do not depend on ``jobs``.
        clustering: ``"center"`` (every member has a pair with its representative, so it
            is within the threshold of it) or ``"components"`` (union-find: documents can
            chain); see :mod:`neardup.cluster`.
        giant_cluster: Clusters of at least this many members are logged as a warning with
            their lowest similarity (they often chain through boilerplate).
        **options: Passed to the method (``num_perm``, ``verify``, ``bits``, ``model``...).

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
    if clustering not in CLUSTERINGS:
        raise ConfigError(f"clustering must be one of {', '.join(CLUSTERINGS)}, got {clustering!r}")
    if index is not None:
        m = index.method
    elif isinstance(method, Method):
        m = method
    else:
        m = make_method(method, threshold, **options)
    t0 = time.perf_counter()
    ids: list[DocId] = []
    skipped = 0
    seen: list[tuple[str, int, float, int | None]] = []  # (stored key, position, sim, dist)
    for batch, payload in _sketched(m, to_documents(docs), batch_size, jobs):
        base = len(ids)
        if not isinstance(payload, NeardupError):
            m.index(np.arange(base, base + len(batch), dtype=np.int64), payload)
            ids.extend(d.id for d in batch)
            if index is not None:
                pos = {d.id: base + k for k, d in enumerate(batch)}
                for hit in index.query_then_add(batch, payload):
                    seen.append((hit.key, pos[hit.query], hit.similarity, hit.distance))
        elif on_error == "fail":
            raise payload
        else:
            for d in batch:
                try:
                    one = m.sketch([d])
                except NeardupError as exc:
                    skipped += 1
                    log.warning("skipped %s: %s", d.id, exc)
                    continue
                m.index(np.array([len(ids)], dtype=np.int64), one)
                if index is not None:
                    for hit in index.query_then_add([d], one):
                        seen.append((hit.key, len(ids), hit.similarity, hit.distance))
                ids.append(d.id)
        if progress is not None:
            progress("sketch", len(ids))
    t_sketch = time.perf_counter()
    rows = sorted(m.pairs(), key=lambda r: (r[0], r[1]))
    n_new = len(ids)
    if seen:
        # stored documents come first: positions 0..k-1, new documents shift by k
        # A stored key that is also a new document's id was re-read: it is that document.
        new_pos = {str(d): i for i, d in enumerate(ids)}
        stored = list(dict.fromkeys(key for key, _, _, _ in seen if key not in new_pos))
        k = len(stored)
        at: dict[str, int] = {key: i for i, key in enumerate(stored)}
        at.update({key: p + k for key, p in new_pos.items()})
        rows = [(i + k, j + k, sim, dist) for i, j, sim, dist in rows]
        extra = [(at[key], p + k, sim, dist) for key, p, sim, dist in seen]
        rows += [(min(a, b), max(a, b), sim, dist) for a, b, sim, dist in extra if a != b]
        rows = list({(a, b): (a, b, sim, dist) for a, b, sim, dist in rows}.values())
        rows.sort(key=lambda r: (r[0], r[1]))
        ids = [*stored, *ids]
    pi = np.array([r[0] for r in rows], dtype=np.int64)
    pj = np.array([r[1] for r in rows], dtype=np.int64)
    ps = np.array([r[2] for r in rows], dtype=np.float64)
    roots, to_root = cluster_roots(len(ids), pi, pj, ps, clustering=clustering)
    pairs = [Pair(ids[i], ids[j], sim, dist) for i, j, sim, dist in rows]
    t_pairs = time.perf_counter()
    if progress is not None:
        progress("pairs", len(pairs))
    groups = cluster_labels(roots)
    clusters = [Cluster(n, tuple(ids[i] for i in g), ids[g[0]]) for n, g in enumerate(groups)]
    _warn_giant(clusters, cluster_stats(roots, pi, pj, ps, to_root), giant_cluster, clustering)
    t_end = time.perf_counter()
    stats = {
        "documents": float(len(ids)),
        "skipped": float(skipped),
        "stored_matches": float(len(seen)),
        "pairs": float(len(pairs)),
        "clusters": float(len(clusters)),
        "seconds_sketch": t_sketch - t0,
        "seconds_pairs": t_pairs - t_sketch,
        "seconds_total": t_end - t0,
    }
    return DedupResult(
        clusters=clusters,
        pairs=pairs,
        n_docs=n_new,
        method=m.name,
        threshold=m.threshold,
        params=m.params,
        stats=stats,
        doc_ids=ids,
        clustering=clustering,
    )


def _warn_giant(clusters: list[Cluster], st: ClusterStats, giant: int, clustering: str) -> None:
    """Log each cluster of ``giant`` or more members with its lowest similarity."""
    for k in np.flatnonzero(st.sizes >= giant).tolist():
        c = clusters[k]
        lowest = f"lowest pair similarity {st.min_similarity[k]:.3f}"
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
    result: DedupResult, *, keep: str = "first", sizes: dict[DocId, int] | None = None
) -> set[DocId]:
    """The ids a deduplicated copy keeps: every document outside clusters, one per cluster.

    Args:
        result: A dedup result.
        keep: ``"first"`` / ``"representative"`` keep the cluster's representative (the member
            that came first in the input: the two rules coincide); ``"longest"`` keeps the
            member with the largest ``sizes`` value (ties: the earlier one).
        sizes: Document sizes, needed for ``"longest"``.

    Raises:
        ConfigError: unknown rule, or ``"longest"`` without sizes.

    Examples:
        >>> r = dedup(["a b c d e f", "a b c d e f", "z"], method="simhash")
        >>> sorted(kept_ids(r))
        ['0', '2']
    """
    if keep not in ("first", "representative", "longest"):
        raise ConfigError(f"keep must be first, representative or longest, got {keep!r}")
    if keep == "longest" and sizes is None:
        raise ConfigError("keep='longest' needs the document sizes")
    dropped: set[DocId] = set()
    for c in result.clusters:
        if keep == "longest":
            assert sizes is not None
            winner = max(c.members, key=lambda m: (sizes.get(m, 0), -c.members.index(m)))
        else:
            winner = c.representative
        dropped.update(m for m in c.members if m != winner)
    return {d for d in result.doc_ids if d not in dropped}
