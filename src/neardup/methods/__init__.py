"""The dedup methods: how each kind of fingerprint is sketched, indexed and turned into pairs.

A method (:class:`Method`) is a stateless value built from its configuration; each run gets a
:class:`Collector` from :meth:`Method.collector`, and the pairs come back as
:class:`PairArrays`. The registry (:mod:`neardup.methods.registry`) lists every method with its
configuration and abilities. ``threshold`` is always a similarity in [0, 1]; each method
documents how it maps to its own measure.
"""

from typing import TYPE_CHECKING, Any

from neardup.methods.base import Collector, Method, MethodConfig, PairArrays
from neardup.methods.registry import (
    REGISTRY,
    MethodInfo,
    build,
    config_from_json,
    make_config,
    make_method,
    method_info,
    method_names,
)

__all__ = [
    "DEFAULT_THRESHOLDS",
    "METHODS",
    "REGISTRY",
    "Collector",
    "Method",
    "MethodConfig",
    "MethodInfo",
    "PairArrays",
    "build",
    "config_from_json",
    "make_config",
    "make_method",
    "method_info",
    "method_names",
]

if TYPE_CHECKING:
    from neardup.methods.registry import DEFAULT_THRESHOLDS, METHODS


def __getattr__(name: str) -> Any:
    # these two import every method's module: read from the registry on first use
    if name in ("DEFAULT_THRESHOLDS", "METHODS"):
        from neardup.methods import registry

        value = getattr(registry, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
