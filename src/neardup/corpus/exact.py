"""``exact_first``: remove exact copies (equal canonical text, see
:mod:`neardup.methods.exact`) in a stream before a near-duplicate method runs, then fold them
back into its clusters."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from neardup.canonicalize import Canonicalizer
from neardup.io import Document
from neardup.methods import Method
from neardup.methods.exact import BloomFilter, ExactMethod, exact_digests
from neardup.report import Cluster, DedupResult, Pair
from neardup.types import DocId

__all__ = ["BloomFilter", "ExactMethod", "exact_digests", "exact_first"]


def exact_first(
    docs: Iterable[Document],
    *,
    method: Method,
    batch_size: int = 2048,
    canonicalizer: Canonicalizer | None = None,
    **dedup_options: Any,
) -> DedupResult:
    """Remove exact copies (equal canonical text) in a stream, run ``method`` on the rest,
    and fold the copies back into its clusters: each copy joins the cluster of the document
    it copies, with a pair of similarity 1.0.

    Args:
        docs: The documents.
        method: The near-duplicate method that runs on the first copy of each text.
        batch_size: Documents hashed per batch.
        canonicalizer: Canonicalizer of the exact pass (default: the method's own when it
            has one, else ``txtfp``), so a copy is what the method would also see as equal.
        **dedup_options: Passed to :func:`neardup.pipeline.dedup`.

    Returns:
        A :class:`~neardup.report.DedupResult` over every document, in input order.

    Examples:
        >>> from neardup.methods import make_method
        >>> from neardup.io import Document
        >>> texts = ["a b c d e f", "x y", "a b c d e f"]
        >>> docs = [Document(str(i), t) for i, t in enumerate(texts)]
        >>> [c.members for c in exact_first(docs, method=make_method("simhash")).clusters]
        [('0', '2')]
    """
    from itertools import islice

    from neardup.cluster import cluster_labels, components
    from neardup.pipeline import GIANT_CLUSTER, dedup

    preset = getattr(method.config, "canonicalize", None)
    canon = canonicalizer or Canonicalizer(preset if isinstance(preset, str) else "txtfp")
    order: list[DocId] = []
    copies: list[tuple[DocId, DocId]] = []  # (copy id, first id)
    first_of: dict[tuple[int, int], DocId] = {}

    def uniques() -> Iterator[Document]:
        stream = iter(docs)
        while batch := list(islice(stream, batch_size)):
            texts = [d.text for d in batch]
            if any(t is None for t in texts):
                yield from batch  # binary documents: no text to compare
                order.extend(d.id for d in batch)
                continue
            digests = exact_digests([t for t in texts if t is not None], canon)
            for d, (lo, hi) in zip(batch, digests.tolist(), strict=True):
                order.append(d.id)
                key = (lo, hi)
                seen = first_of.get(key)
                if seen is None and d.text and d.text.strip():
                    first_of[key] = d.id
                    yield d
                elif seen is None:
                    yield d  # empty texts are left to the method
                else:
                    copies.append((d.id, seen))

    # The giant-cluster warning is given here, on the clusters with the copies folded back
    # in: the inner run's cluster numbers and sizes are not the ones the result reports.
    giant = int(dedup_options.pop("giant_cluster", GIANT_CLUSTER))
    inner = dedup(
        uniques(), method=method, batch_size=batch_size, giant_cluster=sys.maxsize, **dedup_options
    )
    pos: dict[DocId, int] = {d: i for i, d in enumerate(order)}
    pairs = list(inner.pairs) + [Pair(first, copy, 1.0, 0) for copy, first in copies]
    pairs.sort(key=lambda p: (pos[p.a], pos[p.b]) if pos[p.a] < pos[p.b] else (pos[p.b], pos[p.a]))
    a = np.array([min(pos[p.a], pos[p.b]) for p in pairs], dtype=np.int64)
    b = np.array([max(pos[p.a], pos[p.b]) for p in pairs], dtype=np.int64)
    # the inner clusters as they are (center clusters must not chain again through their
    # pairs), each copy joined to its original's
    tie = [(pos[m], pos[c.representative]) for c in inner.clusters for m in c.members]
    tie += [(pos[copy], pos[first]) for copy, first in copies]
    ends = np.array(tie, dtype=np.int64).reshape(-1, 2)
    roots = components(len(order), ends[:, 0], ends[:, 1])
    clusters = [
        Cluster(n, tuple(order[i] for i in g), order[g[0]])
        for n, g in enumerate(cluster_labels(roots))
    ]
    if clusters and max(c.size for c in clusters) >= giant:
        from neardup.cluster import cluster_stats
        from neardup.pipeline import _warn_giant

        if dedup_options.get("pairs"):
            sim = np.array([p.similarity for p in pairs], dtype=np.float64)
            st = cluster_stats(roots, a, b, sim)
        else:  # only the copies' pairs are known: no similarity range to report
            none = np.empty(0, dtype=np.int64)
            st = cluster_stats(roots, none, none, np.empty(0, dtype=np.float64))
        _warn_giant(clusters, st, giant, inner.clustering)
    stats = dict(inner.stats)
    stats["exact_copies"] = float(len(copies))
    stats["documents"] = float(len(order))
    stats["clusters"] = float(len(clusters))
    stats["pairs"] = float(len(pairs))
    return DedupResult(
        clusters=clusters,
        pairs=pairs,
        n_docs=len(order),
        method=f"exact+{inner.method}",
        threshold=inner.threshold,
        params=inner.params,
        stats=stats,
        doc_ids=order,
        clustering=inner.clustering,
    )
