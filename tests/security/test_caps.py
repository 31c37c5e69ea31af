"""Every resource cap is configurable and refuses bad input with its NeardupError."""

from __future__ import annotations

import io
import json

import pytest

from neardup import CanonicalConfig, Canonicalizer
from neardup.errors import ConfigError, InputTooLargeError, TimeoutError
from neardup.io import DEFAULT_MAX_LINE_BYTES, read_jsonl
from neardup.report import Cluster, write_clusters


def test_document_size_cap() -> None:
    small = Canonicalizer(config=CanonicalConfig(max_bytes=100))
    assert small.canonicalize("a" * 100) == "a" * 100
    with pytest.raises(InputTooLargeError):
        small.canonicalize("a" * 101)
    with pytest.raises(InputTooLargeError):
        small.canonicalize("é" * 51)  # the cap counts UTF-8 bytes, not characters


def test_nfkc_growth_cap() -> None:
    # U+FDFA expands to 18 code points under NFKC; inputs from 2**20 code points get the
    # exact growth bound before normalizing (smaller ones cannot exhaust memory).
    bomb = "\ufdfa" * (1 << 20)
    with pytest.raises(InputTooLargeError, match="max_growth"):
        Canonicalizer(config=CanonicalConfig(max_growth=4.0)).canonicalize(bomb)
    plain = "abc\u00e9 " * (1 << 18)  # same length, no growth: passes the same cap
    assert Canonicalizer(config=CanonicalConfig(max_growth=4.0)).canonicalize(plain)


@pytest.mark.parametrize("field", ["max_bytes", "max_growth"])
def test_caps_are_validated(field: str) -> None:
    with pytest.raises(ConfigError):
        CanonicalConfig(**{field: 0})


def test_image_pixel_cap() -> None:
    pytest.importorskip("PIL")
    from PIL import Image

    from neardup.image import phash

    buf = io.BytesIO()
    Image.new("L", (300, 300)).save(buf, format="PNG")
    assert phash(buf.getvalue(), max_pixels=90_000).bits == 64
    with pytest.raises(InputTooLargeError, match="max_pixels"):
        phash(buf.getvalue(), max_pixels=89_999)


def _slow_pdf(operators: int) -> bytes:
    """A one-page PDF whose content stream has ``operators`` text-showing operators."""
    stream = b"BT /F1 1 Tf " + b"(ab) Tj 1 0 Td " * operators + b"ET"
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 50] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for i, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % i + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 6\n0000000000 65535 f \n" + b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size 6 /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % xref
    return bytes(out)


def test_pdf_size_and_time_caps() -> None:
    pytest.importorskip("pypdf")
    from neardup.markup import pdf_to_text

    assert "ab" in pdf_to_text(_slow_pdf(10), timeout=60)
    slow = _slow_pdf(300_000)
    with pytest.raises(InputTooLargeError):
        pdf_to_text(slow, max_bytes=len(slow) - 1)
    with pytest.raises(TimeoutError, match="raise timeout"):
        pdf_to_text(slow, timeout=2.0)


def test_markup_size_cap() -> None:
    pytest.importorskip("selectolax")
    from neardup.markup import html_to_text, markdown_to_text

    with pytest.raises(InputTooLargeError):
        html_to_text("<p>" + "x" * 200 + "</p>", max_bytes=100)
    with pytest.raises(InputTooLargeError):
        markdown_to_text("x" * 200, max_bytes=100)


def test_jsonl_line_cap() -> None:
    line = json.dumps({"id": 1, "text": "x" * 500}).encode() + b"\n"
    assert [d.text for d in read_jsonl(io.BytesIO(line), max_line_bytes=len(line))]
    with pytest.raises(InputTooLargeError, match="max_line_bytes"):
        list(read_jsonl(io.BytesIO(line), max_line_bytes=100))
    assert DEFAULT_MAX_LINE_BYTES == 64 * 1024 * 1024


def test_members_per_cluster_cap() -> None:
    big = Cluster(0, tuple(f"d{i}" for i in range(1000)), "d0")
    out = io.StringIO()
    write_clusters([big], out, max_members=10)
    record = json.loads(out.getvalue())
    assert record["size"] == 1000
    assert len(record["members"]) == 10 and record["members_truncated"] is True
