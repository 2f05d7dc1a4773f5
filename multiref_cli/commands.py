"""The ``multiref`` parser: the subcommands in the order ``--help`` shows them and
:func:`build_parser`, which registers them. Standard library only at module level (each
subcommand module is imported when its command is built)."""

from __future__ import annotations

import argparse
import importlib

from multiref import __version__
from multiref_cli.common import Parser

# (name, module, one-line help). Order is the order shown by --help.
SUBCOMMANDS = [
    ("score", "multiref_cli.score.command", "score system outputs against multi-reference test sets"),
    ("lsdscc", "multiref_cli.lsdscc.group", "build the LSDSCC Reddit corpus and multi-reference test set"),
    ("dailydialog", "multiref_cli.dailydialog", "build the multi-reference DailyDialog and DailyDialog++ datasets"),
    ("augment", "multiref_cli.augment", "grow candidate references for a test set from a training corpus"),
    ("analyze", "multiref_cli.analyze", "evaluate the evaluators: correlation, discrimination, regression"),
    ("metrics", "multiref_cli.metrics_cmd", "list metrics and the paths of their Hugging Face evaluate modules"),
]


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``multiref`` parser. With ``command`` (e.g. ``"score"``), only that command's
    module is imported and registered; the others are listed by name (start-up stays short
    for the command that runs). Without it, the whole tree (``--help``, the flag test)."""
    from multiref_cli.flags import annotate_defaults, install_aliases, install_common

    parser = Parser(
        prog="multiref",
        description="Build multi-reference dialogue-evaluation datasets and score systems against them.",
    )
    parser.add_argument("--version", action="version", version=f"multiref-dialog {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    names = [name for name, _module, _help in SUBCOMMANDS]
    for name, module_name, help_text in SUBCOMMANDS:
        p = sub.add_parser(name, help=help_text, description=help_text[0].upper() + help_text[1:] + ".")
        if command not in names or command == name:
            importlib.import_module(module_name).register(p)
    install_common(parser, f"multiref-dialog {__version__}")
    install_aliases(parser)
    annotate_defaults(parser)
    return parser
