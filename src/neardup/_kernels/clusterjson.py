"""Reference cluster lines (the ``json`` module) and groups (numpy): the twin of
``neardup._native.clusterjson``, which must give the same text, arrays and tuples.

``cluster_lines(clusters)`` is the JSON lines of ``clusters`` (objects with ``id``,
``members`` and ``representative``), each as ``json.JSONEncoder(ensure_ascii=False)`` writes
``{"cluster": id, "size": len(members), "representative": ..., "members": [...]}``, with its
newline; ``None`` when a cluster is not one of an ``int`` id of 64 bits, a ``tuple`` of
``str`` members and a ``str`` representative, or an id holds a lone surrogate (no UTF-8 form).

``cluster_groups(roots)`` is ``(order, starts)``: every row whose root is another row and
every row named as another's root, grouped by their own root (ascending) and ascending inside
a group, which starts at ``starts[g]`` of ``order`` (``ConfigError`` for a root outside
``[0, len(roots))``). ``member_tuples(ids, order, starts)`` is the list of each group's
members as a tuple of ``ids`` (``ConfigError`` when ``starts`` does not begin at 0, decreases
or passes the end of ``order``, or a position is outside ``ids``).
"""

from __future__ import annotations

import json
from itertools import pairwise
from operator import itemgetter
from typing import Any

import numpy as np
import numpy.typing as npt

from neardup.errors import ConfigError

__all__ = ["cluster_groups", "cluster_lines", "member_tuples"]

I64 = npt.NDArray[np.int64]

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


def cluster_groups(roots: I64) -> tuple[I64, I64]:
    """The groups of ``roots`` as ``(order, starts)`` (see the module)."""
    n = len(roots)
    empty = np.zeros(0, dtype=np.int64)
    if n and (roots.min() < 0 or roots.max() >= n):
        i = int(np.flatnonzero((roots < 0) | (roots >= n))[0])
        raise ConfigError(f"roots must be rows in [0, {n}), got {int(roots[i])} at row {i}")
    # only members of clusters: a row whose root is another, or a root that others name
    clustered = np.flatnonzero(roots != np.arange(n))
    if len(clustered) == 0:
        return empty, empty.copy()
    # the roots that members point to, sorted (a mask, not np.unique: numpy 2's unique
    # imports numpy.ma)
    is_member = np.zeros(n, dtype=np.bool_)
    is_member[clustered] = True
    is_member[roots[clustered]] = True
    members = np.flatnonzero(is_member)
    # by root, then by position: each group comes out sorted (no sort per group)
    order = members[np.argsort(roots[members], kind="stable")].astype(np.int64, copy=False)
    keys = roots[order]
    starts = np.concatenate(([0], np.flatnonzero(keys[1:] != keys[:-1]) + 1))
    return order, starts.astype(np.int64, copy=False)


def member_tuples(ids: list[Any], order: I64, starts: I64) -> list[tuple[Any, ...]]:
    """Each group's members as a tuple of ``ids`` (see the module)."""
    n = len(ids)
    if len(order) and (order.min() < 0 or order.max() >= n):
        bad = int(order[(order < 0) | (order >= n)][0])
        raise ConfigError(f"order must hold positions in [0, {n}) of ids, got {bad}")
    if len(starts) and (starts[0] != 0 or (np.diff(starts) < 0).any() or starts[-1] > len(order)):
        raise ConfigError(
            f"starts must begin at 0 and ascend to at most {len(order)} (the length of order)"
        )
    if not len(starts):
        return []
    rows = order.tolist()
    flat = itemgetter(*rows)(ids) if len(rows) > 1 else tuple(ids[r] for r in rows)
    edges = [*starts.tolist(), len(flat)]
    return [flat[a:b] for a, b in pairwise(edges)]
