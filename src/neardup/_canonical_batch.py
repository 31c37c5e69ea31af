"""The canonicalizer's batch driver: pack, skip pure ASCII, run the kernel, splice, fall back.

:class:`neardup.canonicalize.Canonicalizer` hands a batch down here once (documents or an
already packed buffer) together with its own one-document function, the hook for what the
kernel leaves to the standard library (huge documents, code points the tables lack). The
batch comes back packed and canonical; nothing here calls up into the canonicalizer except
through that hook.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

import numpy as np
import numpy.typing as npt

from neardup._kernels import engine
from neardup._unicode import canonical as _tables
from neardup.packed import PackedDocs, encode_text, pack

__all__ = ["canonical_batch", "run"]


def canonical_batch(
    docs: Sequence[str | bytes] | PackedDocs,
    *,
    how: Literal["kernel", "identity", "each"],
    strip_mask: int,
    lower_ascii: bool,
    max_bytes: int,
    fallback_from: int,
    one: Callable[[str], str],
    shortcut: bool = True,
) -> PackedDocs:
    """Pack ``docs`` (unless packed already) and canonicalize them in the kernel.

    Args:
        docs: The documents (``str``, UTF-8 ``bytes``), or a :class:`PackedDocs` batch (valid
            UTF-8; lone surrogates as ``surrogatepass`` writes them).
        how: ``"kernel"``: the batch kernel with ``strip_mask``; ``"identity"``: nothing
            changes; ``"each"``: every document through ``one`` (configurations no kernel
            covers).
        strip_mask: The kernel's strip mask.
        lower_ascii: Lowercase ASCII (see ``Canonicalizer.canonicalize_packed``).
        max_bytes: The size cap: a larger document is handed to ``one`` first, which raises.
        fallback_from: Documents of this many bytes or more go to ``one`` (exact bounds).
        one: Canonicalizes one document with the standard library; raises
            :class:`~neardup.errors.InputTooLargeError` past the caps.
        shortcut: Let a batch of pure-ASCII documents skip the kernel (their canonical form
            is the bytes themselves, A-Z lowercased with ``lower_ascii``).

    Returns:
        The canonical documents; a batch nothing in which changes holds the input's own
        buffer (a read-only one is copied once).
    """
    if how == "each":
        texts = docs.texts() if isinstance(docs, PackedDocs) else docs
        return pack([one(_as_str(t, i)) for i, t in enumerate(texts)])
    packed = docs if isinstance(docs, PackedDocs) else pack(docs, writable=True)
    sizes = np.diff(packed.offsets)
    if len(sizes) and int(sizes.max()) > max_bytes:
        big = int(np.argmax(sizes))
        lo, hi = int(packed.offsets[big]), int(packed.offsets[big + 1])
        one(packed.buf[lo:hi].tobytes().decode("utf-8", "surrogatepass"))  # raises
    if how == "identity":
        return packed  # the "none" preset
    run = _Run(strip_mask, lower_ascii, fallback_from, one)
    n_docs = len(packed.offsets) - 1
    if not shortcut or n_docs < 1:
        return run.all(packed)
    buf, offsets = _rebased(packed)
    if len(buf) and int(buf.max()) >= 0x80:
        # one kernel pass over the whole batch: it copies the ASCII documents at memcpy speed,
        # which costs less than cutting them out and splicing the batch back together
        out, status = run.call(PackedDocs(buf, offsets))
        if not status.any():  # nothing changed: the input's own buffer
            return PackedDocs(_writable(buf), offsets)
        return run.fallback(out, np.flatnonzero(status == 2))
    # all ASCII: the canonical form is the bytes themselves (A-Z lowercased)
    return PackedDocs(_writable(_lower_ascii(buf) if lower_ascii else buf), offsets)


class _Run:
    """One batch's kernel settings and its standard-library hook."""

    __slots__ = ("fallback_from", "lower_ascii", "one", "strip_mask")

    def __init__(
        self, strip_mask: int, lower_ascii: bool, fallback_from: int, one: Callable[[str], str]
    ) -> None:
        self.strip_mask = strip_mask
        self.lower_ascii = lower_ascii
        self.fallback_from = fallback_from
        self.one = one

    def all(self, packed: PackedDocs) -> PackedDocs:
        """The kernel over every document of ``packed``, then its fallbacks."""
        out, status = self.call(packed)
        return self.fallback(out, np.flatnonzero(status == 2))

    def call(self, packed: PackedDocs) -> tuple[PackedDocs, npt.NDArray[np.uint8]]:
        return run(
            packed,
            strip_mask=self.strip_mask,
            lower_ascii=self.lower_ascii,
            fallback_from=self.fallback_from,
        )

    def fallback(self, out: PackedDocs, left: npt.NDArray[np.intp]) -> PackedDocs:
        """``out`` with the documents ``left`` (huge ones, under the exact growth bound, and
        code points the tables lack) canonicalized by the hook."""
        if not len(left):
            return out
        raw = out.buf.tobytes()
        bounds = out.offsets.tolist()
        docs = [raw[bounds[i] : bounds[i + 1]] for i in range(len(bounds) - 1)]
        for i in left.tolist():
            text = docs[i].decode("utf-8", "surrogatepass")
            docs[i] = self.one(text).encode("utf-8", "surrogatepass")
        lengths = np.fromiter((len(x) for x in docs), dtype=np.int64, count=len(docs))
        offsets = np.zeros(len(docs) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        return PackedDocs(np.frombuffer(b"".join(docs), dtype=np.uint8), offsets)


def _as_str(text: str | bytes, index: int) -> str:
    return text if isinstance(text, str) else encode_text(text, index).decode("utf-8")


def _rebased(packed: PackedDocs) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.int64]]:
    """The bytes of the documents and offsets from 0, as the kernel returns them (a view and
    the same offsets when the documents fill the buffer)."""
    offsets = np.ascontiguousarray(packed.offsets, dtype=np.int64)
    lo, hi = int(offsets[0]), int(offsets[-1])
    if lo == 0 and hi == len(packed.buf):
        return packed.buf, offsets
    return packed.buf[lo:hi], offsets - lo


def _lower_ascii(buf: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
    """``buf`` with A-Z lowercased (every other byte kept), a copy if any is: what
    ``lower_ascii`` does to a pure-ASCII document."""
    capital = (buf - np.uint8(0x41)) < 26  # wraps around below "A"
    if not capital.any():
        return buf
    return buf + (capital.view(np.uint8) << 5)


def _writable(buf: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
    """``buf``, or a copy when it is read-only: the kernels' output type, never a view of the
    caller's immutable ``bytes``."""
    return buf if buf.flags.writeable else buf.copy()


def run(
    packed: PackedDocs, *, strip_mask: int, lower_ascii: bool, fallback_from: int
) -> tuple[PackedDocs, npt.NDArray[np.uint8]]:
    """Canonicalize packed documents; return them packed again, with a status per document.

    Status 0: copied unchanged; 1: rewritten; 2: left unchanged for the caller to do with the
    standard library (documents of ``fallback_from`` bytes or more; code points the tables do
    not cover). See :func:`neardup._kernels.canonicalize.canonicalize`.
    """
    t = _tables.tables()
    buf, offsets, status = engine.kernels("canonicalize").canonicalize(
        packed.buf,
        packed.offsets,
        t["flags"],
        strip_mask,
        t["ccc"],
        t["dec_off"],
        t["dec_data"],
        t["cf_off"],
        t["cf_data"],
        t["one_off"],
        t["one_data"],
        t["pair_keys"],
        t["pair_vals"],
        lower_ascii,
        fallback_from,
    )
    return PackedDocs(buf, offsets), status
