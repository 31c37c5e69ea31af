"""Semantic dedup: cosine similarity of sentence embeddings (extra ``embeddings``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from neardup.io import Document
from neardup.methods.base import Collector, Method, MethodConfig, PairArrays, texts_of

__all__ = ["EmbeddingConfig", "EmbeddingMethod"]

I64 = npt.NDArray[np.int64]
F32 = npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class EmbeddingConfig(MethodConfig):
    """Cosine similarity of embeddings from a local model.

    Attributes:
        threshold: Cosine similarity.
        model: A local model folder (default: the packaged MiniLM).
    """

    KIND: ClassVar[str] = "embedding"
    threshold: float = 0.9
    model: str | None = None


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
        index = VectorIndex(matrix.shape[1])
        index.add_many(self._positions, matrix)
        rows = [(a, b, float(s)) for a, b, s in index.pairs(self._threshold)]
        if not rows:
            return PairArrays.empty()
        a, b, s = zip(*rows, strict=True)
        return PairArrays.of(a, b, s).sorted()


class EmbeddingMethod(Method):
    """Cosine similarity of sentence embeddings from a local model (extra ``embeddings``)."""

    name: ClassVar[str] = "embedding"
    config: EmbeddingConfig

    def __init__(self, config: EmbeddingConfig) -> None:
        super().__init__(config)
        self._provider: Any = None

    @property
    def provider(self) -> Any:
        """The embedding provider (loaded on first use)."""
        if self._provider is None:
            from neardup.embeddings import LocalProvider

            self._provider = LocalProvider(self.config.model)
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
