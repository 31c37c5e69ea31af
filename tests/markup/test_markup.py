"""neardup.markup: HTML, Markdown and PDF to text on real and generated files, caps, bad input."""

from __future__ import annotations

import io
import logging
import os
import random
import re
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest

pytest.importorskip("selectolax.lexbor")
pytest.importorskip("markdown_it")
pytest.importorskip("pypdf")

from markdown_it import MarkdownIt

from neardup._markup_guard import defuse_html
from neardup.errors import (
    ConfigError,
    DecodeError,
    InputError,
    InputTooLargeError,
    TimeoutError,
)
from neardup.markup import (
    detect_format,
    html_to_text,
    markdown_to_text,
    pdf_to_text,
    to_text,
)
from neardup.tokenize import ShingleTokenizer

_WORDS = [
    "near",
    "duplicate",
    "detection",
    "documents",
    "sketch",
    "shingle",
    "minhash",
    "simhash",
    "index",
    "bucket",
    "band",
    "signature",
    "similarity",
    "threshold",
    "corpus",
    "canonical",
    "token",
    "unicode",
    "filter",
    "verify",
    "cluster",
    "component",
    "record",
    "field",
    "parquet",
    "stream",
    "batch",
    "kernel",
    "cache",
    "store",
    "query",
    "report",
    "render",
]


def _sentences(rng: random.Random, n: int) -> list[str]:
    return [
        " ".join(rng.choices(_WORDS, k=rng.randint(6, 14))).capitalize() + "." for _ in range(n)
    ]


def _html_doc(seed: int) -> bytes:
    """A documentation-like page: head with style and script, navigation, headings, lists,
    definition lists, a table, links, entities and an inline script (generated, not read from
    the machine, so every host tests the same documents)."""
    rng = random.Random(seed)
    say = lambda n: " ".join(_sentences(rng, n))  # noqa: E731
    rows = "".join(
        f"<tr><td>{rng.choice(_WORDS)}</td><td>{rng.randint(1, 999)}</td></tr>" for _ in range(4)
    )
    items = "".join(f"<li><a href='#s{k}'>{say(1)}</a></li>" for k in range(3))
    body = "".join(
        f"<h{1 + k % 3} id='s{k}'>{rng.choice(_WORDS).title()} &amp; "
        f"{rng.choice(_WORDS)}</h{1 + k % 3}>"
        f"<p>{say(3)} <span class='x'>{say(1)}</span> <a href='http://example.org/{k}'>link</a></p>"
        f"<dl><dt>{rng.choice(_WORDS)}</dt><dd>{say(1)}</dd></dl>"
        for k in range(rng.randint(3, 6))
    )
    page = (
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>Manual</title>"
        "<style>body { font-family: serif; margin: 2em; } .hidden_rule { display: none; }</style>"
        "<script>var documentationOptions = { searchIndexLocation: 'search.js' };</script>"
        f"</head><body><div class='nav'><ul>{items}</ul></div>"
        f"<div class='body'>{body}<table>{rows}</table>"
        "<script>window.onload = function () { highlightSearchWords(); };</script>"
        f"<p>{say(2)} &lt;not a tag&gt; caf&eacute;</p></div></body></html>"
    )
    return page.encode()


def _markdown_doc(seed: int) -> str:
    """A README-like Markdown file: headings, emphasis, links, lists, quotes, code and a table."""
    rng = random.Random(seed)
    out = [f"# {rng.choice(_WORDS).title()} {rng.choice(_WORDS)}", ""]
    for k in range(rng.randint(3, 6)):
        a, b, c = _sentences(rng, 3)
        out += [f"## Section {k}", "", f"{a} **{b}** *{c}* [the docs](http://example.org/{k}).", ""]
        out += [f"- {x}" for x in _sentences(rng, 3)] + [""]
        out += [f"> {_sentences(rng, 1)[0]}", ""]
        out += ["```python", f"def {rng.choice(_WORDS)}(x):", "    return x * 2", "```", ""]
    out += ["| name | value |", "|---|---|"]
    out += [f"| {rng.choice(_WORDS)} | {rng.randint(1, 99)} |" for _ in range(3)] + [""]
    return "\n".join(out)


GENERATED_HTML = [_html_doc(seed) for seed in range(6)]
GENERATED_MDS = [_markdown_doc(seed) for seed in range(6)]


def jaccard(a: str, b: str, k: int = 3) -> float:
    """Exact Jaccard similarity of the word k-shingle sets of two texts."""
    tok = ShingleTokenizer(k)
    sa, sb = set(tok.tokenize(a)), set(tok.tokenize(b))
    return len(sa & sb) / len(sa | sb) if sa | sb else 1.0


def render(md: str) -> str:
    """The same document as HTML, rendered by markdown-it-py (the parser markdown_to_text uses)."""
    html: str = MarkdownIt("commonmark").enable(["table", "strikethrough"]).render(md)
    return html


# ---------------------------------------------------------------- HTML


def test_html_blocks_entities_hidden_and_dropped_elements() -> None:
    page = """<!DOCTYPE html><html><head><title>Title</title>
    <style>p { color: red }</style><script>var secret = 1;</script></head>
    <body><h1>Caf&eacute; &amp; cr&egrave;me</h1>
    <p>First <b>bold</b> <a href="http://example.org/url">link</a>&nbsp;end.</p>
    <div hidden>hidden attribute</div><div aria-hidden="true">aria hidden</div>
    <span style="color: blue; DISPLAY : none">inline none</span>
    <noscript>noscript text</noscript><template><p>template text</p></template>
    <ul><li>one<li>two</ul><pre>line 1
      line 2</pre>a<br>b<table><tr><td>c1<td>c2</tr></table><!-- a comment -->
    <div hidden="until-found">findable</div></body></html>"""
    assert html_to_text(page).split("\n") == [
        "Café & crème",
        "First bold link end.",
        "one",
        "two",
        "line 1",
        "line 2",
        "a",
        "b",
        "c1 c2",
        "findable",
    ]


@pytest.mark.parametrize("raw", GENERATED_HTML, ids=lambda r: f"{len(r)}b")
def test_real_html_docs(raw: bytes) -> None:
    text = html_to_text(raw)
    assert text.strip()
    assert not re.search(r"</?(?:p|div|span|a|td|tr|li|ul|dl|dd|h[1-6])(?:\s[^<>]*)?>", text, re.I)
    # every word of the visible title-free body comes from the source
    body_words = re.findall(r"[A-Za-z]{4,}", text)
    source = raw.decode("utf-8", "replace")
    assert body_words and all(w in source for w in body_words[:50])
    # scripts and styles: their content is never in the text, also when injected
    for block in re.findall(r"<(script|style)[^>]*>(.*?)</\1>", source, re.S | re.I):
        for line in block[1].splitlines():
            if len(line.strip()) > 15 and line.strip() not in source.replace(block[1], ""):
                assert line.strip() not in text
    injected = source.replace(
        "</body>",
        "<script>var INJECTED_SCRIPT = 1;</script><style>.INJECTED_STYLE{}</style></body>",
    )
    assert "INJECTED_SCRIPT" in injected or "</body>" not in source
    text2 = html_to_text(injected)
    assert "INJECTED_SCRIPT" not in text2 and "INJECTED_STYLE" not in text2
    assert text2 == text


def test_html_main_content_drops_boilerplate() -> None:
    pytest.importorskip("trafilatura")
    article = " ".join(
        f"Sentence number {i} of the article explains how shingles and sketches find copies."
        for i in range(30)
    )
    page = f"""<html><body><nav><a href="/">Home</a> | <a href="/about">About us</a></nav>
    <header>Site header banner</header><main><article><h1>Finding near duplicates</h1>
    <p>{article}</p><p style="display:none">HIDDEN PARAGRAPH</p></article></main>
    <footer>Copyright footer links</footer></body></html>"""
    full = html_to_text(page)
    main = html_to_text(page, main_content=True)
    assert "About us" in full and "Copyright footer" in full
    assert "Sentence number 29" in main and "About us" not in main
    assert "Copyright footer" not in main and "HIDDEN" not in main


def test_html_bytes_decoding() -> None:
    assert html_to_text("<p>café</p>".encode()) == "café"
    assert html_to_text(b"\xef\xbb\xbf<p>bom</p>") == "bom"
    assert html_to_text("<p>utf16</p>".encode("utf-16")) == "utf16"
    latin = b'<meta charset="iso-8859-1"><p>caf\xe9</p>'
    assert html_to_text(latin) == "café"
    with pytest.raises(DecodeError, match="pass a str"):
        html_to_text(b"<p>caf\xe9 \xff\xfe</p>")
    with pytest.raises(InputError):
        html_to_text(12)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "bomb",
    [
        "<div>" * 100_000 + "deep" + "</div>" * 100_000,
        "<div>" * 100_000 + "deep",
        "<blockquote><p>" * 50_000 + "deep",
        "<ul><li>" * 50_000 + "deep",
        "<table><tr><td>" * 50_000 + "deep",
        "<span>" * 100_000 + "deep",
    ],
    ids=["div-closed", "div-open", "blockquote-p", "ul-li", "table", "span"],
)
def test_html_bombs_finish_quickly(bomb: str) -> None:
    start = time.process_time()  # CPU, not wall: the machine may be loaded
    assert html_to_text(bomb, timeout=None) == "deep"  # no wall-clock cap: CPU is checked
    # Unprotected, lexbor needs minutes for 100k nested divs (quadratic tree building).
    assert time.process_time() - start < 60


def test_html_depth_cap_leaves_normal_documents_alone() -> None:
    nested = "<div>" * 300 + "<p>inside</p>" + "</div>" * 300 + "<p>after</p>"
    assert defuse_html(nested, max_depth=512, max_attributes=64) is nested
    assert html_to_text(nested) == "inside\nafter"
    flattened = defuse_html(nested, max_depth=10, max_attributes=64)
    assert flattened.count("<div>") == 10 and flattened.count("</div>") == 10
    assert html_to_text(nested, max_depth=10) == "inside\nafter"
    with pytest.raises(ConfigError):
        html_to_text("x", max_depth=0)


def test_html_size_cap() -> None:
    with pytest.raises(InputTooLargeError, match="raise max_bytes"):
        html_to_text("<p>" + "x" * 2000 + "</p>", max_bytes=1000)
    with pytest.raises(InputTooLargeError):
        html_to_text(b"<p>" + b"x" * 2000, max_bytes=1000)
    with pytest.raises(ConfigError):
        html_to_text("x", max_bytes=0)


# ---------------------------------------------------------------- Markdown


GENERATED_MD = """# Near-duplicate detection

Documents are **canonicalized**, then *tokenized* into [shingles](https://en.wikipedia.org/wiki/W-shingling),
then sketched with `MinHash` or SimHash.

## Steps

1. Canonicalize the text &amp; fold case.
2. Cut it into words, then into overlapping windows.
3. Hash every window and keep the minimum per permutation.

> A quoted remark about Jaccard similarity and its estimate.

| Sketch | Bits |
|--------|------|
| SimHash | 64 |
| MinHash | 128 x 32 |

```python
def jaccard(a, b):
    return len(a & b) / len(a | b)
```

<div class="note">raw html block</div>

Final paragraph with an image ![diagram](img.png) and a line\\
break.
"""


def test_markdown_generated() -> None:
    text = markdown_to_text(GENERATED_MD)
    lines = text.split("\n")
    assert lines[0] == "Near-duplicate detection"
    assert "Documents are canonicalized, then tokenized into shingles," in text
    assert "Canonicalize the text & fold case." in lines
    assert "Sketch Bits" in lines and "MinHash 128 x 32" in lines
    assert "def jaccard(a, b):" in lines
    assert "return len(a & b) / len(a | b)" in lines
    for absent in ("wikipedia", "**", "](", "img.png", "diagram", "raw html", "|---", "#"):
        assert absent not in text
    assert lines[-2:] == ["Final paragraph with an image and a line", "break."]
    no_code = markdown_to_text(GENERATED_MD, include_code=False)
    assert "MinHash" in no_code and "def jaccard" not in no_code
    assert "then sketched with or SimHash." in no_code


def test_markdown_and_its_html_rendering_are_near_duplicates() -> None:
    md = GENERATED_MD.replace('<div class="note">raw html block</div>', "")
    assert html_to_text(render(md)) == markdown_to_text(md)


@pytest.mark.parametrize("md", GENERATED_MDS, ids=lambda m: f"{len(m)}c")
def test_real_markdown_vs_rendered_html(md: str) -> None:
    from_md = markdown_to_text(md)
    from_html = html_to_text(render(md))
    assert from_md.strip()
    assert "](http" not in from_md
    similarity = jaccard(from_md, from_html)
    assert similarity >= 0.8, similarity


def test_markdown_bad_input() -> None:
    with pytest.raises(DecodeError, match="not valid UTF-8"):
        markdown_to_text(b"# caf\xe9")
    with pytest.raises(InputTooLargeError):
        markdown_to_text("x" * 100, max_bytes=99)
    assert markdown_to_text("> " * 90 + "deep") == "deep"
    assert markdown_to_text("- " * 40 + "deep") == "deep"
    # Bombs: no hang, no RecursionError; the over-deep block is dropped, the rest is kept.
    # ("[" costs markdown-it-py ~0.25 ms each: link labels are scanned up to 999 characters.)
    # 30k deep is 300x the nesting cap and 30x the recursion limit; a quadratic parse of it
    # (~10^9 steps) would still take minutes. 100k cost ~19 CPU-s under coverage, this ~6.
    for bomb in ("> " * 30_000, "- " * 30_000, "[" * 4_000, "*a" * 30_000, "<" * 30_000):
        start = time.process_time()  # CPU, not wall: the machine may be loaded
        text = markdown_to_text("before\n\n" + bomb + "deep\n\nafter", timeout=None)
        assert time.process_time() - start < 60
        assert text.startswith("before")
        if not bomb.startswith("-"):  # an over-deep list swallows the rest of the document
            assert text.endswith("\nafter")


# ---------------------------------------------------------------- PDF


def _reportlab_pdf(pages: list[str]) -> bytes:
    canvas = pytest.importorskip("reportlab.pdfgen.canvas")
    buf = io.BytesIO()
    c = canvas.Canvas(buf)
    for page in pages:
        for i, line in enumerate(page.split("\n")):
            c.drawString(72, 720 - 16 * i, line)
        c.showPage()
    c.save()
    return buf.getvalue()


def _slow_pdf(ops: int, pages: int) -> bytes:
    """A small PDF whose pages all share one compressed content stream of ``ops`` text ops.

    The stream compresses ~700x, so a 20 KB file holds millions of operators for pypdf.
    """
    content = b"BT /F1 12 Tf 72 720 Td " + b"(x) Tj " * ops + b"ET"
    stream = zlib.compress(content, 9)
    kids = b" ".join(b"%d 0 R" % (5 + i) for i in range(pages))
    objs = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, pages),
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    objs += [
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 3 0 R "
        b"/Resources << /Font << /F1 4 0 R >> >> >>"
    ] * pages
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for i, obj in enumerate(objs, 1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % i + obj + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1))
    for off in offsets:
        out.write(b"%010d 00000 n \n" % off)
    out.write(
        b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref)
    )
    return out.getvalue()


def test_pdf_generated(tmp_path: Path) -> None:
    data = _reportlab_pdf(["Hello PDF world, page one.\nSecond line.", "Page two here."])
    expected = "Hello PDF world, page one.\nSecond line.\nPage two here."
    assert pdf_to_text(data) == expected
    path = tmp_path / "doc.pdf"
    path.write_bytes(data)
    assert pdf_to_text(path) == expected
    assert pdf_to_text(str(path), timeout=None) == expected
    assert _slow_pdf(3, 2).startswith(b"%PDF-") and pdf_to_text(_slow_pdf(3, 2)) == "xxx\nxxx"


def test_real_pdf(tmp_path: Path) -> None:
    rng = random.Random(3)
    path = tmp_path / "manual.pdf"
    path.write_bytes(_reportlab_pdf(["\n".join(_sentences(rng, 12)) for _ in range(3)]))
    text = pdf_to_text(path, timeout=120)
    assert len(re.findall(r"[A-Za-z]{3,}", text)) > 50


def test_pdf_timeout_kills_the_parser(caplog: pytest.LogCaptureFixture) -> None:
    # 10 pages x 200k operators: pypdf needs minutes; the file is ~20 KB.
    data = _slow_pdf(200_000, 10)
    assert len(data) < 100_000
    caplog.set_level(logging.INFO, logger="neardup.markup")
    start = time.monotonic()
    with pytest.raises(TimeoutError, match="raise timeout"):
        pdf_to_text(data, timeout=3.0)
    elapsed = time.monotonic() - start
    assert 3.0 <= elapsed < 120  # the wall timeout, then a kill; generous for a loaded machine
    pids = [int(m) for m in re.findall(r"killed PDF worker pid (\d+)", caplog.text)]
    assert len(pids) == 1
    assert not Path(f"/proc/{pids[0]}").exists()  # killed and reaped, not orphaned
    with pytest.raises(ProcessLookupError):
        os.kill(pids[0], 0)


def test_pdf_size_cap_is_checked_before_parsing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_parse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a parser process was started")

    monkeypatch.setattr(subprocess, "Popen", no_parse)
    data = _reportlab_pdf(["small"])
    with pytest.raises(InputTooLargeError, match="raise max_bytes"):
        pdf_to_text(data, max_bytes=len(data) - 1)
    big = tmp_path / "big.pdf"
    with big.open("wb") as f:  # sparse: 51 MiB on paper, nothing read
        f.write(b"%PDF-1.4\n")
        f.truncate(51 * 1024 * 1024)
    with pytest.raises(InputTooLargeError, match="over the 52428800-byte cap"):
        pdf_to_text(big)


def test_pdf_bad_input(tmp_path: Path) -> None:
    with pytest.raises(DecodeError, match="not a PDF"):
        pdf_to_text(b"<html>not a pdf</html>")
    with pytest.raises(DecodeError, match="not a PDF"):
        pdf_to_text(b"")
    with pytest.raises(DecodeError, match="cannot extract text from the PDF"):
        pdf_to_text(b"%PDF-1.7\n" + bytes(range(256)) * 40)
    with pytest.raises(InputError, match="check the path"):
        pdf_to_text(tmp_path / "missing.pdf")
    with pytest.raises(InputError):
        pdf_to_text(3.5)  # type: ignore[arg-type]
    with pytest.raises(ConfigError):
        pdf_to_text(b"%PDF-", timeout=0)


# ---------------------------------------------------------------- to_text


def test_to_text_dispatch(tmp_path: Path) -> None:
    html = b"<!DOCTYPE html><html><body><p>Hello</p><script>x</script></body></html>"
    assert detect_format(html) == "html" and to_text(html) == "Hello"
    assert to_text(b"# Title\n\ntext", name="README.md") == "Title\ntext"
    assert to_text(b"# Title\n\ntext") == "# Title\n\ntext"  # no name: plain text
    assert to_text("# T", input_format="markdown") == "T"
    assert to_text(html, name="page.txt") == html.decode()
    assert to_text(b"<p>a</p>", name=tmp_path / "x.HTM") == "a"
    pdf = _reportlab_pdf(["pdf text"])
    assert detect_format(pdf) == "pdf" and to_text(pdf) == "pdf text"
    assert to_text(pdf, name="x.bin") == "pdf text"
    assert to_text(b"\xef\xbb\xbfbom text") == "bom text"
    with pytest.raises(DecodeError):
        to_text(b"caf\xe9")
    with pytest.raises(InputTooLargeError):
        to_text("abc", max_bytes=2)
    with pytest.raises(InputError, match="binary mode"):
        to_text("%PDF-1.4", input_format="pdf")
    with pytest.raises(ConfigError, match="unknown input format"):
        to_text("x", input_format="docx")  # type: ignore[arg-type]


def test_import_neardup_does_not_import_markup_libraries() -> None:
    code = (
        "import sys, neardup, neardup.markup; "
        "print([m for m in ('selectolax', 'markdown_it', 'pypdf', 'trafilatura') "
        "if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
