"""Fuzz the input readers: ``read_jsonl`` (with a small line cap), ``read_csv`` and
``read_inputs`` over a ``.jsonl`` and a ``.csv`` file holding the input.

Run: ``python fuzz/fuzz_readers.py -runs=100000``.
"""

from __future__ import annotations

import functools
import io
from pathlib import Path

from _harness import attempt, main, mutate, pick, scratch_dir

MAX_LINE = 4096


@functools.cache
def seeds() -> tuple[bytes, ...]:
    """Valid JSONL and CSV inputs."""
    return (
        b'{"id": 1, "text": "hello world"}\n\n{"text": "no id"}\n{"id": "x", "text": ""}\n',
        b'{"id": [1, {"a": null}], "text": "caf\\u00e9 \\ud83d\\ude00", "other": 1e308}\n',
        b'id,text\n1,hello world\n2,"quoted, ""text"" with\nnewline"\n',
        b"text,id\r\nonly text,\r\n",
    )


@functools.cache
def scratch() -> Path:
    """A private folder holding ``in.jsonl`` and ``in.csv``, a symbolic link to it."""
    folder = scratch_dir("neardup-fuzz-readers-")
    (folder / "in.csv").symlink_to("in.jsonl")
    return folder


def _drain(make: object) -> None:
    from neardup.io import Document

    assert callable(make)
    for doc in make():
        assert isinstance(doc, Document) and isinstance(doc.id, str)
        assert isinstance(doc.text, str)


def target(data: bytes) -> None:
    """Read raw and mutated-seed bytes as JSONL and CSV."""
    from neardup.io import read_csv, read_inputs, read_jsonl

    seed, rest = pick(seeds(), data)
    folder = scratch()
    jsonl, csv = folder / "in.jsonl", folder / "in.csv"
    for blob in (data, mutate(seed, rest)):
        attempt(_drain, lambda b=blob: read_jsonl(io.BytesIO(b), max_line_bytes=MAX_LINE))
        attempt(_drain, lambda b=blob: read_jsonl(io.BytesIO(b), id_field="", text_field="id"))
        jsonl.write_bytes(blob)
        attempt(_drain, lambda: read_csv(csv, max_line_bytes=MAX_LINE))
        attempt(_drain, lambda: read_inputs([jsonl, csv], max_line_bytes=MAX_LINE))


if __name__ == "__main__":
    main(target)
