"""Exact repeated-substring removal with a suffix array, after Lee et al. 2022,
"Deduplicating Training Data Makes Language Models Better" (ACL; the ExactSubstr method).

Every byte span of at least ``min_length`` bytes that already occurred earlier in the corpus
is removed; the first occurrence is kept. Exactly: a byte goes when it lies inside a
``min_length``-byte window whose content occurred at an earlier position, so a repeat that
overlaps its own earlier copy (a periodic run, ``"the the the "`` with 8-byte windows)
collapses to its first period (``"the "``). Lee et al.'s tool strikes every copy, the first
too; see ``docs/dedup.md`` (repeated substrings) for both rules.

Documents are UTF-8, joined with ``0xFF`` separators (a byte UTF-8 never uses, so no match
crosses a document boundary); the suffix array comes from divsufsort (``pydivsufsort``, extra
``substrings``), and one numba pass (:mod:`neardup._kernels.repeats`) links adjacent suffixes
whose common prefix is at least ``min_length`` bytes (the permuted-LCP form of Kasai's
algorithm cut at ``min_length`` and at separators, no LCP array). Linked suffixes form runs;
every run member but the earliest marks its first ``min_length`` bytes for removal, and the
union of those windows is exactly the set of bytes inside a repeat of an earlier span (a repeat
of length ``m >= L`` at ``b`` with an earlier copy at ``a`` covers ``b + k .. b + k + L`` for
each ``k <= m - L``, and each such window has the earlier ``a + k`` in its run). A character is
removed when its first byte is.

Only the bytes that can lie in a repeated window get a suffix array: documents shorter than
``min_length`` and exact copies of an earlier document of the shard stay out (a copy goes
whole), and a winnowing prefilter (:func:`neardup._kernels.repeats.candidate_regions`) keeps
the regions around ``k``-grams that occur twice; the marks are the same as over the whole text.

Memory is bounded by sharding: the corpus is cut into shards of about ``shard_bytes``, each is
deduplicated against itself, then against every earlier shard (the two joined, one suffix
array), so peak memory is about ``2 * shard_bytes * 12`` bytes (the text, the int32 suffix
array and successor array, link and start bits, the mask) whatever the corpus size; earlier
shards wait on disk. The pairwise step is quadratic in the number of shards; beyond one
machine, see ``docs/dedup.md`` (the plan there distributes the shard pairs, or partitions
windows by hash).
"""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import numpy.typing as npt

from neardup.errors import ConfigError
from neardup.io import Document

__all__ = ["SubstringSummary", "remove_repeated_substrings", "repeated_mask"]

log = logging.getLogger(__name__)

SEP = 0xFF
U8 = npt.NDArray[np.uint8]
B = npt.NDArray[np.bool_]
I64 = npt.NDArray[np.int64]
#: Default shard size in bytes of UTF-8 text.
DEFAULT_SHARD_BYTES = 32 * 1024 * 1024
#: The suffix array covers the whole text when the candidate regions hold more than this share.
PREFILTER_SHARE = 0.9


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
        prefilter: Build the suffix array over the candidate regions only
            (:func:`neardup._kernels.repeats.candidate_regions`); the same mask either way.

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
    mask = np.zeros(n, dtype=bool)
    if n <= min_length:  # one window at most; a repeat may overlap its copy (period < L)
        return mask
    from neardup._kernels.repeats import candidate_regions, gather, repeat_mask, scatter

    if prefilter and n < 2**32:
        starts, ends = candidate_regions(text, min_length)
        # regions never straddle the reference's end (a separator)
        first = int(np.searchsorted(starts, prefix)) if prefix > 0 else 0
        covered = int((ends - starts).sum()) + len(starts)
        if not len(starts) or (prefix > 0 and first == len(starts)):
            return mask
        if covered < PREFILTER_SHARE * n:
            sub, at = gather(text, starts, ends)
            sub_prefix = int(at[first]) if prefix > 0 else 0
            sub_mask = repeat_mask(sub, _suffix_array(sub), min_length, sub_prefix)
            return scatter(sub_mask, at, starts, ends, n)
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


def _join(texts: list[bytes]) -> tuple[U8, I64]:
    """Documents joined by separators (a writable buffer), and each document's start."""
    lengths = np.fromiter((len(t) for t in texts), dtype=np.int64, count=len(texts))
    starts = np.zeros(len(texts), dtype=np.int64)
    if len(texts) > 1:
        starts[1:] = np.cumsum(lengths[:-1] + 1)
    buf = np.frombuffer(bytearray(bytes([SEP]).join(texts)), dtype=np.uint8)
    return buf, starts


def _shards(
    docs: Iterable[Document], shard_bytes: int
) -> Iterator[tuple[list[Document], list[bytes]]]:
    """Documents with their UTF-8 text, cut into shards of about ``shard_bytes``."""
    shard: list[Document] = []
    raw: list[bytes] = []
    size = 0
    for d in docs:
        b = (d.text or "").encode("utf-8", "surrogatepass")
        shard.append(d)
        raw.append(b)
        size += len(b) + 1
        if size >= shard_bytes:
            yield shard, raw
            shard, raw, size = [], [], 0
    if shard:
        yield shard, raw


def remove_repeated_substrings(
    docs: Iterable[Document],
    *,
    min_length: int = 100,
    shard_bytes: int = DEFAULT_SHARD_BYTES,
    summary: SubstringSummary | None = None,
    workdir: Path | None = None,
) -> Iterator[Document]:
    """Yield the documents with every repeat of ``>= min_length`` bytes removed (first kept).

    Args:
        docs: The corpus, in order (read once).
        min_length: Shortest repeated span removed, in UTF-8 bytes (Lee et al. use 50 tokens,
            about 200 bytes of English).
        shard_bytes: Text per shard; bounds memory (see the module docstring).
        summary: Filled with the counts as documents are yielded.
        workdir: Where earlier shards wait (default: a temporary folder).

    Raises:
        ConfigError: ``min_length < 8`` or ``shard_bytes`` below ``2 * min_length``.
        MissingExtraError: pydivsufsort is not installed (extra ``substrings``).

    Examples:
        >>> docs = [Document("a", "the cat sat on the mat"), Document("b", "so the cat sat on")]
        >>> [d.text for d in remove_repeated_substrings(docs, min_length=10)]
        ['the cat sat on the mat', 'so ']
    """
    if isinstance(min_length, bool) or not isinstance(min_length, int) or min_length < 8:
        raise ConfigError(f"min_length must be an integer >= 8 bytes, got {min_length!r}")
    if shard_bytes < 2 * min_length:
        raise ConfigError(f"shard_bytes must be at least 2 * min_length, got {shard_bytes}")
    s = summary if summary is not None else SubstringSummary(min_length)
    with tempfile.TemporaryDirectory(prefix="neardup-substrings-", dir=workdir) as tmp:
        earlier: list[Path] = []
        for k, (shard, raw) in enumerate(_shards(docs, shard_bytes)):
            # only documents that can hold a window go into the suffix array, and an exact
            # copy of an earlier document of the shard goes whole without it (each of its
            # windows occurred earlier; later windows equal to one of its have that copy too)
            seen: set[bytes] = set()
            whole = [False] * len(raw)
            inside: list[bytes] = []
            for j, b in enumerate(raw):
                if len(b) < min_length:
                    continue
                if b in seen:
                    whole[j] = True
                else:
                    seen.add(b)
                    inside.append(b)
            del seen
            buf, starts = _join(inside)
            mask = repeated_mask(buf, min_length)
            for path in earlier:
                ref = np.load(path)
                both = np.concatenate([ref, np.array([SEP], np.uint8), buf])
                cross = repeated_mask(both, min_length, prefix=len(ref) + 1)
                mask |= cross[len(ref) + 1 :]
            shard_path = Path(tmp) / f"shard-{k:06d}.npy"
            np.save(shard_path, buf)
            earlier.append(shard_path)
            s.shards += 1
            at = iter(starts.tolist())
            for d, b, copy in zip(shard, raw, whole, strict=True):
                s.documents += 1
                s.bytes_in += len(b)
                if len(b) < min_length:
                    yield d
                    continue
                if copy:
                    s.bytes_removed += len(b)
                    s.documents_changed += 1
                    yield replace(d, text="")
                    continue
                start = next(at)
                m = mask[start : start + len(b)]
                if not m.any():
                    yield d
                    continue
                kept = np.frombuffer(b, np.uint8)[~m].tobytes()
                s.bytes_removed += len(b) - len(kept)
                s.documents_changed += 1
                yield replace(d, text=kept.decode("utf-8", "surrogatepass"))
