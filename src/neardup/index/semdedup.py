"""K-means-partitioned all-pairs cosine search for large corpora (SemDeDup).

Abbas, Tirumala, Simig, Ganguli and Morcos 2023, "SemDeDup: Data-efficient learning at
web-scale through semantic deduplication": cluster the embeddings with k-means, then compare
vectors only within their cluster. Near-duplicates (cosine >= 0.9) are close, so they almost
always share the nearest centroid; here a vector also joins its second-nearest cluster when
that centroid is nearly as close (``margin``), which recovers most pairs that straddle a
boundary. Every reported pair is scored exactly: no false positives, only (rare) misses;
docs/embeddings.md gives the measured recall.

Work and memory are bounded whatever ``n``: spherical k-means (unit centroids, cosine
assignment) is trained on a seeded sample of at most ``sample`` vectors, vectors are assigned
in blocks of ``block_size`` rows, and each cluster is searched with the blocked exact kernel of
:func:`neardup.index.vectors.cosine_pairs`; a cluster larger than ``max_cluster`` is
partitioned again, recursively. Beyond the ``(n, dim)`` float32 matrix itself and the pairs
found, memory is ``O(block_size * (k + block_size))`` floats. Time is about
``n * (k + cluster size) * dim`` multiply-adds instead of ``n**2 * dim / 2``.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from neardup.errors import ConfigError
from neardup.index._cosine import pairs_blocks

__all__ = ["partitioned_pairs", "spherical_kmeans"]

F32 = npt.NDArray[np.float32]
I64 = npt.NDArray[np.int64]


def _nearest(v: F32, centroids: F32, block_size: int, probes: int) -> tuple[I64, F32]:
    """Per row, the ``probes`` most similar centroids (best first) and their similarities."""
    n = v.shape[0]
    k = centroids.shape[0]
    p = min(probes, k)
    idx = np.empty((n, p), dtype=np.int64)
    sim = np.empty((n, p), dtype=np.float32)
    for start in range(0, n, block_size):
        s = v[start : start + block_size] @ centroids.T
        if p == 1:
            best = np.argmax(s, axis=1)[:, None]
        else:
            part = np.argpartition(-s, p - 1, axis=1)[:, :p]
            order = np.argsort(-np.take_along_axis(s, part, axis=1), axis=1, kind="stable")
            best = np.take_along_axis(part, order, axis=1)
        idx[start : start + len(s)] = best
        sim[start : start + len(s)] = np.take_along_axis(s, best, axis=1)
    return idx, sim


def spherical_kmeans(
    vectors: F32,
    k: int,
    *,
    iterations: int = 10,
    sample: int = 65_536,
    seed: int = 0,
    block_size: int = 4096,
) -> F32:
    """Unit-length k-means centroids of unit rows (cosine assignment), from a seeded sample.

    Initial centroids are ``k`` distinct sample rows; an empty cluster is re-seeded with the
    sample row farthest from its centroid.

    Args:
        vectors: ``(n, dim)`` unit rows, float32.
        k: Number of centroids (at most the sample size).
        iterations: Lloyd iterations.
        sample: Rows drawn (without replacement) to train on.
        seed: Seed of the sample and the initial centroids.
        block_size: Rows assigned per matrix product.

    Returns:
        ``(k, dim)`` float32 unit centroids.

    Examples:
        >>> x = np.array([[1, 0], [0.99, 0.1], [0, 1], [0.1, 0.99]], np.float32)
        >>> x /= np.linalg.norm(x, axis=1, keepdims=True)
        >>> c = spherical_kmeans(x, 2, seed=1)
        >>> sorted(round(float(v), 1) for v in np.abs(c[:, 0]))
        [0.1, 1.0]
    """
    rng = np.random.default_rng(seed)
    n = vectors.shape[0]
    rows = np.sort(rng.choice(n, size=min(n, sample), replace=False)) if n > sample else None
    train = vectors if rows is None else vectors[rows]
    k = max(1, min(k, train.shape[0]))
    centroids = np.ascontiguousarray(train[rng.choice(train.shape[0], size=k, replace=False)])
    for _ in range(iterations):
        assign, sim = _nearest(train, centroids, block_size, 1)
        label = assign[:, 0]
        counts = np.bincount(label, minlength=k)
        order = np.argsort(label, kind="stable")
        starts = np.zeros(k, dtype=np.int64)
        np.cumsum(counts[:-1], out=starts[1:])
        sums = np.zeros((k, train.shape[1]), dtype=np.float64)
        filled = counts > 0
        sums[filled] = np.add.reduceat(train[order], starts[filled], axis=0, dtype=np.float64)
        empty = np.flatnonzero(counts == 0)
        if empty.size:
            far = np.argsort(sim[:, 0], kind="stable")[: empty.size]
            sums[empty] = train[far]
        norms = np.linalg.norm(sums, axis=1)
        norms[norms == 0] = 1.0
        centroids = np.ascontiguousarray((sums / norms[:, None]).astype(np.float32))
    return centroids


def partitioned_pairs(
    vectors: F32,
    threshold: float,
    *,
    cluster_size: int = 2048,
    max_cluster: int = 16_384,
    margin: float = 0.03,
    iterations: int = 10,
    sample: int = 65_536,
    seed: int = 0,
    block_size: int = 2048,
) -> tuple[I64, I64, F32]:
    """Pairs ``i < j`` of unit rows with cosine >= ``threshold``, searched within k-means cells.

    Args:
        vectors: ``(n, dim)`` unit rows, float32 (as :class:`~neardup.index.vectors.VectorIndex`
            stores them).
        threshold: Minimum cosine similarity.
        cluster_size: Target vectors per cluster: ``k = ceil(n / cluster_size)``.
        max_cluster: A cluster larger than this is partitioned again.
        margin: A vector also joins its second-nearest cluster when that centroid's
            similarity is within ``margin`` of the nearest one's (0 disables).
        iterations: k-means iterations.
        sample: k-means training sample size.
        seed: Seed of k-means.
        block_size: Tile side of the exact search inside a cluster.

    Returns:
        ``(i, j, similarity)`` sorted by ``(i, j)``, each pair once.

    Raises:
        ConfigError: A size parameter is not positive or ``margin`` is negative.

    Examples:
        >>> rng = np.random.default_rng(0)
        >>> x = rng.standard_normal((500, 16)).astype(np.float32)
        >>> x[250] = x[3] + 0.01
        >>> x /= np.linalg.norm(x, axis=1, keepdims=True)
        >>> i, j, s = partitioned_pairs(x, 0.99, cluster_size=64)
        >>> list(zip(i.tolist(), j.tolist()))
        [(3, 250)]
    """
    for name, value in {
        "cluster_size": cluster_size,
        "max_cluster": max_cluster,
        "iterations": iterations,
        "sample": sample,
        "block_size": block_size,
    }.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ConfigError(f"{name} must be a positive integer, got {value!r}")
    if not margin >= 0:
        raise ConfigError(f"margin must be >= 0, got {margin!r}")
    rows = np.arange(vectors.shape[0], dtype=np.int64)
    found: list[tuple[I64, I64, F32]] = []
    _search(
        vectors,
        rows,
        threshold,
        found,
        cluster_size,
        max_cluster,
        margin,
        iterations,
        sample,
        seed,
        block_size,
        depth=0,
    )
    n = vectors.shape[0]
    if not found:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.float32)
    i = np.concatenate([f[0] for f in found])
    j = np.concatenate([f[1] for f in found])
    s = np.concatenate([f[2] for f in found])
    packed = i * n + j
    order = np.argsort(packed, kind="stable")
    packed, s = packed[order], s[order]
    keep = np.ones(len(packed), dtype=bool)
    keep[1:] = packed[1:] != packed[:-1]
    packed, s = packed[keep], s[keep]
    return packed // n, packed % n, s


def _search(
    vectors: F32,
    rows: I64,
    threshold: float,
    found: list[tuple[I64, I64, F32]],
    cluster_size: int,
    max_cluster: int,
    margin: float,
    iterations: int,
    sample: int,
    seed: int,
    block_size: int,
    *,
    depth: int,
) -> None:
    if len(rows) <= max_cluster or depth >= 8:
        sub = np.ascontiguousarray(vectors[rows])
        for a, b, s in pairs_blocks(sub, threshold, block_size):
            found.append((rows[a], rows[b], s))
        return
    whole = len(rows) == vectors.shape[0]  # the top level: no copy of the whole matrix
    v = vectors if whole else np.ascontiguousarray(vectors[rows])
    k = max(2, math.ceil(len(rows) / cluster_size))
    centroids = spherical_kmeans(
        v, k, iterations=iterations, sample=sample, seed=seed + depth, block_size=block_size
    )
    near, sim = _nearest(v, centroids, block_size, 2 if margin > 0 else 1)
    member = [near[:, 0]]
    local = [np.arange(len(rows), dtype=np.int64)]
    if near.shape[1] > 1:
        second = np.flatnonzero(sim[:, 0] - sim[:, 1] <= margin)
        member.append(near[second, 1])
        local.append(second)
    labels = np.concatenate(member)
    which = np.concatenate(local)
    order = np.argsort(labels, kind="stable")
    labels, which = labels[order], which[order]
    bounds = np.searchsorted(labels, np.arange(k + 1))
    if int(np.max(np.diff(bounds))) >= len(rows):  # k-means made no split: stop recursing
        depth = 8
    for c in range(k):
        cell = np.sort(which[bounds[c] : bounds[c + 1]])
        if len(cell) > 1:
            _search(
                vectors,
                rows[cell],
                threshold,
                found,
                cluster_size,
                max_cluster,
                margin,
                iterations,
                sample,
                seed,
                block_size,
                depth=depth + 1,
            )
