"""Label files: true pairs (JSONL ``{"a", "b"}`` or CSV ``a,b``) or a cluster id per document
(JSONL ``{"id", "cluster"}`` or CSV ``id,cluster``).

The kind is told by the first record's fields. Every problem raises
:class:`~neardup.errors.InputError` naming ``file:line``.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from neardup.errors import InputError
from neardup.evaluate.scores import Labels

__all__ = ["read_labels"]

_PAIR_FIELDS = ("a", "b")
_CLUSTER_FIELDS = ("id", "cluster")


def _kind(record: dict[str, Any], where: str) -> str:
    if all(k in record for k in _PAIR_FIELDS):
        return "pairs"
    if all(k in record for k in _CLUSTER_FIELDS):
        return "clusters"
    raise InputError(
        f"{where}: a label record needs fields a and b (a true pair) or id and cluster "
        f"(a cluster id per document); found {sorted(record)}"
    )


def _value(record: dict[str, Any], key: str, where: str) -> str:
    v = record.get(key)
    if v is None or isinstance(v, dict | list) or str(v) == "":
        raise InputError(f"{where}: field {key!r} must be a non-empty string or number")
    return str(v)


def _records(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """``(file:line, record)`` for each non-blank record of a JSONL or CSV label file."""
    try:
        text = path.read_text(encoding="utf-8-sig")  # a BOM must not rename the first column
    except OSError as exc:
        raise InputError(f"cannot read label file {path}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise InputError(f"label file {path} is not UTF-8; re-save it as UTF-8") from exc
    out: list[tuple[str, dict[str, Any]]] = []
    if path.suffix.lower() == ".csv":
        reader = csv.DictReader(text.splitlines())
        fields = reader.fieldnames or []
        if not (set(_PAIR_FIELDS) <= set(fields) or set(_CLUSTER_FIELDS) <= set(fields)):
            raise InputError(
                f"{path}:1: the CSV header must name columns a,b (pairs) or id,cluster; "
                f"found {fields}"
            )
        try:
            for row in reader:
                out.append((f"{path}:{reader.line_num}", dict(row)))
        except csv.Error as exc:  # e.g. a field over the csv module's size limit
            raise InputError(
                f"{path}:{reader.line_num}: not readable as CSV ({exc}); fix the line"
            ) from None
        return out
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        where = f"{path}:{n}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{where}: not valid JSON ({exc.msg}); one object per line") from None
        except (ValueError, RecursionError):  # an integer over Python's digit limit, deep nesting
            raise InputError(
                f"{where}: not usable JSON (a huge number or nesting too deep); fix the line"
            ) from None
        if not isinstance(record, dict):
            raise InputError(f"{where}: expected a JSON object, got {type(record).__name__}")
        out.append((where, record))
    return out


def read_labels(path: str | Path) -> Labels:
    """Read a label file of true pairs or of cluster ids per document.

    Args:
        path: A ``.jsonl`` file (one object per line) or a ``.csv`` file with a header.

    Returns:
        The labels.

    Raises:
        InputError: the file cannot be read, a line is malformed, kinds are mixed, or a
            document has two cluster ids; the message names ``file:line``.

    Examples:
        >>> import tempfile
        >>> p = Path(tempfile.mkdtemp()) / "truth.jsonl"
        >>> _ = p.write_text('{"a": "x", "b": "y"}\\n')
        >>> sorted(read_labels(p).pairs)
        [('x', 'y')]
    """
    path = Path(path)
    records = _records(path)
    if not records:
        raise InputError(f"{path}: the label file is empty; add pairs or cluster ids")
    kind = _kind(records[0][1], records[0][0])
    if kind == "pairs":
        pairs = []
        for where, rec in records:
            if _kind(rec, where) != kind:
                raise InputError(f"{where}: pairs and cluster ids are mixed; use one kind")
            pairs.append((_value(rec, "a", where), _value(rec, "b", where)))
        return Labels.from_pairs(pairs)
    clusters: dict[str, str] = {}
    for where, rec in records:
        if _kind(rec, where) != kind:
            raise InputError(f"{where}: pairs and cluster ids are mixed; use one kind")
        doc, c = _value(rec, "id", where), _value(rec, "cluster", where)
        if clusters.get(doc, c) != c:
            raise InputError(
                f"{where}: document {doc!r} already has cluster {clusters[doc]!r}; "
                "give each document one cluster id"
            )
        clusters[doc] = c
    return Labels.from_clusters(clusters)
