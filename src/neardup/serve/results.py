"""What the service answers for each document: the JSON of ``/v1/check`` and ``/v1/query`` as
values (shared by the service and :class:`~neardup.serve.client.Client`; no dependency)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from neardup.errors import ServiceError

__all__ = ["Duplicate", "Result"]


@dataclass(frozen=True, slots=True)
class Duplicate:
    """A stored document similar to a checked one (``similarity`` in [0, 1])."""

    id: str
    similarity: float


@dataclass(frozen=True, slots=True)
class Result:
    """The answer for one document: whether it was added, and its duplicates (most similar
    first).

    Examples:
        >>> r = Result("b", False, (Duplicate("a", 0.9),))
        >>> Result.from_dict(r.to_dict()) == r
        True
    """

    id: str
    added: bool
    duplicates: tuple[Duplicate, ...]

    def to_dict(self) -> dict[str, object]:
        """The JSON form of the endpoints."""
        return {
            "id": self.id,
            "added": self.added,
            "duplicates": [{"id": d.id, "similarity": d.similarity} for d in self.duplicates],
        }

    @classmethod
    def from_dict(cls, data: object) -> Result:
        """Read one result of an answer.

        Raises:
            ServiceError: it is not a result (the answer is not from a neardup service).
        """
        bad = ServiceError(
            "the service's answer is not a list of results; check the URL (is it a neardup serve?)"
        )
        if not isinstance(data, Mapping) or not isinstance(data.get("duplicates"), list):
            raise bad
        try:
            return cls(
                str(data["id"]),
                bool(data["added"]),
                tuple(Duplicate(str(d["id"]), float(d["similarity"])) for d in data["duplicates"]),
            )
        except (KeyError, TypeError, ValueError):
            raise bad from None
