"""Reference cluster lines (the ``json`` module): the twin of ``neardup._native.clusterjson``,
which must give the same text.

``cluster_lines(clusters)`` is the JSON lines of ``clusters`` (objects with ``id``,
``members`` and ``representative``), each as ``json.JSONEncoder(ensure_ascii=False)`` writes
``{"cluster": id, "size": len(members), "representative": ..., "members": [...]}``, with its
newline; ``None`` when a cluster is not one of an ``int`` id of 64 bits, a ``tuple`` of
``str`` members and a ``str`` representative, or an id holds a lone surrogate (no UTF-8 form).
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["cluster_lines"]

#: A JSON string's text as ``json.JSONEncoder(ensure_ascii=False)`` writes one.
_quote = json.encoder.encode_basestring
_LOW, _HIGH = -(2**63), 2**63


def _line(c: Any) -> str | None:
    members, rep, id_ = c.members, c.representative, c.id
    if type(id_) is not int or not _LOW <= id_ < _HIGH:
        return None
    if type(members) is not tuple or type(rep) is not str:
        return None
    if not all(type(m) is str for m in members):
        return None
    line = (
        f'{{"cluster": {id_}, "size": {len(members)}, "representative": {_quote(rep)}, '
        f'"members": [{", ".join(map(_quote, members))}]}}\n'
    )
    try:
        line.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate
        return None
    return line


def cluster_lines(clusters: list[Any]) -> str | None:
    """The JSON lines of ``clusters``, or ``None`` (see the module)."""
    lines = []
    for c in clusters:
        line = _line(c)
        if line is None:
            return None
        lines.append(line)
    return "".join(lines)
