"""Reference of the canonicalizer kernel: numpy for the quick check, the standard library for
the rewriting (``unicodedata.normalize`` and ``str.casefold``, the definition the kernel must
equal). The oracle of the native ``neardup._native.canonicalize`` (same names, bits and
errors), and the fallback without the compiled core.

It takes the native kernel's arguments; of the tables it reads only ``flags`` and ``ccc``
(the quick check); the decomposition, folding and composition tables are the native kernel's
rendering of what this module asks the standard library for.
"""

from __future__ import annotations

import unicodedata

import numpy as np
import numpy.typing as npt

from neardup._kernels._checks import check_offsets, check_table, check_uint8

__all__ = ["canonicalize"]

U8 = npt.NDArray[np.uint8]
I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]

_CHANGES = 4
_OUTSIDE = 8


def canonicalize(
    buf: U8,
    offsets: I64,
    flags: U8,
    strip_mask: int,
    ccc: U8,
    dec_off: I32,
    dec_data: I32,
    cf_off: I32,
    cf_data: I32,
    one_off: I32,
    one_data: I32,
    pair_keys: I64,
    pair_vals: I32,
    lower_ascii: bool,
    fallback_from: int,
) -> tuple[U8, I64, U8]:
    """NFKC o casefold o NFKC of every document, after dropping the code points whose flags
    meet ``strip_mask``.

    Args:
        buf: The packed documents (UTF-8, lone surrogates allowed).
        offsets: Document ``d`` is ``buf[offsets[d]:offsets[d + 1]]``.
        flags: The tables of :mod:`neardup._unicode.canonical` (this twin reads
            ``flags`` and ``ccc`` only, and asks the standard library for the rest).
        strip_mask: The flag bits of the code points to drop (BIDI | FORMAT for txtfp).
        ccc, dec_off, dec_data, cf_off, cf_data, one_off, one_data, pair_keys, pair_vals: The
            other tables.
        lower_ascii: Lowercase the ASCII letters A-Z of the documents copied without a
            rewrite (pure ASCII, or passing the quick check): part of their canonical form.
            When False their ASCII case is kept (for a tokenizer that lowercases it itself).
        fallback_from: Documents of at least this many bytes are left to the caller.

    Returns:
        ``(out_buf, out_offsets, status)``: the canonical documents packed the same way, and
        per document 0 (copied unchanged), 1 (rewritten) or 2 (left to the caller: copied
        unchanged; over ``fallback_from`` bytes, or a code point outside the tables).

    Raises:
        ValueError: no offsets, offsets that do not rise within ``buf``, a ``flags`` table
            that does not cover every code point, or pair tables of different lengths.
        OverflowError: ``strip_mask`` is not a ``uint8``.
        UnicodeDecodeError: a document is not UTF-8 (lone surrogates allowed).
    """
    if not len(offsets):
        raise ValueError("negative dimensions are not allowed")
    check_offsets(len(buf), offsets)
    check_table("flags", flags)
    if len(pair_keys) != len(pair_vals):
        raise ValueError(
            f"pair_keys and pair_vals differ in length ({len(pair_keys)} and {len(pair_vals)}); "
            "pass the tables neardup._unicode.canonical builds"
        )
    check_uint8(strip_mask)
    del dec_off, dec_data, cf_off, cf_data, one_off, one_data, pair_keys, pair_vals  # stdlib
    raw = buf.tobytes()
    n_docs = len(offsets) - 1
    status = np.zeros(n_docs, dtype=np.uint8)
    parts: list[bytes] = []
    slow_mask = strip_mask | _CHANGES
    for d in range(n_docs):
        data = raw[int(offsets[d]) : int(offsets[d + 1])]
        if data.isascii():
            low = data.lower() if lower_ascii else data
            status[d] = low != data
            parts.append(low)
            continue
        text = data.decode("utf-8", "surrogatepass")
        cps = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        f = flags[cps]
        classes = np.where(cps < len(ccc), ccc[np.minimum(cps, len(ccc) - 1)], 0)
        nonzero = classes[1:] != 0
        ordered = not np.any(nonzero & (classes[:-1] > classes[1:]))
        # the quick check looks at the non-ASCII code points: ASCII letters only change case
        stable = ordered and not np.any(f[cps >= 0x80] & slow_mask)
        if stable:
            low = data.lower() if lower_ascii else data
            status[d] = low != data
            parts.append(low)
            continue
        if len(data) >= fallback_from:
            status[d] = 2
            parts.append(data)
            continue
        if np.any(f & _OUTSIDE):
            status[d] = 2
            parts.append(data)
            continue
        kept = cps[(f & strip_mask) == 0]
        text = kept.tobytes().decode("utf-32-le", "surrogatepass")
        text = unicodedata.normalize("NFKC", text).casefold()
        parts.append(unicodedata.normalize("NFKC", text).encode("utf-8", "surrogatepass"))
        status[d] = 1
    lengths = np.fromiter((len(p) for p in parts), dtype=np.int64, count=n_docs)
    out_offsets = np.zeros(n_docs + 1, dtype=np.int64)
    np.cumsum(lengths, out=out_offsets[1:])
    return np.frombuffer(b"".join(parts), dtype=np.uint8).copy(), out_offsets, status
