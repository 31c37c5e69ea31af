"""MinHasher.sketch_many_with_features: one pass, same sketches, same features on both backends."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup import MinHasher
from neardup.errors import ConfigError

texts = st.lists(
    st.text(max_size=60) | st.sampled_from(["", "a b", "Ünïcode wörds here ok"]), max_size=6
)


@settings(max_examples=60)
@given(texts)
def test_features_agree_across_backends_and_with_sketch_many(docs: list[str]) -> None:
    h = MinHasher(32)
    results = {}
    with pytest.MonkeyPatch.context() as mp:
        for backend in ("fast", "reference"):
            mp.setenv("NEARDUP_BACKEND", backend)
            results[backend] = h.sketch_many_with_features(docs)
            np.testing.assert_array_equal(results[backend][0], h.sketch_many(docs))
    for got, want in zip(results["fast"], results["reference"], strict=True):
        np.testing.assert_array_equal(got, want)


def test_features_need_xxh3_preset() -> None:
    with pytest.raises(ConfigError, match="xxh3"):
        MinHasher(preset="txtfp").sketch_many_with_features(["x"])
