"""``multiref lsdscc ...``: the LSDSCC command group.

Glue only. Each subcommand's arguments and handler live in its own module:

- ``build``    -> multiref_cli.lsdscc.build      (corpus pipeline, then the test-set stage)
- ``crawl``    -> multiref_cli.lsdscc.crawl      (praw crawler writing dump-schema files)
- ``testset``  -> multiref_cli.lsdscc.testset.register_testset   (test set over an existing corpus)
- ``annotate`` -> multiref_cli.lsdscc.testset.register_annotate  (export / import annotations; serve / browse pages)
- ``export-ids`` / ``rehydrate`` -> multiref_cli.lsdscc.ids  (ids-only releases, lsdscc/corpus/ids.py)

All of these import only the standard library at module level.
"""

from __future__ import annotations

import importlib

from multiref_cli.common import group

_PARTS = [
    ("build", "multiref_cli.lsdscc.build", "register", "build the cleaned r/movies corpus (and its test set) with Apache Beam"),
    ("crawl", "multiref_cli.lsdscc.crawl", "register", "crawl r/movies threads with praw into dump-schema JSON lines"),
    ("testset", "multiref_cli.lsdscc.testset", "register_testset", "build the multi-reference test set over an existing corpus folder"),
    ("annotate", "multiref_cli.lsdscc.testset", "register_annotate", "annotate the test set: export, label in the browser, import, browse"),
    ("export-ids", "multiref_cli.lsdscc.ids", "register_export", "write a corpus folder's ids, build options and dump digests, without text"),
    ("rehydrate", "multiref_cli.lsdscc.ids", "register_rehydrate", "rebuild a corpus from an ids file and your own dumps"),
]


def register(parser) -> None:
    sub = group(parser)
    for name, module_name, func_name, help_text in _PARTS:
        module = importlib.import_module(module_name)
        p = sub.add_parser(name, help=help_text, description=help_text[0].upper() + help_text[1:] + ".")
        getattr(module, func_name)(p)
