"""provider_for(): the embedding provider a model name means (``static``, ``minilm``, a folder
or ``service:model``), the one place the CLI and :mod:`neardup.methods` resolve ``--model``."""

from __future__ import annotations

import json
import os
from pathlib import Path

from neardup.embeddings.local import LocalProvider
from neardup.embeddings.providers import CohereProvider, OpenAIProvider, VoyageProvider
from neardup.embeddings.static import StaticProvider
from neardup.errors import ConfigError

__all__ = ["DEFAULT_MODEL", "MODEL_NAMES", "provider_for"]

#: The model ``--method embedding`` uses when none is named.
DEFAULT_MODEL = "static"

#: Names that are not paths: the bundled static model and the local MiniLM transformer.
MODEL_NAMES = ("static", "minilm")

_SERVICES: dict[str, type[OpenAIProvider | VoyageProvider | CohereProvider]] = {
    "openai": OpenAIProvider,
    "voyage": VoyageProvider,
    "cohere": CohereProvider,
}

Provider = StaticProvider | LocalProvider | OpenAIProvider | VoyageProvider | CohereProvider


def _is_model2vec(folder: Path) -> bool:
    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(config, dict) and config.get("model_type") == "model2vec"


def provider_for(model: str | os.PathLike[str] | None = None) -> Provider:
    """The provider for a model name.

    Args:
        model: ``"static"`` (default): the bundled static model (:class:`StaticProvider`);
            ``"minilm"``: all-MiniLM-L6-v2 through sentence-transformers
            (:class:`LocalProvider`); a folder: a model2vec folder (its config.json says
            ``model_type: model2vec``) becomes a :class:`StaticProvider`, any other a
            :class:`LocalProvider`; ``"openai:MODEL"``, ``"voyage:MODEL"``,
            ``"cohere:MODEL"``: that HTTP service (key from its environment variable).

    Raises:
        ConfigError: Not a known name, service or existing folder.

    Examples:
        >>> type(provider_for()).__name__, type(provider_for("minilm")).__name__
        ('StaticProvider', 'LocalProvider')
        >>> provider_for(provider_for().model_path).model_id == provider_for().model_id
        True
    """
    name = DEFAULT_MODEL if model is None else os.fspath(model)
    if name == "static":
        return StaticProvider()
    if name == "minilm":
        return LocalProvider()
    service, sep, rest = name.partition(":")
    if sep and service in _SERVICES and not Path(name).exists():
        return _SERVICES[service](rest or None)
    path = Path(name).expanduser()
    if not path.is_dir():
        raise ConfigError(
            f"model {name!r} is not 'static', 'minilm', openai:/voyage:/cohere:MODEL or an "
            "existing folder; pass one of those (a folder holds a model2vec or a "
            "sentence-transformers model)"
        )
    if _is_model2vec(path):
        return StaticProvider(path)
    return LocalProvider(path)
