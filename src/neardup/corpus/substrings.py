"""Exact repeated-substring removal, after Lee et al. 2022, "Deduplicating Training Data Makes
Language Models Better" (ACL; the ExactSubstr method; its suffix-array marks, found here with
a hash table of windows).

Every byte span of at least ``min_length`` bytes that already occurred earlier in the corpus
is removed; the first occurrence is kept. Exactly: a byte goes when it lies inside a
``min_length``-byte window whose content occurred at an earlier position, so a repeat that
overlaps its own earlier copy (a periodic run, ``"the the the "`` with 8-byte windows)
collapses to its first period (``"the "``). Lee et al.'s tool strikes every copy, the first
too; see ``docs/dedup.md`` (repeated substrings) for both rules.

Documents are UTF-8, joined with ``0xFF`` separators (a byte UTF-8 never uses, so no match crosses a
document boundary). The marks are those of a suffix array whose adjacent suffixes are linked when
their common prefix is at least ``min_length`` bytes: linked suffixes form runs; every run member
but the earliest marks its first ``min_length`` bytes for removal, and the union of those windows is
exactly the set of bytes inside a repeat of an earlier span (a repeat of length ``m >= L`` at ``b``
with an earlier copy at ``a`` covers ``b + k .. b + k + L`` for each ``k <= m - L``, and each such
window has the earlier ``a + k`` in its run). A character is removed when its first byte is. The
native kernel finds the same windows without the suffix array, in one walk in text order over a
table of winnowing anchors (the first three of each hash listed) and a table of windows (bytes
compared; inside a repeat one byte per window, :func:`neardup.corpus._repeats.window_mask`), and
keeps them as runs: a shard alone is cut straight from them
(:func:`neardup.corpus._repeats.window_cut_in_place`, into its own buffer); texts of ``2**32 - 1``
bytes or more, and the numpy reference, use divsufsort (``pydivsufsort``, extra ``substrings``) and
one walk over its suffix array (the permuted-LCP form of Kasai's algorithm cut at ``min_length`` and
at separators).

Only the bytes that can lie in a repeated window are marked at all: documents shorter than
``min_length`` and exact copies of an earlier document of the shard stay out (a copy goes whole; a
shard is packed with a separator before each document, and a shard alone is marked in place, its
copies overwritten with separators); the numpy reference's suffix array covers only the regions a
winnowing prefilter (:func:`neardup.corpus._repeats.candidate_regions`) keeps around ``k``-grams
that occur twice; the marks are the same as over the whole text.

Memory is bounded by sharding: the corpus is cut into shards of about ``shard_bytes``, each is
deduplicated against itself, then against every earlier shard: only the regions of the two around
the winnowing anchors whose hash occurs in both are joined and marked
(:func:`neardup.corpus._repeats.shared_regions`; every window the two share lies in them), so peak
memory is about ``2 * shard_bytes`` times 2 bytes (the text and the mask) plus the table of anchors
(1 to 2 bytes per byte at ``min_length`` 100) and the table of windows (16 to 32 bytes per window of
an anchor that recurs in a fourth context or more; the suffix-array path: about 12 bytes per byte
and the regions' copy), whatever the corpus size; earlier shards wait on disk with their anchors (16
bytes per anchor, about 1 byte per byte). The pairwise step is quadratic in the number of shards;
beyond one machine, see ``docs/dedup.md`` (the plan there distributes the shard pairs, or partitions
windows by hash).
"""

from __future__ import annotations

import contextlib
import logging
import mmap
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from neardup._atomic import output_errors, sweep_leftovers, temp_prefix, write_error
from neardup.errors import ConfigError
from neardup.io import Document

if TYPE_CHECKING:
    from neardup.packed import PackedDocs

__all__ = [
    "SubstringSummary",
    "remove_repeated_substrings",
    "remove_repeated_substrings_jsonl",
    "repeated_mask",
]

log = logging.getLogger(__name__)

U8 = npt.NDArray[np.uint8]
B = npt.NDArray[np.bool_]
I64 = npt.NDArray[np.int64]
U64 = npt.NDArray[np.uint64]
#: Default shard size in bytes of UTF-8 text.
DEFAULT_SHARD_BYTES = 32 * 1024 * 1024


def _suffix_array(text: U8) -> npt.NDArray[np.integer]:
    from neardup._extras import require_extra

    pds = require_extra("substrings", "pydivsufsort")
    arr = text if text.flags.writeable and text.flags.c_contiguous else text.copy()
    sa: npt.NDArray[np.integer] = pds.divsufsort(arr)
    return sa


def repeated_mask(text: U8, min_length: int, *, prefix: int = 0, prefilter: bool = True) -> B:
    """Bytes of ``text`` inside a span of ``>= min_length`` bytes that occurs earlier.

    Args:
        text: Documents joined by ``0xFF`` bytes.
        min_length: Shortest repeat removed, in bytes.
        prefix: With ``prefix > 0``, ``text[:prefix]`` is an earlier shard that only serves
            as reference: the mask marks bytes after it that repeat a span in it.
        prefilter: Find the windows through their winnowing anchors
            (:func:`neardup.corpus._repeats.window_mask`: the native table of windows, or the
            numpy twin's suffix array over the candidate regions); ``False`` builds the suffix
            array of the whole text (the slow oracle). The same mask either way.

    Returns:
        A boolean mask over ``text`` (all false within the reference prefix); a character is
        marked whole when its first byte is.

    Examples:
        >>> t = np.frombuffer(b"the cat sat\\xffa dog; the cat sat", dtype=np.uint8)
        >>> m = repeated_mask(t, 8)
        >>> bytes(t[~m])
        b'the cat sat\\xffa dog; '
    """
    n = len(text)
    if n <= min_length:  # one window at most; a repeat may overlap its copy (period < L)
        return np.zeros(n, dtype=bool)
    from neardup.corpus._repeats import repeat_mask, window_mask

    if prefilter and n < 2**32 - 1:  # (the window table's positions are 32 bits)
        return window_mask(text, min_length, prefix)
    return repeat_mask(text, _suffix_array(text), min_length, prefix)


@dataclass
class SubstringSummary:
    """What a substrings run removed."""

    min_length: int
    documents: int = 0
    shards: int = 0
    bytes_in: int = 0
    bytes_removed: int = 0
    documents_changed: int = 0
    seconds: dict[str, float] = field(default_factory=dict)

    def line(self) -> str:
        """The summary as one line."""
        share = self.bytes_removed / self.bytes_in if self.bytes_in else 0.0
        return (
            f"{self.documents} documents in {self.shards} shards, {self.bytes_removed} of "
            f"{self.bytes_in} bytes removed ({share:.1%}) from {self.documents_changed} "
            f"documents (repeats of >= {self.min_length} bytes)"
        )


class _Shards:
    """Marks shard by shard: each shard against itself, then against every earlier shard
    (their text and winnowing anchors wait in ``folder``), each pair over the regions around
    the anchors the two shards share only (:func:`neardup.corpus._repeats.shared_regions`)."""

    def __init__(self, min_length: int, folder: Path) -> None:
        self.min_length = min_length
        self.folder = folder
        self.earlier: list[tuple[Path, Path]] = []  # (text, anchors) of each earlier shard
        # the last shard's text and anchors: on disk once a next one comes
        self.last: tuple[U8, tuple[I64, U64] | None] | None = None

    def _anchors(self, text: U8) -> tuple[I64, U64] | None:
        """The anchors of a shard's text, or None beyond the prefilter's ``2**32`` bytes."""
        from neardup.corpus._repeats import shared_anchors

        return shared_anchors(text, self.min_length) if len(text) < 2**32 else None

    def _save_last(self) -> None:
        if self.last is None:
            return
        text, anchors = self.last
        if anchors is None:
            anchors = self._anchors(text)
        i = len(self.earlier)
        paths = (self.folder / f"shard-{i:06d}.npy", self.folder / f"anchors-{i:06d}.npy")
        with output_errors(paths[0]):
            np.save(paths[0], text)
            if anchors is not None:
                np.save(paths[1], np.stack([anchors[0], anchors[1].view(np.int64)]))
        self.earlier.append(paths)
        self.last = None

    def _against(self, paths: tuple[Path, Path], joined: U8, mine: tuple[I64, U64] | None) -> B:
        """The windows of ``joined`` that repeat a window of the earlier shard at ``paths``."""
        from neardup.corpus._repeats import gather, scatter, shared_regions

        length = self.min_length
        ref = np.load(paths[0], mmap_mode="r")  # (read where needed, never copied)
        if mine is None or not paths[1].exists():  # beyond the prefilter: the two whole
            cut = len(ref)
            both = np.concatenate([ref, joined])
            del ref
            out: B = repeated_mask(both, length, prefix=cut)[cut:]
            return out
        stacked = np.load(paths[1], mmap_mode="r")
        theirs = (stacked[0], stacked[1].view(np.uint64))
        del stacked
        ref_starts, ref_ends = shared_regions(ref, *theirs, mine[1], length)
        if not len(ref_starts):  # no anchor hash in common: no window either
            return np.zeros(len(joined), dtype=bool)
        starts, ends = shared_regions(joined, *mine, theirs[1], length)
        sub_ref, _ = gather(ref, ref_starts, ref_ends)
        del ref
        sub, at = gather(joined, starts, ends)
        cut = len(sub_ref)
        marks = repeated_mask(np.concatenate([sub_ref, sub]), length, prefix=cut)[cut:]
        out = scatter(marks, at, starts, ends, len(joined))
        return out

    def cut(
        self, text: U8, starts: I64, ends: I64, s: SubstringSummary, *, last: bool = False
    ) -> tuple[U8, I64, I64]:
        """Each document of the shard (``text[starts[j]:ends[j]]``, each after a ``0xFF``
        separator: :func:`_separated`) with its repeats removed, packed again, and how many
        bytes each lost (counted in ``s``). Only documents that can hold a window are
        marked, and an exact copy of an earlier document of the shard goes whole without it
        (each of its windows occurred earlier; later windows equal to one of its have that
        copy too). A shard alone is marked in place, its copies overwritten with separators
        first (``text`` is changed), and cut straight from the marks' runs into its own
        buffer (:func:`neardup.corpus._repeats.window_cut_in_place`: no copy of the text, no
        mask, no new buffer for the kept bytes: ``kept`` is then a view of ``text``); against
        earlier shards, the documents that can hold a window are joined and marked. With
        ``last`` (no shard comes after it) the join is not kept for the next shards."""
        from neardup.corpus._repeats import cut, gather, window_cut_in_place

        length = self.min_length
        n = len(starts)
        inside, copies = _copies(text, starts, ends, length)
        at_doc = np.array(inside, dtype=np.int64)
        drop = np.array(copies, dtype=np.int64)
        # the separators and the documents as one packed list for the cut: separator j at
        # 2 * j (dropped), document j at 2 * j + 1
        offsets = np.empty(2 * n + 1, dtype=np.int64)
        offsets[0 : 2 * n : 2] = starts - 1
        offsets[1 : 2 * n : 2] = starts
        offsets[2 * n] = len(text)
        where = np.full(2 * n, -2, dtype=np.int64)  # -2: dropped whole
        docs = where[1::2]  # (a view)
        docs[:] = -1  # -1: kept whole
        docs[drop] = -2
        self._save_last()  # (the last shard of a run is never written)
        if not self.earlier and len(text) < 2**32 - 1:
            # the shard alone: marked in place, as runs, cut straight from them
            if not last:
                self.last = (gather(text, starts[at_doc], ends[at_doc])[0], None)
            for a, b in zip(starts[drop].tolist(), ends[drop].tolist(), strict=True):
                text[a:b] = 0xFF  # a copy goes whole: no window of it is walked
            docs[at_doc] = starts[at_doc]
            kept, kept_offsets, removed = window_cut_in_place(text, offsets, where, length)
        else:
            joined, at = gather(text, starts[at_doc], ends[at_doc])  # each after a 0xFF
            marks = repeated_mask(joined, length)
            mine = self._anchors(joined) if self.earlier else None
            for paths in self.earlier:
                marks |= self._against(paths, joined, mine)
            self.last = None if last else (joined, mine)
            del joined
            docs[at_doc] = at
            kept, kept_offsets, removed = cut(text, offsets, marks, where)
        kept_offsets = np.ascontiguousarray(kept_offsets[0::2])  # (separators keep nothing)
        removed = np.ascontiguousarray(removed[1::2])
        s.shards += 1
        s.documents += n
        s.bytes_in += int((ends - starts).sum())
        s.bytes_removed += int(removed.sum())
        s.documents_changed += int(np.count_nonzero(removed))
        return kept, kept_offsets, removed


@contextlib.contextmanager
def _workdir(where: Path | None) -> Iterator[str]:
    """A temporary folder for the shards in ``where`` (default: the system's), removed after;
    the folders of killed runs there are removed first."""
    folder = Path(where if where is not None else tempfile.gettempdir())
    sweep_leftovers(folder)
    try:
        tmp = tempfile.mkdtemp(prefix=temp_prefix(".neardup-substrings"), dir=folder)
    except OSError as exc:
        raise write_error(folder / ".neardup-substrings", exc) from exc
    try:
        yield tmp
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _copies(text: U8, starts: I64, ends: I64, min_length: int) -> tuple[list[int], list[int]]:
    """The documents of at least ``min_length`` bytes: those whose bytes are new to the shard,
    and the exact copies of an earlier one (XXH3-64 digests, bytes compared on a match)."""
    from neardup._kernels.engine import kernels

    long = np.flatnonzero(ends - starts >= min_length)
    digests = kernels("xxh3").xxh3_64_ranges(text, starts[long], ends[long], np.uint64(0))
    first: dict[int, int] = {}  # digest -> the first new document that has it
    more: dict[int, list[int]] = {}  # digest -> the other new documents that have it (rare)
    inside: list[int] = []
    copies: list[int] = []
    for j, d in zip(long.tolist(), digests.tolist(), strict=True):
        i = first.setdefault(d, j)
        if i != j:
            doc = text[starts[j] : ends[j]]
            if any(np.array_equal(doc, text[starts[k] : ends[k]]) for k in [i, *more.get(d, ())]):
                copies.append(j)
                continue
            more.setdefault(d, []).append(j)
        inside.append(j)
    return inside, copies


def _check_args(min_length: int, shard_bytes: int) -> None:
    if isinstance(min_length, bool) or not isinstance(min_length, int) or min_length < 8:
        raise ConfigError(f"min_length must be an integer >= 8 bytes, got {min_length!r}")
    if shard_bytes < 2 * min_length:
        raise ConfigError(f"shard_bytes must be at least 2 * min_length, got {shard_bytes}")


def _shards(
    docs: Iterable[Document], shard_bytes: int
) -> Iterator[tuple[list[Document], U8, I64, I64]]:
    """Documents with their UTF-8 texts packed, each after a separator (:func:`_separated`),
    cut into shards of about ``shard_bytes``."""
    shard: list[Document] = []
    raw: list[bytes] = []
    size = 0
    for d in docs:
        b = (d.text or "").encode("utf-8", "surrogatepass")
        shard.append(d)
        raw.append(b)
        size += len(b) + 1
        if size >= shard_bytes:
            yield shard, *_pack(raw)
            shard, raw, size = [], [], 0
    if shard:
        yield shard, *_pack(raw)


def _pack(raw: list[bytes]) -> tuple[U8, I64, I64]:
    lens = np.array([len(b) for b in raw], dtype=np.int64)
    text = np.frombuffer(bytearray(b"\xff").join([b"", *raw]), dtype=np.uint8)  # writable
    return text, *_separated(lens)


def _separated(lens: I64) -> tuple[I64, I64]:
    """``(starts, ends)`` of documents of ``lens`` bytes packed each after a ``0xFF``
    separator (the shard's layout: the separators a window never crosses are already there,
    so a shard alone is marked in place)."""
    ends = np.cumsum(lens + 1)
    return ends - lens, ends


def remove_repeated_substrings(
    docs: Iterable[Document],
    *,
    min_length: int = 100,
    shard_bytes: int = DEFAULT_SHARD_BYTES,
    summary: SubstringSummary | None = None,
    workdir: Path | None = None,
    progress: Callable[[str, int], None] | None = None,
) -> Iterator[Document]:
    """Yield the documents with every repeat of ``>= min_length`` bytes removed (first kept).

    Args:
        docs: The corpus, in order (read once).
        min_length: Shortest repeated span removed, in UTF-8 bytes (Lee et al. use 50 tokens,
            about 200 bytes of English).
        shard_bytes: Text per shard; bounds memory (see the module docstring).
        summary: Filled with the counts as documents are yielded.
        workdir: Where earlier shards wait (default: a temporary folder).
        progress: Called as ``progress("clean", documents)`` after each shard (a shard
            costs one pass more than the one before it: see the module docstring).

    Raises:
        ConfigError: ``min_length < 8`` or ``shard_bytes`` below ``2 * min_length``.
        MissingExtraError: pydivsufsort is not installed and the suffix array is needed (the
            numpy reference backend, or a shard pair of 4 GiB or more).

    Examples:
        >>> docs = [Document("a", "the cat sat on the mat"), Document("b", "so the cat sat on")]
        >>> [d.text for d in remove_repeated_substrings(docs, min_length=10)]
        ['the cat sat on the mat', 'so ']
    """
    _check_args(min_length, shard_bytes)
    s = summary if summary is not None else SubstringSummary(min_length)
    with _workdir(workdir) as tmp:
        shards = _Shards(min_length, Path(tmp))
        for shard, text, starts, ends in _shards(docs, shard_bytes):
            kept, kept_offsets, removed = shards.cut(text, starts, ends, s)
            del text
            if progress is not None:
                progress("clean", s.documents)
            raw = kept.tobytes()
            ko = kept_offsets.tolist()
            for j, (d, r) in enumerate(zip(shard, removed.tolist(), strict=True)):
                if not r:
                    yield d
                    continue
                yield replace(d, text=raw[ko[j] : ko[j + 1]].decode("utf-8", "surrogatepass"))


def _packed_shards(
    batches: Iterable[tuple[PackedDocs, list[bytes], I64]], shard_bytes: int
) -> Iterator[tuple[U8, I64, I64, list[bytes], I64, bool]]:
    """Packed JSONL batches cut into shards as :func:`_shards` cuts documents: ``(texts,
    starts, ends, raw lines, text spans, last)``, ``last`` true for the shard at the end of
    the input. Each batch's texts are copied into the shard's buffer (each after a separator,
    :func:`_separated`) as it comes, so the batches' buffers are let go (and their pages
    reused) at once; a shard is not held here while the caller works on it (the caller lets
    its texts go after the cut)."""
    from neardup.corpus._repeats import gather

    text = _shard_buffer(shard_bytes)
    lengths: list[I64] = []
    lines: list[bytes] = []
    spans: list[I64] = []
    size = 0  # bytes of the shard so far, separators included
    for docs, raw, sp in batches:
        lens = np.diff(docs.offsets)
        start = 0
        while start < len(lens):
            ends = size + np.cumsum(lens[start:] + 1)
            full = np.flatnonzero(ends >= shard_bytes)
            stop = start + int(full[0]) + 1 if len(full) else len(lens)
            a, b = int(docs.offsets[start]), int(docs.offsets[stop])
            piece = lens[start:stop]
            cut = np.cumsum(piece)
            new = int(ends[stop - start - 1])
            if new > len(text):
                text = _grown(text, size, new)
            _populate(text, size, new)
            text[size:new] = gather(docs.buf[a:b], cut - piece, cut)[0]
            lengths.append(piece)
            lines.extend(raw[start:stop])
            spans.append(sp[start:stop])
            size = new
            start = stop
            if len(full):
                box = [_shard(text[:size], lengths, lines, spans)]
                text = _shard_buffer(shard_bytes)
                lengths, lines, spans, size = [], [], [], 0
                yield (*box.pop(), False)
    if lines:
        box = [_shard(text[:size], lengths, lines, spans)]
        del text, lengths, lines, spans
        yield (*box.pop(), True)


def _shard_buffer(shard_bytes: int) -> U8:
    """An empty buffer for a shard's texts (its pages are touched only as it fills)."""
    return _small_pages(min(shard_bytes, 1 << 30) + (1 << 20))


def _grown(text: U8, size: int, need: int) -> U8:
    """``text``'s first ``size`` bytes in a buffer of at least ``need`` bytes."""
    out = _small_pages(max(2 * len(text), need))
    out[:size] = text[:size]
    return out


def _small_pages(size: int) -> U8:
    """``size`` zero bytes, mapped anonymously and faulted in page by page as they are
    written, never on transparent huge pages. ``np.empty`` advises huge pages for a buffer
    this big (``MADV_HUGEPAGE``); a fresh huge page is a free 2 MiB block, and in a virtual
    machine that reports its free memory to the host (virtio-balloon free page reporting)
    such a block has often been handed back, so its first write is faulted in by the host
    as well: a run then costs 0.1-0.6 s of system time more, at random (measured with
    ``/usr/bin/time`` over 20-run series; small pages come back from the guest's own free
    lists). The buffer goes (unmapped) when the last view of it does."""
    if hasattr(mmap, "MAP_PRIVATE"):  # (not on Windows, whose mmap takes no flags)
        return np.frombuffer(mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE), dtype=np.uint8)
    return np.frombuffer(mmap.mmap(-1, size), dtype=np.uint8)  # pragma: no cover


#: ``madvise``'s ``MADV_POPULATE_WRITE`` (Linux 5.14+; not named by Python's ``mmap``):
#: None where it is not known, or once the kernel refused it.
_POPULATE: list[int | None] = [
    getattr(mmap, "MADV_POPULATE_WRITE", 23) if sys.platform == "linux" else None
]


def _populate(text: U8, a: int, b: int) -> None:
    """Fault in the pages of ``text[a:b]`` (a buffer of :func:`_small_pages`) in one call,
    before they are written: about a third less system time than a fault per page (28 MB:
    0.017 -> 0.011 s). Nothing where the kernel does not know the advice."""
    advice = _POPULATE[0]
    m = text.base.obj if isinstance(text.base, memoryview) else None
    if advice is None or not isinstance(m, mmap.mmap) or b <= a:
        return
    lo = a - a % mmap.PAGESIZE
    try:
        m.madvise(advice, lo, min(b, len(m)) - lo)
    except (OSError, ValueError, AttributeError):  # an older kernel: fault page by page
        _POPULATE[0] = None


def _shard(
    text: U8, lengths: list[I64], lines: list[bytes], spans: list[I64]
) -> tuple[U8, I64, I64, list[bytes], I64]:
    return text, *_separated(np.concatenate(lengths)), lines, np.concatenate(spans)


_BLANK = b" \t\r"


def _out_lines(
    lines: list[bytes], spans: I64, got: tuple[I64, U8, I64], text_field: str
) -> list[bytes]:
    """The output lines of a shard's records, in place of ``lines``: a record that loses
    nothing is its line trimmed, one that loses bytes its line with the text value's JSON
    string replaced (:func:`neardup.corpus._lines.splice_lines`, each line built straight
    from the kept bytes and put in place of its input line, whose memory the next one
    reuses), as :func:`neardup.corpus.records.splice_texts` writes it; a changed line that
    went to ``json.loads`` (no span) is decoded, changed and encoded again."""
    from neardup.corpus._lines import json_strings, splice_lines
    from neardup.corpus.records import splice_values

    removed, kept, kept_offsets = got
    changed = np.flatnonzero(removed)
    if len(changed):
        left = splice_lines(lines, spans, changed, kept, kept_offsets)
        if len(left):
            values, v_off = json_strings(kept, kept_offsets, left)
            splice_values(lines, lines, spans, left, values, v_off, text_field)
    for k, same in enumerate((removed == 0).tolist()):
        if same:
            lines[k] = lines[k].strip(_BLANK) + b"\n"
    return lines


def remove_repeated_substrings_jsonl(
    path: Path,
    *,
    min_length: int = 100,
    shard_bytes: int = DEFAULT_SHARD_BYTES,
    id_field: str = "id",
    text_field: str = "text",
    batch_size: int = 2048,
    summary: SubstringSummary | None = None,
    workdir: Path | None = None,
    id_required: bool = False,
    progress: Callable[[str, int], None] | None = None,
) -> Iterator[list[bytes]]:
    """:func:`remove_repeated_substrings` on one JSONL file, as JSONL lines out (each ending in
    ``\\n``), in batches.

    The texts are read packed (:meth:`neardup.packed.PackedBatches.with_lines`: no Python
    string per document, ids checked). A record that loses nothing is its input line
    unchanged (surrounding whitespace and the ``\\r`` of a CRLF ending trimmed); a record
    that loses bytes is its input line with the text value's JSON string replaced by the new
    text's, as :func:`neardup.corpus.lines.remove_frequent_units_jsonl` writes it
    (:func:`neardup.corpus.records.splice_texts`).

    Raises:
        ConfigError: as for :func:`remove_repeated_substrings`.
        InputError: a line that is not a JSON object with a string ``text_field``, or a
            repeated id.

    Examples:
        >>> import tempfile
        >>> p = Path(tempfile.mkdtemp()) / "in.jsonl"
        >>> rows = ['{"id": 1, "text": "the cat sat on the mat"}', '{"text": "so the cat sat"}']
        >>> _ = p.write_text("\\n".join(rows) + "\\n")
        >>> for batch in remove_repeated_substrings_jsonl(p, min_length=10):
        ...     print(b"".join(batch).decode(), end="")
        {"id": 1, "text": "the cat sat on the mat"}
        {"text": "so "}
    """
    _check_args(min_length, shard_bytes)
    from neardup.packed import PackedBatches

    s = summary if summary is not None else SubstringSummary(min_length)
    batches = PackedBatches(
        path, id_field, text_field, batch_size, id_required=id_required
    ).with_lines()
    with _workdir(workdir) as tmp:
        shards = _Shards(min_length, Path(tmp))
        for text, starts, ends, lines, spans, last in _packed_shards(batches, shard_bytes):
            kept, kept_offsets, removed = shards.cut(text, starts, ends, s, last=last)
            del text  # (with the join, before the output's buffers: they reuse its pages)
            if progress is not None:
                progress("clean", s.documents)
            out = _out_lines(lines, spans, (removed, kept, kept_offsets), text_field)
            del lines, kept
            for a in range(0, len(out), batch_size):
                yield out[a : a + batch_size]
