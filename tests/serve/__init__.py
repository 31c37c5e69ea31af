"""Tests of neardup serve (a package, so that its conftest and helpers do not shadow
tests/conftest.py, which other test modules import as ``conftest``)."""
