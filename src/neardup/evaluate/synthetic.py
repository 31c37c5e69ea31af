"""Perturbation suites: labelled near-duplicates made from any corpus, and the recall report.

Text kinds: ``typo`` (a character swapped, replaced, dropped or doubled in a share of words),
``insert`` and ``delete`` (a share of words), ``reorder`` (a share of sentences change places),
``boilerplate`` (header and footer adding a share of the length), ``truncate`` (the end cut
off), and Unicode disguises: ``homoglyph`` (Latin letters to Cyrillic look-alikes),
``zero-width`` (invisible characters inside words) and ``bidi`` (direction controls around
words). Image kinds (Pillow, extra ``image``): ``resize``, ``jpeg``, ``brightness``, ``crop``,
``flip``, ``rotate``, ``overlay`` (a caption band). Strength is a share in (0, 1]; each kind
states what it scales. Every variant is labelled as a near-duplicate of its original.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from neardup.errors import ConfigError, DecodeError, InputError
from neardup.evaluate.scores import Labels, pair_key
from neardup.io import Document
from neardup.pipeline import DocLike, dedup, to_documents
from neardup.report import DedupResult
from neardup.types import DocId

__all__ = [
    "DEFAULT_STRENGTHS",
    "IMAGE_KINDS",
    "TEXT_KINDS",
    "DistinctOriginals",
    "PerturbationReport",
    "SyntheticCorpus",
    "Variant",
    "distinct_originals",
    "perturb_text",
    "perturbation_report",
    "synthetic_images",
    "synthetic_text",
]

TEXT_KINDS = (
    "typo",
    "insert",
    "delete",
    "reorder",
    "boilerplate",
    "truncate",
    "homoglyph",
    "zero-width",
    "bidi",
)
IMAGE_KINDS = ("resize", "jpeg", "brightness", "crop", "flip", "rotate", "overlay")
DEFAULT_STRENGTHS = (0.05, 0.1, 0.2, 0.4)
#: Kinds that have no strength: made once, reported at strength 1.0.
_BINARY_KINDS = frozenset({"flip"})

HOMOGLYPHS = dict(zip("aceopxyiABCEHKMOPTX", "асеорхуіАВСЕНКМОРТХ", strict=True))
ZERO_WIDTH = ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff")
BOILERPLATE = (
    "This message and any attachments are confidential and intended solely for the addressee.",
    "Copyright (c) the publisher. All rights reserved. Reproduction without permission is "
    "prohibited.",
    "You are receiving this because you subscribed to our newsletter. Unsubscribe at any time.",
    "Terms of service, privacy policy and cookie settings apply to this page.",
)
_TOKEN = re.compile(r"\S+|\s+")
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


@dataclass(frozen=True, slots=True)
class Variant:
    """A perturbed copy: its id, the original's id, the kind and the strength."""

    id: str
    original: str
    kind: str
    strength: float


@dataclass(frozen=True, slots=True)
class SyntheticCorpus:
    """Originals followed by their variants, with the labels that tie them.

    Attributes:
        documents: Originals first, then every variant.
        originals: Ids of the originals.
        variants: One record per variant.
    """

    documents: list[Document]
    originals: list[str]
    variants: list[Variant]

    @property
    def labels(self) -> Labels:
        """Each original and its variants form one cluster."""
        clusters = {o: o for o in self.originals}
        clusters.update({v.id: v.original for v in self.variants})
        return Labels.from_clusters(clusters)


@dataclass(frozen=True, slots=True)
class DistinctOriginals:
    """Originals with their own near-duplicates left out (see :func:`distinct_originals`).

    Attributes:
        kept: The first document (in input order) of each near-duplicate group, and every
            document in no group, in input order.
        groups: The near-duplicate groups found among the originals, each in input order
            (its first member is the one kept).
    """

    kept: list[Document]
    groups: list[tuple[DocId, ...]]

    @property
    def dropped(self) -> int:
        """Originals left out: every group member after the first."""
        return sum(len(g) - 1 for g in self.groups)


def distinct_originals(
    docs: Iterable[DocLike],
    method: str,
    *,
    threshold: float | None = None,
    **options: Any,
) -> DistinctOriginals:
    """Leave out the originals that the method already finds near-duplicate of another.

    A perturbation suite labels each original and its variants as one group, so a pair
    between two originals (or their variants) counts as a false positive. When the corpus
    itself holds near-duplicates (licence copies, templated pages, resized photos) those
    pairs are real, and they would drag precision down: a group of ``k`` copies with ``v``
    variants each makes ``k (v + 1)`` documents that all match one another. Run this on the
    originals first, at the lowest threshold to be scored, and build the suite from ``kept``.

    Args:
        docs: The originals.
        method: The method to be evaluated.
        threshold: Its (lowest) threshold; default: the method's.
        **options: Passed to :func:`~neardup.pipeline.dedup`.

    Examples:
        >>> text = "the quick brown fox jumps over the lazy dog by the river bank"
        >>> d = distinct_originals([("a", text), ("b", text + "!"), ("c", "other words")],
        ...                        "minhash", threshold=0.8)
        >>> [x.id for x in d.kept], d.groups, d.dropped
        (['a', 'c'], [('a', 'b')], 1)
    """
    documents = list(to_documents(docs))
    result = dedup(documents, method=method, threshold=threshold, **options)
    order: dict[DocId, int] = {d.id: i for i, d in enumerate(documents)}
    groups = sorted(
        (tuple(sorted(c.members, key=order.__getitem__)) for c in result.clusters),
        key=lambda g: order[g[0]],
    )
    drop = {m for g in groups for m in g[1:]}
    return DistinctOriginals([d for d in documents if d.id not in drop], groups)


def _check(kinds: Sequence[str], strengths: Sequence[float], known: Sequence[str]) -> None:
    bad = [k for k in kinds if k not in known]
    if bad or not kinds:
        raise ConfigError(f"unknown perturbation kinds {bad}; use some of {', '.join(known)}")
    if not strengths or any(not 0.0 < s <= 1.0 for s in strengths):
        raise ConfigError(f"strengths must be shares in (0, 1], got {list(strengths)}")


def _plan(kinds: Sequence[str], strengths: Sequence[float]) -> list[tuple[str, float]]:
    out: list[tuple[str, float]] = []
    for k in kinds:
        out.extend([(k, 1.0)] if k in _BINARY_KINDS else [(k, float(s)) for s in strengths])
    return out


def _typo(word: str, rng: random.Random) -> str:
    if len(word) < 2:
        return word + word
    i = rng.randrange(len(word) - 1)
    op = rng.randrange(4)
    if op == 0:
        return word[:i] + word[i + 1] + word[i] + word[i + 2 :]
    if op == 1:
        return word[:i] + rng.choice("abcdefghijklmnopqrstuvwxyz") + word[i + 1 :]
    if op == 2:
        return word[:i] + word[i + 1 :]
    return word[:i] + word[i] + word[i:]


def _per_word(text: str, share: float, rng: random.Random, edit: Any) -> str:
    return "".join(
        edit(t) if not t.isspace() and rng.random() < share else t for t in _TOKEN.findall(text)
    )


def _reorder(text: str, share: float, rng: random.Random) -> str:
    parts = [p for p in _SENTENCE.split(text) if p.strip()]
    if len(parts) < 2:
        words = text.split()
        parts = [" ".join(words[i : i + 12]) for i in range(0, len(words), 12)]
    if len(parts) < 2:
        return text
    k = min(len(parts), max(2, round(share * len(parts))))
    chosen = sorted(rng.sample(range(len(parts)), k))
    moved = chosen[1:] + chosen[:1]  # a cycle: every chosen sentence changes place
    out = list(parts)
    for src, dst in zip(chosen, moved, strict=True):
        out[dst] = parts[src]
    return "\n".join(out)


def _boilerplate(text: str, share: float, rng: random.Random) -> str:
    need = max(1, round(share * len(text.split()) / 2))

    def block() -> str:
        lines: list[str] = []
        while sum(len(x.split()) for x in lines) < need:
            lines.append(rng.choice(BOILERPLATE))
        return "\n".join(lines)

    return f"{block()}\n\n{text}\n\n{block()}"


def _truncate(text: str, share: float) -> str:
    cut = round(len(text) * (1.0 - share))
    space = text.rfind(" ", 0, cut)
    return text[: space if space > cut // 2 else cut]


def perturb_text(text: str, kind: str, strength: float, *, seed: int | str = 0) -> str:
    """One perturbed copy of ``text`` (see the module docstring for the kinds).

    Raises:
        ConfigError: unknown kind or a strength outside (0, 1].

    Examples:
        >>> perturb_text("the cat sat on the mat", "truncate", 0.5)
        'the cat'
        >>> perturb_text("copy", "homoglyph", 1.0)
        'сору'
    """
    _check([kind], [strength], TEXT_KINDS)
    rng = random.Random(f"{seed}:{kind}:{strength}")
    if kind == "typo":
        return _per_word(text, strength, rng, lambda w: _typo(w, rng))
    if kind == "insert":
        vocab = text.split() or ["word"]
        return _per_word(text, strength, rng, lambda w: f"{w} {rng.choice(vocab)}")
    if kind == "delete":
        return _per_word(text, strength, rng, lambda w: "")
    if kind == "reorder":
        return _reorder(text, strength, rng)
    if kind == "boilerplate":
        return _boilerplate(text, strength, rng)
    if kind == "truncate":
        return _truncate(text, strength)
    if kind == "homoglyph":
        return "".join(
            HOMOGLYPHS[c] if c in HOMOGLYPHS and rng.random() < strength else c for c in text
        )
    if kind == "zero-width":

        def hide(w: str) -> str:
            i = rng.randrange(1, len(w)) if len(w) > 1 else 1
            return w[:i] + rng.choice(ZERO_WIDTH) + w[i:]

        return _per_word(text, strength, rng, hide)
    return _per_word(text, strength, rng, lambda w: f"\u202e{w[::-1]}\u202c")


def synthetic_text(
    docs: Iterable[DocLike],
    *,
    kinds: Sequence[str] = TEXT_KINDS,
    strengths: Sequence[float] = DEFAULT_STRENGTHS,
    seed: int = 0,
) -> SyntheticCorpus:
    """The documents plus one variant per kind and strength of each, labelled.

    Variant ids are ``{original}~{kind}@{strength}``.

    Raises:
        ConfigError: unknown kind or bad strength.
        InputError: a document has no text.

    Examples:
        >>> c = synthetic_text(["one two. three four."], kinds=["delete", "bidi"],
        ...                    strengths=[0.5])
        >>> [v.id for v in c.variants]
        ['0~delete@0.5', '0~bidi@0.5']
        >>> sorted(c.labels.pairs)[0]
        ('0', '0~bidi@0.5')
    """
    _check(kinds, strengths, TEXT_KINDS)
    originals = list(to_documents(docs))
    out: list[Document] = list(originals)
    variants: list[Variant] = []
    for d in originals:
        if d.text is None:
            raise InputError(f"document {d.id!r} has no text; text perturbations need text")
        for kind, s in _plan(kinds, strengths):
            vid = f"{d.id}~{kind}@{s:g}"
            out.append(Document(vid, perturb_text(d.text, kind, s, seed=f"{seed}:{d.id}")))
            variants.append(Variant(vid, d.id, kind, s))
    return SyntheticCorpus(out, [d.id for d in originals], variants)


def _perturb_image(im: Any, kind: str, s: float) -> Any:
    import io

    from PIL import Image, ImageDraw, ImageEnhance, ImageFont

    w, h = im.size
    if kind == "resize":
        return im.resize(
            (max(8, round(w * (1 - s))), max(8, round(h * (1 - s)))), Image.Resampling.LANCZOS
        )
    if kind == "jpeg":
        buf = io.BytesIO()
        im.save(buf, "JPEG", quality=max(5, round(100 * (1 - s))))
        buf.seek(0)
        with Image.open(buf) as j:
            return j.convert("RGB")
    if kind == "brightness":
        return ImageEnhance.Brightness(im).enhance(1.0 + s)
    if kind == "crop":
        dx, dy = round(w * s / 2), round(h * s / 2)
        return im.crop((dx, dy, max(dx + 1, w - dx), max(dy + 1, h - dy)))
    if kind == "flip":
        return im.transpose(Image.Transpose.FLIP_LEFT_RIGHT)
    if kind == "rotate":
        return im.rotate(90 * s, resample=Image.Resampling.BICUBIC, fillcolor="white")
    out = im.copy()
    band = max(1, round(h * s))
    draw = ImageDraw.Draw(out)
    draw.rectangle((0, h - band, w, h), fill="black")
    font = ImageFont.load_default(size=max(6, int(band * 0.7)))
    draw.text((2, h - band), "SAMPLE (c) 2024", fill="white", font=font)
    return out


def synthetic_images(
    paths: Iterable[str | Path],
    *,
    out_dir: str | Path,
    kinds: Sequence[str] = IMAGE_KINDS,
    strengths: Sequence[float] = DEFAULT_STRENGTHS,
    min_size: int = 32,
) -> SyntheticCorpus:
    """Flatten each image onto white, save it and its variants (PNG; JPEG for ``jpeg``).

    Strengths scale: resize to ``1 - s`` of the size, JPEG quality ``100 (1 - s)``,
    brightness ``1 + s``, crop ``s`` of each side's length (half from each end), rotation
    ``90 s`` degrees, a caption band ``s`` of the height; flip has none.

    Args:
        paths: Image files; ones smaller than ``min_size`` pixels on a side are left out.
        out_dir: Where the originals and variants are written (it must exist).
        kinds: Image kinds.
        strengths: Shares in (0, 1].
        min_size: Smallest side kept.

    Raises:
        ConfigError: unknown kind or bad strength.
        DecodeError: an image cannot be read.
        MissingExtraError: Pillow is missing.

    Examples:
        >>> import tempfile
        >>> from PIL import Image
        >>> d = Path(tempfile.mkdtemp())
        >>> Image.radial_gradient("L").save(d / "g.png")
        >>> c = synthetic_images([d / "g.png"], out_dir=d, kinds=["flip", "jpeg"],
        ...                      strengths=[0.5])
        >>> [v.id for v in c.variants]
        ['g~flip@1.png', 'g~jpeg@0.5.jpg']
    """
    from neardup._extras import require_extra

    require_extra("image", "PIL")
    from PIL import Image

    _check(kinds, strengths, IMAGE_KINDS)
    out = Path(out_dir)
    docs: list[Document] = []
    variants: list[Variant] = []
    originals: list[Document] = []
    for n, p in enumerate(paths):
        try:
            with Image.open(p) as raw:
                rgba = raw.convert("RGBA")
        except (OSError, ValueError) as exc:
            raise DecodeError(f"cannot read image {p}: {exc}; leave it out") from exc
        if min(rgba.size) < min_size:
            continue
        im = Image.alpha_composite(Image.new("RGBA", rgba.size, "white"), rgba).convert("RGB")
        stem = Path(p).stem if Path(p).stem else str(n)
        base = f"{stem}" if not any(d.id == f"{stem}.png" for d in originals) else f"{stem}-{n}"
        target = out / f"{base}.png"
        im.save(target)
        originals.append(Document(target.name, None, target))
        for kind, s in _plan(kinds, strengths):
            ext = "jpg" if kind == "jpeg" else "png"
            vid = f"{base}~{kind}@{s:g}.{ext}"
            _perturb_image(im, kind, s).save(out / vid)
            docs.append(Document(vid, None, out / vid))
            variants.append(Variant(vid, target.name, kind, s))
    return SyntheticCorpus([*originals, *docs], [d.id for d in originals], variants)


@dataclass(frozen=True, slots=True)
class PerturbationReport:
    """Recall per kind and strength, and false positives, of one method at one threshold.

    Attributes:
        method: The method.
        threshold: Its threshold.
        rows: ``(kind, strength, variants, found)``; found = the method paired the variant
            with its original directly.
        originals: Number of originals.
        original_pairs: Pairs reported between two different originals (false positives,
            unless the corpus itself holds near-duplicates).
        cross_pairs: Pairs reported between a variant and another original or its variants.
    """

    method: str
    threshold: float
    rows: list[tuple[str, float, int, int]]
    originals: int
    original_pairs: int
    cross_pairs: int

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "method": self.method,
            "threshold": self.threshold,
            "originals": self.originals,
            "original_pairs": self.original_pairs,
            "cross_pairs": self.cross_pairs,
            "recall": [
                {"kind": k, "strength": s, "variants": n, "found": f, "recall": f / n if n else 0}
                for k, s, n, f in self.rows
            ],
        }

    def to_text(self) -> str:
        """A plain table: one line per kind and strength."""
        lines = [f"{self.method} at threshold {self.threshold:g}", "kind\tstrength\trecall\tfound"]
        lines += [f"{k}\t{s:g}\t{(f / n if n else 0):.3f}\t{f}/{n}" for k, s, n, f in self.rows]
        lines.append(
            f"false positives: {self.original_pairs} pairs among {self.originals} originals, "
            f"{self.cross_pairs} across groups"
        )
        return "\n".join(lines) + "\n"


def perturbation_report(
    corpus: SyntheticCorpus,
    method: str,
    *,
    threshold: float | None = None,
    result: DedupResult | None = None,
    **options: Any,
) -> PerturbationReport:
    """Run a method over a synthetic corpus (or take its ``result``) and count what it found.

    Examples:
        >>> c = synthetic_text(["a b c d e f g h i j k l m n o p q r s t"], kinds=["truncate"],
        ...                    strengths=[0.1, 0.9])
        >>> perturbation_report(c, "minhash", threshold=0.5).rows
        [('truncate', 0.1, 1, 1), ('truncate', 0.9, 1, 0)]
    """
    if result is None:
        result = dedup(corpus.documents, method=method, threshold=threshold, **options)
    found = {pair_key(p.a, p.b) for p in result.pairs}
    group = {o: o for o in corpus.originals}
    group.update({v.id: v.original for v in corpus.variants})
    originals = set(corpus.originals)
    counts: dict[tuple[str, float], list[int]] = {}
    for v in corpus.variants:
        c = counts.setdefault((v.kind, v.strength), [0, 0])
        c[0] += 1
        c[1] += pair_key(v.id, v.original) in found
    orig_pairs = sum(1 for a, b in found if a in originals and b in originals)
    cross = sum(
        1
        for a, b in found
        if group.get(a, a) != group.get(b, b) and not (a in originals and b in originals)
    )
    rows = [(k, s, n, f) for (k, s), (n, f) in counts.items()]
    return PerturbationReport(
        result.method, result.threshold, rows, len(corpus.originals), orig_pairs, cross
    )
