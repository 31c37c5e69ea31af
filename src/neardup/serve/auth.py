"""API keys of ``neardup serve``: the key file, bearer tokens and their read or write scope.

A key file holds one key a line, ``KEY read`` or ``KEY write`` (``#`` starts a comment line;
blank lines are skipped). A ``write`` key may also read. Keys are compared in constant time
(:func:`hmac.compare_digest` of their SHA-256 digests, against every configured key, so
neither the length nor the position of a matching key shows in the time taken) and never
appear in a log line or an error message: a bad line is named by its number.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from neardup.errors import ConfigError

__all__ = ["MIN_KEY_LENGTH", "ApiKeys", "Scope", "bearer_token"]

log = logging.getLogger(__name__)

Scope = Literal["read", "write"]
"""What a key may do: ``read`` (query, check with ``query-only``, get, stats, metrics) or
``write`` (everything)."""

MIN_KEY_LENGTH = 16
"""The shortest key accepted (characters): shorter ones are too easy to guess."""

_RANK = {"read": 1, "write": 2}


@dataclass(frozen=True, slots=True)
class ApiKeys:
    """The configured keys, kept as SHA-256 digests with their scope.

    Examples:
        >>> keys = ApiKeys.from_lines(["r" * 20 + " read", "w" * 20 + " write"])
        >>> keys.scope_of("r" * 20), keys.scope_of("w" * 20), keys.scope_of("nope")
        ('read', 'write', None)
        >>> keys.allows("r" * 20, "write")
        False
    """

    digests: tuple[tuple[bytes, Scope], ...]

    @classmethod
    def from_lines(cls, lines: list[str], where: str = "the key file") -> ApiKeys:
        """Parse ``KEY read`` / ``KEY write`` lines.

        Raises:
            ConfigError: a line is malformed, a key is too short or listed twice, or there
                is no key at all (the message names the line number, never the key).
        """
        out: list[tuple[bytes, Scope]] = []
        seen: set[bytes] = set()
        for number, raw in enumerate(lines, 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            parts = line.split()
            if len(parts) != 2 or parts[1] not in _RANK:
                raise ConfigError(
                    f"{where}, line {number}: expected 'KEY read' or 'KEY write' (a key, a "
                    "space, then its scope); fix the line"
                )
            key, scope = parts[0], parts[1]
            if len(key) < MIN_KEY_LENGTH:
                raise ConfigError(
                    f"{where}, line {number}: the key is shorter than {MIN_KEY_LENGTH} "
                    'characters; use a long random key, e.g. `python -c "import secrets; '
                    'print(secrets.token_urlsafe(32))"`'
                )
            digest = _digest(key)
            if digest in seen:
                raise ConfigError(f"{where}, line {number}: this key is listed twice; keep one")
            seen.add(digest)
            out.append((digest, "write" if scope == "write" else "read"))
        if not out:
            raise ConfigError(
                f"{where} holds no key; add lines 'KEY read' or 'KEY write', or drop "
                "--api-key-file to serve on loopback without keys"
            )
        return cls(tuple(out))

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> ApiKeys:
        """Read a key file (a warning is logged when others than its owner may read it).

        Raises:
            ConfigError: the file cannot be read or holds a bad line.
        """
        p = Path(path)
        try:
            text = p.read_text(encoding="utf-8")
            mode = p.stat().st_mode
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(
                f"cannot read the API key file {str(p)!r} ({exc}); check the path"
            ) from None
        if mode & (stat.S_IRWXG | stat.S_IRWXO):
            log.warning("the API key file %s may be read by other users; chmod 600 it", str(p))
        return cls.from_lines(text.splitlines(), f"the API key file {str(p)!r}")

    def scope_of(self, token: str) -> Scope | None:
        """The scope of ``token``, or None when it is no configured key (constant time:
        every key is compared, whatever matches)."""
        presented = _digest(token)
        found: Scope | None = None
        for digest, scope in self.digests:
            if hmac.compare_digest(presented, digest):
                found = scope
        return found

    def allows(self, token: str, scope: Scope) -> bool:
        """Whether ``token`` is a key whose scope covers ``scope``."""
        have = self.scope_of(token)
        return have is not None and _RANK[have] >= _RANK[scope]

    def __repr__(self) -> str:
        """Never the keys: only how many there are."""
        return f"ApiKeys({len(self.digests)} keys)"


def _digest(key: str) -> bytes:
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).digest()


def bearer_token(header: str | None) -> str | None:
    """The token of an ``Authorization: Bearer TOKEN`` header (None if absent or another
    scheme).

    Examples:
        >>> bearer_token("Bearer abc"), bearer_token("Basic abc"), bearer_token(None)
        ('abc', None, None)
    """
    if not header:
        return None
    scheme, _, token = header.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()
