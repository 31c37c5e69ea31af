"""Fuzz HTML and Markdown extraction: ``html_to_text`` (str and bytes, with a small depth
cap), ``markdown_to_text``, ``detect_format`` and ``to_text`` (PDF has its own harness).

Run: ``python fuzz/fuzz_markup.py -runs=50000``.
"""

from __future__ import annotations

import functools

from _harness import attempt, main, mutate, pick, text_of

MAX_BYTES = 1 << 16


@functools.cache
def seeds() -> tuple[bytes, ...]:
    """Small HTML and Markdown documents using the features the extractors handle."""
    return (
        b"<!doctype html><html><head><title>t</title><style>p{}</style></head><body>"
        b"<p>One &amp; two<br>three</p><div hidden>x</div><script>y</script>"
        b"<table><tr><td>a</td><td>b</td></tr></table><ul><li>i<li>j</ul></body></html>",
        b'<meta charset="latin-1"><p style="display:none">h</p><p>caf\xe9</p>',
        b"<div><div><div><span>deep</span></div></div></div>" * 3,
        b"# Title\n\nSome *emph* and `code` and [a link](http://x).\n\n"
        b"| a | b |\n|---|---|\n| 1 | 2 |\n\n```py\nprint(1)\n```\n\n> quote\n- item\n",
        b"Setext\n======\n\n<div>raw html</div>\n\n![img](x.png) ~~strike~~\n",
        # the shapes of issue 19: self-closing nesting, attribute floods, quotes that could
        # hide tags from the depth scan, foreign content, wide tables, runs of brackets
        b"<div/>" * 64 + b"<svg>" + b"<path/>" * 16 + b"<div/></svg>" + b"x",
        b"<p " + b" ".join(b"a%d='v>%d'" % (i, i) for i in range(40)) + b'>t</p><x a=b">',
        b"|h" * 40 + b"|\n" + b"|-" * 40 + b"|\n" + b"r\n" * 20,
        b"[" * 200 + b"![" * 50 + b"]" + b"*a" * 50,
    )


def target(data: bytes) -> None:
    """Extract text from raw and mutated-seed bytes as HTML and Markdown (small caps on depth,
    attributes and table padding, so the guards' rewriting paths run too)."""
    from neardup.markup import detect_format, html_to_text, markdown_to_text, to_text

    seed, rest = pick(seeds(), data)
    for blob in (data, mutate(seed, rest)):
        text = text_of(blob)
        for source in (blob, text):
            out = attempt(html_to_text, source, max_bytes=MAX_BYTES, max_depth=16, max_attributes=8)
            assert out is None or isinstance(out, str)
            out = attempt(markdown_to_text, source, max_bytes=MAX_BYTES, max_padded_cells=64)
            assert out is None or isinstance(out, str)
        fmt = attempt(detect_format, blob)
        if fmt != "pdf":
            attempt(to_text, blob, max_bytes=MAX_BYTES)
    attempt(html_to_text, seed, main_content=len(data) % 7 == 0, max_bytes=MAX_BYTES)


if __name__ == "__main__":
    main(target)
