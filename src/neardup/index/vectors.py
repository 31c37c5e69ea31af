"""Cosine search over embedding matrices [extra ``embeddings`` for the approximate method].

Two methods, same results shape:

- **exact**: blocked matrix products in numpy. Rows are L2-normalized once; all-pairs compares
  tiles of ``block_size x block_size`` rows (the upper triangle only), so memory stays at
  ``block_size**2`` floats whatever the number of vectors. Time is quadratic.
- **approx**: an HNSW graph (Malkov and Yashunin 2018, "Efficient and robust approximate nearest
  neighbor search using Hierarchical Navigable Small World graphs") from usearch. All-pairs
  asks each vector for its ``neighbors`` nearest and keeps those at or above the threshold;
  similarities of the kept pairs are recomputed exactly, so there are no false positives, only
  (rare) misses: measured recall at threshold 0.9 on 20,000 clustered 384-d vectors is in
  docs/embeddings.md.

- **partitioned** (all-pairs only): K-means-partitioned search (SemDeDup, Abbas et al. 2023;
  :mod:`neardup.index.semdedup`): vectors are compared only within their k-means cell (and
  the next one when nearly as close); bounded work and memory for millions of vectors.

``method="auto"`` picks exact up to ``approx_above`` vectors; beyond, top-k queries use approx
and all-pairs uses partitioned (faster than HNSW all-pairs and as exact per pair). The index
holds every vector in memory (``4 * dim`` bytes each, plus the HNSW graph once built).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator
from typing import Any, Literal, TypeAlias

import numpy as np
import numpy.typing as npt

from neardup._extras import require_extra
from neardup.errors import ConfigError, FormatError, InputError
from neardup.index import _serial
from neardup.index._cosine import pairs_blocks
from neardup.index.semdedup import partitioned_pairs
from neardup.sketch.sets import sorted_unique

__all__ = ["Method", "VectorIndex", "cosine_pairs", "cosine_top_k", "normalize_rows"]

F32 = npt.NDArray[np.float32]
I64 = npt.NDArray[np.int64]
Method: TypeAlias = Literal["auto", "exact", "approx", "partitioned"]

_METHODS = ("auto", "exact", "approx", "partitioned")


def _check_block(block_size: int) -> None:
    if isinstance(block_size, bool) or not isinstance(block_size, int) or block_size < 1:
        raise ConfigError(f"block_size must be a positive integer, got {block_size!r}")


def _check_threshold(threshold: float) -> float:
    value = float(threshold)
    if not -1.0 <= value <= 1.0:
        raise ConfigError(f"threshold must be a cosine similarity in [-1, 1], got {threshold!r}")
    return value


def normalize_rows(vectors: npt.ArrayLike) -> F32:
    """Return a float32 copy of a 2-D matrix with every row scaled to unit length.

    Args:
        vectors: Shape ``(n, dim)``, finite values, no all-zero row.

    Returns:
        C-contiguous float32 ``(n, dim)``.

    Raises:
        InputError: Not 2-D, non-finite values, or a zero row (cosine is undefined for it).

    Examples:
        >>> normalize_rows([[3.0, 4.0]]).tolist()
        [[0.6000000238418579, 0.800000011920929]]
    """
    arr = np.array(vectors, dtype=np.float32, copy=True)
    if arr.ndim != 2 or arr.shape[1] == 0:
        raise InputError(f"vectors must be a 2-D (n, dim) matrix with dim > 0, got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise InputError("vectors hold NaN or infinity; check the embedding provider's output")
    norms = np.linalg.norm(arr.astype(np.float64), axis=1)
    zero = np.flatnonzero(norms == 0.0)
    if zero.size:
        raise InputError(
            f"row {int(zero[0])} is a zero vector, for which cosine is undefined; drop it "
            "(an empty text?) before indexing"
        )
    arr /= norms[:, None].astype(np.float32)
    return np.ascontiguousarray(arr)


def cosine_top_k(
    queries: npt.ArrayLike, vectors: npt.ArrayLike, k: int, *, block_size: int = 4096
) -> tuple[I64, F32]:
    """Exact cosine top-k of each query among ``vectors``, by blocked matrix products.

    Args:
        queries: ``(q, dim)`` matrix.
        vectors: ``(n, dim)`` matrix.
        k: Neighbours per query; at most ``n`` are returned.
        block_size: Rows of ``vectors`` scored at once (memory ``q * block_size`` floats).

    Returns:
        ``(indices, similarities)``, both ``(q, min(k, n))``, best first; ties by lower index.

    Raises:
        ConfigError: ``k`` or ``block_size`` is not positive.
        InputError: Bad shapes, mismatched dimensions, non-finite or zero rows.

    Examples:
        >>> idx, sim = cosine_top_k([[1.0, 0.0]], [[0.0, 1.0], [1.0, 0.1], [1.0, 0.0]], 2)
        >>> idx.tolist(), [[round(float(x), 3) for x in row] for row in sim]
        ([[2, 1]], [[1.0, 0.995]])
    """
    _check_block(block_size)
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ConfigError(f"k must be a positive integer, got {k!r}")
    q = normalize_rows(queries)
    v = normalize_rows(vectors)
    if q.shape[1] != v.shape[1]:
        raise InputError(f"queries have dimension {q.shape[1]}, vectors {v.shape[1]}")
    return _top_k_normalized(q, v, k, block_size)


def _top_k_normalized(q: F32, v: F32, k: int, block_size: int) -> tuple[I64, F32]:
    n = v.shape[0]
    kk = min(k, n)
    best_idx = np.zeros((q.shape[0], 0), dtype=np.int64)
    best_sim = np.zeros((q.shape[0], 0), dtype=np.float32)
    for start in range(0, n, block_size):
        sims = q @ v[start : start + block_size].T
        idx = np.broadcast_to(np.arange(start, start + sims.shape[1], dtype=np.int64), sims.shape)
        all_sim = np.concatenate([best_sim, sims], axis=1)
        all_idx = np.concatenate([best_idx, idx], axis=1)
        if all_sim.shape[1] > kk:
            part = np.argpartition(-all_sim, kk - 1, axis=1)[:, :kk]
            all_sim = np.take_along_axis(all_sim, part, axis=1)
            all_idx = np.take_along_axis(all_idx, part, axis=1)
        best_sim, best_idx = all_sim, all_idx
    order = np.lexsort((best_idx, -best_sim), axis=1)
    sim = np.clip(np.take_along_axis(best_sim, order, axis=1), -1.0, 1.0)
    return np.take_along_axis(best_idx, order, axis=1), sim.astype(np.float32)


def cosine_pairs(
    vectors: npt.ArrayLike, threshold: float, *, block_size: int = 2048, normalized: bool = False
) -> tuple[I64, I64, F32]:
    """Every pair ``i < j`` with cosine similarity at or above ``threshold``, exactly.

    The upper triangle is scored in ``block_size x block_size`` tiles (memory about
    ``4 * block_size**2`` bytes plus the pairs found); time is ``O(n**2 * dim)``.

    Args:
        vectors: ``(n, dim)`` matrix.
        threshold: Minimum cosine similarity, in [-1, 1].
        block_size: Tile side.
        normalized: Rows are already unit length and float32 (skips a copy).

    Returns:
        ``(i, j, similarity)`` arrays sorted by ``(i, j)``.

    Raises:
        ConfigError: Bad threshold or block_size.
        InputError: Bad shape, non-finite values or zero rows.

    Examples:
        >>> i, j, s = cosine_pairs([[1, 0], [1, 0.1], [0, 1]], 0.9)
        >>> i.tolist(), j.tolist(), [round(float(x), 3) for x in s]
        ([0], [1], [0.995])
    """
    _check_block(block_size)
    t = _check_threshold(threshold)
    v = vectors if normalized and isinstance(vectors, np.ndarray) else normalize_rows(vectors)
    assert isinstance(v, np.ndarray)
    parts = list(pairs_blocks(v.astype(np.float32, copy=False), t, block_size))
    if not parts:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.float32)
    return (
        np.concatenate([p[0] for p in parts]),
        np.concatenate([p[1] for p in parts]),
        np.concatenate([p[2] for p in parts]),
    )


def _match_arrays(matches: Any, nq: int) -> tuple[I64, F32, I64]:
    """usearch results as ``(keys, distances, counts)`` arrays of ``nq`` rows.

    usearch returns ``Matches`` (1-D, only valid hits) for a single query row and
    ``BatchMatches`` (padded, with ``counts``) for several.
    """
    keys = np.asarray(matches.keys).astype(np.int64).reshape(nq, -1)
    dist = np.asarray(matches.distances, dtype=np.float32).reshape(nq, -1)
    raw_counts = getattr(matches, "counts", None)
    if raw_counts is None:
        counts = np.full(nq, keys.shape[1], dtype=np.int64)
    else:
        counts = np.asarray(raw_counts, dtype=np.int64).reshape(nq)
    return keys, dist, counts


class VectorIndex:
    """Cosine similarity search over keyed vectors: top-k queries and all-pairs at a threshold.

    Args:
        dim: Vector length (384 for the default local model).
        metric: Only ``"cosine"``; vectors are L2-normalized when added.
        method: ``"exact"`` (numpy blocks), ``"approx"`` (usearch HNSW), ``"partitioned"``
            (k-means cells, all-pairs only) or ``"auto"`` (exact up to ``approx_above``
            vectors, then approx for top-k and partitioned for all-pairs).
        approx_above: Size above which ``"auto"`` uses the approximate index.
        block_size: Tile side of the exact method.
        neighbors: Approximate all-pairs asks each vector for this many neighbours; a vector
            with more partners above the threshold than this may miss some.
        connectivity: HNSW graph degree (usearch ``connectivity``, "M").
        expansion_add: HNSW build beam ("efConstruction").
        expansion_search: HNSW search beam ("ef"); raised to at least ``neighbors``.
        threads: Threads for usearch (0 = all cores).

    Keys are any hashable; adding an existing key replaces its vector. The index holds all
    vectors in memory. Results are ``(key, similarity)`` or ``(key_a, key_b, similarity)`` with
    ``key_a`` added before ``key_b``.

    Examples:
        >>> idx = VectorIndex(2)
        >>> idx.add("a", [1.0, 0.0])
        >>> idx.add_many(["b", "c"], [[1.0, 0.1], [0.0, 1.0]])
        >>> [(k, round(s, 3)) for k, s in idx.query([1.0, 0.0], k=2)]
        [('a', 1.0), ('b', 0.995)]
        >>> [(a, b, round(s, 3)) for a, b, s in idx.pairs(0.9)]
        [('a', 'b', 0.995)]
    """

    def __init__(
        self,
        dim: int,
        *,
        metric: Literal["cosine"] = "cosine",
        method: Method = "auto",
        approx_above: int = 50_000,
        block_size: int = 2048,
        neighbors: int = 32,
        connectivity: int = 16,
        expansion_add: int = 128,
        expansion_search: int = 64,
        threads: int = 0,
    ) -> None:
        if isinstance(dim, bool) or not isinstance(dim, int) or dim < 1:
            raise ConfigError(f"dim must be a positive integer, got {dim!r}")
        if metric != "cosine":
            raise ConfigError(f"metric must be 'cosine', got {metric!r}")
        if method not in _METHODS:
            raise ConfigError(f"method must be one of {_METHODS}, got {method!r}")
        _check_block(block_size)
        ints = {
            "approx_above": approx_above,
            "neighbors": neighbors,
            "connectivity": connectivity,
            "expansion_add": expansion_add,
            "expansion_search": expansion_search,
        }
        for name, value in ints.items():
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"{name} must be a positive integer, got {value!r}")
        if isinstance(threads, bool) or not isinstance(threads, int) or threads < 0:
            raise ConfigError(f"threads must be >= 0 (0 = all cores), got {threads!r}")
        self.dim = dim
        self.metric = metric
        self.method: Method = method
        self.approx_above = approx_above
        self.block_size = block_size
        self.neighbors = neighbors
        self.connectivity = connectivity
        self.expansion_add = expansion_add
        self.expansion_search = expansion_search
        self.threads = threads
        self._keys: list[Hashable] = []
        self._rows: dict[Hashable, int] = {}
        self._data: F32 = np.zeros((16, dim), dtype=np.float32)
        self._ann: Any = None  # usearch.index.Index once built (usearch is untyped)
        self._ann_count = 0

    def __len__(self) -> int:
        return len(self._keys)

    def __getstate__(self) -> dict[str, object]:
        # the usearch graph does not pickle; it is rebuilt from the vectors on first use
        return {**self.__dict__, "_ann": None, "_ann_count": 0}

    def to_bytes(self) -> bytes:
        """Serialize: parameters, keys (JSON) and the unit vectors (``b"NDVI"``).

        The approximate graph is not saved; it is rebuilt from the vectors when needed.

        Raises:
            InputError: A key is not a str or int (only those can be saved; pickle keeps any).
        """
        if not all(isinstance(k, str | int) and not isinstance(k, bool) for k in self._keys):
            raise InputError("only str and int keys can be saved; map other keys to str first")
        params = {
            name: getattr(self, name)
            for name in (
                "dim",
                "metric",
                "method",
                "approx_above",
                "block_size",
                "neighbors",
                "connectivity",
                "expansion_add",
                "expansion_search",
                "threads",
            )
        }
        meta = {"params": params, "keys": self._keys}
        return _serial.dump(b"NDVI", 1, meta, [self._data[: len(self._keys)]])

    @classmethod
    def from_bytes(cls, data: bytes) -> VectorIndex:
        """Read :meth:`to_bytes` output.

        Raises:
            FormatError: Malformed or truncated data, or an unknown version.
        """
        meta, arrays = _serial.load(data, b"NDVI", 1, "VectorIndex")
        params, keys = meta.get("params"), meta.get("keys")
        if not isinstance(params, dict) or not isinstance(keys, list) or len(arrays) != 1:
            raise FormatError("saved VectorIndex is truncated or corrupt")
        try:
            index = cls(**params)
        except (ConfigError, TypeError) as exc:
            raise FormatError(f"saved VectorIndex has bad parameters: {exc}") from None
        vectors = arrays[0]
        if vectors.dtype != np.float32 or vectors.shape != (len(keys), index.dim):
            raise FormatError("saved VectorIndex is truncated or corrupt")
        if len(set(keys)) != len(keys):
            raise FormatError("saved VectorIndex is truncated or corrupt")
        index._data = np.zeros((max(16, len(keys)), index.dim), dtype=np.float32)
        index._data[: len(keys)] = vectors
        index._keys = list(keys)
        index._rows = {k: i for i, k in enumerate(keys)}
        return index

    def __contains__(self, key: object) -> bool:
        return key in self._rows

    @property
    def vectors(self) -> F32:
        """The stored unit vectors, ``(len(self), dim)``, in insertion order (read-only view)."""
        view = self._data[: len(self._keys)]
        view.flags.writeable = False
        return view

    @property
    def keys(self) -> list[Hashable]:
        """The keys in insertion order (a copy)."""
        return list(self._keys)

    def add(self, key: Hashable, vector: npt.ArrayLike) -> None:
        """Add one vector under ``key`` (replacing an existing key's vector).

        Raises:
            InputError: Wrong dimension, non-finite values or a zero vector.
        """
        self.add_many([key], np.asarray(vector, dtype=np.float32).reshape(1, -1))

    def add_many(self, keys: Iterable[Hashable], vectors: npt.ArrayLike) -> None:
        """Add a batch: one key per row of ``vectors`` (``(n, dim)``).

        Raises:
            InputError: Key and row counts differ, a key repeats within the batch, wrong
                dimension, non-finite values or zero rows.
        """
        key_list = list(keys)
        arr = np.asarray(vectors, dtype=np.float32)
        if arr.ndim != 2 or arr.shape[0] != len(key_list):
            raise InputError(
                f"add_many needs one row per key: {len(key_list)} keys, vectors of shape "
                f"{arr.shape}; pass an (n, dim) matrix"
            )
        if not key_list:
            return
        matrix = normalize_rows(arr)
        if matrix.shape[1] != self.dim:
            raise InputError(
                f"vectors have dimension {matrix.shape[1]}, the index {self.dim}; embed with the "
                "model the index was made for"
            )
        if len(set(key_list)) != len(key_list):
            raise InputError("keys repeat within one add_many batch; pass each key once")
        for key, row in zip(key_list, matrix, strict=True):
            at = self._rows.get(key)
            if at is not None:
                self._data[at] = row
                self._ann = None  # a replaced vector invalidates the graph
                continue
            n = len(self._keys)
            if n == self._data.shape[0]:
                grown = np.zeros((2 * n, self.dim), dtype=np.float32)
                grown[:n] = self._data[:n]
                self._data = grown
            self._data[n] = row
            self._rows[key] = n
            self._keys.append(key)

    def _resolve(self, method: Method | None) -> Literal["exact", "approx"]:
        chosen = self.method if method is None else method
        if chosen not in _METHODS:
            raise ConfigError(f"method must be one of {_METHODS}, got {chosen!r}")
        if chosen == "auto":
            return "approx" if len(self._keys) > self.approx_above else "exact"
        if chosen == "partitioned":
            raise ConfigError("method 'partitioned' is for pairs(); use exact or approx for top-k")
        return chosen

    def _graph(self) -> Any:
        """Build or extend the usearch HNSW index over the stored vectors (keys = row numbers)."""
        usearch_index = require_extra("embeddings", "usearch.index")
        n = len(self._keys)
        if self._ann is None:
            self._ann = usearch_index.Index(
                ndim=self.dim,
                metric="cos",
                dtype="f32",
                connectivity=self.connectivity,
                expansion_add=self.expansion_add,
                expansion_search=max(self.expansion_search, self.neighbors),
            )
            self._ann_count = 0
        if self._ann_count < n:
            rows = np.arange(self._ann_count, n, dtype=np.uint64)
            self._ann.add(rows, self._data[self._ann_count : n], threads=self.threads)
            self._ann_count = n
        return self._ann

    def _query_matrix(self, queries: npt.ArrayLike) -> F32:
        arr = np.asarray(queries, dtype=np.float32)
        q = normalize_rows(arr.reshape(1, -1) if arr.ndim == 1 else arr)
        if q.shape[1] != self.dim:
            raise InputError(f"queries have dimension {q.shape[1]}, the index {self.dim}")
        return q

    def top_k(
        self, queries: npt.ArrayLike, k: int = 10, *, method: Method | None = None
    ) -> list[list[tuple[Hashable, float]]]:
        """The ``k`` most similar stored vectors of each query row, best first.

        Args:
            queries: ``(q, dim)`` or one ``(dim,)`` vector.
            k: Neighbours per query.
            method: Overrides the index's method for this call.

        Returns:
            Per query, a list of ``(key, similarity)``.

        Raises:
            ConfigError: ``k`` is not positive.
            InputError: Wrong dimension, non-finite or zero query rows.
        """
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ConfigError(f"k must be a positive integer, got {k!r}")
        q = self._query_matrix(queries)
        n = len(self._keys)
        if n == 0:
            return [[] for _ in range(q.shape[0])]
        if self._resolve(method) == "exact":
            idx, sim = _top_k_normalized(q, self._data[:n], k, self.block_size)
            return [
                [(self._keys[int(i)], float(s)) for i, s in zip(ri, rs, strict=True)]
                for ri, rs in zip(idx, sim, strict=True)
            ]
        return [list(hits) for hits in self._approx_search(q, min(k, n))]

    def _approx_search(self, q: F32, count: int) -> Iterator[list[tuple[Hashable, float]]]:
        graph = self._graph()
        matches = graph.search(q, count, threads=self.threads)
        keys, _, counts = _match_arrays(matches, q.shape[0])
        for qi in range(q.shape[0]):
            rows = keys[qi, : int(counts[qi])]
            sims = np.clip(self._data[rows] @ q[qi], -1.0, 1.0)
            order = np.lexsort((rows, -sims))
            yield [(self._keys[int(rows[o])], float(sims[o])) for o in order]

    def query(
        self,
        vector: npt.ArrayLike,
        k: int = 10,
        *,
        threshold: float | None = None,
        method: Method | None = None,
    ) -> list[tuple[Hashable, float]]:
        """The ``k`` most similar stored vectors to one vector, optionally at or above a threshold.

        Returns:
            ``(key, similarity)`` pairs, best first.

        Raises:
            ConfigError: Bad ``k`` or threshold.
            InputError: Wrong dimension, non-finite or zero vector.
        """
        hits = self.top_k(np.asarray(vector, dtype=np.float32).reshape(1, -1), k, method=method)[0]
        if threshold is None:
            return hits
        t = _check_threshold(threshold)
        return [(key, s) for key, s in hits if s >= t]

    def pairs(
        self, threshold: float = 0.9, *, method: Method | None = None
    ) -> Iterator[tuple[Hashable, Hashable, float]]:
        """All pairs of stored vectors with cosine similarity at or above ``threshold``.

        Exact: every pair, sorted by insertion order of ``(key_a, key_b)``, memory bounded by
        ``block_size``. Partitioned (``"auto"`` above ``approx_above`` vectors): pairs within
        k-means cells, scored exactly, same order (recall below 1 is possible). Approx: each
        vector's ``neighbors`` nearest are checked, similarities recomputed exactly (no false
        positives; recall below 1 is possible), same order.

        Args:
            threshold: Minimum cosine similarity in [-1, 1].
            method: Overrides the index's method for this call.

        Yields:
            ``(key_a, key_b, similarity)`` with ``key_a`` added before ``key_b``.

        Raises:
            ConfigError: Bad threshold or method.
        """
        t = _check_threshold(threshold)
        n = len(self._keys)
        wanted = self.method if method is None else method
        if wanted == "partitioned" or (wanted == "auto" and n > self.approx_above):
            if n < 2:
                return
            pi, pj, ps = partitioned_pairs(self._data[:n], t, block_size=self.block_size)
            for a, b, sim in zip(pi.tolist(), pj.tolist(), ps.tolist(), strict=True):
                yield self._keys[a], self._keys[b], sim
            return
        chosen = self._resolve(method)
        if n < 2:
            return
        if chosen == "exact":
            for i, j, s in pairs_blocks(self._data[:n], t, self.block_size):
                for a, b, sim in zip(i.tolist(), j.tolist(), s.tolist(), strict=True):
                    yield self._keys[a], self._keys[b], sim
            return
        i, j, s = self._approx_pairs(t)
        for a, b, sim in zip(i.tolist(), j.tolist(), s.tolist(), strict=True):
            yield self._keys[a], self._keys[b], sim

    def _approx_pairs(self, threshold: float, *, chunk: int = 8192) -> tuple[I64, I64, F32]:
        n = len(self._keys)
        graph = self._graph()
        count = min(self.neighbors + 1, n)
        found_i: list[I64] = []
        found_j: list[I64] = []
        for start in range(0, n, chunk):
            q = self._data[start : min(n, start + chunk)]
            matches = graph.search(q, count, threads=self.threads)
            keys, dist, counts = _match_arrays(matches, q.shape[0])
            valid = np.arange(keys.shape[1])[None, :] < counts[:, None]
            # distance is 1 - cosine (float32); keep a margin, then recompute exactly below
            keep = valid & (1.0 - dist >= threshold - 1e-3)
            qi, col = np.nonzero(keep)
            a = qi.astype(np.int64) + start
            b = keys[qi, col]
            lo, hi = np.minimum(a, b), np.maximum(a, b)
            mask = lo != hi
            found_i.append(lo[mask])
            found_j.append(hi[mask])
        i = np.concatenate(found_i) if found_i else np.zeros(0, np.int64)
        j = np.concatenate(found_j) if found_j else np.zeros(0, np.int64)
        if i.size == 0:
            return i, j, np.zeros(0, np.float32)
        packed = sorted_unique(i * n + j)
        i, j = packed // n, packed % n
        sims = np.einsum("ij,ij->i", self._data[i], self._data[j])
        keep = sims >= threshold
        return i[keep], j[keep], np.minimum(sims[keep], 1.0).astype(np.float32)
