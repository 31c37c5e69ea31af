"""datasketch's ``lshensemble`` module: :class:`MinHashLSHEnsemble` (containment), in memory.

Zhu et al., "LSH Ensemble: Internet-Scale Domain Search" (VLDB 2016). The same partitions
(:func:`neardup.index.lshensemble.optimal_partitions`), per-partition banding and query
semantics as datasketch 2.0.0, over this package's :class:`~.lsh.MinHashLSH`. For a
numpy batch index, see :class:`neardup.index.lshensemble.LSHEnsemble`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Generator, Hashable, Iterable, Mapping

import numpy as np

from neardup.compat.datasketch.lsh import MinHashLSH
from neardup.compat.datasketch.storage import _check_config
from neardup.index.lshensemble import optimal_partitions
from neardup.index.lshparams import containment_params

__all__ = ["MinHashLSHEnsemble"]


def _optimal_param(
    threshold: float,
    num_perm: int,
    max_r: int,
    xq: float,
    false_positive_weight: float,
    false_negative_weight: float,
) -> tuple[int, int]:
    """datasketch's ``lshensemble._optimal_param``."""
    return containment_params(
        float(threshold), num_perm, max_r, float(xq), false_positive_weight, false_negative_weight
    )


class MinHashLSHEnsemble:
    """datasketch 2.0.0's ``MinHashLSHEnsemble``.

    Examples:
        >>> from neardup.compat.datasketch.minhash import MinHash
        >>> sets = [[str(i).encode() for i in range(n)] for n in (10, 40, 80)]
        >>> ms = MinHash.bulk(sets, num_perm=64)
        >>> ens = MinHashLSHEnsemble(threshold=0.8, num_perm=64, num_part=2)
        >>> ens.index([(i, m, len(s)) for i, (m, s) in enumerate(zip(ms, sets))])
        >>> sorted(ens.query(ms[0], 10))
        [0, 1]
    """

    def __init__(
        self,
        threshold: float = 0.9,
        num_perm: int = 128,
        num_part: int = 16,
        m: int = 8,
        weights: tuple[float, float] = (0.5, 0.5),
        storage_config: Mapping[str, object] | None = None,
        prepickle: bool | None = None,
    ) -> None:
        if threshold > 1.0 or threshold < 0.0:
            raise ValueError("threshold must be in [0.0, 1.0]")
        if num_perm < 2:
            raise ValueError("Too few permutation functions")
        if num_part < 1:
            raise ValueError("num_part must be at least 1")
        if m < 2 or m > num_perm:
            raise ValueError("m must be in the range of [2, num_perm]")
        if any(w < 0.0 or w > 1.0 for w in weights):
            raise ValueError("Weight must be in [0.0, 1.0]")
        if sum(weights) != 1.0:
            raise ValueError("Weights must sum to 1.0")
        _check_config(storage_config)
        self.threshold = threshold
        self.h = num_perm
        self.m = m
        rs = self._init_optimal_params(weights)
        self.indexes = [
            {
                r: MinHashLSH(num_perm=self.h, params=(int(self.h / r), r), prepickle=prepickle)
                for r in rs
            }
            for _ in range(num_part)
        ]
        self.lowers: list[int | None] = [None for _ in self.indexes]
        self.uppers: list[int | None] = [None for _ in self.indexes]

    def _init_optimal_params(self, weights: tuple[float, float]) -> set[int]:
        fpw, fnw = weights
        self.xqs = np.exp(np.linspace(-5, 5, 10))
        self.params = np.array(
            [_optimal_param(self.threshold, self.h, self.m, xq, fpw, fnw) for xq in self.xqs],
            dtype=int,
        )
        return {int(r) for _, r in self.params}

    def _get_optimal_param(self, x: float, q: float) -> tuple[int, int]:
        i = np.searchsorted(self.xqs, float(x) / float(q), side="left")
        if i == len(self.params):
            i = i - 1
        b, r = self.params[i]
        return int(b), int(r)

    def index(self, entries: Iterable[tuple[Hashable, object, int]]) -> None:
        """Index every ``(key, minhash, size)`` at once.

        Raises:
            ValueError: Already built, no entries, or a size that is not positive.
        """
        if not self.is_empty():
            raise ValueError("Cannot call index again on a non-empty index")
        if not isinstance(entries, list):
            items = []
            for key, minhash, size in entries:
                if size <= 0:
                    raise ValueError("Set size must be positive")
                items.append((key, minhash, size))
            entries = items
        if len(entries) == 0:
            raise ValueError("entries is empty")
        sizes, counts = np.array(sorted(Counter(e[2] for e in entries).most_common())).T
        for i, (lower, upper) in enumerate(optimal_partitions(sizes, counts, len(self.indexes))):
            self.lowers[i], self.uppers[i] = lower, upper
        entries.sort(key=lambda e: e[2])
        part = 0
        for key, minhash, size in entries:
            if size > self.uppers[part]:  # type: ignore[operator]
                part += 1
            for r in self.indexes[part]:
                self.indexes[part][r].insert(key, minhash)

    def query(self, minhash: object, size: int) -> Generator[Hashable, None, None]:
        """Yield keys whose sets likely contain the query set above the threshold."""
        for i, index in enumerate(self.indexes):
            u = self.uppers[i]
            if u is None:
                continue
            b, r = self._get_optimal_param(u, size)
            yield from index[r]._query_b(minhash, b)

    def __contains__(self, key: Hashable) -> bool:
        return any(any(key in index[r] for r in index) for index in self.indexes)

    def is_empty(self) -> bool:
        """True before :meth:`index`."""
        return all(all(index[r].is_empty() for r in index) for index in self.indexes)
