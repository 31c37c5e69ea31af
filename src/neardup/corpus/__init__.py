"""Corpus workflows of data teams: :func:`read_corpus` and :func:`dedup_corpus` (clusters and
every output from one read), safe outputs, annotated records, exact, line-level and substring
deduplication (see ``docs/library.md``, ``docs/dedup.md`` and ``docs/formats.md``).

The names below are imported on first use, so that importing one submodule stays light.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from neardup.corpus.dedup import KEEP_RULES, CorpusResult, dedup_corpus
    from neardup.corpus.reading import Corpus, read_corpus

__all__ = ["KEEP_RULES", "Corpus", "CorpusResult", "dedup_corpus", "read_corpus"]

_LAZY = {
    "KEEP_RULES": "neardup.corpus.dedup",
    "Corpus": "neardup.corpus.reading",
    "CorpusResult": "neardup.corpus.dedup",
    "dedup_corpus": "neardup.corpus.dedup",
    "read_corpus": "neardup.corpus.reading",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'neardup.corpus' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
