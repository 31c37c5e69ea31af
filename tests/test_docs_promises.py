"""The docs promise nothing that is not there (issue 44, item 7): no numba, JIT, warm-up
compile or kernel cache spoken of as present; the quickstart's columns are the real ones;
no reader cap offered as a command option."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted(
    [
        *(ROOT / "docs").glob("*.md"),
        ROOT / "README.md",
        *(ROOT / "examples").rglob("*.md"),
        *(ROOT / "examples").rglob("*.py"),
    ]
)
#: Words that put a mention of numba in the past (the kernels are native since issue 41).
PAST = re.compile(r"\b(then|of that time|before the native core|predate|was|were|had)\b")


def _paragraphs(path: Path) -> list[str]:
    return [p.replace("\n", " ") for p in re.split(r"\n\s*\n", path.read_text("utf-8"))]


def test_numba_is_only_spoken_of_in_the_past() -> None:
    stale = [
        f"{page.relative_to(ROOT)}: {para[:120]}"
        for page in PAGES
        for para in _paragraphs(page)
        if re.search(r"numba|NUMBA_", para) and not PAST.search(para)
    ]
    assert not stale, stale


def test_no_jit_warmup_compile_or_kernel_cache_promised() -> None:
    bad = re.compile(
        r"(?<!no )\bJIT\b|(?<!no )kernel cache|first compile|compile time|warm(-| )?up compile|"
        r"NEARDUP_CACHE_DIR|NEARDUP_AOT|NEARDUP_BACKGROUND_COMPILE",
        re.IGNORECASE,
    )
    found = [
        f"{page.relative_to(ROOT)}: {m.group(0)}"
        for page in PAGES
        if page.name != "CHANGELOG.md"
        for m in bad.finditer(page.read_text("utf-8"))
    ]
    assert not found, found


def test_warmup_is_documented_as_a_no_op() -> None:
    from neardup.cli import main

    section = (ROOT / "docs" / "cli.md").read_text("utf-8").split("## neardup warmup", 1)[1]
    assert "No longer needed" in section.split("\n## ", 1)[0]
    result = CliRunner().invoke(main, ["warmup"])
    assert result.exit_code == 0


def test_quickstart_names_the_annotate_columns() -> None:
    text = (ROOT / "docs" / "quickstart.md").read_text("utf-8")
    assert "`is_duplicate`" in text and "`cluster_id`" in text
    assert not re.search(r"`keep` column|column `keep`|\"keep\":", text)


def test_reader_caps_are_not_offered_as_options() -> None:
    text = (ROOT / "docs" / "formats.md").read_text("utf-8")
    assert "--max-line-bytes" not in text and "--max-file-bytes" not in text
    assert "ReadOptions(max_line_bytes=..., max_file_bytes=...)" in text
