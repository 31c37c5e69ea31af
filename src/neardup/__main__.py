"""``python -m neardup`` runs the command line."""

from neardup.cli import run

run()
