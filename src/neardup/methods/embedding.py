"""Semantic dedup: cosine similarity of text embeddings (extra ``embeddings``); the bundled
static model by default."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from neardup.errors import ConfigError
from neardup.io import Document
from neardup.methods.base import Collector, Method, MethodConfig, PairArrays, texts_of

__all__ = ["EmbeddingConfig", "EmbeddingMethod"]

I64 = npt.NDArray[np.int64]
F32 = npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class EmbeddingConfig(MethodConfig):
    """Cosine similarity of text embeddings.

    Attributes:
        threshold: Cosine similarity.
        model: What :func:`neardup.embeddings.provider_for` takes: ``"static"`` (``None``,
            the default: the bundled static model), ``"minilm"``, a model folder (model2vec
            or sentence-transformers) or ``"openai:MODEL"``, ``"voyage:MODEL"``,
            ``"cohere:MODEL"``.
        cache: A SQLite file that keeps the vectors by model and text hash
            (:class:`neardup.store.embcache.EmbeddingCache`), so a re-run embeds only new
            texts; ``None``: no cache.
    """

    KIND: ClassVar[str] = "embedding"
    threshold: float = 0.9
    model: str | None = None
    cache: str | None = None

    def __post_init__(self) -> None:
        MethodConfig.__post_init__(self)
        for name in ("model", "cache"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, str) or not value):
                raise ConfigError(f"{name} must be a non-empty string or None, got {value!r}")


class EmbeddingCollector(Collector):
    def __init__(self, threshold: float) -> None:
        self._threshold = threshold
        self._vectors: list[F32] = []
        self._positions: list[int] = []

    def add(self, positions: I64, payload: F32) -> None:
        self._vectors.append(payload)
        self._positions.extend(positions.tolist())

    def pairs(self, *, jobs: int = 1) -> PairArrays:
        from neardup.index.vectors import VectorIndex

        if not self._vectors:
            return PairArrays.empty()
        matrix = np.concatenate(self._vectors)
        live = np.flatnonzero(np.any(matrix != 0, axis=1))  # a zero vector has no direction
        if live.size < 2:
            return PairArrays.empty()
        index = VectorIndex(matrix.shape[1])
        index.add_many([self._positions[k] for k in live.tolist()], matrix[live])
        rows = [(a, b, float(s)) for a, b, s in index.pairs(self._threshold)]
        if not rows:
            return PairArrays.empty()
        a, b, s = zip(*rows, strict=True)
        return PairArrays.of(a, b, s).sorted()


class EmbeddingMethod(Method):
    """Cosine similarity of text embeddings (extra ``embeddings``).

    Texts that embed to a zero vector (empty, or no token the model knows) pair with nothing.
    """

    name: ClassVar[str] = "embedding"
    config: EmbeddingConfig

    def __init__(self, config: EmbeddingConfig) -> None:
        super().__init__(config)
        self._provider: Any = None

    @property
    def provider(self) -> Any:
        """The embedding provider (loaded on first use)."""
        if self._provider is None:
            from neardup.embeddings import provider_for

            provider: Any = provider_for(self.config.model)
            if self.config.cache is not None:
                from neardup.store.embcache import CachedProvider

                provider = CachedProvider(provider, self.config.cache)
            self._provider = provider
        return self._provider

    @property
    def params(self) -> str:
        return f"embedding-{self.provider.model_id}"

    def sketch(self, docs: Sequence[Document]) -> F32:
        return np.asarray(self.provider.embed(texts_of(docs)), dtype=np.float32)

    def collector(self) -> EmbeddingCollector:
        return EmbeddingCollector(self.threshold)

    def fingerprint(self, doc: Document) -> str:
        vec = self.provider.embed(texts_of([doc]))[0]
        return " ".join(f"{x:.6f}" for x in vec)

    def compare(self, a: Document, b: Document) -> tuple[float, int | None]:
        va, vb = self.provider.embed(texts_of([a, b]))
        denom = float(np.linalg.norm(va) * np.linalg.norm(vb))
        return (float(np.dot(va, vb)) / denom if denom else 0.0), None
