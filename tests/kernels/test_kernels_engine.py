"""The batch engine: fast and reference backends agree bit for bit; determinism across processes."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import native_pair
from neardup._kernels import engine
from neardup._kernels import text as reference
from neardup._spans import shingle_spans
from neardup._unicode import classes as tables
from neardup.errors import ConfigError
from neardup.packed import pack
from oracles.hashing import fnv1a_64

texts = st.lists(
    st.text(alphabet=st.characters(codec=None), max_size=40)
    | st.sampled_from(
        ["İstanbul ΣΑΣ", "\ud800x\udfff", "e\u0301\u20dd", "a\x00b", "Ⱥⱥ KELVIN\u212a"]
    ),
    max_size=6,
)


fast = native_pair("text")[0]  # the compiled twin


@settings(max_examples=150)
@given(
    texts, st.sampled_from([tables.LETTER | tables.DIGIT, 0x1F, tables.LETTER]), st.integers(1, 3)
)
def test_tokenize_backends_agree(docs: list[str], mask: int, min_bytes: int) -> None:
    p = pack(docs)
    args = (p.buf, p.offsets, tables.char_classes(), tables.simple_lower(), mask, min_bytes)
    for lower in (True, False):
        got = fast.tokenize_words(*args, lower)
        want = reference.tokenize_words(*args, lower)
        for g, w in zip(got, want, strict=True):
            np.testing.assert_array_equal(g, w)


@settings(max_examples=100)
@given(st.lists(st.binary(max_size=50), max_size=20))
def test_fnv_backends_agree(chunks: list[bytes]) -> None:
    buf = np.frombuffer(b"".join(chunks), dtype=np.uint8)
    lengths = np.array([len(c) for c in chunks], dtype=np.int64)
    ends = np.cumsum(lengths)
    starts = ends - lengths
    got = fast.fnv1a_ranges(buf, starts, ends)
    want = reference.fnv1a_ranges(buf, starts, ends)
    np.testing.assert_array_equal(got, want)
    assert [int(v) for v in got] == [fnv1a_64(c) for c in chunks]


def test_hash_spans_both_backends(monkeypatch: pytest.MonkeyPatch) -> None:
    spans = shingle_spans(engine.tokenize_texts(["a quick brown fox jumps", ""], mask=0x1F), 2)
    hashes = ("fnv1a64", "xxh3_64", "xxh3_128")
    native = [engine.hash_spans(spans, h, 7) for h in hashes]
    monkeypatch.setattr(engine, "native", lambda: None)  # this process on the numpy twins
    assert engine.backend_name() == "reference"
    reference = [engine.hash_spans(spans, h, 7) for h in hashes]
    for (a_lo, a_hi), (b_lo, b_hi) in zip(native, reference, strict=True):
        np.testing.assert_array_equal(a_lo, b_lo)
        np.testing.assert_array_equal(a_hi, b_hi)


def test_backend_env_errors() -> None:
    code = "from neardup._kernels import engine; engine.kernels('xxh3')"
    env = {**os.environ, "NEARDUP_BACKEND": "gpu"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode != 0
    assert "NEARDUP_BACKEND='gpu' is not a backend" in out.stderr
    with pytest.raises(ConfigError, match="unknown hash"):
        engine.hash_spans(engine.tokenize_texts(["x"], mask=1), "md5")


_SCRIPT = """
from neardup import WordTokenizer, ShingleTokenizer
from neardup._kernels import engine
from neardup._spans import shingle_spans
s = shingle_spans(engine.tokenize_texts(["The quick brown fox, naïve café"], mask=0x1F), 3)
print([int(v) for v in engine.hash_spans(s, "xxh3_64", 1)[0]])
print(WordTokenizer("uax29").tokenize("a b"))
"""


def test_identical_across_processes_and_hash_seeds() -> None:
    outs = set()
    for seed in ("0", "1", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        outs.add(
            subprocess.run(
                [sys.executable, "-c", _SCRIPT], env=env, check=True, capture_output=True, text=True
            ).stdout
        )
    assert len(outs) == 1


def test_import_is_light() -> None:
    code = (
        "import sys, neardup\n"
        "heavy = ['numba', 'click', 'starlette', 'uvicorn', 'PIL', 'tlsh', 'torch', 'pyspark',"
        " 'selectolax', 'pypdf',"
        " 'sentence_transformers', 'httpx', 'jieba', 'confusables', 'regex']\n"
        "print(sorted(m for m in heavy if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    assert out.stdout.strip() == "[]"


def test_backend_is_chosen_once_per_process() -> None:
    """The first use reads ``NEARDUP_BACKEND``; changing it later changes nothing, and
    :func:`engine.pinned` overrides the choice for a block only."""
    code = (
        "import os\n"
        "from neardup._kernels import engine\n"
        "print(engine.backend_name())\n"
        "os.environ['NEARDUP_BACKEND'] = 'native'\n"
        "print(engine.backend_name())\n"
        "with engine.pinned('native'):\n"
        "    print(engine.backend_name())\n"
        "print(engine.backend_name())\n"
    )
    env = {**os.environ, "NEARDUP_BACKEND": "reference"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["reference", "reference", "native", "reference"]
    with pytest.raises(ConfigError, match="is not a backend"), engine.pinned("gpu"):
        pass
