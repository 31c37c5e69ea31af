"""LSH Ensemble for containment search (Zhu, Nargesian, Pu and Miller, VLDB 2016).

Containment ``|Q ∩ X| / |Q|`` of a query in an indexed set is turned into a Jaccard
threshold per size partition: sets are split into partitions of similar size
(:func:`optimal_partitions`, the dynamic programme minimising the expected false positives
when sizes are taken as they are), and each partition is probed with the banding
``(b, r)`` tuned for its upper size over the query size
(:func:`neardup.index.lshparams.containment_params`). :class:`LSHEnsemble` keeps every
partition's band keys in sorted numpy arrays, one per band, and answers batches of queries
with vectorized binary searches.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from types import ModuleType

import numpy as np
import numpy.typing as npt

from neardup._kernels import engine
from neardup.config import check_range
from neardup.errors import ConfigError, InputError
from neardup.index.lshparams import containment_params

__all__ = ["LSHEnsemble", "optimal_partitions"]

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]
U64 = npt.NDArray[np.uint64]


def _nfps_real(counts: I64, sizes: I64) -> F64:
    n = len(sizes)
    nfps = np.zeros((n, n))
    for lo in range(n):
        for hi in range(lo, n):
            nfps[lo, hi] = np.sum(
                (float(sizes[hi]) - sizes[lo : hi + 1]) / float(sizes[hi]) * counts[lo : hi + 1]
            )
    return nfps


def _best_partitions(num_part: int, sizes: I64, nfps: F64) -> list[tuple[int, int]]:
    n = len(sizes)
    if num_part == 2:
        _, u = min((nfps[0, u1] + nfps[u1 + 1, n - 1], u1) for u1 in range(n - 1))
        return [(int(sizes[0]), int(sizes[u])), (int(sizes[u + 1]), int(sizes[-1]))]
    cost = np.zeros((n, num_part - 2))
    for p in range(2, num_part):
        for u in range(p - 1, n):
            if p == 2:
                cost[u, 0] = min(nfps[0, u1] + nfps[u1 + 1, u] for u1 in range(u))
            else:
                cost[u, p - 2] = min(cost[u1, p - 3] + nfps[u1 + 1, u] for u1 in range(p - 2, u))
    p = num_part
    _, u = min((cost[u1, p - 3] + nfps[u1 + 1, n - 1], u1) for u1 in range(p - 2, n - 1))
    parts = [(int(sizes[u + 1]), int(sizes[-1]))]
    p -= 1
    while p > 1:
        _, best = min((cost[u1, p - 2] + nfps[u1 + 1, u], u1) for u1 in range(p - 2, u))
        parts.insert(0, (int(sizes[best + 1]), int(sizes[u])))
        u = best
        p -= 1
    parts.insert(0, (int(sizes[0]), int(sizes[u])))
    return parts


def optimal_partitions(
    sizes: npt.ArrayLike, counts: npt.ArrayLike, num_part: int
) -> list[tuple[int, int]]:
    """Size ranges ``(lower, upper)`` of ``num_part`` partitions of the distinct set
    ``sizes`` (ascending) with their ``counts``, as datasketch's ``optimal_partitions``.

    Examples:
        >>> optimal_partitions([1, 2, 10, 11], [5, 5, 5, 5], 2)
        [(1, 2), (10, 11)]
    """
    s = np.asarray(sizes, dtype=np.int64)
    c = np.asarray(counts, dtype=np.int64)
    if num_part < 2:
        return [(int(s[0]), int(s[-1]))]
    if num_part >= len(s):
        return [(int(x), int(x)) for x in s]
    return _best_partitions(num_part, s, _nfps_real(c, s))


def _kernels() -> ModuleType:
    """The selected backend's MinHash kernels."""
    return engine.kernels("minhash")


class LSHEnsemble:
    """Containment search over MinHash slot rows, partitioned by set size.

    Args:
        threshold: Containment threshold in (0, 1].
        num_perm: Slots per sketch.
        num_part: Number of size partitions.
        m: Largest band size ``r`` considered.
        weights: ``(false_positive_weight, false_negative_weight)``.

    Build once with :meth:`index` (the partitions depend on every size); the index is in
    memory, ``8 * bands`` bytes per set and band size considered.

    Examples:
        >>> from neardup.sketch.tokensets import sketch_token_sets
        >>> sets = [[str(i).encode() for i in range(n)] for n in (10, 50, 100, 200)]
        >>> ens = LSHEnsemble(threshold=0.8, num_perm=128, num_part=2)
        >>> ens.index(["a", "b", "c", "d"], sketch_token_sets(sets), [10, 50, 100, 200])
        >>> ens.query(sketch_token_sets([sets[0]])[0], 10)
        ['a']
    """

    def __init__(
        self,
        threshold: float = 0.9,
        num_perm: int = 128,
        *,
        num_part: int = 16,
        m: int = 8,
        weights: tuple[float, float] = (0.5, 0.5),
    ) -> None:
        check_range("threshold", threshold, 0.0, 1.0)
        check_range("num_perm", num_perm, 2, 1 << 16, integer=True)
        check_range("num_part", num_part, 1, 1 << 12, integer=True)
        check_range("m", m, 2, num_perm, integer=True)
        self.threshold = threshold
        self.num_perm = num_perm
        self.num_part = num_part
        self.m = m
        self.weights = weights
        self.xqs = np.exp(np.linspace(-5, 5, 10))
        self.params = np.array(
            [containment_params(threshold, num_perm, m, float(x), *weights) for x in self.xqs],
            dtype=np.int64,
        )
        self._rs = sorted({int(r) for _, r in self.params})
        self._keys: list[Hashable] = []
        self._parts: list[tuple[int, int, dict[int, tuple[U64, I64]]]] = []

    def __len__(self) -> int:
        return len(self._keys)

    def _param(self, upper: int, size: int) -> tuple[int, int]:
        i = int(np.searchsorted(self.xqs, float(upper) / float(size), side="left"))
        b, r = self.params[min(i, len(self.params) - 1)]
        return int(b), int(r)

    def index(self, keys: Sequence[Hashable], sigs: npt.ArrayLike, sizes: Sequence[int]) -> None:
        """Build the index from every set at once.

        Args:
            keys: One key per set.
            sigs: ``(n, num_perm)`` slot rows (values below 2**32, e.g. datasketch's).
            sizes: Each set's size (positive).

        Raises:
            InputError: Lengths differ, a size is not positive, or the index is built.
        """
        if self._keys:
            raise InputError("the ensemble is already built; make a new LSHEnsemble")
        values = np.asarray(sigs, dtype=np.uint64)
        n = len(keys)
        if values.shape != (n, self.num_perm) or len(sizes) != n or not n:
            raise InputError(
                f"index needs n keys, an (n, {self.num_perm}) array and n sizes, got {n}, "
                f"{values.shape}, {len(sizes)}"
            )
        size = np.asarray(sizes, dtype=np.int64)
        if size.min() <= 0:
            raise InputError("set sizes must be positive")
        distinct, counts = np.unique(size, return_counts=True)
        parts = optimal_partitions(distinct, counts, self.num_part)
        sig32 = np.ascontiguousarray((values & np.uint64(0xFFFFFFFF)).astype(np.uint32))
        kern = _kernels()
        self._keys = list(keys)
        for lower, upper in parts:
            rows = np.flatnonzero((size >= lower) & (size <= upper))
            tables: dict[int, tuple[U64, I64]] = {}
            for r in self._rs:
                bands = self.num_perm // r
                bk = kern.band_keys(sig32[rows], bands, r)
                order = np.argsort(bk, axis=0, kind="stable")
                tables[r] = (np.take_along_axis(bk, order, axis=0), rows[order])
            self._parts.append((lower, upper, tables))

    def query(self, sig: npt.ArrayLike, size: int) -> list[Hashable]:
        """Keys whose sets likely contain at least ``threshold`` of the query set.

        Args:
            sig: The query's slot row.
            size: The query set's size.

        Raises:
            ConfigError: ``size`` is not positive.
        """
        if size <= 0:
            raise ConfigError(f"the query size must be positive, got {size}")
        q = np.asarray(sig, dtype=np.uint64).reshape(1, -1)
        q32 = np.ascontiguousarray((q & np.uint64(0xFFFFFFFF)).astype(np.uint32))
        kern = _kernels()
        found: set[int] = set()
        for _, upper, tables in self._parts:
            b, r = self._param(upper, size)
            keys_sorted, rows = tables[r]
            qk = kern.band_keys(q32, self.num_perm // r, r)[0]
            for j in range(min(b, keys_sorted.shape[1])):
                col = keys_sorted[:, j]
                lo = int(np.searchsorted(col, qk[j], "left"))
                hi = int(np.searchsorted(col, qk[j], "right"))
                found.update(rows[lo:hi, j].tolist())
        return [self._keys[i] for i in sorted(found)]
