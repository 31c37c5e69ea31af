"""Every error neardup raises on purpose: one tree rooted at :class:`NeardupError`.

::

    NeardupError
    ├── ConfigError (ValueError)              a parameter is out of range or inconsistent
    ├── InputError (ValueError)               a document or file cannot be used as given
    │   ├── InputTooLargeError                a size cap was exceeded (document, growth, pixels)
    │   ├── DecodeError                       bytes are not valid UTF-8 / an image cannot be decoded
    │   └── EmptyInputError                   an algorithm that refuses empty input was given none
    ├── FormatError (ValueError)              serialized bytes, hex or dicts are malformed
    ├── IncompatibleSketchError (ValueError)  sketches of different kinds or parameters were mixed
    ├── MissingExtraError (ImportError)       an optional extra is not installed
    ├── TimeoutError (TimeoutError)           a wall-clock cap was exceeded
    ├── OutputError (OSError)                 an output cannot be written (read-only, disk full)
    ├── StoreError                            the SQLite store cannot be used
    │   └── SchemaVersionError                the store was written by a newer neardup
    ├── ProviderError                         an embedding provider failed after its retries
    └── ServiceError                          a neardup service answered an error (neardup.Client)

Messages say what was wrong and what to do about it.
"""

from __future__ import annotations

import builtins

__all__ = [
    "ConfigError",
    "DecodeError",
    "EmptyInputError",
    "FormatError",
    "IncompatibleSketchError",
    "InputError",
    "InputTooLargeError",
    "MissingExtraError",
    "NeardupError",
    "OutputError",
    "ProviderError",
    "SchemaVersionError",
    "ServiceError",
    "StoreError",
    "TimeoutError",
]


class NeardupError(Exception):
    """Base class of every error neardup raises on purpose."""


class ConfigError(NeardupError, ValueError):
    """A parameter is out of range or inconsistent with another one."""


class InputError(NeardupError, ValueError):
    """A document, file or argument cannot be used as given."""


class InputTooLargeError(InputError):
    """A configured size cap was exceeded; raise the cap or split the input."""


class DecodeError(InputError):
    """Bytes could not be decoded (text that is not UTF-8, an image that is not an image)."""


class EmptyInputError(InputError):
    """An algorithm that has no meaningful value for empty input was given none."""


class FormatError(NeardupError, ValueError):
    """Serialized data (bytes, hex, dict, store rows) is malformed or of an unknown version."""


class IncompatibleSketchError(NeardupError, ValueError):
    """Two sketches made by different algorithms or parameters were compared or merged."""


class MissingExtraError(NeardupError, ImportError):
    """An optional extra is not installed; the message names the pip command."""


class TimeoutError(NeardupError, builtins.TimeoutError):
    """A wall-clock cap was exceeded (PDF extraction, a provider's total deadline)."""


class OutputError(NeardupError, OSError):
    """An output (a record file, a copy, a report, a temporary file) cannot be written: its
    folder is read-only or missing, or the disk is full. The message names the path."""


class StoreError(NeardupError):
    """The SQLite store cannot be opened, read or written."""


class SchemaVersionError(StoreError):
    """The store was written by a newer neardup; upgrade neardup to open it."""


class ProviderError(NeardupError):
    """An embedding provider failed (after its retries, or with a non-retryable status)."""


class ServiceError(NeardupError):
    """A ``neardup serve`` service answered an error, or could not be reached after the
    client's retries; ``status`` is the HTTP status (0: no answer) and ``code`` the service's
    error code (``""`` when it sent none)."""

    def __init__(self, message: str, *, status: int = 0, code: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.code = code
