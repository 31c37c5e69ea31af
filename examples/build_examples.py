"""Rebuild the bundled sample corpus in examples/ (deterministic; outputs are committed).

Run from the repository root: ``python examples/build_examples.py``. It copies redistributable
texts and images (see PROVENANCE.md) and makes near-duplicates of several kinds from them:
word edits, typos, added boilerplate, deleted paragraphs, case/whitespace changes, template
fills, a homoglyph disguise, and image re-encodes.
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parent
LICENSES = Path("/usr/share/common-licenses")
VECTORS = ROOT.parent / "tests" / "golden" / "vectors"
TEXT = ROOT / "text"
IMAGES = ROOT / "images"


def typos(text: str, rate: float, rng: random.Random) -> str:
    words = text.split(" ")
    for i, w in enumerate(words):
        if len(w) > 3 and rng.random() < rate:
            j = rng.randrange(len(w) - 1)
            words[i] = w[:j] + w[j + 1] + w[j] + w[j + 2 :]
    return " ".join(words)


def main() -> None:
    rng = random.Random(20261130)
    shutil.rmtree(TEXT, ignore_errors=True)
    shutil.rmtree(IMAGES, ignore_errors=True)
    TEXT.mkdir()
    IMAGES.mkdir()
    for name in [
        "GPL-2",
        "GPL-3",
        "LGPL-2.1",
        "LGPL-3",
        "Apache-2.0",
        "MPL-2.0",
        "BSD",
        "Artistic",
        "CC0-1.0",
    ]:
        (TEXT / f"{name.lower()}.txt").write_text((LICENSES / name).read_text())
    gpl3 = (LICENSES / "GPL-3").read_text()
    (TEXT / "gpl-3-typos.txt").write_text(typos(gpl3, 0.01, rng))
    apache = (LICENSES / "Apache-2.0").read_text()
    header = "Copyright 2026 Example Corp.\nDistributed with the Example toolkit.\n\n"
    footer = "\n\n-- end of license file; see NOTICE for third-party components --\n"
    (TEXT / "apache-2.0-with-header.txt").write_text(header + apache + footer)
    mpl = (LICENSES / "MPL-2.0").read_text().split("\n\n")
    del mpl[len(mpl) // 2]
    (TEXT / "mpl-2.0-paragraph-removed.txt").write_text("\n\n".join(mpl))
    bsd = (LICENSES / "BSD").read_text()
    (TEXT / "bsd-reformatted.txt").write_text("  ".join(bsd.upper().split()))
    template = (
        "Dear {name},\n\nThank you for your order {order} placed on {date}. Your package will "
        "be shipped to {city} within three business days. If you have questions about your "
        "order, reply to this message and our support team will help you. We appreciate your "
        "business and hope you enjoy your purchase.\n\nKind regards,\nThe Example Store team\n"
    )
    fills = [
        ("Alice Martin", "#10231", "3 March 2026", "Lyon"),
        ("Bob Okafor", "#10232", "4 March 2026", "Lagos"),
        ("Chen Wei", "#10233", "4 March 2026", "Chengdu"),
        ("Dana Kowalski", "#10234", "5 March 2026", "Gdansk"),
    ]
    for i, (name, order, date, city) in enumerate(fills):
        (TEXT / f"order-letter-{i + 1}.txt").write_text(
            template.format(name=name, order=order, date=date, city=city)
        )
    corpora = VECTORS / "txtfp" / "corpora"
    for path in sorted(corpora.iterdir()):
        (TEXT / f"txtfp-{path.stem}{path.suffix}").write_bytes(path.read_bytes())
    lorem = (corpora / "lorem_ipsum.txt").read_text()
    disguised = lorem.replace("a", "\u0430").replace("o", "\u043e").replace("e", "\u0435")
    (TEXT / "txtfp-lorem_ipsum-homoglyphs.txt").write_text(disguised)
    for name in [
        "photo.png",
        "photo_half.png",
        "photo_q90.jpg",
        "photo_bright.png",
        "photo_mirror.png",
        "synth_photo.png",
        "noise_seed42.png",
        "grad_diag_rgb.png",
    ]:
        shutil.copyfile(VECTORS / "images" / name, IMAGES / name)


if __name__ == "__main__":
    main()
