"""``python -m multiref_cli``: the ``multiref`` command."""

from multiref_cli import run

run()
