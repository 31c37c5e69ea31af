"""Regression tests of issue 19 outside the markup and store modules: size caps, ids, paths,
the secure canonicalizer, SimHash bytes and messages. Caps are tested with small limits."""

from __future__ import annotations

import io

import numpy as np
import pytest

from neardup import MinHasher, SimHasher
from neardup.canonicalize import CanonicalConfig
from neardup.errors import InputTooLargeError

# ---------------------------------------------------------------- size caps


@pytest.mark.parametrize("make", [MinHasher, SimHasher])
def test_ascii_fast_path_keeps_the_document_cap(make: type) -> None:
    cap = CanonicalConfig().max_bytes
    hasher = make()
    text = "a" * (cap + 1)  # pure ASCII skips canonicalizing; it must not skip the cap
    with pytest.raises(InputTooLargeError, match="max_bytes"):
        hasher.sketch_many([text])
    assert len(hasher.sketch_many(["plain ascii text here"])) == 1  # fast path still works


def test_extreme_aspect_ratio_image_is_box_reduced(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("PIL")
    from PIL import Image

    from neardup.image import ahash, dhash, phash, pilresize

    monkeypatch.setattr(pilresize, "MAX_SIDE_RATIO", 4)
    seen: list[int] = []
    matrix = pilresize.lanczos_matrix.__wrapped__

    def spy(in_size: int, out_size: int) -> np.ndarray:
        seen.append(in_size)
        return matrix(in_size, out_size)

    monkeypatch.setattr(pilresize, "lanczos_matrix", spy)
    for size in ((2000, 1), (1, 2000), (3001, 3)):
        buf = io.BytesIO()
        Image.linear_gradient("L").resize(size).save(buf, "PNG")
        for fn in (ahash, dhash, phash):
            assert fn(buf.getvalue()).bits  # hashed, no MemoryError
    assert seen and max(seen) <= 4 * 32 + 4  # the weights never span the long side


def test_box_reduce_rounds_and_keeps_the_tail() -> None:
    from neardup.image.pilresize import _box_reduce

    a = np.array([[[1, 2, 3, 4, 5, 6, 7]]], dtype=np.uint8)
    assert _box_reduce(a, 2, 3).tolist() == [[[2, 5, 7]]]
    assert _box_reduce(a.transpose(0, 2, 1), 1, 2).ravel().tolist() == [2, 4, 6, 7]
