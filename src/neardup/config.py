"""Frozen, validated parameter dataclasses and their stable fingerprints.

Every stage's parameters are data: a frozen dataclass validated in ``__post_init__``
(raising :class:`~neardup.errors.ConfigError`). :meth:`Params.fingerprint` gives a
stable string recorded with every persisted sketch and report, so outputs made with
different parameters are never mixed.
"""

from __future__ import annotations

import dataclasses
import json
from enum import Enum
from typing import Any, ClassVar

import xxhash

from neardup.errors import ConfigError

__all__ = [
    "CanonicalConfig",
    "Params",
    "check_choice",
    "check_range",
]


def _plain(value: Any) -> Any:
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in sorted(value.items())}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    return value


@dataclasses.dataclass(frozen=True, slots=True)
class Params:
    """Base of every parameter dataclass: a name, a canonical JSON form and a fingerprint.

    Subclasses set ``KIND`` (the algorithm id, e.g. ``"simhash"``) and declare fields.
    """

    KIND: ClassVar[str] = "params"

    def to_dict(self) -> dict[str, Any]:
        """Return the parameters as plain JSON-compatible data, keys sorted."""
        return {"kind": self.KIND, **_plain(self)}

    def canonical_json(self) -> str:
        """Return the parameters as canonical JSON (sorted keys, no spaces)."""
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))

    def fingerprint(self) -> str:
        """Return a stable id of these parameters: ``KIND-<16 hex digits>``.

        The digits are xxh3_64 (seed 0) of :meth:`canonical_json`; the same parameters give
        the same string on every platform, Python version and process.
        """
        digest = xxhash.xxh3_64_intdigest(self.canonical_json().encode("utf-8"))
        return f"{self.KIND}-{digest:016x}"


def check_range(name: str, value: float, low: float, high: float, *, integer: bool = False) -> None:
    """Raise ConfigError unless ``low <= value <= high`` (and an int when ``integer``).

    Examples:
        >>> check_range("threshold", 0.5, 0.0, 1.0)
        >>> check_range("bits", 65, 1, 64, integer=True)
        Traceback (most recent call last):
        ...
        neardup.errors.ConfigError: bits must be between 1 and 64, got 65
    """
    if integer and (isinstance(value, bool) or not isinstance(value, int)):
        raise ConfigError(f"{name} must be an integer, got {value!r}")
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise ConfigError(f"{name} must be a number, got {value!r}")
    if not low <= value <= high:
        raise ConfigError(f"{name} must be between {low} and {high}, got {value!r}")


def check_choice(name: str, value: object, choices: tuple[object, ...]) -> None:
    """Raise ConfigError unless ``value`` is one of ``choices``.

    Examples:
        >>> check_choice("bits", 96, (64, 128, 256))
        Traceback (most recent call last):
        ...
        neardup.errors.ConfigError: bits must be one of 64, 128, 256; got 96
    """
    if value not in choices:
        listed = ", ".join(str(c) for c in choices)
        raise ConfigError(f"{name} must be one of {listed}; got {value!r}")


@dataclasses.dataclass(frozen=True, slots=True)
class CanonicalConfig(Params):
    """Parameters of :class:`neardup.Canonicalizer`.

    Attributes:
        normalization: ``"nfkc"``, ``"nfc"`` or ``"none"``.
        casefold: ``"full"`` (``str.casefold``), ``"lower"`` (``str.lower``) or ``"none"``.
        strip_bidi: Drop bidi controls (Trojan Source, CVE-2021-42574).
        strip_format: Drop txtfp's curated list of invisible format characters.
        confusables: Map to the UTS #39 confusable skeleton (extra ``security``), before and
            after case folding; also strips every default-ignorable character and shows
            right-to-left override runs in display order (Trojan Source).
        collapse_whitespace: Replace runs of whitespace by one space and strip the ends.
        strip_diacritics: Remove combining marks after canonical decomposition.
        max_bytes: Cap on the UTF-8 size of the input (InputTooLargeError above it).
        max_growth: Cap on how many times normalization may grow the text.
    """

    KIND: ClassVar[str] = "canonical"
    normalization: str = "nfkc"
    casefold: str = "full"
    strip_bidi: bool = True
    strip_format: bool = True
    confusables: bool = False
    collapse_whitespace: bool = False
    strip_diacritics: bool = False
    max_bytes: int = 64 * 1024 * 1024
    max_growth: float = 4.0

    def __post_init__(self) -> None:
        check_choice("normalization", self.normalization, ("nfkc", "nfc", "none"))
        check_choice("casefold", self.casefold, ("full", "lower", "none"))
        check_range("max_bytes", self.max_bytes, 1, 2**40, integer=True)
        check_range("max_growth", self.max_growth, 1.0, 1e6)

    def config_string(self) -> str:
        """Return the txtfp-style id, e.g. ``nfkc-cf-simple-bidi-fmt`` for the txtfp default.

        Options txtfp lacks append their own suffixes (``-ws``, ``-nodia``, ``-lower``).
        """
        cf = {"full": "simple", "lower": "lower", "none": "none"}[self.casefold]
        parts = [self.normalization, "cf", cf]
        if self.strip_bidi:
            parts.append("bidi")
        if self.strip_format:
            parts.append("fmt")
        if self.confusables:
            # conf3: the skeleton is also taken before case folding (in words that hold a
            # Latin letter), small capitals fold to Latin letters, default-ignorables are
            # stripped (the Hangul fillers read as spaces), override runs are reversed,
            # combining marks are dropped
            parts.append("conf3")
        if self.collapse_whitespace:
            parts.append("ws")
        if self.strip_diacritics:
            parts.append("nodia")
        return "-".join(parts)
