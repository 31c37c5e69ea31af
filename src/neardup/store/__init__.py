"""The persistent SQLite store: sketches and lookup keys kept across runs (``neardup index``).

Examples:
    >>> from neardup.store import Store
    >>> with Store.open(":memory:", kind="minhash", params="minhash-0123456789abcdef") as s:
    ...     len(s)
    0
"""

from neardup.store.migrations import SCHEMA_VERSION
from neardup.store.sqlite import Store

__all__ = ["SCHEMA_VERSION", "Store"]
