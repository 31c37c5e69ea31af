"""The results of a dedup run: :class:`Pair`, :class:`Cluster` and :class:`DedupResult`.

Their ``to_dict`` forms are the public JSON contract (``API.md``) that ``writers`` emits.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from typing import Any, overload

import numpy as np
import numpy.typing as npt

from neardup.types import DocId

__all__ = ["Cluster", "DedupResult", "Pair", "PairList"]


@dataclass(frozen=True, slots=True)
class Pair:
    """Two near-duplicate documents and how similar they are (1.0 = identical)."""

    a: DocId
    b: DocId
    similarity: float
    distance: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """The public JSON form ``{"a", "b", "similarity"}`` (plus ``distance`` if known)."""
        out: dict[str, Any] = {"a": self.a, "b": self.b, "similarity": round(self.similarity, 6)}
        if self.distance is not None:
            out["distance"] = self.distance
        return out


class PairList(Sequence[Pair]):
    """The accepted pairs of a run as a read-only sequence of :class:`Pair`, kept as arrays of
    row numbers: a :class:`Pair` is made only for the pairs that are looked at or written.

    Examples:
        >>> p = PairList(["x", "y"], np.array([0]), np.array([1]), np.array([0.5]))
        >>> len(p), p[0], p == [Pair("x", "y", 0.5)]
        (1, Pair(a='x', b='y', similarity=0.5, distance=None), True)
    """

    __slots__ = ("_a", "_b", "_dist", "_ids", "_sim")

    def __init__(
        self,
        ids: Sequence[DocId],
        a: npt.NDArray[np.int64],
        b: npt.NDArray[np.int64],
        similarity: npt.NDArray[np.float64],
        distance: npt.NDArray[np.int64] | None = None,
    ) -> None:
        self._ids = ids
        self._a, self._b, self._sim = a, b, similarity
        self._dist = np.full(len(a), -1, np.int64) if distance is None else distance

    @property
    def arrays(
        self,
    ) -> tuple[
        npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.float64], npt.NDArray[np.int64]
    ]:
        """``(a, b, similarity, distance)``: row numbers into the result's ``doc_ids``,
        similarities, distances (``-1`` where the measure is not a count)."""
        return self._a, self._b, self._sim, self._dist

    def __len__(self) -> int:
        return len(self._a)

    def _pair(self, k: int) -> Pair:
        d = int(self._dist[k])
        return Pair(
            self._ids[int(self._a[k])],
            self._ids[int(self._b[k])],
            float(self._sim[k]),
            None if d < 0 else d,
        )

    @overload
    def __getitem__(self, k: int) -> Pair: ...
    @overload
    def __getitem__(self, k: slice) -> list[Pair]: ...
    def __getitem__(self, k: int | slice) -> Pair | list[Pair]:
        if isinstance(k, slice):
            return [self._pair(i) for i in range(*k.indices(len(self)))]
        if k < 0:
            k += len(self)
        if not 0 <= k < len(self):
            raise IndexError("pair index out of range")
        return self._pair(k)

    def __iter__(self) -> Iterator[Pair]:
        ids = self._ids
        for a, b, s, d in zip(
            self._a.tolist(), self._b.tolist(), self._sim.tolist(), self._dist.tolist(), strict=True
        ):
            yield Pair(ids[a], ids[b], s, None if d < 0 else d)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, PairList | list | tuple):
            return len(self) == len(other) and all(x == y for x, y in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"PairList({len(self)} pairs)"


@dataclass(frozen=True, slots=True)
class Cluster:
    """A group of two or more near-duplicate documents."""

    id: int
    members: tuple[DocId, ...]
    representative: DocId

    @property
    def size(self) -> int:
        """Number of members."""
        return len(self.members)

    def to_dict(self, *, max_members: int | None = None) -> dict[str, Any]:
        """The public JSON form; ``max_members`` truncates the member list (size stays exact)."""
        members = list(self.members if max_members is None else self.members[:max_members])
        out: dict[str, Any] = {
            "cluster": self.id,
            "size": self.size,
            "representative": self.representative,
            "members": members,
        }
        if max_members is not None and self.size > max_members:
            out["members_truncated"] = True
        return out


def many_clusters(
    n: int, members: Iterable[tuple[DocId, ...]], representatives: Iterable[DocId]
) -> list[Cluster]:
    """``[Cluster(k, m, r) for k, m, r in zip(range(n), members, representatives)]`` for
    ``n`` clusters (both iterables give ``n`` items), made without the frozen dataclass's
    ``__init__`` (three ``object.__setattr__`` calls per cluster): each field's slot is set
    by its descriptor over all clusters at once, about 40 % fewer instructions at 93k
    clusters. Equal to the constructor's (``tests/test_cluster.py`` compares them).
    """
    made = list(map(object.__new__, repeat(Cluster, n)))
    fields_ = (("id", range(n)), ("members", members), ("representative", representatives))
    for name, values in fields_:
        deque(map(vars(Cluster)[name].__set__, made, values), maxlen=0)
    return made


@dataclass(frozen=True, slots=True)
class DedupResult:
    """Everything a dedup run found.

    Attributes:
        clusters: Clusters of two or more members, numbered by representative position.
        pairs: Accepted pairs (after verification), ``a`` before ``b`` in input order.
        n_docs: Number of documents read.
        method: The method id (``minhash``, ``simhash``, ...).
        threshold: The similarity threshold used.
        params: The sketcher's parameter fingerprint.
        stats: Counters and timings (candidates, verified, seconds per stage, ...).
        doc_ids: Every document id in input order.
        records: For mapping input, each document's other fields in input order (``None``
            where it had none); ``None`` when no document had any.
        clustering: How clusters were formed: ``components`` or ``center`` (see
            :mod:`neardup.cluster`).
    """

    clusters: list[Cluster]
    pairs: Sequence[Pair]
    n_docs: int
    method: str
    threshold: float
    params: str
    stats: dict[str, float] = field(default_factory=dict)
    doc_ids: list[DocId] = field(default_factory=list)
    records: list[Mapping[str, Any] | None] | None = None
    clustering: str = "components"

    @property
    def stored(self) -> list[DocId]:
        """The stored documents that joined the clusters (dedup against a persistent index):
        they come first in :attr:`doc_ids` and are not counted in :attr:`n_docs`."""
        return self.doc_ids[: max(len(self.doc_ids) - self.n_docs, 0)]

    @property
    def duplicates(self) -> int:
        """Cluster members beyond one each, and every member read of a cluster that holds a
        stored document (that one is kept): what a copy keeping one record per cluster drops.
        The default keep rule (:mod:`neardup.keep`) drops at most this many: a cluster that
        chains keeps a record for each part not within the threshold of another kept one."""
        stored = set(self.stored)
        if not stored:
            return sum(c.size - 1 for c in self.clusters)
        total = 0
        for c in self.clusters:
            old = sum(1 for m in c.members if m in stored)
            total += c.size - old - (0 if old else 1)
        return total

    def cluster_of(self) -> dict[DocId, int]:
        """Map each clustered document id to its cluster id."""
        return {m: c.id for c in self.clusters for m in c.members}
