"""The Unicode tables equal a full scan of unicodedata."""

from __future__ import annotations

import unicodedata

from neardup._unicode import classes as tables


def test_tables_cover_every_code_point() -> None:
    classes = tables.char_classes()
    lower = tables.simple_lower()
    flags = {
        "L": tables.LETTER,
        "Nd": tables.DIGIT,
        "Nl": tables.NUMBER,
        "No": tables.NUMBER,
        "M": tables.MARK,
        "Pc": tables.CONNECTOR,
    }
    ideo = {cp for lo, hi in tables.ideograph_ranges() for cp in range(lo, hi + 1)}
    for cp in range(0x110000):
        cat = unicodedata.category(chr(cp))
        want = flags.get(cat, flags.get(cat[0], 0) if cat[0] in "LM" else 0)
        if cp in ideo and want & (tables.LETTER | tables.DIGIT | tables.NUMBER):
            want |= tables.IDEOGRAPH
        assert classes[cp] == want, hex(cp)
        low = chr(cp).lower()
        assert lower[cp] == ord(low[0]), hex(cp)
    assert lower[0x130] == ord("i") and lower[0x3A3] == 0x3C3


def test_ideographs_are_han_and_kana_letters() -> None:
    classes = tables.char_classes()
    for ch in "中文字々〇日本語ひらがなカタカナーｶﾞ𠀀":
        assert classes[ord(ch)] & tables.IDEOGRAPH, ch
    for ch in "aé한글ᄀ。、\u3099゛Ａ1":
        assert not classes[ord(ch)] & tables.IDEOGRAPH, ch
