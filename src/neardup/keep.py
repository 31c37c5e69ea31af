"""Which records a deduplicated copy keeps, and which kept record each removed one is removed for.

The rule (docs/dedup.md, "Which records are removed"): inside each cluster the members are
taken in the order of the keep rule (``first`` / ``representative``: input order; ``longest``:
most characters first, ties by input order); the first one not yet taken is kept and takes
every member it has an accepted pair with (:func:`neardup.cluster.kept_roots`). So every
removed record is within the threshold of the record kept for it, however the clusters were
formed; a cluster that chains (A ~ B ~ C with A and C apart) keeps more than one record. Where
every member has a pair with the first one in that order, that one alone is kept, as before.
``within_threshold=False`` is the one-per-cluster rule: the whole cluster goes for one record,
chains included.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import numpy.typing as npt

from neardup.cluster import kept_roots
from neardup.errors import ConfigError
from neardup.report import DedupResult, PairList
from neardup.types import DocId

__all__ = ["KEEP_RULES", "kept_for"]

#: The ``keep`` rules.
KEEP_RULES = ("first", "representative", "longest")


def _check(keep: str, sizes: Mapping[DocId, int] | None) -> None:
    if keep not in KEEP_RULES:
        raise ConfigError(f"keep must be one of {', '.join(KEEP_RULES)}, got {keep!r}")
    if keep == "longest" and sizes is None:
        raise ConfigError("keep='longest' needs the document sizes")


def _pair_rows(
    result: DedupResult, row: Mapping[DocId, int]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    if isinstance(result.pairs, PairList):
        a, b, s, _ = result.pairs.arrays
        return a, b, s
    pairs = list(result.pairs)
    a = np.fromiter((row[p.a] for p in pairs), dtype=np.int64, count=len(pairs))
    b = np.fromiter((row[p.b] for p in pairs), dtype=np.int64, count=len(pairs))
    s = np.fromiter((p.similarity for p in pairs), dtype=np.float64, count=len(pairs))
    return a, b, s


def kept_for(
    result: DedupResult,
    *,
    keep: str = "first",
    sizes: Mapping[DocId, int] | None = None,
    within_threshold: bool = True,
) -> dict[DocId, tuple[int, DocId, float | None]]:
    """For every clustered record: ``(cluster id, the record kept for it, its similarity to
    that record)``; a kept record maps to itself with similarity ``None``.

    Args:
        result: A dedup result with its pairs (``dedup(pairs=True)``, the default).
        keep: ``first`` / ``representative`` (input order) or ``longest`` (largest
            ``sizes`` value first; ties: the earlier).
        sizes: Document sizes, needed for ``longest``.
        within_threshold: Remove a record only for a kept record it has an accepted pair
            with (the default, see the module docstring); ``False``: one record kept per
            cluster, every other member removed for it (chains too; the similarity is
            ``None`` where the result holds no pair between them).

    Raises:
        ConfigError: unknown ``keep``, ``longest`` without sizes, or ``within_threshold``
            with a result that has clusters but no pairs (run dedup with ``pairs=True``).

    Examples:
        >>> from neardup.pipeline import dedup
        >>> r = dedup(["a b c d e f", "a b c d e f", "z"], method="simhash")
        >>> kept_for(r)
        {'0': (0, '0', None), '1': (0, '0', 1.0)}
    """
    _check(keep, sizes)
    if not result.clusters:
        return {}
    ids = result.doc_ids
    row = {d: k for k, d in enumerate(ids)}
    n = len(ids)
    roots = np.arange(n, dtype=np.int64)
    cluster_of = np.full(n, -1, dtype=np.int64)
    for c in result.clusters:
        rows = np.fromiter((row[m] for m in c.members), dtype=np.int64, count=c.size)
        roots[rows] = rows.min()
        cluster_of[rows] = c.id
    a, b, s = _pair_rows(result, row)
    order = None
    if keep == "longest":
        assert sizes is not None
        size = np.fromiter((sizes.get(d, 0) for d in ids), dtype=np.int64, count=n)
        order = np.lexsort((np.arange(n), -size))
    if within_threshold:
        if len(a) == 0:
            raise ConfigError(
                "the result has clusters but no pairs; run dedup with pairs=True, or pass "
                "within_threshold=False to keep one record per cluster"
            )
        kept, to_kept = kept_roots(roots, a, b, s, order)
        to = to_kept.tolist()
    else:
        rank = np.arange(n) if order is None else np.argsort(order, kind="stable")
        best = np.full(n, n, dtype=np.int64)  # per root, the best rank of its members
        np.minimum.at(best, roots, rank)
        perm = np.arange(n) if order is None else order
        kept = perm[best[roots]]
        # the similarity of a member to its kept one, where the result holds that pair
        to_kept = np.full(n, np.nan)
        for x, y in ((a, b), (b, a)):
            hit = kept[x] == y
            np.fmax.at(to_kept, x[hit], s[hit])
        to = to_kept.tolist()
    kept_l = kept.tolist()
    out: dict[DocId, tuple[int, DocId, float | None]] = {}
    for k in np.flatnonzero(cluster_of >= 0).tolist():
        w = kept_l[k]
        sim = None if w == k or to[k] != to[k] else float(to[k])
        out[ids[k]] = (int(cluster_of[k]), ids[w], sim)
    return out
