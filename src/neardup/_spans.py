"""Token spans: byte ranges into a buffer, grouped per document, the data the batch engine
passes between its tokenizer, shingling and hashing kernels.

Tokens and features are *spans*: byte ranges ``[starts[i], ends[i])`` into a buffer, grouped
per document by ``doc_offsets`` (``n_docs + 1`` int64 values; document ``d`` owns spans
``doc_offsets[d]:doc_offsets[d+1]``). The documents themselves are packed the same way
(:class:`neardup.packed.PackedDocs`).

Token buffers written by the tokenizer kernels hold each document's kept tokens separated by
one ASCII space, so a shingle of ``k`` consecutive tokens is itself one contiguous span: the
bytes ``"t1 t2 t3"`` that the seed systems hash.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from neardup.errors import InputError

__all__ = [
    "Spans",
    "shingle_spans",
    "spans_from_lists",
]

U8 = npt.NDArray[np.uint8]
I64 = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class Spans:
    """Byte ranges into ``buf``, grouped per document by ``doc_offsets``."""

    buf: U8
    starts: I64
    ends: I64
    doc_offsets: I64

    @property
    def n_docs(self) -> int:
        """Number of documents in the batch."""
        return len(self.doc_offsets) - 1

    def to_lists(self) -> list[list[str]]:
        """Decode the spans back to Python strings, one list per document (for tests, debug)."""
        raw = self.buf.tobytes()
        out: list[list[str]] = []
        for d in range(self.n_docs):
            lo, hi = int(self.doc_offsets[d]), int(self.doc_offsets[d + 1])
            out.append(
                [
                    raw[int(s) : int(e)].decode("utf-8", "surrogatepass")
                    for s, e in zip(self.starts[lo:hi], self.ends[lo:hi], strict=True)
                ]
            )
        return out


def spans_from_lists(token_lists: Sequence[Sequence[str]]) -> Spans:
    """Build token spans from Python token lists (the path for Python-level tokenizers).

    Each document's tokens are written separated by one space, like the kernels do.

    Examples:
        >>> spans_from_lists([["a", "bc"], []]).to_lists()
        [['a', 'bc'], []]
    """
    parts: list[bytes] = []
    starts: list[int] = []
    ends: list[int] = []
    doc_offsets = [0]
    pos = 0
    for tokens in token_lists:
        for j, tok in enumerate(tokens):
            if j:
                parts.append(b" ")
                pos += 1
            data = tok.encode("utf-8", "surrogatepass")
            parts.append(data)
            starts.append(pos)
            pos += len(data)
            ends.append(pos)
        doc_offsets.append(len(starts))
    return Spans(
        np.frombuffer(b"".join(parts), dtype=np.uint8),
        np.asarray(starts, dtype=np.int64),
        np.asarray(ends, dtype=np.int64),
        np.asarray(doc_offsets, dtype=np.int64),
    )


def shingle_spans(tokens: Spans, k: int, *, short: str = "joined") -> Spans:
    """Turn token spans into spans of ``k`` consecutive tokens (their bytes joined by a space).

    Args:
        tokens: Token spans from a tokenizer kernel or :func:`spans_from_lists`.
        k: Shingle size (1 keeps the tokens).
        short: What a document with fewer than ``k`` (but at least one) tokens gives:
            ``"joined"`` one shingle of all its tokens (txtfp), ``"separate"`` each token as its
            own feature (Go ``fingerprint``).

    Examples:
        >>> t = spans_from_lists([["a", "b", "c", "d"], ["x", "y"], []])
        >>> shingle_spans(t, 3).to_lists()
        [['a b c', 'b c d'], ['x y'], []]
        >>> shingle_spans(t, 3, short="separate").to_lists()
        [['a b c', 'b c d'], ['x', 'y'], []]
    """
    if k < 1:
        raise InputError(f"shingle size k must be >= 1, got {k}")
    if k == 1:
        return tokens
    n = np.diff(tokens.doc_offsets)
    full = n >= k
    partial = (n > 0) & ~full
    if short == "joined":
        counts = np.where(full, n - k + 1, partial.astype(np.int64))
    else:
        counts = np.where(full, n - k + 1, np.where(partial, n, 0))
    doc_offsets = np.zeros(len(n) + 1, dtype=np.int64)
    np.cumsum(counts, out=doc_offsets[1:])
    total = int(doc_offsets[-1])
    # index of each feature's first token: doc's first token + position within the doc
    first = np.repeat(tokens.doc_offsets[:-1], counts) + (
        np.arange(total, dtype=np.int64) - np.repeat(doc_offsets[:-1], counts)
    )
    # index of each feature's last token
    span = np.repeat(np.where(full, k, np.where(short == "joined", n, 1)), counts)
    last = first + span - 1
    return Spans(tokens.buf, tokens.starts[first], tokens.ends[last], doc_offsets)
