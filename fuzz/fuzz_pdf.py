"""Fuzz PDF extraction (``pdf_to_text``) on mutated PDFs. Each input starts a child process,
so this harness runs tens of inputs a second, not thousands.

Run: ``python fuzz/fuzz_pdf.py -runs=500``.
"""

from __future__ import annotations

import functools

from _harness import attempt, main, mutate, pick

TIMEOUT = 10.0


def _pdf(content: bytes) -> bytes:
    """A minimal one-page PDF showing ``content`` (a text stream), with a correct xref."""
    stream = b"BT /F1 12 Tf 10 20 Td (" + content + b") Tj ET"
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
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


@functools.cache
def seeds() -> tuple[bytes, ...]:
    """Small valid PDFs."""
    return (_pdf(b"Hello PDF world"), _pdf(b"\\(escaped\\) text \\222"))


def target(data: bytes) -> None:
    """Extract text from a mutated seed PDF, and from the raw input behind a PDF header."""
    from neardup.markup import pdf_to_text

    seed, rest = pick(seeds(), data)
    for blob in (mutate(seed, rest), b"%PDF-1.4\n" + data):
        out = attempt(pdf_to_text, blob, timeout=TIMEOUT, max_bytes=1 << 20)
        assert out is None or isinstance(out, str)


if __name__ == "__main__":
    main(target)
