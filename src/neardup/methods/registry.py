"""The method registry: one entry per dedup method, read by the pipeline, the CLI, the store and
Spark, so a method's abilities are data in one place rather than names compared in many.

=============  ===========================================================================
method         similarity, index, verification
=============  ===========================================================================
``minhash``    Jaccard of word 5-shingles; banded LSH tuned for recall; candidates verified
               by the exact Jaccard of the shingle-hash sets (``verify=True``, default)
``simhash``    ``1 - d/bits`` of 64-bit SimHash over word 3-shingles; exact HammingIndex
``simhash-go`` the Go ``fingerprint`` package's SimHash, bit for bit; exact HammingIndex
``ctph``       ssdeep score / 100; 7-gram index then exact ssdeep comparison
``tlsh``       ``max(0, 1 - d/300)`` of the TLSH distance ``d`` (0.85 = distance 45)
``phash``      ``1 - d/64`` of imagehash's 64-bit pHash (images); exact HammingIndex
``ahash``      ``1 - d/64`` of imagehash's average hash (images); exact HammingIndex
``dhash``      ``1 - d/64`` of imagehash's difference hash (images); exact HammingIndex
``whash``      ``1 - d/64`` of imagehash's wavelet hash (images); exact HammingIndex
``pdq``        ``1 - d/256`` of Meta's PDQ (images); below quality 50 only d <= 16 matches
``crop-resistant`` imagehash's crop-resistant segment hashes; candidates from a HammingIndex
               of the segments, verified by imagehash's ``ImageMultiHash`` rule
               (the image methods take ``dihedral=True``: mirrored and rotated copies match)
``embedding``  cosine of text embeddings, the static model by default (extra ``embeddings``)
``exact``      1.0 when the canonical texts' XXH3-128 digests are equal; in memory or with a
               Bloom filter and a spill file (``bloom_capacity``)
=============  ===========================================================================
"""

from __future__ import annotations

import importlib
import json
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, Literal

from neardup.errors import ConfigError

if TYPE_CHECKING:
    from neardup.methods.base import Method, MethodConfig

__all__ = [
    "DEFAULT_THRESHOLDS",
    "METHODS",
    "REGISTRY",
    "MethodInfo",
    "build",
    "config_from_json",
    "make_config",
    "make_method",
    "method_info",
    "method_names",
]

SparkKind = Literal["bands", "blocks"]


@dataclass(frozen=True, slots=True)
class MethodInfo:
    """What one method is and can do.

    The configuration and method classes are named, not held: their module is imported the
    first time :attr:`config` or :attr:`method` is read, so a run (or ``--help``) imports only
    the methods it uses.

    Attributes:
        name: The registry name (``--method``).
        module: The module that defines its configuration and method classes.
        config_class: The name of its configuration dataclass in ``module``.
        method_class: The name of its method class in ``module``.
        summary: One line for help texts and reports.
        storable: It can be kept in a persistent store (``--index``).
        parallel: Batches may be sketched in parallel (``--jobs``).
        spark: How the Spark engine groups it (``bands``: LSH band keys; ``blocks``:
            Hamming block keys), or None when Spark cannot run it.
        binary: File documents are read as bytes (images, binary fuzzy hashing).
        streams: ``neardup hash`` can hash a file of any size in a stream.
        images: Its documents are images: a folder walk picks image files only.
        clustering: How ``dedup()`` clusters it unless told otherwise (see
            :mod:`neardup.cluster`): ``center`` for embeddings, whose pairs chain through a
            whole corpus of one genre (9,167 of 10,000 man pages in one component at
            cosine 0.9), else ``components``.
    """

    name: str
    module: str
    config_class: str
    method_class: str
    summary: str
    storable: bool
    parallel: bool
    spark: SparkKind | None
    binary: bool
    streams: bool = False
    images: bool = False
    clustering: Literal["components", "center"] = "components"

    @property
    def config(self) -> type[MethodConfig]:
        """Its configuration dataclass."""
        found: type[MethodConfig] = getattr(importlib.import_module(self.module), self.config_class)
        return found

    @property
    def method(self) -> type[Method]:
        """Its method class (built from a configuration)."""
        found: type[Method] = getattr(importlib.import_module(self.module), self.method_class)
        return found

    @property
    def default_threshold(self) -> float:
        """The threshold used when none is given."""
        return float(self.config().threshold)

    @property
    def options(self) -> tuple[str, ...]:
        """The configuration's fields besides ``threshold``."""
        return tuple(f.name for f in fields(self.config) if f.name != "threshold")


_TEXT = "neardup.methods.text"
_BINARY = "neardup.methods.binary"
_IMAGE = "neardup.methods.image"

REGISTRY: dict[str, MethodInfo] = {
    info.name: info
    for info in (
        MethodInfo(
            "minhash",
            _TEXT,
            "MinHashConfig",
            "MinHashMethod",
            "Jaccard of word 5-shingles: MinHash, banded LSH, exact verification",
            storable=True,
            parallel=True,
            spark="bands",
            binary=False,
            streams=True,
        ),
        MethodInfo(
            "simhash",
            _TEXT,
            "SimHashConfig",
            "SimHashMethod",
            "SimHash of word 3-shingles: 1 - Hamming distance / bits, exact index",
            storable=True,
            parallel=True,
            spark="blocks",
            binary=False,
            streams=True,
        ),
        MethodInfo(
            "simhash-go",
            _TEXT,
            "SimHashGoConfig",
            "SimHashGoMethod",
            "the Go fingerprint package's 64-bit SimHash, bit for bit",
            storable=True,
            parallel=True,
            spark="blocks",
            binary=False,
            streams=True,
        ),
        MethodInfo(
            "ctph",
            _BINARY,
            "CTPHConfig",
            "CTPHMethod",
            "ssdeep-compatible fuzzy hash of the bytes: ssdeep score / 100",
            storable=False,
            parallel=True,
            spark=None,
            binary=True,
        ),
        MethodInfo(
            "tlsh",
            _BINARY,
            "TLSHConfig",
            "TLSHMethod",
            "TLSH of the bytes: 1 - distance / 300",
            storable=False,
            parallel=True,
            spark=None,
            binary=True,
        ),
        MethodInfo(
            "phash",
            _BINARY,
            "PHashConfig",
            "PHashMethod",
            "imagehash's 64-bit perceptual hash of images: 1 - Hamming distance / 64",
            storable=True,
            parallel=True,
            spark="blocks",
            binary=True,
            images=True,
        ),
        *(
            MethodInfo(
                name,
                _IMAGE,
                f"{kind}Config",
                f"{kind}Method",
                summary,
                storable=False,
                parallel=True,
                spark=None,
                binary=True,
                images=True,
            )
            for name, kind, summary in (
                ("ahash", "AHash", "imagehash's 64-bit average hash of images"),
                ("dhash", "DHash", "imagehash's 64-bit difference hash"),
                ("whash", "WHash", "imagehash's 64-bit Haar wavelet hash"),
                (
                    "pdq",
                    "PDQ",
                    "Meta's 256-bit PDQ hash of images: 1 - distance / 256, quality-aware",
                ),
                (
                    "crop-resistant",
                    "CropResistant",
                    "imagehash's crop-resistant segment hashes: images match across crops",
                ),
            )
        ),
        MethodInfo(
            "embedding",
            "neardup.methods.embedding",
            "EmbeddingConfig",
            "EmbeddingMethod",
            "cosine similarity of sentence embeddings (extra embeddings)",
            # the model uses all cores itself; copying it into workers gains nothing
            storable=False,
            parallel=False,
            spark=None,
            binary=False,
            clustering="center",
        ),
        MethodInfo(
            "exact",
            "neardup.methods.exact",
            "ExactConfig",
            "ExactMethod",
            "exact duplicates of the canonical text: XXH3-128 digests (Bloom mode optional)",
            storable=False,
            parallel=True,
            spark=None,
            binary=False,
        ),
    )
}

if TYPE_CHECKING:
    #: Method name -> method class (kept for callers of the first release).
    METHODS: dict[str, type[Method]]
    #: The threshold each method uses when none is given.
    DEFAULT_THRESHOLDS: dict[str, float]


def __getattr__(name: str) -> Any:
    # METHODS and DEFAULT_THRESHOLDS import every method's module: made on first use only
    if name == "METHODS":
        value: Any = {n: info.method for n, info in REGISTRY.items()}
    elif name == "DEFAULT_THRESHOLDS":
        value = {n: info.default_threshold for n, info in REGISTRY.items()}
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def method_names(**abilities: object) -> tuple[str, ...]:
    """The registered names, in registry order, with the given abilities.

    Examples:
        >>> method_names(storable=True)
        ('minhash', 'simhash', 'simhash-go', 'phash')
    """
    return tuple(
        n
        for n, info in REGISTRY.items()
        if all(getattr(info, k) == v for k, v in abilities.items())
    )


def method_info(name: str) -> MethodInfo:
    """The registry entry of ``name``.

    Raises:
        ConfigError: no such method.
    """
    info = REGISTRY.get(name)
    if info is None:
        raise ConfigError(f"unknown method {name!r}; use one of {', '.join(REGISTRY)}")
    return info


def make_config(name: str, threshold: float | None = None, **options: Any) -> MethodConfig:
    """A validated configuration of method ``name`` (its default threshold unless given).

    ``canonicalizer=`` (a :class:`~neardup.canonicalize.Canonicalizer`) is accepted for
    ``canonicalize=`` when its configuration is one of the presets.

    Raises:
        ConfigError: unknown method, option or value.

    Examples:
        >>> make_config("simhash", 0.8, bits=128).to_json()
        '{"bits":128,"canonicalize":"txtfp","kind":"simhash","threshold":0.8}'
    """
    info = method_info(name)
    canon = options.pop("canonicalizer", None)
    if canon is not None:
        options["canonicalize"] = _preset_of(canon)
    if threshold is not None:
        options["threshold"] = threshold
    known = {f.name for f in fields(info.config)}
    unknown = sorted(set(options) - known)
    if unknown:
        raise ConfigError(
            f"method {name!r} does not take {', '.join(unknown)}; "
            f"its options are {', '.join(sorted(known - {'threshold'})) or 'none'}"
        )
    return info.config(**options)


def _preset_of(canonicalizer: object) -> str:
    from neardup.canonicalize import PRESETS, Canonicalizer

    if isinstance(canonicalizer, str):
        return canonicalizer
    if isinstance(canonicalizer, Canonicalizer):
        for name, config in PRESETS.items():
            if canonicalizer.settings == config:
                return name
    raise ConfigError(
        "a method's canonicalizer must be one of the presets "
        f"({', '.join(PRESETS)}); pass canonicalize='<preset>'"
    )


def build(config: MethodConfig) -> Method:
    """The method of a configuration.

    Raises:
        MissingExtraError: the method's extra is not installed.
    """
    return method_info(config.KIND).method(config)


def make_method(name: str, threshold: float | None = None, **options: Any) -> Method:
    """Build a method by name with its default threshold unless one is given.

    Raises:
        ConfigError: Unknown method or bad option.
        MissingExtraError: The method's extra is not installed.

    Examples:
        >>> make_method("simhash").radius
        6
    """
    return build(make_config(name, threshold, **options))


def config_from_json(text: str) -> MethodConfig:
    """Rebuild a configuration from its canonical JSON (:meth:`MethodConfig.to_json`).

    Raises:
        ConfigError: not a configuration of a registered method.

    Examples:
        >>> config_from_json(make_config("minhash").to_json()) == make_config("minhash")
        True
    """
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"a method configuration is not JSON ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("kind"), str):
        raise ConfigError("a method configuration must be a JSON object with a 'kind'")
    return method_info(data["kind"]).config.from_dict(data)
