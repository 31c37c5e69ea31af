"""[serve] Near-duplicate detection as an online service, and its client (``docs/serve.md``).

``neardup serve --index DB`` answers ``POST /v1/check`` (check documents and remember them),
``POST /v1/query``, ``GET``/``DELETE /v1/documents/{id}``, ``GET /v1/stats``, ``/healthz``,
``/metrics`` and ``/openapi.json``, over the SQLite store of :mod:`neardup.store`: many reader
threads, one writer thread whose group commits acknowledge a document only once it is on
disk. :class:`Client` (also ``neardup.Client``) talks to it.

``import neardup.serve`` imports neither Starlette, uvicorn nor httpx: :func:`create_app`,
:func:`run` and :class:`Client` do, and raise
:class:`~neardup.errors.MissingExtraError` (``pip install 'neardup[serve]'``) without them.
The names below are imported on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from neardup.serve.app import create_app
    from neardup.serve.auth import ApiKeys
    from neardup.serve.client import Client
    from neardup.serve.config import Limits, ServeConfig
    from neardup.serve.results import Duplicate, Result
    from neardup.serve.server import run
    from neardup.serve.service import Service

__all__ = [
    "ApiKeys",
    "Client",
    "Duplicate",
    "Limits",
    "Result",
    "ServeConfig",
    "Service",
    "create_app",
    "run",
]

_LAZY = {
    "ApiKeys": "neardup.serve.auth",
    "Client": "neardup.serve.client",
    "Duplicate": "neardup.serve.results",
    "Limits": "neardup.serve.config",
    "Result": "neardup.serve.results",
    "ServeConfig": "neardup.serve.config",
    "Service": "neardup.serve.service",
    "create_app": "neardup.serve.app",
    "run": "neardup.serve.server",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'neardup.serve' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
