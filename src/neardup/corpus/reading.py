"""``read_corpus``: a corpus named by paths and read options, which knows how to read itself
(the packed JSONL fast path or the readers of every format) with ids kept unique."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from neardup.errors import ConfigError

if TYPE_CHECKING:
    from neardup.io import Document
    from neardup.packed import PackedBatches
    from neardup.readers import ReadStats

__all__ = ["Corpus", "read_corpus"]


def _check_format(input_format: str) -> None:
    from neardup.readers import INPUT_FORMATS

    if input_format not in INPUT_FORMATS:
        raise ConfigError(
            f"input_format must be one of {', '.join(INPUT_FORMATS)}, got {input_format!r}"
        )


@dataclass(frozen=True, slots=True)
class Corpus:
    """Inputs and how to read them; nothing is read until a run asks for the documents.

    Build it with :func:`read_corpus`. Attributes are the :func:`read_corpus` arguments.
    """

    paths: tuple[str, ...]
    text_field: tuple[str, ...] = ("text",)
    id_field: str | None = None
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    input_format: str = "auto"
    main_content: bool = False
    follow_symlinks: bool = False
    on_error: str = "fail"

    def __post_init__(self) -> None:
        if not self.paths:
            raise ConfigError("a corpus needs at least one path (a file, a folder or '-')")
        if not self.text_field or not all(self.text_field):
            raise ConfigError("text_field must name at least one field")
        if self.on_error not in ("fail", "skip"):
            raise ConfigError(f"on_error must be 'fail' or 'skip', got {self.on_error!r}")
        if self.input_format != "auto":  # the default needs no readers (their import is long)
            _check_format(self.input_format)

    @property
    def rereadable(self) -> bool:
        """Whether every input is a path (stdin, ``-``, can be read only once)."""
        return "-" not in self.paths

    @property
    def one_jsonl(self) -> bool:
        """Whether the corpus is one plain ``.jsonl`` file."""
        p = self.paths
        return len(p) == 1 and p[0].lower().endswith(".jsonl") and Path(p[0]).is_file()

    @property
    def packable(self) -> bool:
        """Whether the packed JSONL reader takes this corpus: one plain ``.jsonl`` file, one
        top-level text field, a top-level id field, and bad records stopping the run (the
        packed reader skips none). Its texts then reach the kernels as one buffer."""
        if len(self.text_field) != 1 or self.on_error != "fail" or not self.one_jsonl:
            return False
        return "." not in self.text_field[0] + (self.id_field or "id")

    def packed(
        self, *, batch_size: int = 2048, tee: Callable[[memoryview], None] | None = None
    ) -> PackedBatches:
        """The corpus as packed batches (see :attr:`packable`); ``tee`` sees the file's bytes
        as they are read (a copy kept for the outputs, so the file is read once).

        Raises:
            ConfigError: the corpus is not :attr:`packable`.
        """
        from neardup.packed import PackedBatches

        if not self.packable:
            raise ConfigError("only one plain .jsonl file with top-level fields reads packed")
        return PackedBatches(
            Path(self.paths[0]),
            self.id_field or "id",
            self.text_field[0],
            batch_size,
            id_required=self.id_field is not None,
            tee=tee,
        )

    def documents(
        self,
        *,
        binary: bool = False,
        keep_fields: bool = False,
        images_only: bool = False,
        stats: ReadStats | None = None,
    ) -> Iterator[Document]:
        """The documents, in input order, each id checked unique across every input.

        Args:
            binary: Files are read as bytes (image methods), not as text.
            keep_fields: Keep each record's fields (:attr:`~neardup.io.Document.fields`).
            images_only: A folder walk picks image files, and counts the rest as left out.
            stats: Filled with what the readers left out and skipped.

        Raises:
            InputError: a path does not exist, a record is malformed (``on_error="fail"``) or
                an id is read twice.
        """
        from neardup.io import UniqueIds
        from neardup.readers import ReadOptions, RecordSpec, read_documents

        options = ReadOptions(
            spec=RecordSpec.of(self.text_field, self.id_field),
            include=self.include,
            exclude=self.exclude,
            binary=binary,
            input_format=self.input_format,
            main_content=self.main_content,
            follow_symlinks=self.follow_symlinks,
            on_error=self.on_error,
            keep_fields=keep_fields,
            images_only=images_only,
        )
        return UniqueIds().check(read_documents(self.paths, options, stats=stats), self.name)

    @property
    def name(self) -> str:
        """The inputs, for messages."""
        return ", ".join(self.paths)


def read_corpus(
    paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    *,
    text_field: str | Sequence[str] = "text",
    id_field: str | None = None,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    input_format: str = "auto",
    main_content: bool = False,
    follow_symlinks: bool = False,
    on_error: str = "fail",
) -> Corpus:
    """A corpus: files, folders (walked), record files (JSONL, CSV, TSV, Parquet, Arrow IPC,
    plain or ``.gz``/``.bz2``/``.xz``/``.zst``: by extension), Hugging Face ``save_to_disk``
    folders, or ``-`` (JSON lines on stdin). Nothing is read here: a run reads it once, one
    plain JSONL file through the packed reader (texts as one buffer) when it can.

    Args:
        paths: One path or several.
        text_field: The record field holding the text (nested: ``meta.body``); several are
            joined with newlines.
        id_field: The record field holding the id (default: ``id`` when present, else the
            row number, ``source:row`` with several inputs).
        include / exclude: Globs a walked file must match / that leave it out.
        input_format: How files become text: ``auto`` (by extension, then content),
            ``text``, ``html``, ``markdown``, ``pdf``.
        main_content: For HTML, keep only the main content.
        follow_symlinks: Follow symbolic links in folders (cycle-safe).
        on_error: ``fail`` stops at a bad record or file; ``skip`` leaves it out and counts it.

    Raises:
        ConfigError: no path, an unknown ``input_format`` or ``on_error``.

    Examples:
        >>> c = read_corpus("docs.jsonl", text_field="body")
        >>> c.paths, c.text_field, c.rereadable
        (('docs.jsonl',), ('body',), True)
    """
    if isinstance(paths, str | os.PathLike):
        paths = [paths]
    return Corpus(
        paths=tuple(os.fspath(p) for p in paths),
        text_field=(text_field,) if isinstance(text_field, str) else tuple(text_field),
        id_field=id_field,
        include=tuple(include),
        exclude=tuple(exclude),
        input_format=input_format,
        main_content=main_content,
        follow_symlinks=follow_symlinks,
        on_error=on_error,
    )
