"""datasketch's own test files, run against neardup.compat.datasketch (see conftest.py)."""
