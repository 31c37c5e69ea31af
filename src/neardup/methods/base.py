"""The method protocol: a stateless :class:`Method`, its per-run :class:`Collector` and the
:class:`PairArrays` that travel from the index through verification to clustering.

A method is a value: its configuration plus the sketchers that configuration builds. It holds no
run state, so one method serves many runs, pickles to worker processes and Spark executors, and
rebuilds from its configuration's canonical JSON (what a store records). Everything a run
gathers (index, shingle-hash sets, positions) lives in the :class:`Collector` that
:meth:`Method.collector` makes for that run.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import numpy.typing as npt

from neardup.config import Params
from neardup.errors import ConfigError, InputError
from neardup.io import Document

if TYPE_CHECKING:
    from neardup.sketch.setcodec import PackedBlobs

__all__ = ["Collector", "Method", "MethodConfig", "PairArrays"]

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]
U64 = npt.NDArray[np.uint64]


@dataclass(frozen=True, slots=True)
class PairArrays:
    """Accepted pairs as parallel arrays: rows ``a < b`` (input positions), ``similarity`` in
    [0, 1] and ``distance`` (``-1`` where the measure is not a count). Python objects are made
    only for what is printed.

    Examples:
        >>> p = PairArrays.empty()
        >>> len(p), p.a.dtype.name
        (0, 'int64')
    """

    a: I64
    b: I64
    similarity: F64
    distance: I64

    def __len__(self) -> int:
        return len(self.a)

    @classmethod
    def empty(cls) -> PairArrays:
        """No pairs."""
        z = np.empty(0, np.int64)
        return cls(z, z.copy(), np.empty(0, np.float64), z.copy())

    @classmethod
    def of(
        cls,
        a: npt.ArrayLike,
        b: npt.ArrayLike,
        sim: npt.ArrayLike,
        dist: npt.ArrayLike | None = None,
    ) -> PairArrays:
        """Pairs from any array-likes, ordered so ``a < b`` within each pair.

        Examples:
            >>> p = PairArrays.of([3], [1], [0.9])
            >>> p.a.tolist(), p.b.tolist(), p.distance.tolist()
            ([1], [3], [-1])
        """
        x = np.asarray(a, dtype=np.int64).reshape(-1)
        y = np.asarray(b, dtype=np.int64).reshape(-1)
        s = np.asarray(sim, dtype=np.float64).reshape(-1)
        d = (
            np.full(len(x), -1, np.int64)
            if dist is None
            else np.asarray(dist, dtype=np.int64).reshape(-1)
        )
        return cls(np.minimum(x, y), np.maximum(x, y), s, d)

    def sorted(self) -> PairArrays:
        """The pairs sorted by ``(a, b)``, each pair once (the first occurrence kept)."""
        if len(self.a) == 0:
            return self
        order = np.lexsort((self.b, self.a))
        a, b = self.a[order], self.b[order]
        keep = np.ones(len(a), dtype=bool)
        keep[1:] = (a[1:] != a[:-1]) | (b[1:] != b[:-1])
        sel = order[keep]
        return PairArrays(self.a[sel], self.b[sel], self.similarity[sel], self.distance[sel])

    def shifted(self, k: int) -> PairArrays:
        """The same pairs with every row number moved by ``k``."""
        return PairArrays(self.a + k, self.b + k, self.similarity, self.distance)

    @staticmethod
    def concat(parts: Sequence[PairArrays]) -> PairArrays:
        """All pairs of ``parts``, in order."""
        if not parts:
            return PairArrays.empty()
        return PairArrays(
            np.concatenate([p.a for p in parts]),
            np.concatenate([p.b for p in parts]),
            np.concatenate([p.similarity for p in parts]),
            np.concatenate([p.distance for p in parts]),
        )


@dataclass(frozen=True, slots=True)
class MethodConfig(Params):
    """Base of the methods' configurations: ``threshold`` is a similarity in [0, 1].

    Subclasses set ``KIND`` to the method's registry name and add their fields; the canonical
    JSON (:meth:`to_json`) is what a store records and :meth:`from_json` rebuilds from.
    """

    KIND: ClassVar[str] = "method"
    threshold: float = 0.8

    def __post_init__(self) -> None:
        t = self.threshold
        if isinstance(t, bool) or not isinstance(t, int | float) or not 0.0 <= t <= 1.0:
            raise ConfigError(f"threshold must be a similarity in [0, 1], got {t!r}")
        object.__setattr__(self, "threshold", float(t))

    def to_json(self) -> str:
        """The canonical JSON form: sorted keys, the method name under ``"kind"``."""
        return self.canonical_json()

    def replace(self, **changes: Any) -> MethodConfig:
        """A copy with some fields changed (validated again).

        Raises:
            ConfigError: an unknown field or a bad value.
        """
        names = {f.name for f in dataclasses.fields(self)}
        unknown = sorted(set(changes) - names)
        if unknown:
            raise ConfigError(
                f"method {self.KIND!r} has no option {', '.join(unknown)}; "
                f"its options are {', '.join(sorted(names))}"
            )
        return dataclasses.replace(self, **changes)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MethodConfig:
        """Rebuild from :meth:`to_dict` output (``kind`` must match).

        Raises:
            ConfigError: another kind, or unknown or bad fields.
        """
        data = dict(data)
        kind = data.pop("kind", cls.KIND)
        if kind != cls.KIND:
            raise ConfigError(f"a {kind!r} configuration is not a {cls.KIND!r} one")
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - names)
        if unknown:
            raise ConfigError(
                f"method {cls.KIND!r} has no option {', '.join(unknown)}; this configuration "
                "was written by another version of neardup: upgrade neardup or rebuild the store"
            )
        return cls(**data)

    @classmethod
    def from_json(cls, text: str) -> MethodConfig:
        """Rebuild from :meth:`to_json` output.

        Raises:
            ConfigError: not JSON, or not this method's configuration.
        """
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise ConfigError(f"a method configuration is not JSON ({exc})") from None
        if not isinstance(data, dict):
            raise ConfigError("a method configuration must be a JSON object")
        return cls.from_dict(data)


def _done() -> None:
    """Nothing left to do."""


class Collector:
    """What one run gathers: sketches added batch by batch, then the accepted pairs.

    ``add(positions, payload)`` takes what :meth:`Method.sketch` returned for the documents at
    those input positions (which grow from 0 without gaps). :meth:`pairs` returns every
    accepted pair; :meth:`components` only the clusters' roots, which lets a method skip
    verifying candidates whose documents are already joined.
    """

    def prepare(self, payload: Any) -> Any:
        """What :meth:`add` will need of a sketched batch that does not depend on the other
        batches, made on the thread that sketched it (with ``jobs > 1`` one of the sketching
        threads, not the one that adds): by default the payload as it is."""
        return payload

    def add(self, positions: I64, payload: Any) -> None:
        """Index one sketched batch."""
        raise NotImplementedError

    def add_later(self, positions: I64, payload: Any) -> Callable[[], None]:
        """:meth:`add` in two steps: what must be done in input order, here; the call
        returned does the rest on any thread, before :meth:`pairs` or :meth:`components`.
        By default all of it is done here."""
        self.add(positions, payload)
        return _done

    def pairs(self, *, jobs: int = 1) -> PairArrays:
        """Every accepted pair, sorted by ``(a, b)`` (``jobs`` threads may share the work)."""
        raise NotImplementedError

    def components(self, n: int, *, jobs: int = 1) -> I64:
        """The root (smallest member) of every position's cluster, for ``n`` positions."""
        from neardup.cluster import components

        p = self.pairs(jobs=jobs)
        return components(n, p.a, p.b)


class Method:
    """Base of the dedup methods: a configuration and the sketchers it builds (no run state).

    Subclasses implement :meth:`sketch`, :meth:`collector`, :meth:`fingerprint` and
    :meth:`compare`; storable methods also :meth:`lookup_keys`, :meth:`blobs` and
    :meth:`blob_similarity`. Their registry entry (:mod:`neardup.methods.registry`) says what
    each can do (``method_info(m.name).binary``); this module does not import the registry.
    """

    name: ClassVar[str] = "method"

    config: MethodConfig

    def __init__(self, config: MethodConfig) -> None:
        self.config = config

    @property
    def threshold(self) -> float:
        """The similarity threshold in [0, 1]."""
        return self.config.threshold

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.config!r})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Method) and type(other) is type(self) and other.config == self.config
        )

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.config))

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.config,))

    @property
    def params(self) -> str:
        """Fingerprint of the sketch parameters, recorded in results and stores."""
        raise NotImplementedError

    @property
    def index_params(self) -> str:
        """What else, besides :attr:`params`, decides the bucket keys."""
        return f"t={self.threshold:g}"

    def sketch(self, docs: Sequence[Document]) -> Any:
        """Sketch a batch (pure: may run in worker threads, processes or Spark executors).

        Raises:
            NeardupError: a document cannot be sketched (the pipeline then skips or stops).
        """
        raise NotImplementedError

    def collector(self) -> Collector:
        """A fresh collector for one run."""
        raise NotImplementedError

    def lookup_keys(self, payload: Any) -> U64:
        """``(n, bands)`` bucket keys of a sketched batch: two documents can be a pair only if
        they share a key in some column (LSH bands, Hamming blocks).

        Raises:
            ConfigError: the method has no bucket keys.
        """
        raise ConfigError(f"method {self.name!r} has no bucket keys")

    def blobs(self, payload: Any) -> list[bytes]:
        """One self-contained byte string per document of a sketched batch (for stores).

        Raises:
            ConfigError: the method cannot be stored.
        """
        raise ConfigError(
            f"method {self.name!r} cannot be stored; use minhash, simhash or phash with --index"
        )

    def packed_blobs(self, payload: Any) -> PackedBlobs:
        """:meth:`blobs` in one buffer (what a store writes; methods may build it without a
        ``bytes`` object per document).

        Raises:
            ConfigError: the method cannot be stored.
        """
        from neardup.sketch.setcodec import PackedBlobs

        return PackedBlobs.of(self.blobs(payload))

    def blob_similarity(self, a: bytes, b: bytes) -> tuple[float, int | None]:
        """Similarity (and distance) of two documents from their :meth:`blobs`.

        Raises:
            ConfigError: the method cannot be stored.
        """
        raise ConfigError(f"method {self.name!r} cannot be stored")

    def blob_similarities(
        self, a: Sequence[bytes], b: Sequence[bytes]
    ) -> list[tuple[float, int | None]]:
        """:meth:`blob_similarity` of each ``(a[i], b[i])`` (methods may decode each distinct
        blob once)."""
        return [self.blob_similarity(x, y) for x, y in zip(a, b, strict=True)]

    def fingerprint(self, doc: Document) -> str:
        """The fingerprint of one document as a string (for ``neardup hash``)."""
        raise NotImplementedError

    def compare(self, a: Document, b: Document) -> tuple[float, int | None]:
        """Similarity (and distance, where the measure is a count) of two documents."""
        raise NotImplementedError


def texts_of(docs: Sequence[Document]) -> list[str]:
    """The documents' texts.

    Raises:
        InputError: a document has no text.
    """
    out = []
    for d in docs:
        if d.text is None:
            raise InputError(f"document {d.id!r} has no text; this method needs text")
        out.append(d.text)
    return out
