"""LSH Forest: top-k MinHash search without a threshold (Bawa, Condie and Ganesan, WWW 2005).

``l`` prefix trees each hold ``k = num_perm // l`` slot values of every sketch; a query takes
the documents sharing the longest prefixes with it, shortening the prefix until it has
enough candidates, then ranks them by estimated Jaccard. :class:`LSHForest` stores each tree
as one lexicographically sorted ``uint32`` matrix and answers batches of queries in one
kernel call (:mod:`neardup._kernels.forest`). The whole index lives in memory.
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Sequence

import numpy as np
import numpy.typing as npt

from neardup._kernels import engine
from neardup.config import check_range
from neardup.errors import IncompatibleSketchError, InputError
from neardup.sketch.minhash import MinHash

__all__ = ["LSHForest"]

U64 = npt.NDArray[np.uint64]
U32 = npt.NDArray[np.uint32]
I64 = npt.NDArray[np.int64]
_MAX32 = np.uint64(0xFFFFFFFF)


def _fold(values: U64) -> U32:
    """32-bit fingerprint of each slot (exact for slots below 2**32)."""
    return ((values ^ (values >> np.uint64(32))) & _MAX32).astype(np.uint32)


class LSHForest:
    """Top-k search over MinHash sketches with ``l`` prefix trees.

    Args:
        num_perm: Slots per sketch.
        l: Number of trees (default 8); each uses ``num_perm // l`` slots as its prefix.
        candidates: Candidates gathered per requested result before ranking (default 4:
            a ``query(mh, 10)`` ranks at least 40 candidates when the index has them).

    Memory: ``4 * num_perm + 8 * l`` bytes of arrays per document, plus the key.

    Examples:
        >>> from neardup.sketch.minhash import MinHasher
        >>> h = MinHasher(num_perm=64)
        >>> forest = LSHForest(num_perm=64)
        >>> base = [f"w{i}" for i in range(40)]
        >>> forest.add_many(["a", "b", "c"], [h.sketch_tokens(base), h.sketch_tokens(base[:30]),
        ...                                   h.sketch_tokens(["x", "y"])])
        >>> [k for k, _ in forest.query(h.sketch_tokens(base), 2)]
        ['a', 'b']
    """

    def __init__(self, num_perm: int = 128, *, l: int = 8, candidates: int = 4) -> None:  # noqa: E741  # the paper's name
        check_range("num_perm", num_perm, 1, 1 << 16, integer=True)
        check_range("l", l, 1, num_perm, integer=True)
        check_range("candidates", candidates, 1, 1 << 10, integer=True)
        self.num_perm = num_perm
        self.l = l
        self.k = num_perm // l
        self.candidates = candidates
        self._sig = np.empty((0, num_perm), dtype=np.uint32)
        self._live = np.empty(0, dtype=np.uint8)
        self._keys: list[Hashable | None] = []
        self._row: dict[Hashable, int] = {}
        self._n = 0
        self._vals: U32 | None = None
        self._order: I64 | None = None
        self._params: tuple[str, str] | None = None

    def __len__(self) -> int:
        return len(self._row)

    def __contains__(self, key: object) -> bool:
        return key in self._row

    def __repr__(self) -> str:
        return f"LSHForest(num_perm={self.num_perm}, l={self.l}, n={len(self)})"

    def _matrix(self, sigs: Sequence[MinHash] | U64) -> U64:
        if isinstance(sigs, np.ndarray):
            values = np.asarray(sigs, dtype=np.uint64)
            if values.ndim != 2 or values.shape[1] != self.num_perm:
                raise IncompatibleSketchError(
                    f"expected a (n, {self.num_perm}) array of sketches, got {values.shape}"
                )
            return values
        if not sigs:
            return np.empty((0, self.num_perm), dtype=np.uint64)
        for mh in sigs:
            if not isinstance(mh, MinHash) or mh.num_perm != self.num_perm:
                raise IncompatibleSketchError(
                    f"expected MinHash values of {self.num_perm} slots; use a forest with the "
                    "sketches' num_perm"
                )
            if self._params is None:
                self._params = (mh.scheme, mh.params)
            elif (mh.scheme, mh.params) != self._params:
                raise IncompatibleSketchError(
                    "sketches of different MinHashers cannot share a forest; index sketches "
                    "of one MinHasher"
                )
        return np.stack([mh.hashvalues for mh in sigs])

    def add(self, key: Hashable, mh: MinHash) -> None:
        """Add one sketch under ``key`` (an existing ``key`` is replaced)."""
        self.add_many([key], [mh])

    def add_many(self, keys: Sequence[Hashable], sigs: Sequence[MinHash] | U64) -> None:
        """Add many sketches (MinHash values or a ``(n, num_perm)`` array) at once.

        Raises:
            InputError: Lengths differ or a key repeats within the call.
            IncompatibleSketchError: Wrong ``num_perm`` or mixed MinHashers.
        """
        values = self._matrix(sigs)
        if len(keys) != len(values):
            raise InputError(f"add_many got {len(keys)} keys for {len(values)} sketches")
        if len(set(keys)) != len(keys):
            raise InputError("add_many got the same key twice; keys must be unique")
        for key in keys:
            if key in self._row:
                self.remove(key)
        n = len(values)
        sig = np.empty((self._n + n, self.num_perm), dtype=np.uint32)
        sig[: self._n] = self._sig[: self._n]
        sig[self._n :] = _fold(values)
        live = np.ones(self._n + n, dtype=np.uint8)
        live[: self._n] = self._live[: self._n]
        self._sig, self._live = sig, live
        for i, key in enumerate(keys):
            self._keys.append(key)
            self._row[key] = self._n + i
        self._n += n
        self._vals = None

    def remove(self, key: Hashable) -> None:
        """Remove ``key``.

        Raises:
            InputError: ``key`` is not in the forest.
        """
        row = self._row.pop(key, None)
        if row is None:
            raise InputError(f"key {key!r} is not in the forest; check `key in forest` first")
        self._live[row] = 0
        self._keys[row] = None

    def _trees(self) -> tuple[U32, I64]:
        """(l, n, k) sorted slot values per tree and the row order (built on demand)."""
        if self._vals is None or self._order is None:
            n, k = self._n, self.k
            vals = np.empty((self.l, n, k), dtype=np.uint32)
            order = np.empty((self.l, n), dtype=np.int64)
            for t in range(self.l):
                part = self._sig[:n, t * k : (t + 1) * k]
                o = np.lexsort(part.T[::-1]) if n else np.empty(0, dtype=np.int64)
                order[t] = o
                vals[t] = part[o]
            self._vals, self._order = vals, order
        return self._vals, self._order

    def query(self, mh: MinHash | U64, k: int) -> list[tuple[Hashable, float]]:
        """The (up to) ``k`` keys most similar to ``mh``, best first, with estimated Jaccard."""
        values = mh.hashvalues[None, :] if isinstance(mh, MinHash) else np.asarray(mh)[None, :]
        return self.query_many(values, k)[0]

    def query_many(
        self, sigs: Sequence[MinHash] | U64, k: int
    ) -> list[list[tuple[Hashable, float]]]:
        """:meth:`query` for many sketches at once (one kernel call).

        Raises:
            InputError: ``k`` is not positive.
        """
        if k < 1:
            raise InputError(f"k must be positive, got {k}")
        values = self._matrix(sigs)
        if not len(values) or not self._n:
            return [[] for _ in range(len(values))]
        vals, order = self._trees()
        q = _fold(values)[:, : self.l * self.k].reshape(len(values), self.l, self.k)
        rows, offsets = engine.kernels("forest").query(
            vals, order, self._live, np.ascontiguousarray(q), k * self.candidates
        )
        q32 = _fold(values)
        out: list[list[tuple[Hashable, float]]] = []
        for qi, (lo, hi) in enumerate(itertools.pairwise(offsets.tolist())):
            cand = rows[lo:hi]
            est = np.count_nonzero(self._sig[cand] == q32[qi], axis=1) / self.num_perm
            best = np.lexsort((cand, -est))[:k]
            out.append([(self._keys[int(cand[i])], float(est[i])) for i in best])
        return out
