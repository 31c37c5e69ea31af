"""The results of a dedup run: :class:`Pair`, :class:`Cluster` and :class:`DedupResult`.

Their ``to_dict`` forms are the public JSON contract (``API.md``) that ``writers`` emits.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from neardup.types import DocId

__all__ = ["Cluster", "DedupResult", "Pair"]


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
        clustering: How clusters were formed: ``components`` or ``center`` (see
            :mod:`neardup.cluster`).
    """

    clusters: list[Cluster]
    pairs: list[Pair]
    n_docs: int
    method: str
    threshold: float
    params: str
    stats: dict[str, float] = field(default_factory=dict)
    doc_ids: list[DocId] = field(default_factory=list)
    clustering: str = "components"

    @property
    def duplicates(self) -> int:
        """Documents that a deduplicated copy drops (cluster members beyond one each)."""
        return sum(c.size - 1 for c in self.clusters)

    def cluster_of(self) -> dict[DocId, int]:
        """Map each clustered document id to its cluster id."""
        return {m: c.id for c in self.clusters for m in c.members}
