"""The byte and image methods: ssdeep-compatible CTPH, TLSH and imagehash's pHash (the other
image methods are in :mod:`neardup.methods.image`)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import numpy as np
import numpy.typing as npt

from neardup.config import check_choice
from neardup.errors import FormatError
from neardup.io import Document
from neardup.methods.base import Collector, Method, MethodConfig, PairArrays
from neardup.methods.text import HammingCollector

if TYPE_CHECKING:
    from neardup.image.value import ImageHash

__all__ = [
    "CTPHConfig",
    "CTPHMethod",
    "PHashConfig",
    "PHashMethod",
    "TLSHConfig",
    "TLSHMethod",
]

log = logging.getLogger(__name__)

U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]
TLSH_SCALE = 300.0


@dataclass(frozen=True, slots=True)
class CTPHConfig(MethodConfig):
    """ssdeep-compatible CTPH of the raw bytes.

    Attributes:
        threshold: ssdeep score / 100.
    """

    KIND: ClassVar[str] = "ctph"
    threshold: float = 0.5


class _PositionsCollector(Collector):
    """Digests in an index that numbers them 0, 1, ...; positions mapped back."""

    def __init__(self) -> None:
        self._positions: list[int] = []

    def _map(self, a: I64, b: I64, sim: npt.ArrayLike, dist: npt.ArrayLike | None) -> PairArrays:
        pos = np.asarray(self._positions, dtype=np.int64)
        return PairArrays.of(pos[a], pos[b], sim, dist).sorted()


class CTPHCollector(_PositionsCollector):
    def __init__(self, threshold: float) -> None:
        super().__init__()
        from neardup.fuzzy import CTPHIndex

        self._index = CTPHIndex()
        self._floor = max(1, int(np.ceil(threshold * 100 - 1e-9)))

    def add(self, positions: I64, payload: list[str]) -> None:
        self._index.add_many(payload)
        self._positions.extend(positions.tolist())

    def pairs(self, *, jobs: int = 1) -> PairArrays:
        rows = list(self._index.pairs(min_score=self._floor))
        if not rows:
            return PairArrays.empty()
        arr = np.array(rows, dtype=np.int64).reshape(-1, 3)
        return self._map(arr[:, 0], arr[:, 1], arr[:, 2] / 100.0, None)


class CTPHMethod(Method):
    """ssdeep-compatible context-triggered piecewise hashes of the raw bytes."""

    name: ClassVar[str] = "ctph"
    config: CTPHConfig

    @property
    def params(self) -> str:
        from neardup.fuzzy import CTPHParams

        return CTPHParams().fingerprint()

    def sketch(self, docs: Sequence[Document]) -> list[str]:
        from neardup.fuzzy import ctph_many

        return ctph_many([d.read_bytes() for d in docs])

    def collector(self) -> CTPHCollector:
        return CTPHCollector(self.threshold)

    def fingerprint(self, doc: Document) -> str:
        from neardup.fuzzy import ctph

        return ctph(doc.read_bytes())

    def compare(self, a: Document, b: Document) -> tuple[float, int | None]:
        from neardup.fuzzy import ctph_compare

        return ctph_compare(self.fingerprint(a), self.fingerprint(b)) / 100.0, None


@dataclass(frozen=True, slots=True)
class TLSHConfig(MethodConfig):
    """TLSH digests (py-tlsh).

    Attributes:
        threshold: ``max(0, 1 - d / 300)`` of the TLSH distance ``d`` (0.85 = distance 45).
    """

    KIND: ClassVar[str] = "tlsh"
    threshold: float = 0.85


class TLSHCollector(_PositionsCollector):
    def __init__(self, max_distance: int) -> None:
        super().__init__()
        from neardup.fuzzy import TLSHIndex

        self._index = TLSHIndex()
        self._max = max_distance

    def add(self, positions: I64, payload: list[str | None]) -> None:
        for p, digest in zip(positions.tolist(), payload, strict=True):
            if digest is not None:
                self._index.add(digest)
                self._positions.append(p)

    def pairs(self, *, jobs: int = 1) -> PairArrays:
        rows = list(self._index.pairs(max_distance=self._max))
        if not rows:
            return PairArrays.empty()
        arr = np.array(rows, dtype=np.int64).reshape(-1, 3)
        sim = np.maximum(0.0, 1.0 - arr[:, 2] / TLSH_SCALE)
        return self._map(arr[:, 0], arr[:, 1], sim, arr[:, 2])


class TLSHMethod(Method):
    """TLSH digests (py-tlsh) with a vectorized distance search."""

    name: ClassVar[str] = "tlsh"
    config: TLSHConfig

    @property
    def max_distance(self) -> int:
        """The largest TLSH distance accepted."""
        return int(np.floor((1.0 - self.threshold) * TLSH_SCALE + 1e-9))

    @property
    def params(self) -> str:
        from neardup.fuzzy import TLSHParams

        return TLSHParams().fingerprint()

    def sketch(self, docs: Sequence[Document]) -> list[str | None]:
        from neardup.fuzzy import TLSHError, tlsh

        out: list[str | None] = []
        for d in docs:
            try:
                out.append(tlsh(d.read_bytes()))
            except TLSHError as exc:  # too short or too uniform: no digest exists
                log.warning("%s: no TLSH digest (%s); left out of the comparison", d.id, exc)
                out.append(None)
        return out

    def collector(self) -> TLSHCollector:
        return TLSHCollector(self.max_distance)

    def fingerprint(self, doc: Document) -> str:
        from neardup.fuzzy import tlsh

        return tlsh(doc.read_bytes())

    def compare(self, a: Document, b: Document) -> tuple[float, int | None]:
        from neardup.fuzzy import tlsh_distance

        d = tlsh_distance(self.fingerprint(a), self.fingerprint(b))
        return max(0.0, 1.0 - d / TLSH_SCALE), d


@dataclass(frozen=True, slots=True)
class PHashConfig(MethodConfig):
    """imagehash-compatible 64-bit pHash of images.

    Attributes:
        threshold: ``1 - d / 64``.
        preset: ``imagehash`` (imagehash 4.3, bit for bit) or ``go`` (the Go package's).
        dihedral: Match mirrored and rotated copies too (hashes the 8 transforms; such
            hashes cannot be kept in a store).
    """

    KIND: ClassVar[str] = "phash"
    threshold: float = 0.84
    preset: str = "imagehash"
    dihedral: bool = False

    def __post_init__(self) -> None:
        MethodConfig.__post_init__(self)
        check_choice("preset", self.preset, ("imagehash", "go"))


class PHashMethod(Method):
    """imagehash-compatible 64-bit pHash of images with an exact Hamming-radius index."""

    name: ClassVar[str] = "phash"
    config: PHashConfig

    @property
    def radius(self) -> int:
        """The largest Hamming distance accepted."""
        return int(np.floor((1.0 - self.threshold) * 64 + 1e-9))

    @property
    def params(self) -> str:
        from neardup.image.value import ImageHashParams

        return ImageHashParams(method="phash", preset=self.config.preset).fingerprint()

    @property
    def index_params(self) -> str:
        return f"radius={self.radius}"

    def _hash(self, doc: Document) -> ImageHash:
        from neardup.image import phash

        src = doc.path if doc.path is not None else doc.read_bytes()
        return phash(src, preset=self.config.preset)

    def sketch(self, docs: Sequence[Document]) -> U64:
        if self.config.dihedral:
            from neardup.image.value import ImageHashParams
            from neardup.methods.image import dihedral_hashes

            params = ImageHashParams(method="phash", preset=self.config.preset)
            codes = [int(h) for d in docs for h in dihedral_hashes(d, params)]
            return np.array(codes, dtype=np.uint64).reshape(-1, 8)
        return np.array([int(self._hash(d)) for d in docs], dtype=np.uint64)

    def collector(self) -> Collector:
        if self.config.dihedral:
            from neardup.methods.image import VariantCollector

            return VariantCollector(64, self.radius)
        return HammingCollector(64, self.radius)

    def lookup_keys(self, payload: U64) -> U64:
        """Pigeonhole block keys of the 64-bit hashes."""
        from neardup.index.hamming import hamming_block_keys
        from neardup.methods.image import check_not_dihedral

        check_not_dihedral(self.config, "bucket keys of phash (Spark, stores)")
        return hamming_block_keys(np.asarray(payload, dtype=np.uint64), 64, self.radius)

    def blobs(self, payload: U64) -> list[bytes]:
        """Each 64-bit hash, little-endian."""
        from neardup.methods.image import check_not_dihedral

        check_not_dihedral(self.config, "storing phash hashes (--index)")
        return [int(h).to_bytes(8, "little") for h in np.asarray(payload).tolist()]

    def blob_similarity(self, a: bytes, b: bytes) -> tuple[float, int | None]:
        if len(a) != 8 or len(b) != 8:
            raise FormatError("a stored pHash blob is not 8 bytes")
        d = (int.from_bytes(a, "little") ^ int.from_bytes(b, "little")).bit_count()
        return 1.0 - d / 64.0, d

    def fingerprint(self, doc: Document) -> str:
        return str(self._hash(doc))

    def compare(self, a: Document, b: Document) -> tuple[float, int | None]:
        if self.config.dihedral:
            codes = self.sketch([a, b])
            d = min((int(x) ^ int(codes[1, 0])).bit_count() for x in codes[0])
            return 1.0 - d / 64.0, d
        ha, hb = self._hash(a), self._hash(b)
        return float(ha.similarity(hb)), int(ha.distance(hb))
