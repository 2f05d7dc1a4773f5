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

from multiref.util.options import number_type

LISTINGS = ("hot", "new", "top", "controversial", "rising")
TIME_FILTERS = ("hour", "day", "week", "month", "year", "all")


class _StderrHandler(logging.Handler):
    """Log lines (retry waits, skipped threads) to the current stderr."""

    def emit(self, record: logging.LogRecord) -> None:
        print(self.format(record), file=sys.stderr, flush=True)


def register(parser: argparse.ArgumentParser) -> None:
    """Add the crawl options to ``parser`` and set its handler."""
    parser.add_argument("--output", required=True, metavar="FOLDER",
                        help="folder for submissions.jsonl, comments.jsonl and the resume state "
                             "(rerun the same command to resume)")
    parser.add_argument("--subreddit", default=None, help="subreddit of the listing (default: movies)")
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--listing", choices=LISTINGS, default=None,
                      help="listing to crawl (default: top)")
    what.add_argument("--ids", metavar="FILE",
                      help="crawl these submissions instead of a listing: one id per line (abc123, t3_abc123 "
                           "or a /comments/ URL; # starts a comment)")
    parser.add_argument("--time-filter", choices=TIME_FILTERS, default=None,
                        help="period of the top/controversial listing (default: Reddit's, all)")
    parser.add_argument("--limit", type=number_type(int, 0), default=None,
                        help="most submissions taken from the listing (default: 100; 0: as many as Reddit "
                             "gives, about 1000)")
    parser.add_argument("--site", default=None, metavar="NAME",
                        help="praw.ini section with client_id, client_secret and user_agent "
                             "(default: [multiref] if present, else $praw_site or [DEFAULT])")
    parser.add_argument("--max-retries", type=number_type(int, 0), default=5, metavar="N",
                        help="retries of a request answered 429 or 5xx or cut off (default: %(default)s)")
    parser.add_argument("--backoff", type=number_type(float, 0), default=2.0, metavar="SECONDS",
                        help="first retry wait, doubled at each retry, plus jitter (default: %(default)s)")
    parser.add_argument("--requests-per-minute", type=number_type(int, 1, 100_000), default=100, metavar="N",
                        help="at most N API requests in any minute, the token request included "
                             "(default: %(default)s, Reddit's free-tier limit per OAuth client)")
    parser.add_argument("--comment-sort", default="confidence",
                        choices=("confidence", "top", "new", "controversial", "old", "qa"),
                        help="order Reddit is asked for; the files are sorted by time anyway (default: %(default)s)")
    parser.add_argument("--quiet", "-q", action="store_true",
                        help="no per-thread counts or summary on stderr")
    # For tests and API mirrors: the token URL base and the API URL base handed to praw.
    parser.add_argument("--reddit-url", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--oauth-url", default=None, help=argparse.SUPPRESS)
    parser.set_defaults(func=run)


def config_from_args(args: argparse.Namespace):
    """The CrawlConfig for parsed arguments; inconsistent options raise UserError."""
    from lsdscc.crawl.crawler import CrawlConfig, read_ids
    from multiref.output.file_output import check_output_folder
    from multiref.util.errors import UserError

    check_output_folder(args.output, "--output", [args.ids])  # not the ids file, not in a dataset folder
    if args.ids is not None:
        for flag, value in (("--subreddit", args.subreddit), ("--time-filter", args.time_filter),
                            ("--limit", args.limit)):
            if value is not None:
                raise UserError(f"{flag} applies to a listing and cannot be used with --ids")
        from multiref.util.files import read_text

        read_text(args.ids, "--ids file")  # a missing, binary or empty file: one line naming it
        return CrawlConfig(output=args.output, ids=read_ids(args.ids), comment_sort=args.comment_sort)
    listing = args.listing or "top"
    if args.time_filter is not None and listing not in ("top", "controversial"):
        raise UserError(f"--time-filter applies to the top and controversial listings only, not --listing {listing}")
    limit = 100 if args.limit is None else (args.limit or None)
    return CrawlConfig(output=args.output, subreddit=args.subreddit or "movies", listing=listing,
                       time_filter=args.time_filter, limit=limit, comment_sort=args.comment_sort)


def run(args: argparse.Namespace) -> int:
    """Handler: crawl, print progress and a summary on stderr; 0 on success."""
    from lsdscc.crawl import crawler as crawl_mod
    from lsdscc.crawl import pace as crawl_pace

    config = config_from_args(args)
    policy = crawl_mod.RetryPolicy(max_retries=args.max_retries, backoff=args.backoff)
    logger = logging.getLogger(crawl_mod.__name__)
    handler = _StderrHandler()
    handler.setFormatter(logging.Formatter("crawl: %(message)s"))
    logger.addHandler(handler)
    old_level = logger.level
    logger.setLevel(logging.INFO)
    try:
        crawl_mod.crawl(config, site=args.site, retry_policy=policy, reddit_url=args.reddit_url,
                        oauth_url=args.oauth_url, pacer=crawl_pace.RequestPacer(args.requests_per_minute),
                        progress=None if args.quiet else crawl_mod._stderr_progress)  # counts and summary
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old_level)
    return 0
