"""datasketch's in-memory ``storage`` classes: ``DictListStorage`` and ``DictSetStorage``.

Only datasketch's ``{"type": "dict"}`` storage exists here; Redis, Cassandra and MongoDB
back-ends are datasketch's own (use datasketch itself for them). Both classes are ``dict``
subclasses so that the index's hot paths use plain dict operations.
"""

from __future__ import annotations

import random
import string
from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping

from neardup.errors import ConfigError

__all__ = [
    "DictListStorage",
    "DictSetStorage",
    "OrderedStorage",
    "UnorderedStorage",
    "ordered_storage",
    "unordered_storage",
]


def _random_name(length: int) -> bytes:
    """A random ASCII name (datasketch's storage basename); not used for anything secret."""
    rng = random.SystemRandom()
    return "".join(rng.choice(string.ascii_lowercase) for _ in range(length)).encode("utf8")


def _check_config(config: Mapping[str, object] | None) -> None:
    kind = (config or {}).get("type", "dict")
    if kind != "dict":
        raise ConfigError(
            f"storage type {kind!r} is not available in neardup.compat.datasketch (in-memory "
            "'dict' storage only); use datasketch itself for Redis, Cassandra or MongoDB"
        )


class _Storage(dict):  # type: ignore[type-arg]  # keys and values are the caller's objects
    """Shared methods of datasketch's ``Storage`` API over a dict."""

    _buffer_size = 50000

    def __init__(self, config: Mapping[str, object] | None = None) -> None:
        if config is not None:
            _check_config(config)
        super().__init__()

    def getmany(self, *keys: Hashable) -> list[object]:
        """``get`` of each key."""
        return [self.get(k) for k in keys]

    def remove(self, *keys: Hashable, **kwargs: object) -> None:
        """Delete keys."""
        for key in keys:
            del self[key]

    def remove_val(self, key: Hashable, val: Hashable, **kwargs: object) -> None:
        """Remove one value stored under ``key``."""
        self[key].remove(val)

    def size(self) -> int:
        """Number of keys."""
        return len(self)

    def itemcounts(self, **kwargs: object) -> dict[Hashable, int]:
        """The number of values under each key."""
        return {k: len(v) for k, v in self.items()}

    def has_key(self, key: Hashable) -> bool:
        """True when ``key`` is stored."""
        return key in self

    @property
    def buffer_size(self) -> int:
        """Buffer size (no effect in memory)."""
        return self._buffer_size

    @buffer_size.setter
    def buffer_size(self, value: int) -> None:
        self._buffer_size = value

    def status(self) -> dict[str, str]:
        """The storage kind."""
        return {"keyspace_name": "", "storage_type": "dict"}

    def empty_buffer(self) -> None:
        """Nothing to flush in memory."""

    def add_to_select_buffer(self, keys: Iterable[Hashable]) -> None:
        """Queue lookups for :meth:`collect_select_buffer`."""
        buf: list[object] = self.__dict__.setdefault("_select_buffer", [])
        buf.extend(self.getmany(*keys))

    def collect_select_buffer(self) -> list[object]:
        """The queued lookups' results, emptying the queue."""
        buf: list[object] = self.__dict__.get("_select_buffer", [])
        out = list(buf)
        del buf[:]
        return out

    def __reduce__(self):  # type: ignore[no-untyped-def]  # plain pickling of a dict subclass
        return (type(self), (), None, None, iter(self.items()))


class OrderedStorage(_Storage):
    """Marker base of list-valued storage."""


class UnorderedStorage(_Storage):
    """Marker base of set-valued storage."""


class DictListStorage(OrderedStorage):
    """``key -> list`` storage (datasketch's ``DictListStorage``)."""

    def get(self, key: Hashable, default: object = None) -> list[object]:
        """The list under ``key`` (empty when absent)."""
        return dict.get(self, key, [] if default is None else default)  # type: ignore[no-any-return]

    def insert(self, key: Hashable, *vals: object, **kwargs: object) -> None:
        """Append values under ``key``."""
        lst = dict.get(self, key)
        if lst is None:
            self[key] = list(vals)
        else:
            lst.extend(vals)


class DictSetStorage(UnorderedStorage, defaultdict):  # type: ignore[type-arg]
    """``key -> set`` storage (datasketch's ``DictSetStorage``, a ``defaultdict(set)``)."""

    def __init__(self, config: Mapping[str, object] | None = None) -> None:
        if config is not None:
            _check_config(config)
        defaultdict.__init__(self, set)

    def __reduce__(self):  # type: ignore[no-untyped-def]  # pickle with the set factory
        return (type(self), (), None, None, iter(self.items()))

    def get(self, key: Hashable, default: object = None) -> set[object]:
        """The set under ``key`` (empty when absent)."""
        return dict.get(self, key, set() if default is None else default)  # type: ignore[no-any-return]

    def insert(self, key: Hashable, *vals: object, **kwargs: object) -> None:
        """Add values under ``key``."""
        s = dict.get(self, key)
        if s is None:
            self[key] = set(vals)
        else:
            s.update(vals)


def ordered_storage(
    config: Mapping[str, object] | None, name: bytes | None = None
) -> DictListStorage:
    """A list-valued storage for ``config`` (only ``{"type": "dict"}``).

    Raises:
        ConfigError: Another storage type.
    """
    return DictListStorage(config)


def unordered_storage(
    config: Mapping[str, object] | None, name: bytes | None = None
) -> DictSetStorage:
    """A set-valued storage for ``config`` (only ``{"type": "dict"}``).

    Raises:
        ConfigError: Another storage type.
    """
    return DictSetStorage(config)
