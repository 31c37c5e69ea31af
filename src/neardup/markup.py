"""[markup] HTML, Markdown and PDF to plain text, with size and wall-clock caps.

* :func:`html_to_text` parses with selectolax's lexbor HTML5 parser. Scripts, styles,
  ``noscript``, ``template``, embedded objects and hidden elements (``hidden``,
  ``aria-hidden="true"``, inline ``display:none`` / ``visibility:hidden``) are dropped, block
  elements become line breaks, entities are decoded. ``main_content=True`` keeps only the
  main text, found by trafilatura.
* :func:`markdown_to_text` walks markdown-it-py's tokens (CommonMark plus tables and
  strikethrough): text and code are kept; markup, link URLs, images and raw HTML are dropped;
  block boundaries become line breaks.
* :func:`pdf_to_text` extracts with pypdf in a child process that is killed at the timeout, after
  refusing oversized input and anything that does not start like a PDF.
* :func:`to_text` picks one of these by file name or by sniffing the bytes.

Every result has one block per line, whitespace inside a line collapsed to single spaces and
no empty lines, so the same document in different markups gives comparable text.

Bombs: every extraction has a wall-clock ``timeout`` (HTML and Markdown: checked in-process
while parsing; PDF: a child process, killed). HTML5 tree building is quadratic in the nesting
depth and in the attributes of one tag, so, like browsers (which stop nesting at depth 512),
the tags nested deeper than ``max_depth`` and the attributes past ``max_attributes`` are removed
before parsing (their text is kept). Markdown tables may pad at most ``max_padded_cells`` cells.
See :mod:`neardup._markup_guard`.
"""

from __future__ import annotations

import codecs
import contextlib
import logging
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from neardup._extras import require_extra
from neardup._markup_guard import Deadline, defuse_html, guard_markdown
from neardup.errors import ConfigError, DecodeError, InputError, InputTooLargeError, TimeoutError

__all__ = [
    "DEFAULT_MARKUP_TIMEOUT",
    "DEFAULT_MAX_ATTRIBUTES",
    "DEFAULT_MAX_DEPTH",
    "DEFAULT_MAX_MARKUP_BYTES",
    "DEFAULT_MAX_PADDED_CELLS",
    "DEFAULT_MAX_PDF_BYTES",
    "DEFAULT_PDF_TIMEOUT",
    "InputFormat",
    "detect_format",
    "html_to_text",
    "markdown_to_text",
    "pdf_to_text",
    "to_text",
]

log = logging.getLogger(__name__)

#: Largest HTML or Markdown input accepted, in bytes (UTF-8).
DEFAULT_MAX_MARKUP_BYTES = 64 * 1024 * 1024
#: Largest PDF accepted, in bytes (txtfp's cap).
DEFAULT_MAX_PDF_BYTES = 50 * 1024 * 1024
#: Wall-clock cap of one PDF extraction, in seconds (txtfp's cap).
DEFAULT_PDF_TIMEOUT = 30.0
#: Nesting depth beyond which HTML tags are removed before parsing (Blink's and WebKit's cap).
DEFAULT_MAX_DEPTH = 512
#: Attributes kept per HTML tag; the rest are removed before parsing (attribute bombs).
DEFAULT_MAX_ATTRIBUTES = 1024
#: Cells one Markdown pipe table may add to pad its short rows to the header's width.
DEFAULT_MAX_PADDED_CELLS = 1 << 14
#: Wall-clock cap of one HTML or Markdown extraction, in seconds.
DEFAULT_MARKUP_TIMEOUT = 30.0

InputFormat = Literal["auto", "text", "html", "markdown", "pdf"]

_DROP_TAGS = frozenset(
    {"script", "style", "noscript", "template", "head", "iframe", "object", "embed", "svg",
     "canvas", "audio", "video", "map", "datalist", "select", "input", "textarea"}
)  # fmt: skip
_BLOCK_TAGS = frozenset(
    {"address", "article", "aside", "blockquote", "body", "caption", "dd", "details", "dialog",
     "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3",
     "h4", "h5", "h6", "header", "hgroup", "hr", "html", "legend", "li", "main", "menu", "nav",
     "ol", "p", "pre", "section", "summary", "table", "tbody", "tfoot", "thead", "tr", "ul"}
)  # fmt: skip
_CELL_TAGS = frozenset({"td", "th"})
_HIDDEN_STYLE_RE = re.compile(r"(?:display\s*:\s*none|visibility\s*:\s*hidden)", re.IGNORECASE)
_META_CHARSET_RE = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?([A-Za-z0-9_.:-]+)""", re.I)
_BREAK = "\n"
# markdown-it's nesting cap (its CommonMark preset has 20): content nested deeper (quotes in
# quotes, lists in lists) is dropped by the parser; the cap keeps its recursion bounded.
_MD_MAX_NESTING = 100


def _check_size(nbytes: int, max_bytes: int, what: str) -> None:
    if max_bytes < 1:
        raise ConfigError(f"max_bytes must be a positive number of bytes, got {max_bytes}")
    if nbytes > max_bytes:
        raise InputTooLargeError(
            f"{what} is {nbytes} bytes, over the {max_bytes}-byte cap; split it or leave it "
            "out (--exclude); from Python, raise max_bytes if you trust the input"
        )


def _decode_utf8(data: bytes, what: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DecodeError(
            f"{what} is not valid UTF-8 (byte {exc.start}: {exc.reason}); decode it yourself "
            "with the right encoding and pass a str"
        ) from None


def _decode_html(data: bytes) -> str:
    """UTF-8 (BOM allowed), else the encoding a ``<meta charset>`` in the first 1 KiB names."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError:
            pass
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        match = _META_CHARSET_RE.search(data[:1024])
        if match is not None:
            try:
                return data.decode(match.group(1).decode("ascii").lower())
            except (LookupError, UnicodeDecodeError):
                pass
        raise DecodeError(
            f"HTML is not valid UTF-8 (byte {exc.start}: {exc.reason}) and declares no usable "
            "<meta charset>; decode it yourself with the right encoding and pass a str"
        ) from None


def _as_markup_text(data: str | bytes, max_bytes: int, what: str) -> str:
    if isinstance(data, str):
        _check_size(len(data.encode("utf-8", "surrogatepass")), max_bytes, what)
        return data
    if isinstance(data, bytes | bytearray | memoryview):
        raw = bytes(data)
        _check_size(len(raw), max_bytes, what)
        return _decode_html(raw) if what == "HTML" else _decode_utf8(raw, what)
    raise InputError(f"{what} must be str or bytes, got {type(data).__name__}")


def _hidden(node: Any) -> bool:
    attrs = node.attributes
    if not attrs:
        return False
    if "hidden" in attrs and (attrs["hidden"] or "").lower() != "until-found":
        return True
    if (attrs.get("aria-hidden") or "").strip().lower() == "true":
        return True
    style = attrs.get("style")
    return bool(style) and _HIDDEN_STYLE_RE.search(style) is not None


def _walk(root: Any) -> Iterator[tuple[bool, Any]]:
    """Iterative pre/post-order walk: ``(True, node)`` on entry, ``(False, node)`` on exit.

    Dropped elements are neither entered nor descended into. No recursion, so any depth works.
    """
    node = root
    root_id = root.mem_id  # nodes are fresh wrappers each time; == serializes HTML
    while node is not None:
        tag = node.tag
        skip = tag == "-comment" or (
            node.is_element_node and (tag in _DROP_TAGS or (node.attributes and _hidden(node)))
        )
        if not skip:
            yield True, node
            child = node.child
            if child is not None:
                node = child
                continue
            yield False, node
        # climb until a next sibling exists
        while node.mem_id != root_id and node.next is None:
            node = node.parent
            yield False, node
        if node.mem_id == root_id:
            return
        node = node.next


def _normalize_lines(text: str) -> str:
    lines = (" ".join(line.split()) for line in text.split(_BREAK))
    return _BREAK.join(line for line in lines if line)


def _tree_text(root: Any, deadline: Deadline) -> str:
    parts: list[str] = []
    pre = 0
    for i, (entering, node) in enumerate(_walk(root)):
        if i & 0xFFF == 0:
            deadline.check()
        tag = node.tag
        if tag == "-text":
            if entering:
                text = node.text_content or ""
                parts.append(text if pre else " ".join(text.split(_BREAK)))
            continue
        if tag == "pre":
            pre += 1 if entering else -1
        if (tag == "br" and entering) or tag in _BLOCK_TAGS:
            parts.append(_BREAK)
        elif tag in _CELL_TAGS:
            parts.append(" ")
    return _normalize_lines("".join(parts))


def html_to_text(
    html: str | bytes,
    *,
    main_content: bool = False,
    max_bytes: int = DEFAULT_MAX_MARKUP_BYTES,
    max_depth: int = DEFAULT_MAX_DEPTH,
    max_attributes: int = DEFAULT_MAX_ATTRIBUTES,
    timeout: float | None = DEFAULT_MARKUP_TIMEOUT,
) -> str:
    """Return the visible text of an HTML document, one block per line.

    Args:
        html: The document, as str or bytes (UTF-8, a UTF-16 BOM, or a ``<meta charset>``).
        main_content: Keep only the main content (article text without navigation, headers,
            footers and boilerplate), found by trafilatura; when trafilatura finds none, the
            whole page's text is returned.
        max_bytes: Size cap in bytes, checked before parsing.
        max_depth: Tags nested deeper than this are removed before parsing (HTML bombs;
            ``<div/>`` opens a div, as in browsers).
        max_attributes: Attributes of one tag past this many are removed before parsing.
        timeout: Wall-clock cap in seconds, checked between the steps and while walking the
            tree (``None``: no cap). The parse itself is linear once the two caps above hold.

    Returns:
        The text: blocks on their own lines, spaces collapsed, no empty lines.

    Raises:
        InputTooLargeError: The input is over ``max_bytes``.
        DecodeError: Bytes that are not UTF-8 and declare no usable charset.
        TimeoutError: Extraction took longer than ``timeout``.
        MissingExtraError: The ``markup`` extra is not installed.

    Examples:
        >>> html_to_text("<h1>Caf&eacute;</h1><p>Hi <b>there</b><script>x()</script></p>")
        'Café\\nHi there'
    """
    if max_depth < 1:
        raise ConfigError(f"max_depth must be at least 1, got {max_depth}")
    if max_attributes < 1:
        raise ConfigError(f"max_attributes must be at least 1, got {max_attributes}")
    deadline = Deadline(timeout, "HTML")
    text = defuse_html(
        _as_markup_text(html, max_bytes, "HTML"),
        max_depth=max_depth,
        max_attributes=max_attributes,
        deadline=deadline,
    )
    lexbor = require_extra("markup", "selectolax.lexbor")
    deadline.check()
    tree = lexbor.LexborHTMLParser(text)
    deadline.check()
    root = tree.root
    if root is None:
        return ""
    if main_content:
        found = _main_content(tree, root, deadline)
        if found:
            return found
        log.debug("trafilatura found no main content; using the whole page")
    return _tree_text(root, deadline)


def _main_content(tree: Any, root: Any, deadline: Deadline) -> str:
    """Main text by trafilatura, run on the page with the dropped elements removed."""
    trafilatura = require_extra("markup", "trafilatura")
    drop = []
    for i, (entering, node) in enumerate(_walk(root)):
        if i & 0xFFF == 0:
            deadline.check()
        if not entering:
            continue
        child = node.child
        while child is not None:
            if child.is_element_node and (child.tag in _DROP_TAGS - {"head"} or _hidden(child)):
                drop.append(child)
            child = child.next
    for node in drop:
        node.decompose()
    deadline.check()
    extracted = trafilatura.extract(
        tree.html or "", output_format="txt", include_comments=False, include_tables=True
    )
    return _normalize_lines(extracted) if extracted else ""


def markdown_to_text(
    md: str | bytes,
    *,
    include_code: bool = True,
    max_bytes: int = DEFAULT_MAX_MARKUP_BYTES,
    max_padded_cells: int = DEFAULT_MAX_PADDED_CELLS,
    timeout: float | None = DEFAULT_MARKUP_TIMEOUT,
) -> str:
    """Return the text of a Markdown document, one block per line.

    CommonMark plus pipe tables and strikethrough. Text, inline code and code blocks are kept
    (``include_code=False`` drops both kinds of code); emphasis, headings' ``#``, link URLs,
    images, rules and raw HTML are dropped. Blocks nested more than 100 deep (Markdown bombs)
    are dropped by the parser; the rest of the document is kept.

    Args:
        md: The document, as str or UTF-8 bytes.
        include_code: Keep inline code and code blocks.
        max_bytes: Size cap in bytes, checked before parsing.
        max_padded_cells: Cells one pipe table may add to pad its short rows to the header's
            width (wide-table bombs); the rows past the cap are kept as ordinary text.
        timeout: Wall-clock cap in seconds, checked while the parser runs (``None``: no cap).

    Returns:
        The text: blocks on their own lines, spaces collapsed, no empty lines.

    Raises:
        InputTooLargeError: The input is over ``max_bytes``.
        DecodeError: Bytes that are not UTF-8.
        TimeoutError: Extraction took longer than ``timeout``.
        MissingExtraError: The ``markup`` extra is not installed.

    Examples:
        >>> markdown_to_text("# Title\\n\\nSome *text*, a [link](https://x.org) and `code`.")
        'Title\\nSome text, a link and code.'
    """
    if max_padded_cells < 0:
        raise ConfigError(f"max_padded_cells must be at least 0, got {max_padded_cells}")
    deadline = Deadline(timeout, "Markdown")
    text = _as_markup_text(md, max_bytes, "Markdown")
    markdown_it = require_extra("markup", "markdown_it")
    parser = markdown_it.MarkdownIt("commonmark", {"maxNesting": _MD_MAX_NESTING})
    parser.enable(["table", "strikethrough"])
    guard_markdown(parser, max_padded_cells=max_padded_cells, deadline=deadline)
    parts: list[str] = []
    for token in parser.parse(text):
        kind = token.type
        if kind == "inline":
            for child in token.children or ():
                sub = child.type
                if sub in ("text", "text_special") or (sub == "code_inline" and include_code):
                    parts.append(" ".join(child.content.split(_BREAK)))
                elif sub == "softbreak":
                    parts.append(" ")
                elif sub == "hardbreak":
                    parts.append(_BREAK)
        elif kind in ("fence", "code_block"):
            if include_code:
                parts.extend((_BREAK, token.content, _BREAK))
        elif kind in ("th_open", "td_open"):
            parts.append(" ")
        elif kind in ("th_close", "td_close"):
            continue
        elif kind.endswith(("_open", "_close")) or kind == "hr":
            parts.append(_BREAK)
    return _normalize_lines("".join(parts))


# The child process's program. It imports only pypdf (not neardup, not the caller's
# __main__), reads the PDF from stdin and writes b"1" + text, or b"0" + an error message.
_PDF_CHILD = """
import io, logging, sys
sys.path.insert(0, sys.argv[1])
logging.disable(logging.WARNING)
out = sys.stdout.buffer
try:
    import pypdf
    reader = pypdf.PdfReader(io.BytesIO(sys.stdin.buffer.read()))
    if reader.is_encrypted and not reader.decrypt(""):
        raise ValueError("the PDF is encrypted; decrypt it first (e.g. qpdf --decrypt)")
    text = "\\n".join(page.extract_text() or "" for page in reader.pages)
    out.write(b"1" + text.encode("utf-8", "replace"))
except Exception as exc:
    out.write(b"0" + f"{type(exc).__name__}: {exc}".encode("utf-8", "replace"))
"""


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Kill the child, close its stdin (a timeout can land while the input is still being
    written, and an open pipe would leak) and reap it."""
    proc.kill()
    if proc.stdin is not None:
        with contextlib.suppress(OSError):
            proc.stdin.close()
    proc.communicate()


def _run_pdf_child(raw: bytes, pypdf_dir: str, timeout: float | None) -> bytes:
    """Run :data:`_PDF_CHILD` on ``raw``; kill it at the timeout. Returns its stdout."""
    start = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-I", "-c", _PDF_CHILD, pypdf_dir],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        out, err = proc.communicate(raw, timeout=timeout)
    except subprocess.TimeoutExpired:
        _stop(proc)
        log.info("killed PDF worker pid %d after %.2f s", proc.pid, time.monotonic() - start)
        raise TimeoutError(
            f"PDF extraction took longer than {timeout} s and was stopped; raise timeout "
            "if the file is large but trusted, or skip it"
        ) from None
    except BaseException:  # KeyboardInterrupt and the like: never leave the child running
        _stop(proc)
        raise
    if proc.returncode != 0 or not out:
        tail = err.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no output"]
        raise DecodeError(
            f"the PDF parser process failed (exit code {proc.returncode}: {tail[0]}); "
            "the file is probably malformed, skip it or repair it"
        )
    return out


def _read_pdf_input(data: bytes | str | os.PathLike[str], max_bytes: int) -> bytes:
    if isinstance(data, bytes | bytearray | memoryview):
        raw = bytes(data)
        _check_size(len(raw), max_bytes, "PDF")
        return raw
    if isinstance(data, str | os.PathLike):
        path = Path(data)
        try:
            _check_size(path.stat().st_size, max_bytes, f"PDF {path}")
            return path.read_bytes()
        except OSError as exc:
            raise InputError(f"cannot read PDF {path}: {exc}; check the path") from exc
    raise InputError(f"PDF must be bytes or a path, got {type(data).__name__}")


def pdf_to_text(
    data: bytes | str | os.PathLike[str],
    *,
    timeout: float | None = DEFAULT_PDF_TIMEOUT,
    max_bytes: int = DEFAULT_MAX_PDF_BYTES,
) -> str:
    """Return the text of a PDF, extracted by pypdf in a child process with a time limit.

    The size cap is checked before anything is parsed, and input that does not start with
    ``%PDF-`` (within its first 1 KiB) is refused at once. The parse runs in a child Python
    process (``sys.executable -I``, importing only pypdf) that is killed when ``timeout``
    seconds pass, so a pathological file cannot keep a CPU busy, and a parser crash cannot
    take the caller down. Starting the child (an interpreter and pypdf) costs 0.1-1 s.

    Args:
        data: The PDF's bytes, or a path to it (a ``str`` is a path).
        timeout: Wall-clock cap in seconds; ``None`` waits as long as it takes.
        max_bytes: Size cap in bytes.

    Returns:
        The pages' text, pages separated by line breaks, blocks one per line, NUL replaced by
        U+FFFD.

    Raises:
        InputTooLargeError: The PDF is over ``max_bytes``.
        DecodeError: The input is not a PDF, is encrypted, or pypdf cannot parse it.
        TimeoutError: Extraction took longer than ``timeout``.
        MissingExtraError: The ``markup`` extra is not installed.

    Examples:
        >>> pdf_to_text(b"GIF89a...")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        neardup.errors.DecodeError: input is not a PDF (no %PDF- header in its first 1 KiB); ...
    """
    if timeout is not None and not timeout > 0:
        raise ConfigError(f"timeout must be a positive number of seconds or None, got {timeout}")
    raw = _read_pdf_input(data, max_bytes)
    if b"%PDF-" not in raw[:1024]:
        raise DecodeError(
            "input is not a PDF (no %PDF- header in its first 1 KiB); pass a PDF file, "
            "or choose another input format"
        )
    pypdf = require_extra("markup", "pypdf")
    out = _run_pdf_child(raw, str(Path(str(pypdf.__file__)).parent.parent), timeout)
    text = out[1:].decode("utf-8")
    if out[:1] != b"1":
        raise DecodeError(f"cannot extract text from the PDF ({text}); skip the file or repair it")
    return _normalize_lines(text.replace("\0", "\ufffd"))


_EXTENSIONS: dict[str, InputFormat] = {
    ".html": "html", ".htm": "html", ".xhtml": "html", ".shtml": "html",
    ".md": "markdown", ".markdown": "markdown", ".mdown": "markdown", ".mkd": "markdown",
    ".pdf": "pdf",
    ".txt": "text", ".text": "text",
}  # fmt: skip
_HTML_SNIFF_RE = re.compile(rb"^\s*(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html|head|body)\b", re.I)


def detect_format(data: str | bytes, *, name: str | os.PathLike[str] | None = None) -> InputFormat:
    """Guess the format of a document: by the file name's extension, else by sniffing.

    Sniffing recognizes PDF (``%PDF-`` in the first 1 KiB) and HTML (a doctype, ``<html>``,
    ``<head>`` or ``<body>`` at the start); anything else is text. Markdown is only recognized
    by its extension (``.md``, ``.markdown``, ...), since any text is valid Markdown.

    Examples:
        >>> detect_format(b"", name="notes/README.md"), detect_format("<!DOCTYPE html><p>x")
        ('markdown', 'html')
    """
    if name is not None:
        found = _EXTENSIONS.get(Path(name).suffix.lower())
        if found is not None:
            return found
    head = data[:1024].encode("utf-8", "surrogatepass") if isinstance(data, str) else data[:1024]
    if b"%PDF-" in head:
        return "pdf"
    if _HTML_SNIFF_RE.match(head.removeprefix(codecs.BOM_UTF8)):
        return "html"
    return "text"


def to_text(
    data: str | bytes,
    *,
    input_format: InputFormat = "auto",
    name: str | os.PathLike[str] | None = None,
    main_content: bool = False,
    timeout: float | None = DEFAULT_PDF_TIMEOUT,
    max_bytes: int | None = None,
) -> str:
    """Return the plain text of a document in any supported format (the readers' entry point).

    Args:
        data: The document's content (bytes as read from a file, or str).
        input_format: ``"auto"`` (see :func:`detect_format`), ``"text"``, ``"html"``,
            ``"markdown"`` or ``"pdf"``.
        name: The file name, used by ``"auto"`` to pick by extension.
        main_content: For HTML, keep only the main content (see :func:`html_to_text`).
        timeout: The wall-clock cap of the extraction in seconds (every format but text).
        max_bytes: Size cap; ``None`` uses each format's default.

    Returns:
        The text. ``"text"`` returns the input decoded (a UTF-8 BOM is removed), unchanged.

    Raises:
        ConfigError: An unknown ``input_format``.
        DecodeError, InputTooLargeError, TimeoutError: As the format's function raises them.
        MissingExtraError: HTML, Markdown or PDF without the ``markup`` extra.

    Examples:
        >>> to_text(b"plain \\xc3\\xa9"), to_text("<html><p>a<p>b", name="x.txt")
        ('plain é', '<html><p>a<p>b')
    """
    fmt = detect_format(data, name=name) if input_format == "auto" else input_format
    if fmt == "text":
        if max_bytes is not None:
            nbytes = len(data) if isinstance(data, bytes) else len(data.encode("utf-8", "replace"))
            _check_size(nbytes, max_bytes, "text")
        return data if isinstance(data, str) else _decode_utf8(bytes(data), "text")
    if fmt == "html":
        return html_to_text(
            data,
            main_content=main_content,
            max_bytes=max_bytes or DEFAULT_MAX_MARKUP_BYTES,
            timeout=timeout,
        )
    if fmt == "markdown":
        return markdown_to_text(
            data, max_bytes=max_bytes or DEFAULT_MAX_MARKUP_BYTES, timeout=timeout
        )
    if fmt == "pdf":
        if isinstance(data, str):
            raise InputError("PDF content must be bytes; read the file in binary mode")
        return pdf_to_text(data, timeout=timeout, max_bytes=max_bytes or DEFAULT_MAX_PDF_BYTES)
    raise ConfigError(
        f"unknown input format {input_format!r}; use 'auto', 'text', 'html', 'markdown' or 'pdf'"
    )
