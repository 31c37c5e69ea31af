"""Fixtures of the neardup serve tests: services without and with API keys on a new store."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Any]:
    """A minhash (0.8) service without keys, on a new store."""
    from .serving import start_thread_server

    running = start_thread_server(tmp_path / "s.db")
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture
def keyed(tmp_path: Path) -> Iterator[Any]:
    """A minhash service with a read key and a write key."""
    from neardup.serve.auth import ApiKeys

    from .serving import READ_KEY, WRITE_KEY, start_thread_server

    keys = ApiKeys.from_lines([f"{READ_KEY} read", f"{WRITE_KEY} write"])
    running = start_thread_server(tmp_path / "k.db", keys=keys)
    try:
        yield running
    finally:
        running.stop()
