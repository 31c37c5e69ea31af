"""primestamp facade: the seed's examples as written, readings of SEEDS.md section 2, bad input."""

from __future__ import annotations

import contextlib
import io
import re
import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.compat import primestamp
from neardup.compat.primestamp import (
    SimHashFingerprint,
    SimHashGenerator,
    SimHashIndex,
    TokenMode,
    create_simhash_generator,
)
from neardup.errors import ConfigError, FormatError, IncompatibleSketchError, InputError

ORIGINAL = "primestamp.fingerprint.simhash"


def run_seed_example(code: str, env: dict[str, object] | None = None) -> str:
    """Run a seed snippet verbatim with this facade in place of the original import."""
    code = textwrap.dedent(code).replace(ORIGINAL, "neardup.compat.primestamp")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "<seed-001>", "exec"), dict(env or {}))
    return out.getvalue()


def test_seed_quick_start() -> None:
    out = run_seed_example(
        """
        from primestamp.fingerprint.simhash import SimHashGenerator

        gen = SimHashGenerator(hash_bits=64)

        fp1 = gen.generate(b"The quick brown fox jumps over the lazy dog")
        fp2 = gen.generate(b"The quick brown fox leaps over the lazy dog")

        print(f"Hamming distance: {fp1.hamming_distance(fp2)}")
        print(f"Similarity: {fp1.similarity(fp2):.4f}")
        print(f"Near duplicate: {gen.is_near_duplicate(fp1, fp2, max_distance=3)}")
        """
    )
    d = int(re.search(r"Hamming distance: (\d+)", out).group(1))  # type: ignore[union-attr]
    assert f"Similarity: {1 - d / 64:.4f}" in out
    assert f"Near duplicate: {d <= 3}" in out


def test_seed_index_example() -> None:
    documents = {
        "doc-1": b"Search document text here...",
        "doc-2": b"search DOCUMENT text here",
        "doc-3": b"An unrelated page about gardening and tomatoes",
    }
    out = run_seed_example(
        """
        from primestamp.fingerprint.simhash import SimHashGenerator, SimHashIndex

        gen = SimHashGenerator(hash_bits=64)
        index = SimHashIndex(hash_bits=64, num_segments=4)

        # Index documents
        for doc_id, content in documents.items():
            fp = gen.generate(content)
            index.insert(doc_id, fp)

        # Find near-duplicates
        query_fp = gen.generate(b"Search document text here...")
        duplicates = index.find_near_duplicates(query_fp, max_distance=3)
        for doc_id, distance in duplicates:
            print(f"{doc_id}: distance={distance}")
        """,
        {"documents": documents},
    )
    assert out.splitlines() == ["doc-1: distance=0", "doc-2: distance=0"]


def test_seed_token_modes_serialization_and_factory() -> None:
    out = run_seed_example(
        """
        from primestamp.fingerprint.simhash import SimHashGenerator, TokenMode

        # Word tokenization (default) - splits on word boundaries
        gen_word = SimHashGenerator(token_mode=TokenMode.WORD)

        # N-gram tokenization - character-level sliding window
        gen_ngram = SimHashGenerator(token_mode=TokenMode.NGRAM, ngram_size=4)

        fp1 = gen_word.generate(b"Serialization example")
        # Serialize to dict
        data = fp1.to_dict()
        print(data["value_hex"])  # hex-encoded fingerprint

        # Restore from dict
        from primestamp.fingerprint.simhash import SimHashFingerprint
        fp_restored = SimHashFingerprint.from_dict(data)
        assert fp_restored == fp1

        from primestamp.fingerprint.simhash import create_simhash_generator

        gen = create_simhash_generator(hash_bits=128, mode="ngram", ngram_size=4)
        print(len(gen.generate(b"abc").value_hex), gen_ngram.ngram_size)
        """
    )
    first, second = out.splitlines()
    assert re.fullmatch(r"[0-9a-f]{16}", first)
    assert second == "32 4"


def test_readings_of_the_spec() -> None:
    gen = SimHashGenerator()
    # bytes decoded with replacement; str accepted; case folded
    assert gen.generate(b"Hello World") == gen.generate("hello world")
    assert gen.generate(b"caf\xff") == gen.generate("caf\ufffd")
    assert gen.generate(b"").value == 0
    ngram = SimHashGenerator(token_mode=TokenMode.NGRAM, ngram_size=4)
    assert ngram.generate(b"").value == 0
    assert ngram.generate(b"ab").value != 0  # shorter than n: one gram of the whole text
    assert ngram.generate(b"ab cd") != ngram.generate(b"abcd")  # spaces are part of grams
    assert gen.generate(b"ab cd") != gen.generate(b"cd ab cd")  # TF weighting counts repeats
    fp = gen.generate(b"the quick brown fox")
    d = fp.to_dict()
    assert d["hash_bits"] == 64 and d["token_mode"] == "word" and d["version"] == 1
    assert d["hash_algorithm"] == "xxh3_64"
    assert create_simhash_generator(256).generate(b"x").to_dict()["hash_algorithm"] == "xxh3_128x2"
    assert len(d["value_hex"]) == 16
    assert fp.similarity(fp) == 1.0


@settings(max_examples=30)
@given(
    st.lists(st.text(st.sampled_from("abc de"), max_size=12), min_size=1, max_size=30),
    st.sampled_from([64, 128, 256]),
    st.integers(1, 6),
    st.integers(0, 8),
)
def test_index_is_exact(texts: list[str], bits: int, segments: int, max_distance: int) -> None:
    gen = SimHashGenerator(bits, TokenMode.NGRAM, 2)
    index = SimHashIndex(bits, segments)
    fps = [gen.generate(t) for t in texts]
    for i, fp in enumerate(fps):
        index.insert(i, fp)
    for i in range(0, len(fps), 4):
        index.remove(i)
    live = {i: fp for i, fp in enumerate(fps) if i % 4}
    assert len(index) == len(live)
    for q in fps[:5]:
        want = sorted(
            ((i, q.hamming_distance(fp)) for i, fp in live.items()),
            key=lambda t: (t[1], t[0]),
        )
        want = [w for w in want if w[1] <= max_distance]
        assert index.find_near_duplicates(q, max_distance) == want


def test_is_near_duplicate_threshold() -> None:
    gen = SimHashGenerator()
    a, b = gen.generate(b"one two three four"), gen.generate(b"one two three five")
    d = a.hamming_distance(b)
    assert d > 0
    assert gen.is_near_duplicate(a, b, max_distance=d)
    assert not gen.is_near_duplicate(a, b, max_distance=d - 1)
    assert gen.is_near_duplicate(a, a, max_distance=0)


@pytest.mark.parametrize("bits", [0, 32, 65, 512, True, "64"])
def test_bad_widths(bits: object) -> None:
    with pytest.raises(ConfigError) as info:
        SimHashGenerator(bits)  # type: ignore[arg-type]
    assert isinstance(info.value, ValueError)
    with pytest.raises(ValueError):
        SimHashIndex(bits)  # type: ignore[arg-type]


def test_bad_arguments() -> None:
    with pytest.raises(ConfigError, match="token mode"):
        SimHashGenerator(token_mode="chars")
    with pytest.raises(ConfigError, match="token mode"):
        create_simhash_generator(mode="sentence")
    with pytest.raises(ConfigError, match="n-gram"):
        SimHashGenerator(ngram_size=0)
    with pytest.raises(ConfigError, match="num_segments"):
        SimHashIndex(64, 0)
    with pytest.raises(ConfigError, match="num_segments"):
        SimHashIndex(64, 2.5)  # type: ignore[arg-type]
    gen = SimHashGenerator()
    fp = gen.generate(b"x y z")
    with pytest.raises(ConfigError, match="max_distance"):
        gen.is_near_duplicate(fp, fp, max_distance=-1)
    index = SimHashIndex()
    index.insert("a", fp)
    with pytest.raises(ConfigError, match="max_distance"):
        index.find_near_duplicates(fp, max_distance=-2)
    with pytest.raises(ConfigError, match="radius"):
        index.find_near_duplicates(fp, max_distance=65)
    with pytest.raises(InputError):
        gen.generate(12)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="SimHashFingerprint"):
        index.insert("b", 5)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="not in the index"):
        index.remove("zzz")
    wide = SimHashGenerator(128).generate(b"x y z")
    with pytest.raises(IncompatibleSketchError):
        index.insert("c", wide)
    with pytest.raises(IncompatibleSketchError):
        fp.hamming_distance(wide)
    ngram = SimHashGenerator(token_mode=TokenMode.NGRAM).generate(b"x y z")
    with pytest.raises(IncompatibleSketchError):
        fp.similarity(ngram)
    with pytest.raises(IncompatibleSketchError):
        fp.hamming_distance("ff")  # type: ignore[arg-type]
    # beyond num_segments - 1 the search scans everything, still exactly
    assert index.find_near_duplicates(fp, max_distance=40) == [("a", 0)]


@pytest.mark.parametrize(
    "mutate",
    [
        lambda d: "not a dict",
        lambda d: {k: v for k, v in d.items() if k != "value_hex"},
        lambda d: {**d, "value_hex": "zz" * 8},
        lambda d: {**d, "value_hex": "00" * 4},
        lambda d: {**d, "value_hex": 123},
        lambda d: {**d, "hash_bits": 96},
        lambda d: {**d, "token_mode": "chars"},
        lambda d: {**d, "ngram_size": -3},
        lambda d: {**d, "hash_algorithm": "blake2b"},
        lambda d: {**d, "version": 2},
        lambda d: {**d, "params": "simhash-0000000000000000"},
    ],
)
def test_malformed_dicts(mutate: object) -> None:
    data = SimHashGenerator().generate(b"hello there world").to_dict()
    with pytest.raises(FormatError) as info:
        SimHashFingerprint.from_dict(mutate(data))  # type: ignore[operator]
    assert isinstance(info.value, ValueError)


def test_minimal_dict_is_accepted() -> None:
    fp = SimHashFingerprint.from_dict({"value_hex": "00000000000000ff"})
    assert fp.value == 255 and fp.hash_bits == 64 and fp.token_mode is TokenMode.WORD
    assert primestamp.__all__ == sorted(primestamp.__all__)
