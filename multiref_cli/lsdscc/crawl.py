"""``multiref lsdscc crawl``: fetch r/movies threads with praw into dump-schema JSON lines.

Stdlib-only at module level; praw is imported by the handler (lsdscc.crawl.crawler).

Examples::

    multiref lsdscc crawl --output data/crawl --listing top --time-filter year --limit 100
    multiref lsdscc crawl --output data/crawl --ids ids.txt --site multiref

Credentials come from praw.ini (section ``--site``, default ``[multiref]`` when present, else
``[DEFAULT]``) or the ``praw_client_id`` / ``praw_client_secret`` / ``praw_user_agent``
environment variables. Rerunning the same command resumes an interrupted crawl.
"""

from __future__ import annotations

import argparse
import logging
import sys


class _StderrHandler(logging.Handler):
    """Log lines (retry waits, skipped threads) to the current stderr."""

    def emit(self, record: logging.LogRecord) -> None:
        print(self.format(record), file=sys.stderr, flush=True)


def register(parser: argparse.ArgumentParser) -> None:
    """Add the crawl options (:class:`lsdscc.crawl.config.CrawlOptions`) to ``parser`` and set its handler."""
    from lsdscc.crawl.config import CrawlOptions
    from multiref.util.options import add_arguments

    add_arguments(parser, CrawlOptions)  # --quiet is every command's (multiref_cli.flags.install_common)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Handler: the config from the parsed flags, then crawl, with progress and a summary on stderr; 0 on success."""
    from lsdscc.crawl import crawler as crawl_mod
    from lsdscc.crawl.config import CrawlOptions
    from multiref.util.options import from_args

    config = from_args(CrawlOptions, args)
    logger = logging.getLogger(crawl_mod.__name__)
    handler = _StderrHandler()
    handler.setFormatter(logging.Formatter("crawl: %(message)s"))
    logger.addHandler(handler)
    old_level = logger.level
    logger.setLevel(logging.INFO)
    try:
        crawl_mod.run(config, progress=None if args.quiet else crawl_mod._stderr_progress)  # counts and summary
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old_level)
    return 0
