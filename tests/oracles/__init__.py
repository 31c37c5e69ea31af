"""Slow, independent implementations the tests compare neardup's fast code against."""
