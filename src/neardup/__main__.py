"""``python -m neardup`` runs the command line."""

from neardup.cli import main

main(prog_name="neardup")
