"""Field paths into records (``text``, ``meta.url``, ``turns.0.text``); text fields joined."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from neardup.errors import ConfigError, InputError

__all__ = ["FieldPath", "RecordSpec", "id_text", "missing_id"]


class _Missing:
    """Marker for a path that does not resolve."""


MISSING = _Missing()


@dataclass(frozen=True, slots=True)
class FieldPath:
    """A dotted path into a record: ``meta.url`` reads ``record["meta"]["url"]``.

    A key that itself contains dots is found first as written (``{"meta.url": ...}``), then as a
    path; a numeric part indexes a list (``turns.0.text``).

    Examples:
        >>> FieldPath.parse("meta.url").get({"meta": {"url": "u"}})
        'u'
        >>> FieldPath.parse("a.b").get({"a.b": 1})
        1
        >>> FieldPath.parse("turns.1").get({"turns": ["x", "y"]})
        'y'
    """

    spec: str
    parts: tuple[str, ...]

    @classmethod
    def parse(cls, spec: str) -> FieldPath:
        """Parse a dotted path.

        Raises:
            ConfigError: empty path or an empty part (``a..b``).
        """
        parts = tuple(spec.split("."))
        if not spec or any(not p for p in parts):
            raise ConfigError(f"field path {spec!r} is empty or has an empty part; use a.b.c")
        return cls(spec, parts)

    @property
    def root(self) -> str:
        """The top-level field the path starts in (the column a columnar reader loads)."""
        return self.parts[0]

    def get(self, record: object) -> object:
        """The value at the path, or the module's ``MISSING`` marker when it does not resolve."""
        if isinstance(record, Mapping) and self.spec in record:
            return record[self.spec]
        value: object = record
        for part in self.parts:
            if isinstance(value, Mapping):
                if part not in value:
                    return MISSING
                value = value[part]
            elif isinstance(value, list | tuple) and part.isdigit():
                index = int(part)
                if index >= len(value):
                    return MISSING
                value = value[index]
            else:
                return MISSING
        return value


def _keys(record: object) -> str:
    if not isinstance(record, Mapping):
        return type(record).__name__
    return ", ".join(sorted(map(str, record))[:12])


_JSON_NAMES = {bool: "boolean", dict: "object", list: "array", tuple: "array"}


def id_text(value: object, where: str) -> str:
    """A record's id value as text, by the same rules on every path (JSONL, CSV, columnar,
    stdin, the packed JSONL reader): a string, or a number written as Python writes it.

    Raises:
        InputError: a boolean, an object, an array or bytes; or text holding a lone surrogate
            (an unpaired ``\\ud800``-``\\udfff`` escape, which no UTF-8 output can hold).

    Examples:
        >>> id_text("a", "f:1"), id_text(7, "f:1"), id_text(1.5, "f:1")
        ('a', '7', '1.5')
        >>> id_text(True, "f:1")
        Traceback (most recent call last):
        ...
        neardup.errors.InputError: f:1: the id is a JSON boolean, not a string or number; ...
    """
    if isinstance(value, bool | dict | list | tuple | bytes | bytearray | Mapping):
        kind = _JSON_NAMES.get(type(value), type(value).__name__)
        raise InputError(
            f"{where}: the id is a JSON {kind}, not a string or number; give every record a "
            "string id, or name another field with --id-field"
        )
    doc_id = value if isinstance(value, str) else str(value)
    try:
        doc_id.encode("utf-8")
    except UnicodeEncodeError:
        raise InputError(
            f"{where}: the id {doc_id!r} holds a lone surrogate (an unpaired \\ud800-\\udfff "
            "escape), which no UTF-8 output can hold; fix the id"
        ) from None
    return doc_id


def missing_id(record: object, where: str, field: str) -> InputError:
    """The error for a record without the id field that was named (``--id-field``)."""
    return InputError(
        f"{where}: no id at {field!r} (fields: {_keys(record)}); name the right one with "
        "--id-field (nested: a.b) or leave it out to number the rows"
    )


@dataclass(frozen=True, slots=True)
class RecordSpec:
    """Which fields of a record hold its text and its id.

    Attributes:
        text_fields: Paths of the text; several are joined with ``join`` (null parts left out).
        id_field: Path of the id; ``None`` means ``id`` when the record has one, else the row
            number. A path given explicitly must exist in every record.
        join: Separator between several text fields.

    Examples:
        >>> spec = RecordSpec.of(["title", "body"], "meta.url")
        >>> spec.text({"title": "T", "body": "B"}, "f:1")
        'T\\nB'
        >>> spec.ident({"meta": {"url": 7}}, "f:1", "1")
        '7'
    """

    text_fields: tuple[FieldPath, ...]
    id_field: FieldPath | None = None
    join: str = "\n"

    @classmethod
    def of(
        cls,
        text_fields: str | Sequence[str] = "text",
        id_field: str | None = None,
        join: str = "\n",
    ) -> RecordSpec:
        """Build a spec from field path strings.

        Raises:
            ConfigError: no text field, or a malformed path.
        """
        names = [text_fields] if isinstance(text_fields, str) else list(text_fields)
        if not names:
            raise ConfigError("give at least one text field (--text-field)")
        ident = FieldPath.parse(id_field) if id_field is not None else None
        return cls(tuple(FieldPath.parse(n) for n in names), ident, join)

    @property
    def roots(self) -> tuple[str, ...]:
        """Top-level fields the spec reads (for columnar readers)."""
        out = [p.root for p in self.text_fields]
        out.append(self.id_field.root if self.id_field is not None else "id")
        return tuple(dict.fromkeys(out))

    def text(self, record: object, where: str) -> str:
        """The record's text: the text fields' values joined.

        Raises:
            InputError: a field is missing or not a string, or all of them are null; the
                message names ``where`` (file and row).
        """
        parts: list[str] = []
        for path in self.text_fields:
            value = path.get(record)
            if value is MISSING:
                raise InputError(
                    f"{where}: no field {path.spec!r} (fields: {_keys(record)}); name the right "
                    "one with --text-field (nested: a.b)"
                )
            if value is None:
                continue
            if not isinstance(value, str):
                raise InputError(
                    f"{where}: field {path.spec!r} is a {type(value).__name__}, not a string"
                )
            parts.append(value)
        if not parts:
            raise InputError(f"{where}: the text ({self._names()}) is null; fix or skip the record")
        return parts[0] if len(parts) == 1 else self.join.join(parts)

    def ident(self, record: object, where: str, default: str) -> str:
        """The record's id as a string, or ``default`` when no id field was asked and none is
        there.

        Raises:
            InputError: the id field was named but is missing or null in this record, or the
                id is not a string or number (:func:`id_text`).
        """
        if self.id_field is None:
            value = record.get("id") if isinstance(record, Mapping) else None
            return default if value is None else id_text(value, where)
        value = self.id_field.get(record)
        if value is MISSING or value is None:
            raise missing_id(record, where, self.id_field.spec)
        return id_text(value, where)

    def _names(self) -> str:
        return ", ".join(p.spec for p in self.text_fields)
