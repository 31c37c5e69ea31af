"""The Unicode tables the compiled core embeds equal those the reference builds from this
Python's unicodedata, byte for byte (run ``scripts/unicode_tables.py`` when a builder changes)."""

from __future__ import annotations

import unicodedata

import numpy as np
import pytest

from conftest import native_pair
from neardup.errors import ConfigError


@pytest.mark.parametrize("family", ["classes", "canonicalize"])
def test_unicode(family: str) -> None:
    native, reference = native_pair("unicode")
    assert native.FAMILIES == reference.FAMILIES
    assert native.unicode_version() == unicodedata.unidata_version == reference.unicode_version()
    got, want = native.tables(family), reference.tables(family)
    assert sorted(got) == sorted(want)
    for name, arr in want.items():
        assert got[name].dtype == arr.dtype, name
        assert np.array_equal(got[name], arr), name
        assert not got[name].flags.writeable and not arr.flags.writeable, name
    for twin in (native, reference):
        with pytest.raises(ConfigError, match="unknown Unicode table family 'nope'"):
            twin.tables("nope")
