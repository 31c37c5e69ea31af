"""Disguises that hide a near-duplicate, and how each canonicalizer setting sees them.

Shared by ``tests/security/test_adversarial.py`` and ``benchmarks/adversarial_table.py`` (which
prints the table of docs/security.md), so the table is what the tests measure.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from neardup import Canonicalizer, MinHasher, SimHasher

TEXT = (
    "the committee approved the annual budget for public libraries after a long debate "
    "about opening hours staff salaries and the price of new books for every school in "
    "the city council district"
)

#: Latin letters and their Cyrillic / Greek look-alikes (UTS #39 confusables).
CYRILLIC = str.maketrans("aceopxyi", "асеорхуі")
GREEK = str.maketrans("aiopvu", "αιορνυ")
#: Greek capitals that look like Latin capitals.
GREEK_CAPITALS = str.maketrans("ABEIKMNOPTX", "ΑΒΕΙΚΜΝΟΡΤΧ")
FULLWIDTH = {c: chr(ord(c) + 0xFEE0) for c in "abcdefghijklmnopqrstuvwxyz0123456789"}


def _inside_words(mark: str) -> Callable[[str], str]:
    """Insert ``mark`` after the first letter of every word."""

    def disguise(text: str) -> str:
        return " ".join(w[:1] + mark + w[1:] for w in text.split(" "))

    return disguise


def _fullwidth(text: str) -> str:
    return "".join(FULLWIDTH.get(c, c) for c in text)


def _ligatures(text: str) -> str:
    # U+FB01 fi, U+FB02 fl, U+FB00 ff, the Kelvin sign, the ordinal indicators ª and º
    return (
        text.replace("fi", "\ufb01").replace("fl", "\ufb02").replace("ff", "\ufb00")
        .replace("k", "\u212a").replace("a", "\u00aa").replace("o", "\u00ba")
    )  # fmt: skip


def _hangul_filler_spaces(text: str) -> str:
    # U+3164 HANGUL FILLER is a letter that renders as a blank: spaces that are not spaces
    return text.replace(" ", "\u3164")


def _marks_every_third_letter(text: str) -> str:
    out, letters = [], 0
    for c in text:
        out.append(c)
        if c.isalpha():
            letters += 1
            if letters % 3 == 0:
                out.append("\u0301")  # a combining acute accent
    return "".join(out)


def _zalgo(text: str) -> str:
    marks = [chr(cp) for cp in range(0x0300, 0x0370)]
    out = []
    for i, c in enumerate(text):
        out.append(c)
        if c.isalpha():
            out.extend(marks[(i * 7 + k * 13) % len(marks)] for k in range(4))
    return "".join(out)


def _mixed_scripts(text: str) -> str:
    words = text.split(" ")
    return " ".join(w.translate(CYRILLIC if i % 2 else GREEK) for i, w in enumerate(words))


@dataclass(frozen=True)
class Disguise:
    """One way to disguise a copy so that it looks the same to a reader."""

    name: str
    description: str
    apply: Callable[[str], str]


DISGUISES: tuple[Disguise, ...] = (
    Disguise(
        "trojan-source",
        "bidi controls (U+202E RLO, U+2066 LRI, ...) inside every word",
        _inside_words("\u202e\u2066"),
    ),
    Disguise(
        "zero-width",
        "U+200B / U+200D / U+FEFF inside every word",
        _inside_words("\u200b\u200d\ufeff"),
    ),
    Disguise(
        "homoglyphs-cyrillic",
        "Latin letters replaced by Cyrillic look-alikes",
        lambda t: t.translate(CYRILLIC),
    ),
    Disguise(
        "homoglyphs-greek",
        "Latin letters replaced by Greek look-alikes",
        lambda t: t.translate(GREEK),
    ),
    Disguise("fullwidth", "fullwidth forms (U+FF41 ...) of every letter", _fullwidth),
    Disguise("compatibility", "ligatures (U+FB01 fi, ...), Kelvin sign, ordinals ª º", _ligatures),
    Disguise(
        "greek-capitals",
        "a title-cased copy with Latin capitals replaced by Greek capitals",
        lambda t: t.title().translate(GREEK_CAPITALS),
    ),
    Disguise(
        "mixed-scripts", "words alternately in Greek and Cyrillic look-alikes", _mixed_scripts
    ),
    Disguise(
        "hangul-filler", "U+3164 (a blank letter) in place of every space", _hangul_filler_spaces
    ),
    Disguise(
        "combining-marks", "a combining accent after every third letter", _marks_every_third_letter
    ),
    Disguise("zalgo", "four stacked combining marks on every letter", _zalgo),
)

#: Texts in Cyrillic and Greek: under any preset, each must match its own upper-case copy
#: (the ``secure`` skeleton once mapped capitals and small letters apart: 0 of 8).
NATIVE_TEXTS = (
    "комитет утвердил годовой бюджет для публичных библиотек после долгих споров о часах работы "
    "зарплатах сотрудников и цене новых книг для каждой школы города",
    "вечером мы гуляли по старому парку где росли высокие деревья и пели птицы а дети играли "
    "у пруда пока солнце медленно садилось за холмы",
    "новый закон о защите данных требует чтобы каждая компания хранила личные сведения клиентов "
    "в безопасном месте и сообщала о любой утечке",
    "в небольшой деревне на берегу реки жил старый рыбак который каждое утро выходил в море и "
    "возвращался с полной лодкой рыбы",
    "η επιτροπή ενέκρινε τον ετήσιο προϋπολογισμό για τις δημόσιες βιβλιοθήκες μετά από μακρά "
    "συζήτηση για το ωράριο και τους μισθούς του προσωπικού",
    "το βράδυ περπατήσαμε στο παλιό πάρκο όπου τα ψηλά δέντρα έριχναν σκιά και τα παιδιά έπαιζαν "
    "δίπλα στη λίμνη μέχρι να δύσει ο ήλιος",
    "ο νέος νόμος για την προστασία των δεδομένων απαιτεί από κάθε εταιρεία να φυλάσσει τα "
    "προσωπικά στοιχεία των πελατών με ασφάλεια",
    "σε ένα μικρό χωριό δίπλα στο ποτάμι ζούσε ένας γέρος ψαράς που κάθε πρωί έβγαινε στη "
    "θάλασσα και γύριζε με γεμάτη βάρκα",
)

#: The settings compared: the name of a Canonicalizer preset.
SETTINGS = ("none", "txtfp", "secure")
#: Near-duplicate thresholds: MinHash estimated Jaccard and 64-bit SimHash Hamming distance.
MINHASH_THRESHOLD = 0.8
SIMHASH_RADIUS = 6


@dataclass(frozen=True)
class Measure:
    """How one setting sees a disguised copy next to the original."""

    jaccard: float
    distance: int

    @property
    def minhash_dup(self) -> bool:
        return self.jaccard >= MINHASH_THRESHOLD

    @property
    def simhash_dup(self) -> bool:
        return self.distance <= SIMHASH_RADIUS


def measure(disguise: Disguise, setting: str, text: str = TEXT) -> Measure:
    """Sketch ``text`` and its disguised copy with ``setting``'s canonicalizer; compare."""
    canon = Canonicalizer(setting)
    mh = MinHasher(num_perm=128, canonicalizer=canon)
    sh = SimHasher(canonicalizer=canon)
    copy = disguise.apply(text)
    return Measure(
        mh.sketch(text).jaccard(mh.sketch(copy)), sh.sketch(text).distance(sh.sketch(copy))
    )


def table() -> str:
    """The Markdown table of docs/security.md: which setting defeats which disguise."""
    head = "| disguise | what it does | " + " | ".join(f"`{s}`" for s in SETTINGS) + " |"
    rows = [head, "|" + " --- |" * (2 + len(SETTINGS))]
    for d in DISGUISES:
        cells = []
        for s in SETTINGS:
            m = measure(d, s)
            ok = "caught" if m.minhash_dup and m.simhash_dup else "hidden"
            cells.append(f"{ok} (J={m.jaccard:.2f}, d={m.distance})")
        rows.append(f"| {d.name} | {d.description} | " + " | ".join(cells) + " |")
    return "\n".join(rows)
