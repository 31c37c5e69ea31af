"""Shared type aliases and the Protocols of the pluggable stages.

Users can pass their own canonicalizer or tokenizer anywhere neardup takes one, without
subclassing: anything with the right methods will do.
"""

from __future__ import annotations

from typing import Protocol, TypeAlias, runtime_checkable

__all__ = ["CanonicalizerLike", "DocId", "Text", "Tokenizer"]

#: A document: text, or UTF-8 bytes.
Text: TypeAlias = str | bytes
#: The key of a document in an index or a dedup result.
DocId: TypeAlias = str | int


@runtime_checkable
class CanonicalizerLike(Protocol):
    """Anything that maps text to its canonical form and names its configuration.

    The id is ``config``, a stable string, as the public API names it (``Canonicalizer.config``);
    an object that names it ``params`` instead, as sketches and ``SimHasher`` do, is accepted
    too (:func:`neardup.canonicalize.canonicalizer_id`).
    """

    @property
    def config(self) -> str:
        """A stable id of the configuration, recorded in fingerprints."""
        ...

    def canonicalize(self, text: str) -> str:
        """Return the canonical form of ``text``."""
        ...


@runtime_checkable
class Tokenizer(Protocol):
    """Anything that splits text into tokens and names itself."""

    @property
    def name(self) -> str:
        """A stable id of the tokenizer and its parameters, recorded in fingerprints."""
        ...

    def tokenize(self, text: str) -> list[str]:
        """Return the tokens of ``text`` in order."""
        ...
