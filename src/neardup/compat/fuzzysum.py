"""The seed's Java FuzzySum API (``getSums`` / the four-way comparison), Java-exact.

A facade only: the algorithm lives in :mod:`neardup.fuzzy.fuzzysum`
(:func:`~neardup.fuzzy.fuzzysum.legacy_fuzzysum`). Results equal the Java run in the en-US
locale whatever the process locale, quirks included (see ``docs/fuzzy.md``).
"""

from __future__ import annotations

from neardup.fuzzy.fuzzysum import fuzzysum_similar, legacy_fuzzysum

__all__ = ["get_sums", "is_similar"]


def get_sums(text: str) -> tuple[str, str]:
    """Return ``getSums(text)``: two lowercase hex MD5 sums, exactly as the Java computes them.

    Args:
        text: The text (bytes are accepted and decoded as strict UTF-8).

    Returns:
        ``(sum1, sum2)``.

    Raises:
        InputTooLargeError: The text is longer than 64 Mi characters.
        DecodeError: Bytes that are not valid UTF-8.
        InputError: Neither str nor bytes.

    Examples:
        >>> get_sums("<p>Hello <b>World</b></p>")
        ('5eb63bbbe01eeed093cb22bb8f5acdc3', '5eb63bbbe01eeed093cb22bb8f5acdc3')
    """
    return legacy_fuzzysum(text)


def is_similar(a: tuple[str, str], b: tuple[str, str]) -> bool:
    """Return True iff any of the four cross-equalities of the sums holds.

    Args:
        a: ``get_sums`` of the first text.
        b: ``get_sums`` of the second text.

    Returns:
        Whether the Java would call the texts similar.

    Raises:
        FormatError: A pair is not two 32-digit hex strings.

    Examples:
        >>> is_similar(get_sums("alpha bravo charlie delta echo foxtrot"),
        ...            get_sums("one\\u00a0two three four five six seven"))
        True
    """
    return fuzzysum_similar(a, b)
