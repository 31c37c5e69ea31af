"""Streaming fingerprinters: digest == one-shot sketch for any chunking; cap, bad bytes, memory."""

from __future__ import annotations

import itertools
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest
import regex
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from neardup.canonicalize import Canonicalizer
from neardup.errors import (
    ConfigError,
    DecodeError,
    EmptyInputError,
    InputError,
    InputTooLargeError,
)
from neardup.sketch.minhash import MinHash, MinHasher
from neardup.sketch.simhash import SimHash, SimHasher
from neardup.sketch.stream import MinHashStream, SimHashStream, hash_file, open_stream
from neardup.tokenize import NgramTokenizer, ShingleTokenizer, WordTokenizer

Hasher = MinHasher | SimHasher

# Pieces of text chosen to stress canonicalization and tokenization at chunk and piece borders.
ATOMS = [
    "a", "the", "Fox", "QUICK", "don't", "3.14", "x_y", "42", "İstanbul", "ΑΣ", "Σ", "σοφος",
    "Straße", "é", "e\u0301", "\u0301", "a\u0308\u0323", "中文字", "日本語テキスト", "한국어",
    "👍🏽", "👨\u200d👩\u200d👧", "🇫🇷", "ＡＢＣ", "ﬁ", "ﬀ", "½", "①", "Ⅻ", "\ufdfa", "\u00a8",
    "\u200b", "\u202e", "\u00ad", "\ufeff", "ǅ", "ß", "ŉ", "\u0345", "ﾊﾟ", "ㄱ", "\uac00",
    ",", ".", "!", "'", "-", "|", "(", "\x00", "\ud800",
]  # fmt: skip
SPACES = [" ", " ", "  ", "\t", "\n", "\r\n", "\r", "\x0b", "\x0c", "\u00a0", "\u3000", "\u2028"]

texts = st.one_of(
    st.lists(st.one_of(st.sampled_from(ATOMS), st.sampled_from(SPACES)), max_size=60).map("".join),
    st.text(max_size=80),
    st.text(alphabet="".join(sorted({c for a in ATOMS + SPACES for c in a})), max_size=40),
)

HASHERS: dict[str, Callable[[], Hasher]] = {
    "minhash-xxh3": lambda: MinHasher(num_perm=16),
    "minhash-txtfp": lambda: MinHasher(num_perm=16, preset="txtfp"),
    "minhash-datasketch": lambda: MinHasher(num_perm=16, preset="datasketch"),
    "minhash-go-separate": lambda: MinHasher(
        num_perm=16,
        tokenizer=ShingleTokenizer(3, WordTokenizer("go"), short="separate"),
        canonicalizer=Canonicalizer("none"),
    ),
    "minhash-secure": lambda: MinHasher(num_perm=16, canonicalizer=Canonicalizer("secure")),
    "minhash-words": lambda: MinHasher(num_perm=16, tokenizer=WordTokenizer("uax29")),
    "minhash-secure-uax29": lambda: MinHasher(
        num_perm=16,
        tokenizer=ShingleTokenizer(2, WordTokenizer("uax29")),
        canonicalizer=Canonicalizer("secure"),
    ),
    "simhash-default": lambda: SimHasher(),
    "simhash-go": lambda: SimHasher(preset="go"),
    "simhash-txtfp": lambda: SimHasher(preset="txtfp"),
    "simhash-256": lambda: SimHasher(256),
    "simhash-weights": lambda: SimHasher(weights={"the quick fox": 3.5, "a": -2.0}),
}


def chunkings(data: bytes) -> st.SearchStrategy[list[str | bytes]]:
    """Cut ``data`` at random byte positions; a chunk that is whole UTF-8 may go as ``str``."""

    @st.composite
    def build(draw: st.DrawFn) -> list[str | bytes]:
        cuts = sorted(draw(st.lists(st.integers(0, len(data)), max_size=12)))
        bounds = [0, *cuts, len(data)]
        out: list[str | bytes] = []
        for lo, hi in itertools.pairwise(bounds):
            part = data[lo:hi]
            try:
                text = part.decode("utf-8", "surrogatepass")
            except UnicodeDecodeError:
                out.append(part)
                continue
            out.append(text if draw(st.booleans()) else part)
        return out

    return build()


def outcome(fn: Callable[[], MinHash | SimHash]) -> MinHash | SimHash | type[Exception]:
    try:
        return fn()
    except (EmptyInputError, InputError) as exc:
        return type(exc)


def streamed(hasher: Hasher, chunks: list[str | bytes], piece_chars: int) -> MinHash | SimHash:
    s = open_stream(hasher, piece_chars=piece_chars)
    for chunk in chunks:
        s.update(chunk)
    return s.digest()


def _encode(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def _has_surrogate(text: str) -> bool:
    return any("\ud800" <= c <= "\udfff" for c in text)


@pytest.mark.parametrize("name", sorted(HASHERS))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), text=texts, piece_chars=st.integers(1, 48))
def test_stream_equals_one_shot(
    name: str, data: st.DataObject, text: str, piece_chars: int
) -> None:
    # lone surrogates cannot travel as UTF-8 bytes; keep them for str-only chunkings
    raw = _encode(text)
    if _has_surrogate(text):
        chunks: list[str | bytes] = [text[i : i + 3] for i in range(0, len(text), 3)]
    else:
        chunks = data.draw(chunkings(raw))
    hasher = HASHERS[name]()
    expected = outcome(lambda: hasher.sketch(text))
    assert outcome(lambda: streamed(hasher, chunks, piece_chars)) == expected


@settings(max_examples=60, deadline=None)
@given(
    a=texts,
    b=texts,
    space=st.sampled_from(" \t\n\r\x0b\x0c"),
    preset=st.sampled_from(["txtfp", "none"]),
    mode=st.sampled_from(["word", "go", "uax29"]),
)
def test_cut_at_ascii_whitespace_keeps_tokens(
    a: str, b: str, space: str, preset: str, mode: str
) -> None:
    """The lemma the bounded scheme rests on: a cut before ASCII whitespace is invisible to
    canonicalization + word tokenization, unless a combining mark or format character follows
    the whitespace (a canonicalizer that trims the piece's leading space would move the mark
    onto the next word): the stream never cuts there. Not for ``secure``, which streams by
    buffering (test_secure_streams_whole_texts)."""
    assume(not regex.match(r"[ \t\n\r\x0b\x0c]*[\p{M}\p{Cf}]", space + b))
    canon, tok = Canonicalizer(preset), WordTokenizer(mode)  # type: ignore[arg-type]
    whole = tok.tokenize(canon.canonicalize(a + space + b))
    assert whole == tok.tokenize(canon.canonicalize(a)) + tok.tokenize(
        canon.canonicalize(space + b)
    )


@settings(max_examples=40, deadline=None)
@given(text=texts, bits=st.sampled_from([64, 128, 256]), preset=st.sampled_from([None, "go"]))
def test_sums_sign_gives_the_sketch(text: str, bits: int, preset: str | None) -> None:
    assume(preset is None or bits == 64)
    h = SimHasher(bits, preset=preset)  # type: ignore[arg-type]
    sums = h.sums(text)
    code = int.from_bytes(np.packbits(sums > 0, bitorder="little").tobytes(), "little")
    assert sums.dtype == np.int64
    assert sums.shape == (bits,)
    assert code == h.sketch(text).value


def test_sums_add_over_disjoint_feature_sets() -> None:
    h = SimHasher(tokenizer=WordTokenizer())
    assert (h.sums("a b c d") == h.sums("a b") + h.sums("c d")).all()
    assert not h.sums("").any()


def test_pieces_are_cut_and_memory_held_is_small() -> None:
    h = MinHasher(num_perm=16)
    s = open_stream(h, piece_chars=8, max_bytes=64)
    text = " ".join(f"w{i}" for i in range(2000))
    for i in range(0, len(text), 7):
        s.update(text[i : i + 7])
        assert s.pending_bytes <= 8 + 7
    assert s.bounded
    assert s.digest() == h.sketch(text)


def test_shingles_spanning_many_pieces_counted_once() -> None:
    # SimHash counts occurrences: a repeated shingle across piece borders must count twice
    h = SimHasher(tokenizer=ShingleTokenizer(4, WordTokenizer()))
    text = "a b c d a b c d e f a b c d " * 30
    for piece in (1, 2, 3, 5, 64):
        s = open_stream(h, piece_chars=piece)
        for i in range(0, len(text), 3):
            s.update(text[i : i + 3].encode())
        assert s.digest() == h.sketch(text)


# ------------------------------------------------------------------ the cap


def test_cap_counts_uncut_text_exactly() -> None:
    h = MinHasher(num_perm=8)
    s = open_stream(h, max_bytes=10)
    s.update("abcdefghij")  # exactly the cap: allowed
    with pytest.raises(InputTooLargeError, match="max_bytes=10"):
        s.update("k")
    assert s.digest() == h.sketch("abcdefghij")  # the failed update changed nothing


def test_cap_does_not_count_utf8_carry() -> None:
    h = SimHasher()
    s = open_stream(h, max_bytes=3)
    s.update(b"ab\xc3")  # 2 bytes of text held, 1 byte carried
    assert s.pending_bytes == 2
    with pytest.raises(InputTooLargeError):
        s.update(b"\xa9")  # 'é' completes: 2 + 2 = 4 > 3
    assert s.pending_bytes == 2
    with pytest.raises(DecodeError):  # the carried byte survived the failed update
        s.digest()


def test_cap_carry_then_exact_fit() -> None:
    h = SimHasher()
    s = open_stream(h, max_bytes=4)
    s.update(b"ab\xc3")
    s.update(b"\xa9")  # 'abé' is 4 bytes: exactly the cap
    assert s.pending_bytes == 4
    assert s.digest() == h.sketch("abé")


def test_files_far_larger_than_the_cap_stream_in_bounded_mode() -> None:
    h = MinHasher(num_perm=16)
    s = open_stream(h, max_bytes=4096, piece_chars=1024)
    words = [f"tok{i % 997}" for i in range(60_000)]
    text = " ".join(words)  # ~ 450 kB, 100x the cap
    for i in range(0, len(text), 1000):
        s.update(text[i : i + 1000])
    assert s.digest() == h.sketch(text)


def test_text_without_whitespace_hits_the_cap() -> None:
    s = open_stream(MinHasher(num_perm=8), max_bytes=100, piece_chars=10)
    with pytest.raises(InputTooLargeError, match="max_bytes=100"):
        for _ in range(20):
            s.update("x" * 10)


def test_buffered_pipelines_are_exact_and_capped() -> None:
    cases: list[Hasher] = [
        MinHasher(num_perm=16, preset="oph"),
        MinHasher(num_perm=16, tokenizer=ShingleTokenizer(2, NgramTokenizer(3))),
        SimHasher(weighting="binary"),
    ]
    text = "the quick brown fox jumps over the lazy dog " * 5
    for h in cases:
        s = open_stream(h, piece_chars=4, max_bytes=len(text))
        assert not s.bounded
        for i in range(0, len(text), 5):
            s.update(text[i : i + 5])
        assert s.digest() == h.sketch(text)
        with pytest.raises(InputTooLargeError, match="buffering"):
            s.update(" ")


def test_bad_parameters() -> None:
    with pytest.raises(ConfigError, match="max_bytes"):
        open_stream(MinHasher(), max_bytes=0)
    with pytest.raises(ConfigError, match="piece_chars"):
        open_stream(SimHasher(), piece_chars=True)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="str or bytes"):
        open_stream(MinHasher()).update(3)  # type: ignore[arg-type]


# ------------------------------------------------------------------ bad bytes


@pytest.mark.parametrize(
    "bad", [b"\xff", b"a\xc0\xaf", b"\xe0\x80", b"\xed\xa0", b"\xf4\x90", b"\xf5", b"\x80"]
)
def test_invalid_utf8_fails_at_once(bad: bytes) -> None:
    for h in (MinHasher(num_perm=8), SimHasher(preset="go")):
        s = open_stream(h)
        s.update(b"hello ")
        with pytest.raises(DecodeError, match="not valid UTF-8"):
            s.update(bad)
        # the failed update changed nothing
        s.update(b"world")
        assert s.digest() == h.sketch("hello world")


def test_trailing_incomplete_sequence_fails_at_digest() -> None:
    for h in (MinHasher(num_perm=8), SimHasher(), MinHasher(8, preset="oph")):
        s = open_stream(h)
        s.update(b"caf\xc3")
        with pytest.raises(DecodeError, match="ends inside a UTF-8 sequence"):
            s.digest()
        s.update(b"\xa9")
        assert s.digest() == h.sketch("café")


def test_str_chunk_cannot_cut_a_pending_sequence() -> None:
    s = open_stream(SimHasher())
    s.update(b"\xe2\x82")
    with pytest.raises(DecodeError, match="incomplete"):
        s.update("x")
    s.update(b"\xac")
    assert s.digest() == SimHasher().sketch("€")


# ------------------------------------------------------------------ reset, digest, empty


def test_reset_and_repeated_digest() -> None:
    h = MinHasher(num_perm=16)
    s = open_stream(h, piece_chars=4)
    s.update("some words that are not kept at all ")
    s.update(b"\xc3")
    s.reset()
    assert s.pending_bytes == 0
    s.update("one two three four five six seven")
    first = s.digest()
    assert first == s.digest() == h.sketch("one two three four five six seven")
    s.update(" eight")
    assert s.digest() == h.sketch("one two three four five six seven eight")


def test_empty_documents_follow_the_one_shot_rules() -> None:
    assert open_stream(MinHasher(num_perm=8)).digest().is_empty
    assert open_stream(SimHasher()).digest().value == 0
    s = open_stream(SimHasher(preset="go"))
    s.update(" ; . ")
    assert s.digest().value == 0
    for h in (SimHasher(preset="txtfp"), MinHasher(num_perm=8, preset="txtfp")):
        with pytest.raises(EmptyInputError):
            open_stream(h).digest()
        t = open_stream(h, piece_chars=1)
        t.update("  !!  ?? ")
        with pytest.raises(EmptyInputError):
            t.digest()


def test_stream_types() -> None:
    assert isinstance(open_stream(MinHasher()), MinHashStream)
    assert isinstance(open_stream(SimHasher()), SimHashStream)
    assert open_stream(MinHasher()).max_bytes == 16 * 1024 * 1024
    with pytest.raises(ConfigError, match="MinHasher or a SimHasher"):
        open_stream(object())  # type: ignore[call-overload]


def test_the_hashers_do_not_import_the_stream() -> None:
    """The stream takes a hasher through its public hook; no import circle."""
    import ast
    import inspect

    from neardup.sketch import minhash, simhash

    for module in (minhash, simhash):
        tree = ast.parse(inspect.getsource(module))
        imported = {
            node.module
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module is not None
        }
        assert "neardup.sketch.stream" not in imported, module.__name__


# ------------------------------------------------------------------ hash_file


@pytest.mark.parametrize("method", ["minhash", "simhash", "simhash-go"])
def test_hash_file_matches_the_cli(tmp_path: Path, method: str) -> None:
    from click.testing import CliRunner

    from neardup.cli import main

    path = tmp_path / "doc.txt"
    body = "Ünïcödé text, 中文 and emoji 👍🏽 — repeated. " * 40000  # > 1 MiB: several reads
    path.write_bytes(body.encode() + b" broken \xff\xfe bytes\r\n" + "é".encode()[:1])
    result = CliRunner().invoke(main, ["hash", "--method", method, str(path)])
    assert result.exit_code == 0, result.output
    printed = result.stdout.strip().split("\t")[1]
    assert hash_file(path, method) == printed
    with pytest.raises(DecodeError):
        hash_file(path, method, errors="strict")


def test_hash_file_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="minhash"):
        hash_file(tmp_path / "x", "tlsh")
    with pytest.raises(InputError, match="cannot read"):
        hash_file(tmp_path / "missing.txt", "minhash")


# ------------------------------------------------------------------ bounded memory


def _text_block(size: int) -> bytes:
    """About ``size`` bytes of random words (ASCII, Latin-1, CJK, emoji) ending in a newline."""
    rng = np.random.default_rng(7)
    vocab = [f"wörd{i}" for i in range(5000)] + ["中文", "naïve", "ＡＢＣ", "👍🏽", "ﬁne"]
    picks = rng.integers(0, len(vocab), size // 6).tolist()
    return (" ".join(vocab[i] for i in picks) + "\n").encode()


def _chunks(block: bytes, repeats: int, size: int) -> Iterator[bytes]:
    """``block`` repeated ``repeats`` times, cut every ``size`` bytes (an odd size, so cuts
    fall anywhere, often inside multi-byte characters); only one chunk is alive at a time."""
    total, pos = len(block) * repeats, 0
    view = memoryview(block)
    while pos < total:
        end = min(pos + size, total)
        a, b = pos % len(block), end % len(block) or len(block)
        yield bytes(view[a:b]) if a < b else bytes(view[a:]) + bytes(view[:b])
        pos = end


@pytest.mark.parametrize("make", [lambda: MinHasher(), lambda: SimHasher()])
def test_thirty_megabytes_stream_in_flat_memory(make: Callable[[], Hasher]) -> None:
    """What the stream holds follows the size of a chunk, never the size of the stream: with
    64 KiB chunks about 2.6 MB at 16 or 49 MB of input (with 1 MiB chunks about 10.7 MB,
    at 16 or 81 MB). 32 MB keeps a wide margin below the bound at a third of the CPU of 81."""
    block = _text_block(1000 * 1000)  # made before tracing starts
    repeats = 20
    total = len(block) * repeats  # ~ 32 MB (multi-byte characters: 1.6 MB per block)
    h = make()
    s = open_stream(h)
    s.update("warm up the kernels and Unicode tables: ＡＢＣ 中文 naïve 👍🏽 ﬁ " * 3)
    s.digest()
    s.reset()
    tracemalloc.start()
    try:
        for chunk in _chunks(block, repeats, (1 << 16) + 7):
            s.update(chunk)
        result = s.digest()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # the stream is the block repeated: the same shingle set as two copies of the block
    if isinstance(result, MinHash):
        assert result == h.sketch(block + block)
    assert total > 30_000_000
    assert peak < total // 5, f"peak traced memory {peak} bytes for a {total}-byte stream"


def test_no_cut_before_whitespace_followed_by_a_mark() -> None:
    """Found by the lemma test: "0 \u03000" with ``secure`` and UAX #29 words. Cutting
    before the space moved the mark onto the next word; the stream waits for a safe cut."""
    hasher = HASHERS["minhash-secure-uax29"]()
    text = "word \u0300next \t\u200dzwj " * 20 + "0 \u03000 end"
    for step in (1, 3, 7):
        chunks: list[str | bytes] = [text[i : i + step] for i in range(0, len(text), step)]
        assert streamed(hasher, chunks, piece_chars=4) == hasher.sketch(text)


@pytest.mark.parametrize("name", ["minhash-secure", "minhash-secure-uax29"])
def test_secure_streams_whole_texts(name: str) -> None:
    """Found by the lemma test: ``secure`` maps look-alike capitals by what the whole text
    holds (``ΑΣ`` alone is ``aʃ``; in ``ΑΣ σοφος``, Greek by its ``φ``, it is ``ao``), so a
    cut at whitespace is not invisible to it: its streams buffer the text, and stay exact."""
    hasher = HASHERS[name]()
    canon = Canonicalizer("secure")
    assert canon.canonicalize("ΑΣ") != canon.canonicalize("ΑΣ σοφος").split()[0]
    text = "ΑΣ " * 30 + "σοφος"
    for step in (1, 3, 7):
        chunks: list[str | bytes] = [text[i : i + step] for i in range(0, len(text), step)]
        assert streamed(hasher, chunks, piece_chars=4) == hasher.sketch(text)
    assert not open_stream(hasher).bounded


@pytest.mark.parametrize("name", ["minhash-secure", "minhash-secure-uax29"])
@pytest.mark.parametrize(
    "text",
    [
        "0\u202e\r0",  # found by test_stream_equals_one_shot: the run was reversed in halves
        "a b \u202ec d e f\u202c g h i j",  # a closed run
        "a b \u202ec d e f\nnext line here is long",  # a run closed by the line's end
        "x y \u202ec d e\u202a f g h i",  # a run that another bidi control leaves unreversed
        "one two \u202e" + " ".join(f"w{i}" for i in range(300)),  # open to the end
    ],
)
def test_no_cut_inside_a_right_to_left_override_run(name: str, text: str) -> None:
    """``secure`` reverses an override run into display order before stripping the bidi
    controls; a cut inside the run would reverse two halves apart."""
    hasher = HASHERS[name]()
    for step in (1, 2, 5):
        chunks: list[str | bytes] = [text[i : i + step] for i in range(0, len(text), step)]
        for piece in (1, 3, 16):
            assert streamed(hasher, chunks, piece_chars=piece) == hasher.sketch(text)


def test_an_open_override_run_is_held_whole_and_capped() -> None:
    """``secure`` reverses an override run by where it ends; its streams hold the text (they
    never cut), up to ``max_bytes``, and give the one-shot sketch."""
    hasher = HASHERS["minhash-secure"]()
    s = open_stream(hasher, piece_chars=4, max_bytes=8000)
    run = "\u202e" + " ".join(f"w{i}" for i in range(200))
    after = "\u202c" + " and then the text goes on" * 120
    for i in range(0, len(run + after), 3):
        s.update((run + after)[i : i + 3])
    assert s.pending_bytes >= len(run + after)  # held whole
    assert s.digest() == hasher.sketch(run + after)
    capped = open_stream(hasher, piece_chars=4, max_bytes=100)
    with pytest.raises(InputTooLargeError):
        for i in range(0, len(run), 3):
            capped.update(run[i : i + 3])
