"""The image methods besides pHash: aHash, dHash, wHash, Meta's PDQ and crop-resistant hashing,
each optionally mirror- and rotation-proof (``dihedral=True``).

With ``dihedral``, each image contributes its 8 dihedral variants (the 4 rotations and their
mirror images): PDQ derives them from its DCT (:func:`neardup.image.pdq_dihedral`); the other
hashes hash the 8 transposed images. Two images pair when some variant of one is within the
radius of some variant of the other; the pair's distance is the smallest such distance.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import numpy.typing as npt

from neardup.config import check_choice, check_range
from neardup.errors import ConfigError
from neardup.io import Document
from neardup.methods.base import Collector, Method, MethodConfig, PairArrays

if TYPE_CHECKING:
    from PIL import Image as PILImage

    from neardup.image.cropresistant import CropResistantHash
    from neardup.image.value import ImageHash, ImageHashParams

__all__ = [
    "AHashConfig",
    "CropResistantConfig",
    "CropResistantMethod",
    "DHashConfig",
    "HashMethod",
    "PDQConfig",
    "PDQMethod",
    "VariantCollector",
    "WHashConfig",
    "check_not_dihedral",
    "decoded",
    "dihedral_hashes",
    "dihedral_images",
]

log = logging.getLogger(__name__)

U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]
#: Index keys are ``position * _SLOTS + variant``.
_SLOTS = 64


def dihedral_images(im: PILImage.Image) -> list[PILImage.Image]:
    """The 8 dihedral transforms of an image, in :data:`neardup.image.pdqhashing.DIHEDRAL`
    order (original, rotate 90 / 180 / 270 counter-clockwise, flip x (top-bottom), flip y
    (left-right), transpose, transverse)."""
    image_mod = require_pil()
    t = image_mod.Transpose
    return [
        im,
        im.transpose(t.ROTATE_90),
        im.transpose(t.ROTATE_180),
        im.transpose(t.ROTATE_270),
        im.transpose(t.FLIP_TOP_BOTTOM),
        im.transpose(t.FLIP_LEFT_RIGHT),
        im.transpose(t.TRANSPOSE),
        im.transpose(t.TRANSVERSE),
    ]


def dihedral_hashes(doc: Document, params: ImageHashParams) -> list[ImageHash]:
    """The hashes of the 8 :func:`dihedral_images` of one document's image, in that order.

    Memory is bounded by one image: the image is decoded once and each transform is built,
    hashed and dropped in turn (the batch's images are never all transformed at once). For the
    ``imagehash`` preset the image is turned grey first: ``convert("L")`` works pixel by pixel,
    so the grey of a transform is the transform of the grey, and the bits are those of hashing
    the transformed colour image, at a third of the memory per transform.
    """
    from neardup.image.hashes import hash_image

    im = decoded(doc)
    if params.preset == "imagehash":
        im = im.convert("L")
    t = require_pil().Transpose
    ops = (
        t.ROTATE_90,
        t.ROTATE_180,
        t.ROTATE_270,
        t.FLIP_TOP_BOTTOM,
        t.FLIP_LEFT_RIGHT,
        t.TRANSPOSE,
        t.TRANSVERSE,
    )
    return [hash_image(im, params)] + [hash_image(im.transpose(op), params) for op in ops]


def require_pil() -> Any:
    from neardup._extras import require_extra

    return require_extra("image", "PIL.Image")


def _source(doc: Document) -> Any:
    return doc.path if doc.path is not None else doc.read_bytes()


def decoded(doc: Document) -> PILImage.Image:
    """The document's image, decoded (RGB or L)."""
    from neardup.image.decode import opened

    with opened(_source(doc)) as im:
        return im.copy() if im.mode in ("RGB", "L") else im.convert("RGB")


class VariantCollector(Collector):
    """Codes with 1 or 8 variants per document in one exact Hamming index; a pair is two
    documents with some variants within the radius (the smallest such distance reported).

    ``add`` takes ``(n, variants, words)`` uint64 codes, or ``(n, words)`` / ``(n,)`` for a
    single variant; rows of ``positions`` that are ``-1`` are left out (gated images).
    """

    def __init__(self, bits: int, radius: int) -> None:
        from neardup.index.hamming import HammingIndex

        self._bits = bits
        self._radius = min(radius, bits - 1)
        self._index = HammingIndex(bits, radius=self._radius)

    def add(self, positions: I64, payload: U64) -> None:
        codes = np.asarray(payload, dtype=np.uint64)
        words = self._bits // 64
        codes = codes.reshape(len(positions), -1, words)
        keep = positions >= 0
        if not keep.any():
            return
        codes, pos = codes[keep], positions[keep]
        variants = codes.shape[1]
        if variants > _SLOTS:
            raise ConfigError(f"at most {_SLOTS} variants per document, got {variants}")
        keys = (pos[:, None] * _SLOTS + np.arange(variants)[None, :]).reshape(-1)
        self._index.add_many(keys.tolist(), codes.reshape(-1, words))

    def pairs(self, *, jobs: int = 1) -> PairArrays:
        if len(self._index) == 0:
            return PairArrays.empty()
        a, b, d = self._index.pair_rows()
        keys = np.asarray(self._index.keys(), dtype=np.int64)
        pa, pb = keys[a] // _SLOTS, keys[b] // _SLOTS
        other = pa != pb
        pa, pb, d = pa[other], pb[other], d[other]
        lo, hi = np.minimum(pa, pb), np.maximum(pa, pb)
        order = np.lexsort((d, hi, lo))  # per pair, the smallest distance first
        lo, hi, d = lo[order], hi[order], d[order]
        result = PairArrays.of(lo, hi, 1.0 - d / self._bits, d)
        return result.sorted()  # keeps each pair's first (smallest-distance) row


@dataclass(frozen=True, slots=True)
class _HashConfig(MethodConfig):
    """Shared fields of the 64-bit image hashes.

    Attributes:
        threshold: ``1 - d / 64``.
        dihedral: Match mirrored and rotated copies too (hashes the 8 transforms).
    """

    KIND: ClassVar[str] = "image-hash"
    threshold: float = 0.84
    dihedral: bool = False


@dataclass(frozen=True, slots=True)
class AHashConfig(_HashConfig):
    """imagehash's 64-bit average hash of images (``1 - d / 64``)."""

    KIND: ClassVar[str] = "ahash"


@dataclass(frozen=True, slots=True)
class DHashConfig(_HashConfig):
    """imagehash's 64-bit difference hash of images (``1 - d / 64``)."""

    KIND: ClassVar[str] = "dhash"


@dataclass(frozen=True, slots=True)
class WHashConfig(_HashConfig):
    """imagehash's 64-bit Haar wavelet hash of images (``1 - d / 64``)."""

    KIND: ClassVar[str] = "whash"


class HashMethod(Method):
    """A 64-bit imagehash-compatible hash (``ahash``, ``dhash``, ``whash``) with an exact
    Hamming-radius index; with ``dihedral`` the 8 transforms of every image are hashed."""

    name: ClassVar[str] = "image-hash"
    config: _HashConfig

    @property
    def radius(self) -> int:
        """The largest Hamming distance accepted."""
        return int(np.floor((1.0 - self.threshold) * 64 + 1e-9))

    @property
    def _params(self) -> Any:
        from neardup.image.value import ImageHashParams

        return ImageHashParams(method=self.config.KIND)

    @property
    def params(self) -> str:
        fp: str = self._params.fingerprint()
        return fp + ("+dihedral" if self.config.dihedral else "")

    @property
    def index_params(self) -> str:
        return f"radius={self.radius}"

    def _hashes(self, docs: Sequence[Document]) -> list[list[ImageHash]]:
        from neardup.image import hash_many

        if not self.config.dihedral:
            return [[h] for h in hash_many([_source(d) for d in docs], params=self._params)]
        return [dihedral_hashes(d, self._params) for d in docs]

    def sketch(self, docs: Sequence[Document]) -> U64:
        rows = self._hashes(docs)
        width = 8 if self.config.dihedral else 1
        return np.array([[int(h) for h in r] for r in rows], dtype=np.uint64).reshape(-1, width)

    def collector(self) -> VariantCollector:
        return VariantCollector(64, self.radius)

    def fingerprint(self, doc: Document) -> str:
        return ",".join(str(h) for h in self._hashes([doc])[0])

    def compare(self, a: Document, b: Document) -> tuple[float, int | None]:
        ha, hb = self._hashes([a, b])
        d = min(x.distance(hb[0]) for x in ha)
        return 1.0 - d / 64.0, d


class AHashMethod(HashMethod):
    """imagehash's average hash."""

    name: ClassVar[str] = "ahash"


class DHashMethod(HashMethod):
    """imagehash's difference hash."""

    name: ClassVar[str] = "dhash"


class WHashMethod(HashMethod):
    """imagehash's wavelet hash."""

    name: ClassVar[str] = "whash"


@dataclass(frozen=True, slots=True)
class PDQConfig(MethodConfig):
    """Meta's 256-bit PDQ hash of images.

    Low-quality hashes (flat, blurred, faded images) are kept but matched at a stricter
    distance: a pair in which either image's quality is below ``low_quality`` is accepted only
    within ``low_quality_threshold``. ``min_quality`` is Meta's production gate: images below
    it are dropped and logged (opt-in; ``min_quality=50`` is Meta's suggestion).

    Attributes:
        threshold: ``1 - d / 256``; the default ``1 - 31/256`` is Meta's match distance 31.
        min_quality: Images whose PDQ quality is below this (0..100) are not matched at all;
            each is logged as a warning. Default 0 (none dropped); Meta suggests 50.
        low_quality: Images below this quality (0..100, default 50) count as low quality.
        low_quality_threshold: The similarity a pair with a low-quality image needs: the
            default ``1 - 16/256`` is distance 16 (the stricter of this and ``threshold``).
        dihedral: Match mirrored and rotated copies too: the 8 dihedral hashes of the DCT, of
            the image and of its mirrored pixels (:func:`neardup.image.pdq_variant_codes`).
        crops: Match copies cropped by up to 10% too, centred or at a corner: each image
            also contributes the hashes of 25 crops (98 to 90% of each side in steps of 2%,
            centred and at the corners; :data:`neardup.image.pdqhashing.CROP_KEEPS`), about
            5x the CPU of the plain hash. Other crop shapes: ``crop-resistant``.
    """

    KIND: ClassVar[str] = "pdq"
    threshold: float = 1.0 - 31 / 256
    min_quality: int = 0
    low_quality: int = 50
    low_quality_threshold: float = 1.0 - 16 / 256
    dihedral: bool = False
    crops: bool = False

    def __post_init__(self) -> None:
        MethodConfig.__post_init__(self)
        check_range("min_quality", self.min_quality, 0, 100, integer=True)
        check_range("low_quality", self.low_quality, 0, 100, integer=True)
        check_range("low_quality_threshold", self.low_quality_threshold, 0.0, 1.0)
        object.__setattr__(self, "low_quality_threshold", float(self.low_quality_threshold))


class PDQMethod(Method):
    """PDQ codes with an exact 256-bit Hamming-radius index and quality gating."""

    name: ClassVar[str] = "pdq"
    config: PDQConfig

    @property
    def radius(self) -> int:
        """The largest Hamming distance accepted (of 256)."""
        return int(np.floor((1.0 - self.threshold) * 256 + 1e-9))

    @property
    def low_radius(self) -> int:
        """The largest distance accepted for a pair with a low-quality image."""
        low = int(np.floor((1.0 - self.config.low_quality_threshold) * 256 + 1e-9))
        return min(low, self.radius)

    @property
    def params(self) -> str:
        from neardup.image.value import ImageHashParams

        fp = ImageHashParams(method="pdq").fingerprint()
        return (
            fp
            + ("+dihedral" if self.config.dihedral else "")
            # the crop ladder of 2% steps (+crops was five 90% crops: other pairs)
            + ("+crops25" if self.config.crops else "")
        )

    @property
    def index_params(self) -> str:
        c = self.config
        return (
            f"radius={self.radius},min_quality={c.min_quality},"
            f"low_quality={c.low_quality},low_radius={self.low_radius}"
        )

    def sketch(self, docs: Sequence[Document]) -> tuple[U64, I64]:
        """``(codes, quality)``; images under ``min_quality`` are logged and gated, those
        under ``low_quality`` logged (at INFO) and matched within :attr:`low_radius`."""
        from neardup.image import pdq_codes, pdq_variant_codes

        sources = [_source(d) for d in docs]
        if self.config.dihedral or self.config.crops:
            out = pdq_variant_codes(sources, dihedral=self.config.dihedral, crops=self.config.crops)
        else:
            out = pdq_codes(sources)
        for d, q in zip(docs, out.quality.tolist(), strict=True):
            if q < self.config.min_quality:
                log.warning(
                    "%s: PDQ quality %d is below min_quality %d; left out of the comparison",
                    d.id,
                    q,
                    self.config.min_quality,
                )
            elif q < self.config.low_quality:
                log.info(
                    "%s: PDQ quality %d is below low_quality %d; matched only within distance %d",
                    d.id,
                    q,
                    self.config.low_quality,
                    self.low_radius,
                )
        return out.codes, out.quality

    def collector(self) -> PDQCollector:
        c = self.config
        return PDQCollector(self.radius, c.min_quality, c.low_quality, self.low_radius)

    def fingerprint(self, doc: Document) -> str:
        """``hash,quality`` as Meta's tools print it."""
        from neardup.image import pdq

        h, q = pdq(_source(doc))
        return f"{h},{q}"

    def compare(self, a: Document, b: Document) -> tuple[float, int | None]:
        """The similarity and distance of the nearest variants, whatever the qualities (the
        quality rules apply to dedup's pairs)."""
        codes, _ = self.sketch([a, b])
        c = np.asarray(codes).reshape(2, -1, 4)
        d = int(np.bitwise_count(c[0][:, None, :] ^ c[1][None, :, :]).sum(axis=2).min())
        return 1.0 - d / 256.0, d


class PDQCollector(VariantCollector):
    """:class:`VariantCollector` over 256-bit codes with PDQ's quality rules: images under
    ``min_quality`` are left out, and a pair in which either image is under ``low_quality``
    is kept only within ``low_radius``."""

    def __init__(
        self, radius: int, min_quality: int, low_quality: int = 0, low_radius: int = 256
    ) -> None:
        super().__init__(256, radius)
        self._min_quality = min_quality
        self._low_quality = low_quality
        self._low_radius = low_radius
        self._low: set[int] = set()  # positions of low-quality images
        self.gated: list[int] = []

    def add(self, positions: I64, payload: tuple[U64, I64]) -> None:  # type: ignore[override]
        codes, quality = payload
        q = np.asarray(quality)
        gated = q < self._min_quality
        self.gated.extend(positions[gated].tolist())
        self._low.update(positions[~gated & (q < self._low_quality)].tolist())
        super().add(np.where(gated, -1, positions), codes)

    def pairs(self, *, jobs: int = 1) -> PairArrays:
        result = super().pairs(jobs=jobs)
        if not self._low or len(result) == 0:
            return result
        low = np.fromiter(self._low, dtype=np.int64)
        either = np.isin(result.a, low) | np.isin(result.b, low)
        keep = ~either | (result.distance <= self._low_radius)
        return PairArrays(
            result.a[keep], result.b[keep], result.similarity[keep], result.distance[keep]
        )


@dataclass(frozen=True, slots=True)
class CropResistantConfig(MethodConfig):
    """imagehash's crop-resistant hash (segment hashes; ``ImageMultiHash`` matching).

    Attributes:
        threshold: ``1 - bit_error_rate``: two segments match when their hashes differ in at
            most ``(1 - threshold) * 64`` bits (imagehash's default 0.25 is 0.75 here).
        region_cutoff: Images match when at least this many segments of one match segments
            of the other (in either direction; imagehash's default 1).
        segment: The segment hash, ``dhash`` (imagehash's default), ``ahash``, ``phash`` or
            ``whash``.
        dihedral: Match mirrored and rotated copies too (hashes the 8 transforms).
    """

    KIND: ClassVar[str] = "crop-resistant"
    threshold: float = 0.75
    region_cutoff: int = 1
    segment: str = "dhash"
    dihedral: bool = False

    def __post_init__(self) -> None:
        MethodConfig.__post_init__(self)
        check_range("region_cutoff", self.region_cutoff, 1, 1000, integer=True)
        check_choice("segment", self.segment, ("dhash", "ahash", "phash", "whash"))


class CropResistantMethod(Method):
    """Segment hashes in an exact Hamming index; candidate image pairs share a segment pair
    within the cutoff and are then verified by imagehash's ``hash_diff`` rule."""

    name: ClassVar[str] = "crop-resistant"
    config: CropResistantConfig

    @property
    def cutoff(self) -> int:
        """The largest segment distance that matches (of 64 bits)."""
        return int(np.floor((1.0 - self.threshold) * 64 + 1e-9))

    @property
    def params(self) -> str:
        from neardup.image.value import ImageHashParams

        fp = ImageHashParams(method=self.config.segment).fingerprint()
        return f"crop-resistant-{fp}" + ("+dihedral" if self.config.dihedral else "")

    @property
    def index_params(self) -> str:
        return f"cutoff={self.cutoff},regions={self.config.region_cutoff}"

    def _hashes(self, docs: Sequence[Document]) -> list[list[CropResistantHash]]:
        from neardup.image import crop_resistant_many

        seg = self.config.segment
        if not self.config.dihedral:
            return [[h] for h in crop_resistant_many([_source(d) for d in docs], method=seg)]
        # One image's 8 transforms at a time: memory bounded by one image, not the batch.
        return [crop_resistant_many(dihedral_images(decoded(d)), method=seg) for d in docs]

    def sketch(self, docs: Sequence[Document]) -> list[list[CropResistantHash]]:
        return self._hashes(docs)

    def collector(self) -> CropResistantCollector:
        return CropResistantCollector(self.cutoff, self.config.region_cutoff)

    def fingerprint(self, doc: Document) -> str:
        return str(self._hashes([doc])[0][0])

    def compare(self, a: Document, b: Document) -> tuple[float, int | None]:
        ha, hb = self._hashes([a, b])
        return _crop_match(ha, hb[0], self.cutoff, self.config.region_cutoff)


def _crop_match(
    variants: Sequence[CropResistantHash], other: CropResistantHash, cutoff: int, regions: int
) -> tuple[float, int | None]:
    """Similarity ``1 - d/bits`` of the nearest matching segment pair (0.0 when the images do
    not match by imagehash's rule in either direction), and that distance."""
    best: int | None = None
    for v in variants:
        if not (
            v.matches(other, region_cutoff=regions, hamming_cutoff=cutoff)
            or other.matches(v, region_cutoff=regions, hamming_cutoff=cutoff)
        ):
            continue
        d = min(
            (x.value ^ y.value).bit_count() for x in v.segment_hashes for y in other.segment_hashes
        )
        best = d if best is None else min(best, d)
    if best is None:
        return 0.0, None
    return 1.0 - best / 64.0, best


class CropResistantCollector(Collector):
    """Segment hashes of every image variant in one Hamming index; candidate pairs verified."""

    def __init__(self, cutoff: int, regions: int) -> None:
        from neardup.index.hamming import HammingIndex

        self._cutoff = cutoff
        self._regions = regions
        self._index = HammingIndex(64, radius=min(cutoff, 63))
        self._owner: list[int] = []  # segment row -> document position
        self._hashes: dict[int, list[CropResistantHash]] = {}

    def add(self, positions: I64, payload: list[list[CropResistantHash]]) -> None:
        codes: list[int] = []
        for p, variants in zip(positions.tolist(), payload, strict=True):
            self._hashes[p] = variants
            for v in variants:
                for h in v.segment_hashes:
                    codes.append(h.value)
                    self._owner.append(p)
        if codes:
            start = len(self._index)
            self._index.add_many(
                list(range(start, start + len(codes))), np.array(codes, dtype=np.uint64)
            )

    def pairs(self, *, jobs: int = 1) -> PairArrays:
        if len(self._index) == 0:
            return PairArrays.empty()
        a, b, _ = self._index.pair_rows()
        owner = np.asarray(self._owner, dtype=np.int64)
        pa, pb = owner[a], owner[b]
        keep = pa != pb
        cand = np.unique(
            np.stack([np.minimum(pa, pb)[keep], np.maximum(pa, pb)[keep]], axis=1), axis=0
        )
        rows: list[tuple[int, int, float, int]] = []
        for x, y in cand.tolist():
            sim, d = _crop_match(self._hashes[x], self._hashes[y][0], self._cutoff, self._regions)
            if d is None and len(self._hashes[y]) > 1:
                sim, d = _crop_match(
                    self._hashes[y], self._hashes[x][0], self._cutoff, self._regions
                )
            if d is not None:
                rows.append((x, y, sim, d))
        if not rows:
            return PairArrays.empty()
        arr = np.array(rows, dtype=np.float64)
        return PairArrays.of(arr[:, 0], arr[:, 1], arr[:, 2], arr[:, 3]).sorted()


def check_not_dihedral(config: MethodConfig, what: str) -> None:
    """Refuse ``what`` for a configuration with ``dihedral=True``.

    Raises:
        ConfigError: ``config.dihedral`` is set.
    """
    if getattr(config, "dihedral", False):
        raise ConfigError(f"{what} is not supported with dihedral=True; leave --dihedral off")
