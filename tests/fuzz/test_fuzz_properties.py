"""Hypothesis properties of every parser of outside data: arbitrary bytes, str and dicts give a
result or a NeardupError, never another exception.

The byte-level properties call the same ``target`` functions as the atheris harnesses in
``fuzz/``; the others build structured input (JSON-like dicts, hex-like strings, digests).
"""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from neardup import HammingIndex, MinHash, SimHash
from neardup.compat.fingerprint import phash_from_hex
from neardup.compat.primestamp import SimHashFingerprint
from neardup.errors import NeardupError
from neardup.io import read_jsonl

FUZZ = Path(__file__).resolve().parents[2] / "fuzz"
sys.path.insert(0, str(FUZZ))

import fuzz_compat  # noqa: E402  (fuzz/ is not a package)
import fuzz_readers  # noqa: E402
import fuzz_sketch_bytes  # noqa: E402
import fuzz_text  # noqa: E402

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _answers(fn: Callable[..., object], *args: object, **kwargs: object) -> object | None:
    """Call a parser: a result or a NeardupError (None) are answers; anything else fails."""
    try:
        return fn(*args, **kwargs)
    except NeardupError:
        return None


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)
hexish = st.text(alphabet="0123456789abcdefABCDEFxX -\u0660\uff10", max_size=80)


# ------------------------------------------------------------ the harness targets, on bytes


@pytest.mark.parametrize(
    "target",
    [fuzz_sketch_bytes.target, fuzz_compat.target, fuzz_readers.target, fuzz_text.target],
    ids=["sketch_bytes", "compat", "readers", "text"],
)
@SETTINGS
@given(data=st.binary(max_size=600))
def test_harness_targets(target: Callable[[bytes], None], data: bytes) -> None:
    _answers(target, data)


@pytest.mark.filterwarnings("ignore::UserWarning")  # Pillow's notes on skipped TIFF tags
@settings(max_examples=60, deadline=None)
@given(data=st.binary(max_size=400))
def test_image_target(data: bytes) -> None:
    pytest.importorskip("PIL")
    import fuzz_image

    _answers(fuzz_image.target, data)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.binary(max_size=300))
def test_outputs_target(data: bytes) -> None:
    """Every output path against a hostile target (fuzz/fuzz_outputs.py): an answer or a
    NeardupError, the input unchanged, a FIFO kept, no temporary file left."""
    import fuzz_outputs

    fuzz_outputs.target(data)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.binary(min_size=2, max_size=10))
def test_store_damage_target(data: bytes) -> None:
    """Hand-damaged stores (fuzz/fuzz_store_damage.py): every change is found by check, an
    open store reports the count its rows hold, and nothing raises but a StoreError."""
    import fuzz_store_damage

    _answers(fuzz_store_damage.target, data)


@settings(max_examples=60, deadline=None)
@given(data=st.binary(max_size=400))
def test_markup_target(data: bytes) -> None:
    pytest.importorskip("selectolax")
    pytest.importorskip("markdown_it")
    import fuzz_markup

    _answers(fuzz_markup.target, data)


@pytest.mark.parametrize("seed_index", range(3))
@settings(max_examples=25, deadline=None)
@given(data=st.binary(max_size=60))
def test_store_target(seed_index: int, data: bytes) -> None:
    import fuzz_store

    _answers(fuzz_store.target, bytes([seed_index]) + data)


# ------------------------------------------------------------------- structured inputs


@SETTINGS
@given(text=hexish | st.text(max_size=80))
def test_hex_parsers(text: str) -> None:
    for parse in (SimHash.from_hex, MinHash.from_hex, phash_from_hex):
        _answers(parse, text)


@SETTINGS
@given(value=json_values, fields=st.dictionaries(st.text(max_size=12), json_values))
def test_from_dict_arbitrary(value: Any, fields: dict[str, Any]) -> None:
    _answers(SimHashFingerprint.from_dict, value)
    _answers(SimHashFingerprint.from_dict, fields)


@SETTINGS
@given(
    key=st.sampled_from(
        ["value_hex", "version", "hash_bits", "token_mode", "ngram_size", "hash_algorithm",
         "params"]
    ),
    value=json_values,
)  # fmt: skip
def test_from_dict_one_field_changed(key: str, value: Any) -> None:
    from neardup.compat.primestamp import SimHashGenerator, TokenMode

    good = SimHashGenerator(64, TokenMode.WORD, 3).generate("a b c d e f g").to_dict()
    _answers(SimHashFingerprint.from_dict, {**good, key: value})


@SETTINGS
@given(data=st.binary(max_size=300))
def test_byte_parsers(data: bytes) -> None:
    from neardup.image.value import ImageHash

    for parse in (SimHash.from_bytes, MinHash.from_bytes, ImageHash.from_bytes):
        _answers(parse, data)
    _answers(HammingIndex.from_bytes, data)


@SETTINGS
@given(keys=json_values)
def test_hamming_index_keys(keys: Any) -> None:
    """A saved index whose keys JSON was replaced by any JSON value."""
    index = HammingIndex(64, 2)
    index.add_many(["a"], [1])
    blob = index.to_bytes()
    plen = int.from_bytes(blob[20:22], "little")  # header "<4sBBHHHQH": 22 bytes
    start = 22 + plen
    klen = int.from_bytes(blob[start : start + 8], "little")
    new = json.dumps(keys).encode()
    forged = blob[:start] + len(new).to_bytes(8, "little") + new + blob[start + 8 + klen :]
    _answers(HammingIndex.from_bytes, forged)


@SETTINGS
@given(a=st.text(max_size=120), b=st.text(max_size=120))
def test_digest_comparisons(a: str, b: str) -> None:
    pytest.importorskip("tlsh")
    from neardup.fuzzy import ctph_compare, fuzzysum_similar, parse_ctph, tlsh_distance

    _answers(parse_ctph, a)
    _answers(ctph_compare, a, b)
    _answers(ctph_compare, "3:" + a, "6:" + b)
    _answers(tlsh_distance, a, b)
    _answers(tlsh_distance, "T1" + a, "T1" + b)
    _answers(fuzzysum_similar, (a, b), (b, a))


@SETTINGS
@given(lines=st.lists(json_values, max_size=5), raw=st.binary(max_size=200))
def test_read_jsonl(lines: list[Any], raw: bytes) -> None:
    data = b"\n".join(json.dumps(x).encode() for x in lines) + b"\n" + raw
    _answers(lambda: list(read_jsonl(io.BytesIO(data), max_line_bytes=256)))


# ------------------------------------------------------- regressions of fuzz findings


@pytest.mark.parametrize(
    "line",
    [
        b'{"text": "x", "id": ' + b"1" * 5000 + b"}\n",  # over int's 4300-digit limit
        b"[" * 100_000 + b"\n",  # RecursionError in json
        b'{"text": "x", "id": ' + b"{" * 100_000 + b"\n",
    ],
    ids=["huge-int", "deep-array", "deep-object"],
)
def test_read_jsonl_regressions(line: bytes) -> None:
    with pytest.raises(NeardupError):
        list(read_jsonl(io.BytesIO(line)))


def test_nested_json_in_saved_values() -> None:
    from neardup.image.value import ImageHash, ImageHashParams

    index = HammingIndex(64, 2)
    index.add_many(["a"], [1])
    blob = index.to_bytes()
    start = 22 + int.from_bytes(blob[20:22], "little")  # header, then the params
    deep = b"[" * 100_000
    forged = blob[:start] + len(deep).to_bytes(8, "little") + deep + blob[-8:]
    with pytest.raises(NeardupError):
        HammingIndex.from_bytes(forged)
    good = ImageHash(1, ImageHashParams()).to_bytes()
    meta = b"[" * 60_000
    # header ">4sBHH": magic, version, bits, then the params JSON length; the bits last
    forged = good[:7] + len(meta).to_bytes(2, "big") + meta + good[-8:]
    with pytest.raises(NeardupError):
        ImageHash.from_bytes(forged)


def test_from_dict_unhashable_bits() -> None:
    from neardup.compat.primestamp import SimHashGenerator, TokenMode

    good = SimHashGenerator(64, TokenMode.WORD, 3).generate("a b c d").to_dict()
    for bits in ([], {}, 64.0):
        with pytest.raises(NeardupError):
            SimHashFingerprint.from_dict({**good, "hash_bits": bits})


@pytest.mark.parametrize("b64", ["//EI/wg/Pbcp", "AP+/z//f"])
def test_damaged_store_findings_raise_store_errors(b64: str) -> None:
    # Fuzz findings: a damaged store made iter_sketches raise TypeError and add_many KeyError.
    import base64

    import fuzz_store

    fuzz_store.target(base64.b64decode(b64))  # only NeardupError may escape, and is caught
