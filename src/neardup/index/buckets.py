"""Verify the documents that share a bucket key: the pairs (or only the clusters) of a batch
of band keys, in one walk (native) or by the candidate list (numpy reference, same results).

A pair is verified in the first band where its two rows share a key, so each pair is checked
once without a list of candidates. In *join* mode the walk skips pairs whose rows are already
in one cluster: the clusters are the same as verifying every candidate (the components of the
accepted pairs do not depend on edges inside a component), at a fraction of the checks.

Before a merge of two sets the walk compares their *profiles*: each set's values counted by
their low 6 bits (64 one-byte cells per row). The intersection of two sets is at most the
sum of the smaller count of every cell, so a pair whose sum is below what the threshold
needs is rejected without looking at the sets. The test is exact (it never rejects a pair
that reaches the threshold): the pairs and clusters are the same as verifying every
candidate, and most candidates that share a band by chance (boilerplate) stop there.

In join mode the walk looks up each bucket member's cluster root once per bucket and keeps
those roots current as it merges (relabelling the merged root's members), so the pairs of a
large bucket whose rows are already in one cluster cost one comparison each, not two root
lookups (100k planted documents: 10.7M pairs in shared buckets, 7.2M of them inside one
cluster; the walk 0.23 -> 0.18-0.20 CPU-s).
"""

from __future__ import annotations

from itertools import pairwise
from typing import Any

import numpy as np
import numpy.typing as npt

from neardup._kernels import engine

__all__ = ["bucket_pairs_verified", "bucket_roots"]

U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]


def bucket_pairs_verified(
    keys: U64,
    *,
    threshold: float,
    values: U64 | npt.NDArray[np.uint32] | None = None,
    offsets: I64 | None = None,
    sigs: npt.NDArray[np.uint32] | None = None,
    join: bool = False,
    jobs: int = 1,
    profiles: tuple[npt.NDArray[np.uint8], npt.NDArray[np.bool_]] | None = None,
    masks: U64 | None = None,
) -> tuple[I64, I64, F64, I64, int]:
    """Accepted pairs and cluster roots of the rows of ``keys`` (``(n, bands)`` bucket keys).

    Args:
        keys: Bucket keys; rows sharing a key in some column are candidates.
        threshold: Accept a pair whose similarity is at least this.
        values: With ``offsets``, each row's sorted set of feature hashes (CSR, 64- or
            32-bit): exact Jaccard. Otherwise ``sigs`` (32-bit MinHash slots) give the estimate.
        offsets: See ``values``.
        sigs: ``(n, num_perm)`` folded signatures, when ``values`` is not given.
        join: Only the clusters are wanted (see the module docstring).
        profiles: ``set_profiles(values, offsets)``, when made already (a run makes them
            batch by batch on its sketching threads).
        masks: ``shared_rows(keys, threads)[0]`` of the ``buckets`` kernels, when made
            already: each band's rows that share its key with another row, the only rows the
            walk then groups (the results are the same).
        jobs: Threads that walk the bands (each its share of the band columns); the result
            does not depend on it. With ``join`` a thread's walk skips only the pairs its own
            union-find has joined, so split walks verify again some of what another one
            joined: on the 100k planted documents two threads take 0.30 CPU-s against one
            thread's 0.25, in 0.165 s of wall time against 0.255.

    Returns:
        ``(a, b, similarity, roots, verified)``: accepted pairs with ``a < b`` sorted (with
        ``join`` only those that joined two clusters in the walk), each row's cluster root
        (its smallest member) and how many pairs were verified (not counting the pairs that
        the size filter or the profiles rejected, nor in join mode those already joined).

    Examples:
        >>> keys = np.array([[1, 5], [1, 6], [2, 6]], np.uint64)
        >>> vals = np.array([1, 2, 3, 1, 2, 3, 1, 2, 4], np.uint64)
        >>> offs = np.array([0, 3, 6, 9])
        >>> found = bucket_pairs_verified(keys, threshold=0.5, values=vals, offsets=offs)
        >>> a, b, s, roots, _ = found
        >>> a.tolist(), b.tolist(), s.tolist(), roots.tolist()
        ([0, 1], [1, 2], [1.0, 0.5], [0, 0, 0])
    """
    keys, v, o, s, prof, big = _inputs(keys, values, offsets, sigs, profiles)
    exact = values is not None
    n = keys.shape[0]
    kern = engine.kernels("buckets")
    bands = keys.shape[1]
    threads = max(1, min(jobs, bands))
    cuts = np.linspace(0, bands, threads + 1).round().astype(int).tolist()
    ranges = [(lo, hi) for lo, hi in pairwise(cuts) if hi > lo] or [(0, bands)]

    def walk(r: tuple[int, int]) -> tuple[I64, I64, F64, I64, int]:
        return kern.bucket_pairs_verified(  # type: ignore[no-any-return]
            keys, v, o, s, prof, big, exact, float(threshold), join, *r, masks
        )

    if len(ranges) == 1:
        parts = [walk(ranges[0])]
    else:
        from concurrent.futures import ThreadPoolExecutor  # only with jobs > 1

        with ThreadPoolExecutor(len(ranges), thread_name_prefix="neardup-verify") as pool:
            parts = list(pool.map(walk, ranges))
    a = np.concatenate([p[0] for p in parts])
    b = np.concatenate([p[1] for p in parts])
    sim = np.concatenate([p[2] for p in parts])
    verified = sum(p[4] for p in parts)
    if len(parts) == 1:
        roots = parts[0][3]
    else:
        # each walk's clusters are right for its bands: join them through their roots
        rows = np.arange(n, dtype=np.int64)
        roots = engine.kernels("sets").components(
            n,
            np.concatenate([rows] * len(parts)),
            np.concatenate([p[3] for p in parts]),
        )
    order = np.lexsort((b, a))
    return a[order], b[order], sim[order], roots, int(verified)


def bucket_roots(
    keys: U64,
    *,
    threshold: float,
    values: U64 | npt.NDArray[np.uint32] | None = None,
    offsets: I64 | None = None,
    sigs: npt.NDArray[np.uint32] | None = None,
    jobs: int = 1,
    profiles: tuple[npt.NDArray[np.uint8], npt.NDArray[np.bool_]] | None = None,
    masks: U64 | None = None,
) -> I64:
    """Each row's cluster root (its smallest member): the roots of
    ``bucket_pairs_verified(..., join=True)[3]``, with the bands walked on ``jobs`` threads
    that share one union-find (a pair one thread has joined is skipped by the others, so the
    threads split the work of one walk instead of each testing again what the others
    joined). Arguments as :func:`bucket_pairs_verified`.

    Examples:
        >>> keys = np.array([[1, 5], [1, 6], [2, 6]], np.uint64)
        >>> vals = np.array([1, 2, 3, 1, 2, 3, 1, 2, 4], np.uint64)
        >>> offs = np.array([0, 3, 6, 9])
        >>> bucket_roots(keys, threshold=0.5, values=vals, offsets=offs, jobs=2).tolist()
        [0, 0, 0]
    """
    keys, v, o, s, prof, big = _inputs(keys, values, offsets, sigs, profiles)
    kern = engine.kernels("buckets")
    roots: I64 = kern.bucket_roots(
        keys, v, o, s, prof, big, values is not None, float(threshold), max(1, jobs), masks
    )
    return roots


def _inputs(
    keys: U64,
    values: U64 | npt.NDArray[np.uint32] | None,
    offsets: I64 | None,
    sigs: npt.NDArray[np.uint32] | None,
    profiles: tuple[npt.NDArray[np.uint8], npt.NDArray[np.bool_]] | None,
) -> tuple[U64, npt.NDArray[Any], I64, npt.NDArray[np.uint32], Any, Any]:
    """The walk's arrays, contiguous, with the set profiles (exact: ``profiles`` or made
    here) or empty ones."""
    keys = np.ascontiguousarray(keys, dtype=np.uint64)
    n = keys.shape[0]
    exact = values is not None
    # 32-bit sets (:func:`~neardup.sketch.sets.unique_per_doc32`) stay 32-bit
    v = np.ascontiguousarray(values if values is not None else np.empty(0, np.uint64))
    if v.dtype not in (np.uint32, np.uint64):
        v = v.astype(np.uint64)
    o = np.ascontiguousarray(offsets if offsets is not None else np.zeros(n + 1), dtype=np.int64)
    s = np.ascontiguousarray(sigs if sigs is not None else np.empty((n, 0)), dtype=np.uint32)
    if exact and len(o) != n + 1:
        raise ValueError("offsets must have one entry more than keys has rows")
    if not exact and s.shape[0] != n:
        raise ValueError("sigs must have one row per row of keys")
    if exact and profiles is not None:
        prof, big = (np.ascontiguousarray(x) for x in profiles)
    elif exact:
        prof, big = engine.kernels("buckets").set_profiles(v, o)
    else:
        prof, big = np.empty((n, 0), np.uint8), np.zeros(n, np.bool_)
    return keys, v, o, s, prof, big
