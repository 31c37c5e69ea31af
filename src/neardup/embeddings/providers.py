"""Cloud embedding providers over HTTP: OpenAI, Voyage AI and Cohere (request/response shapes).

==========  ===============================  ================================  =====================
Service     Endpoint (default ``base_url``)  Request body                      Response vectors
==========  ===============================  ================================  =====================
OpenAI      ``https://api.openai.com/v1``    ``{model, input: [...],``         ``data[].embedding``
            ``+ /embeddings``                ``encoding_format: "float"}``     (ordered by index)
Voyage      ``https://api.voyageai.com/v1``  ``{model, input: [...],``         ``data[].embedding``
            ``+ /embeddings``                ``input_type?}``                  (ordered by index)
Cohere      ``https://api.cohere.com/v1``    ``{model, texts: [...],``         ``embeddings``
            ``+ /embed``                     ``input_type}``                   or its ``float``
==========  ===============================  ================================  =====================

Texts are sent in batches of at most ``batch_size`` (limits: OpenAI 2048 inputs, Voyage 1000
(128 by default, the limit of its older models), Cohere 96). Each batch is one
:meth:`RetryingClient.post_json` call with the retry policy and deadline of
:class:`~neardup.embeddings.http.RetryPolicy`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from typing import ClassVar

import numpy as np
import numpy.typing as npt

from neardup.embeddings.http import RetryingClient, RetryPolicy
from neardup.errors import ConfigError, ProviderError

__all__ = ["CohereProvider", "OpenAIProvider", "VoyageProvider"]

F32 = npt.NDArray[np.float32]


class _HttpProvider:
    """Shared machinery: key lookup, batching, response validation. Not public."""

    service: ClassVar[str]
    env_vars: ClassVar[tuple[str, ...]]
    default_base_url: ClassVar[str]
    path: ClassVar[str]
    default_model: ClassVar[str]
    dimensions: ClassVar[dict[str, int]]
    unknown_dimension: ClassVar[int]
    max_batch: ClassVar[int]
    default_batch: ClassVar[int]

    def __init__(
        self,
        model: str | None = None,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        dimension: int | None = None,
        batch_size: int | None = None,
        retry: RetryPolicy | None = None,
        seed: int | None = None,
        sleep: Callable[[float], None] = time.sleep,
        transport: object | None = None,
    ) -> None:
        self._model = model or self.default_model
        key = api_key
        if key is None:
            key = next((os.environ[v] for v in self.env_vars if os.environ.get(v)), None)
        if not key:
            names = " or ".join(self.env_vars)
            raise ConfigError(
                f"no {self.service} API key: pass api_key=... or set the environment variable "
                f"{names}"
            )
        size = self.default_batch if batch_size is None else batch_size
        if isinstance(size, bool) or not isinstance(size, int) or not 1 <= size <= self.max_batch:
            raise ConfigError(
                f"batch_size must be an integer from 1 to {self.max_batch} for {self.service}, "
                f"got {batch_size!r}"
            )
        self.batch_size = size
        if dimension is not None and (
            isinstance(dimension, bool) or not isinstance(dimension, int) or dimension < 1
        ):
            raise ConfigError(f"dimension must be a positive integer, got {dimension!r}")
        self._dimension_known = dimension is not None or self._model in self.dimensions
        self._dimension = dimension or self.dimensions.get(self._model, self.unknown_dimension)
        names = " or ".join(self.env_vars)
        self._client = RetryingClient(
            self.service,
            base_url or self.default_base_url,
            key,
            key_hint=f"api_key=... or {names}",
            policy=retry or RetryPolicy(),
            seed=seed,
            sleep=sleep,
            transport=transport,
        )

    @property
    def model_id(self) -> str:
        """``"<service>:<model>"``, e.g. ``"openai:text-embedding-3-small"``."""
        return f"{self.service.lower()}:{self._model}"

    @property
    def dimension(self) -> int:
        """Vector length: from ``dimension=``, the known-model table, or the first response."""
        return self._dimension

    @property
    def base_url(self) -> str:
        """The service root requests go to."""
        return self._client.base_url

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(model={self._model!r}, base_url={self.base_url!r}, "
            f"api_key='***')"
        )

    def close(self) -> None:
        """Close the HTTP connection pool."""
        self._client.close()

    def __enter__(self) -> _HttpProvider:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _body(self, texts: list[str]) -> dict[str, object]:
        raise NotImplementedError  # pragma: no cover - every provider overrides it

    def _vectors(self, response: object) -> list[object]:
        if not isinstance(response, dict) or not isinstance(response.get("data"), list):
            raise self._shape_error("a 'data' list")
        items = response["data"]
        if not all(isinstance(item, dict) and "embedding" in item for item in items):
            raise self._shape_error("'data' items with an 'embedding'")
        indexes = [item.get("index") for item in items]
        if any(i is not None for i in indexes):
            # a permutation of 0..n-1, or the rows cannot be matched to the texts
            valid = all(isinstance(i, int) and not isinstance(i, bool) for i in indexes)
            if not valid or sorted(indexes) != list(range(len(items))):
                raise self._shape_error("'data' items whose 'index' values are 0, 1, ..., n-1")
            items = sorted(items, key=lambda item: item["index"])
        return [item["embedding"] for item in items]

    def _shape_error(self, expected: str) -> ProviderError:
        return ProviderError(
            f"{self.service} response has no {expected}; check that base_url "
            f"{self.base_url!r} points at a {self.service}-compatible embeddings API"
        )

    def embed(self, texts: Sequence[str]) -> F32:
        """Embed ``texts``: one request per batch of ``batch_size``, rows in input order.

        Args:
            texts: The texts; an empty sequence returns shape ``(0, dimension)`` without a
                request.

        Returns:
            A float32 array of shape ``(len(texts), dimension)``.

        Raises:
            ProviderError: A non-retryable HTTP status, or a response of the wrong shape.
            TimeoutError: One batch did not succeed within the retry policy's deadline.
            ConfigError: ``texts`` is not a sequence of strings.
        """
        if isinstance(texts, str) or not all(isinstance(t, str) for t in texts):
            raise ConfigError("texts must be a sequence of str; wrap a single text in a list")
        if not texts:
            return np.zeros((0, self._dimension), dtype=np.float32)
        rows: list[F32] = []
        for start in range(0, len(texts), self.batch_size):
            batch = list(texts[start : start + self.batch_size])
            response = self._client.post_json(self.path, self._body(batch))
            rows.append(self._check(self._vectors(response), len(batch)))
        return np.ascontiguousarray(np.concatenate(rows, axis=0))

    def _check(self, vectors: list[object], expected: int) -> F32:
        if not vectors:
            raise ProviderError(
                f"{self.service} returned no embeddings for {expected} texts; check the "
                "model name and the service status"
            )
        if len(vectors) != expected:
            raise ProviderError(
                f"{self.service} returned {len(vectors)} embeddings for {expected} texts; "
                f"check that base_url {self.base_url!r} is a {self.service}-compatible API"
            )
        try:
            # no dtype here: numpy would parse "0.5" strings into floats
            raw = np.array(vectors)
        except (TypeError, ValueError, OverflowError):
            raise self._shape_error("numeric embedding vectors of one length") from None
        if raw.ndim != 2 or raw.dtype.kind not in "fiu" or raw.shape[1] == 0:
            raise self._shape_error("non-empty embedding vectors of JSON numbers, one length")
        with np.errstate(over="ignore"):
            matrix = raw.astype(np.float32)
        if not np.all(np.isfinite(matrix)):
            raise self._shape_error("finite numeric embedding vectors of one length")
        width = int(matrix.shape[1])
        if width != self._dimension:
            if self._dimension_known:
                raise ProviderError(
                    f"{self.service} returned vectors of dimension {width}, expected "
                    f"{self._dimension} for model {self._model!r}; pass dimension={width} if "
                    "the model is configured that way"
                )
            self._dimension = width
            self._dimension_known = True
        return matrix


class OpenAIProvider(_HttpProvider):
    """OpenAI embeddings (``POST {base_url}/embeddings``), or any OpenAI-compatible server.

    Args:
        model: Model name (default ``text-embedding-3-small``, 1536 dimensions).
        api_key: The key; default from ``OPENAI_API_KEY``. Never shown in repr, logs or errors.
        base_url: Service root (default ``https://api.openai.com/v1``), for proxies and
            compatible servers.
        dimension: Vector length when the model is not in the known table (else 1536 until
            the first response tells).
        batch_size: Texts per request, 1 to 2048 (default 2048).
        retry: The :class:`RetryPolicy` (retries, backoff, deadline, per-attempt timeout).
        seed: Seed of the backoff jitter.
        sleep: Sleep function (tests).
        transport: ``httpx`` transport (tests).

    Raises:
        ConfigError: No API key, or a parameter out of range.

    Examples:
        >>> p = OpenAIProvider(api_key="sk-secret")
        >>> p.model_id, p.dimension, "sk-secret" in repr(p)
        ('openai:text-embedding-3-small', 1536, False)
    """

    service = "OpenAI"
    env_vars = ("OPENAI_API_KEY",)
    default_base_url = "https://api.openai.com/v1"
    path = "/embeddings"
    default_model = "text-embedding-3-small"
    dimensions: ClassVar[dict[str, int]] = {
        "text-embedding-3-small": 1536,
        "text-embedding-3-large": 3072,
        "text-embedding-ada-002": 1536,
    }
    unknown_dimension = 1536
    max_batch = 2048
    default_batch = 2048

    def _body(self, texts: list[str]) -> dict[str, object]:
        return {"model": self._model, "input": texts, "encoding_format": "float"}


class VoyageProvider(_HttpProvider):
    """Voyage AI embeddings (``POST {base_url}/embeddings``).

    Args:
        model: Model name (default ``voyage-3-lite``, 512 dimensions).
        api_key: The key; default from ``VOYAGE_API_KEY``. Never shown in repr, logs or errors.
        base_url: Service root (default ``https://api.voyageai.com/v1``).
        input_type: ``"document"``, ``"query"`` or ``None`` (omitted from the request).
        dimension: Vector length when the model is not in the known table (else 1024).
        batch_size: Texts per request, 1 to 1000 (default 128, the limit of older models).
        retry: The :class:`RetryPolicy`.
        seed: Seed of the backoff jitter.
        sleep: Sleep function (tests).
        transport: ``httpx`` transport (tests).

    Raises:
        ConfigError: No API key, an unknown input_type, or a parameter out of range.

    Examples:
        >>> VoyageProvider(api_key="k", input_type="document").dimension
        512
    """

    service = "Voyage"
    env_vars = ("VOYAGE_API_KEY",)
    default_base_url = "https://api.voyageai.com/v1"
    path = "/embeddings"
    default_model = "voyage-3-lite"
    dimensions: ClassVar[dict[str, int]] = {
        "voyage-3-lite": 512,
        "voyage-3": 1024,
        "voyage-large-2": 1536,
        "voyage-code-2": 1536,
    }
    unknown_dimension = 1024
    max_batch = 1000
    default_batch = 128

    def __init__(
        self,
        model: str | None = None,
        *,
        input_type: str | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        dimension: int | None = None,
        batch_size: int | None = None,
        retry: RetryPolicy | None = None,
        seed: int | None = None,
        sleep: Callable[[float], None] = time.sleep,
        transport: object | None = None,
    ) -> None:
        if input_type not in (None, "document", "query"):
            raise ConfigError(
                f"Voyage input_type must be 'document', 'query' or None, got {input_type!r}"
            )
        self.input_type = input_type
        super().__init__(
            model,
            api_key=api_key,
            base_url=base_url,
            dimension=dimension,
            batch_size=batch_size,
            retry=retry,
            seed=seed,
            sleep=sleep,
            transport=transport,
        )

    def _body(self, texts: list[str]) -> dict[str, object]:
        body: dict[str, object] = {"model": self._model, "input": texts}
        if self.input_type is not None:
            body["input_type"] = self.input_type
        return body


class CohereProvider(_HttpProvider):
    """Cohere embeddings (``POST {base_url}/embed``).

    Args:
        model: Model name (default ``embed-english-v3.0``, 1024 dimensions).
        api_key: The key; default from ``CO_API_KEY``, then ``COHERE_API_KEY``. Never shown in
            repr, logs or errors.
        base_url: Service root (default ``https://api.cohere.com/v1``).
        input_type: ``search_document`` (default), ``search_query``, ``classification`` or
            ``clustering``.
        dimension: Vector length when the model is not in the known table (else 1024).
        batch_size: Texts per request, 1 to 96 (default 96).
        retry: The :class:`RetryPolicy`.
        seed: Seed of the backoff jitter.
        sleep: Sleep function (tests).
        transport: ``httpx`` transport (tests).

    Raises:
        ConfigError: No API key, an unknown input_type, or a parameter out of range.

    Examples:
        >>> CohereProvider("embed-english-light-v3.0", api_key="k").dimension
        384
    """

    service = "Cohere"
    env_vars = ("CO_API_KEY", "COHERE_API_KEY")
    default_base_url = "https://api.cohere.com/v1"
    path = "/embed"
    default_model = "embed-english-v3.0"
    dimensions: ClassVar[dict[str, int]] = {
        "embed-english-v3.0": 1024,
        "embed-multilingual-v3.0": 1024,
        "embed-english-light-v3.0": 384,
        "embed-multilingual-light-v3.0": 384,
    }
    unknown_dimension = 1024
    max_batch = 96
    default_batch = 96
    input_types: ClassVar[tuple[str, ...]] = (
        "search_document",
        "search_query",
        "classification",
        "clustering",
    )

    def __init__(
        self,
        model: str | None = None,
        *,
        input_type: str = "search_document",
        api_key: str | None = None,
        base_url: str | None = None,
        dimension: int | None = None,
        batch_size: int | None = None,
        retry: RetryPolicy | None = None,
        seed: int | None = None,
        sleep: Callable[[float], None] = time.sleep,
        transport: object | None = None,
    ) -> None:
        if input_type not in self.input_types:
            raise ConfigError(
                f"Cohere input_type must be one of {', '.join(self.input_types)}, got "
                f"{input_type!r}"
            )
        self.input_type = input_type
        super().__init__(
            model,
            api_key=api_key,
            base_url=base_url,
            dimension=dimension,
            batch_size=batch_size,
            retry=retry,
            seed=seed,
            sleep=sleep,
            transport=transport,
        )

    def _body(self, texts: list[str]) -> dict[str, object]:
        return {"model": self._model, "texts": texts, "input_type": self.input_type}

    def _vectors(self, response: object) -> list[object]:
        if not isinstance(response, dict) or "embeddings" not in response:
            raise self._shape_error("an 'embeddings' field")
        vectors = response["embeddings"]
        if isinstance(vectors, dict):  # v2 API / embedding_types: {"float": [...]}
            vectors = vectors.get("float")
        if not isinstance(vectors, list):
            raise self._shape_error("an 'embeddings' list of float vectors")
        return vectors
