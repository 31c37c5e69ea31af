"""datasketch's ``lshforest`` module: :class:`MinHashLSHForest` (top-k), in memory.

Bawa, Condie and Ganesan, "LSH Forest: Self-Tuning Indexes for Similarity Search" (WWW 2005).
Same ``hashtables`` / ``keys`` / ``sorted_hashtables`` layout and query order as datasketch
2.0.0; the prefix search uses :mod:`bisect` on the sorted band keys. For a native batch
top-k index, see :class:`neardup.index.lshforest.LSHForest`.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Hashable, Iterator

import numpy as np
import numpy.typing as npt

from neardup.compat.datasketch.minhash import _check_scheme_consistency

__all__ = ["MinHashLSHForest"]


class MinHashLSHForest:
    """datasketch 2.0.0's ``MinHashLSHForest``: ``l`` prefix trees of ``num_perm // l`` slots.

    Call :meth:`index` after adding and before querying.

    Examples:
        >>> from neardup.compat.datasketch.minhash import MinHash
        >>> f = MinHashLSHForest(num_perm=32)
        >>> for i in range(3):
        ...     m = MinHash(num_perm=32); m.update_batch([b"x", str(i).encode()]); f.add(i, m)
        >>> f.index(); m = MinHash(num_perm=32); m.update_batch([b"x", b"0"])
        >>> 0 in f.query(m, 1)
        True
    """

    def __init__(self, num_perm: int = 128, l: int = 8) -> None:  # noqa: E741  # datasketch's name
        if l <= 0 or num_perm <= 0:
            raise ValueError("num_perm and l must be positive")
        if l > num_perm:
            raise ValueError("l cannot be greater than num_perm")
        self.l = l
        self.k = int(num_perm / l)
        self.hashtables: list[defaultdict[bytes, list[Hashable]]] = [
            defaultdict(list) for _ in range(self.l)
        ]
        self.hashranges = [(i * self.k, (i + 1) * self.k) for i in range(self.l)]
        self.keys: dict[Hashable, list[bytes]] = {}
        self.sorted_hashtables: list[list[bytes]] = [[] for _ in range(self.l)]
        self._minhash_scheme: str | None = None

    def _raw(self, minhash: object) -> tuple[bytes, int]:
        hv = np.ascontiguousarray(minhash.hashvalues)  # type: ignore[attr-defined]
        raw = hv.byteswap().tobytes()
        return raw, len(raw) // len(hv)

    def add(self, key: Hashable, minhash: object) -> None:
        """Add ``minhash`` under ``key`` (call :meth:`index` before querying).

        Raises:
            ValueError: Too few slots, another scheme, or a duplicate key.
        """
        if len(minhash) < self.k * self.l:  # type: ignore[arg-type]
            raise ValueError("The num_perm of MinHash out of range")
        self._minhash_scheme = _check_scheme_consistency(self._minhash_scheme, minhash)
        if key in self.keys:
            raise ValueError("The given key has already been added")
        raw, width = self._raw(minhash)
        step = width * self.k
        hs = [raw[i * step : (i + 1) * step] for i in range(self.l)]
        self.keys[key] = hs
        for h, table in zip(hs, self.hashtables, strict=True):
            table[h].append(key)

    def index(self) -> None:
        """Sort the band keys of every tree (makes added keys searchable)."""
        for i, table in enumerate(self.hashtables):
            self.sorted_hashtables[i] = sorted(table)

    def _query(self, minhash: object, r: int, b: int) -> Iterator[Hashable]:
        if r > self.k or r <= 0 or b > self.l or b <= 0:
            raise ValueError("parameter outside range")
        raw, width = self._raw(minhash)
        step, size = width * self.k, width * r
        for t, (ht, table) in enumerate(zip(self.sorted_hashtables, self.hashtables, strict=True)):
            hp = raw[t * step : t * step + size]
            j = bisect.bisect_left(ht, hp)
            while j < len(ht) and ht[j][:size] == hp:
                yield from table[ht[j]]
                j += 1

    def query(self, minhash: object, k: int) -> list[Hashable]:
        """About the ``k`` keys with the longest shared prefixes (unordered).

        Raises:
            ValueError: ``k <= 0``, too few slots, or another scheme.
        """
        if k <= 0:
            raise ValueError("k must be positive")
        if len(minhash) < self.k * self.l:  # type: ignore[arg-type]
            raise ValueError("The num_perm of MinHash out of range")
        _check_scheme_consistency(self._minhash_scheme, minhash)
        results: set[Hashable] = set()
        r = self.k
        while r > 0:
            for key in self._query(minhash, r, self.l):
                results.add(key)
                if len(results) >= k:
                    return list(results)
            r -= 1
        return list(results)

    def get_minhash_hashvalues(self, key: Hashable) -> npt.NDArray[np.unsignedinteger]:
        """The slot values stored for ``key``.

        Raises:
            KeyError: ``key`` is not in the forest.
        """
        hs = self.keys.get(key)
        if hs is None:
            raise KeyError(f"The provided key does not exist in the LSHForest: {key}")
        size = len(hs[0])
        per, rem = divmod(size, self.k)
        if rem or per not in (4, 8):
            raise ValueError(
                f"Stored hash segment of {size} bytes is not {self.k} values of a supported "
                "width (4 or 8 bytes)"
            )
        if any(len(h) != size for h in hs):
            raise ValueError("Stored hash segments have inconsistent sizes")
        dtype = np.uint32 if per == 4 else np.uint64
        out: npt.NDArray[np.unsignedinteger] = np.frombuffer(  # type: ignore[assignment]
            b"".join(hs), dtype=dtype
        ).byteswap()
        return out

    def is_empty(self) -> bool:
        """True when a tree has no sorted keys."""
        return any(len(t) == 0 for t in self.sorted_hashtables)

    def _H(self, hs: np.ndarray) -> bytes:  # noqa: N802  # datasketch's name
        return bytes(hs.byteswap().data)

    def __contains__(self, key: Hashable) -> bool:
        return key in self.keys
