"""Writers of dedup results to a text stream: JSONL, CSV and text (HTML lives in ``html``).

The JSONL shapes are the public contract (``API.md``): one object per cluster of two or more
members ``{"cluster", "size", "representative", "members"}``, or with pairs one object per pair
``{"a", "b", "similarity"}``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any, Literal, TextIO, cast

from neardup.errors import ConfigError
from neardup.report.results import Cluster, Pair

__all__ = ["OutputFormat", "write_clusters", "write_pairs"]

OutputFormat = Literal["jsonl", "csv", "text"]


#: One encoder each (``json.dumps`` with options builds a new one per call).
_UTF8 = json.JSONEncoder(ensure_ascii=False)
_ASCII = json.JSONEncoder(ensure_ascii=True)
#: A JSON string's text, as both encoders above write one (the C one when there is one).
#: (An int id makes it raise TypeError, which sends that cluster to the general encoder.)
_quote = cast("Callable[[object], str]", json.encoder.encode_basestring)
#: Lines handed to the stream at a time.
_BLOCK = 1024


def _json_line(record: dict[str, Any]) -> str:
    """One JSON line; ids holding lone surrogates (no UTF-8 form) are written escaped."""
    line = _UTF8.encode(record)
    if not line.isascii():
        try:
            line.encode("utf-8")
        except UnicodeEncodeError:
            line = _ASCII.encode(record)
    return line + "\n"


def _cluster_line(c: Cluster) -> str | None:
    """The JSON line of a cluster whose ids are all ``str``, formatted directly (the same
    text as ``_json_line(c.to_dict())``, in a fifth of the time); ``None`` for any other."""
    if type(c.id) is not int:
        return None
    try:
        members = _quoted_members(c.members)
        line = (
            f'{{"cluster": {c.id}, "size": {len(c.members)}, '
            f'"representative": {_quote(c.representative)}, "members": [{members}]}}\n'
        )
    except TypeError:  # an id that is not a str
        return None
    if not line.isascii():
        try:
            line.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: the escaped form
            return None
    return line


def _quoted_members(members: tuple[Any, ...]) -> str:
    """The JSON strings of ``members``, comma-separated. Ids of printable ASCII other than
    ``"`` and ``\\`` (what JSON writes as they are) are quoted by two joins for the whole
    cluster instead of a call per member; raises TypeError for an id that is not a str."""
    if members:
        text = "".join(members)
        if text.isascii() and text.isprintable() and '"' not in text and "\\" not in text:
            return '"' + '", "'.join(members) + '"'
    return ", ".join(map(_quote, members))


def _printable(value: object) -> str:
    """``str(value)``, with lone surrogates written as ``\\udxxx`` (CSV and text output)."""
    text = str(value)
    if text.isascii():
        return text
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _check_format(fmt: str) -> None:
    if fmt not in ("jsonl", "csv", "text"):
        raise ConfigError(f"unknown output format {fmt!r}; use jsonl, csv or text")


def _csv_writer(out: TextIO) -> Any:
    import csv  # only for --format csv: a JSONL run never loads it

    return csv.writer(out)


def write_clusters(
    clusters: Iterable[Cluster],
    out: TextIO,
    *,
    fmt: OutputFormat = "jsonl",
    max_members: int | None = None,
) -> int:
    """Write clusters to ``out``; return how many were written.

    Examples:
        >>> import io
        >>> buf = io.StringIO()
        >>> write_clusters([Cluster(0, ("a", "b"), "a")], buf)
        1
        >>> buf.getvalue()
        '{"cluster": 0, "size": 2, "representative": "a", "members": ["a", "b"]}\\n'
    """
    _check_format(fmt)
    if fmt == "jsonl" and max_members is None and type(clusters) is list:
        return _write_jsonl(clusters, out)
    n = 0
    writer = _csv_writer(out) if fmt == "csv" else None
    if writer is not None:
        writer.writerow(["cluster", "size", "representative", "member"])
    lines: list[str] = []
    for c in clusters:
        n += 1
        if fmt == "jsonl":
            fast = _cluster_line(c) if max_members is None else None
            lines.append(fast or _json_line(c.to_dict(max_members=max_members)))
            if len(lines) >= _BLOCK:
                out.write("".join(lines))
                lines.clear()
        elif writer is not None:
            members = c.members if max_members is None else c.members[:max_members]
            for m in members:
                writer.writerow([c.id, c.size, _printable(c.representative), _printable(m)])
        else:
            shown = c.members if max_members is None else c.members[:max_members]
            more = f" (+{c.size - len(shown)} more)" if c.size > len(shown) else ""
            out.write(f"cluster {c.id} ({c.size}): {', '.join(map(_printable, shown))}{more}\n")
    out.write("".join(lines))
    return n


def _write_jsonl(clusters: list[Cluster], out: TextIO) -> int:
    """The JSONL of a list of clusters, written by the compiled kernel a block at a time
    (half the CPU time of ``_cluster_line``'s at 1M documents); a block that it does not
    write (an id that is not a ``str``, a lone surrogate) goes line by line."""
    from neardup._kernels.engine import kernels

    lines_of = kernels("clusterjson").cluster_lines
    for k in range(0, len(clusters), _BLOCK):
        block = clusters[k : k + _BLOCK]
        text = lines_of(block)
        if text is None:
            text = "".join(_cluster_line(c) or _json_line(c.to_dict()) for c in block)
        out.write(text)
    return len(clusters)


def write_pairs(pairs: Iterable[Pair], out: TextIO, *, fmt: OutputFormat = "jsonl") -> int:
    """Write pairs to ``out``; return how many were written.

    Examples:
        >>> import io
        >>> buf = io.StringIO()
        >>> write_pairs([Pair("a", "b", 0.875)], buf, fmt="text")
        1
        >>> buf.getvalue()
        'a\\tb\\t0.875000\\n'
    """
    _check_format(fmt)
    n = 0
    writer = _csv_writer(out) if fmt == "csv" else None
    if writer is not None:
        writer.writerow(["a", "b", "similarity"])
    for p in pairs:
        n += 1
        if fmt == "jsonl":
            out.write(_json_line(p.to_dict()))
        elif writer is not None:
            writer.writerow([_printable(p.a), _printable(p.b), f"{p.similarity:.6f}"])
        else:
            out.write(f"{_printable(p.a)}\t{_printable(p.b)}\t{p.similarity:.6f}\n")
    return n
