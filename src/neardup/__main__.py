"""``python -m neardup`` runs the command line."""

from neardup._gc import pause_for_startup

pause_for_startup()  # before the imports of click and the command line

from neardup.cli import run  # noqa: E402

run()
