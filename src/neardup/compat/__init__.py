"""Facades with the seed systems' own API shapes; no algorithm code lives here."""
