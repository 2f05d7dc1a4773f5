"""The options of ``multiref lsdscc crawl``, declared once (:func:`multiref.util.options.option`).

:class:`CrawlOptions` is the command's config: the flags, their defaults and help in one
place. The command line builds it from the parsed flags once; a Python caller builds it
directly and passes it to :func:`lsdscc.crawl.crawler.run`
(:func:`lsdscc.crawl.crawler.selection` turns it into the
:class:`lsdscc.crawl.crawler.CrawlConfig` of what to crawl, checking that the options agree). Credentials are no options: praw reads them from praw.ini (section ``--site``) or the
``praw_*`` environment variables, and neither the site nor the API addresses are recorded in
the crawl folder. Standard library only (the command line imports this for ``--help``).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from lsdscc.crawl.pace import REQUESTS_PER_MINUTE
from multiref.util.options import number_type, option

LISTINGS = ("hot", "new", "top", "controversial", "rising")
TIME_FILTERS = ("hour", "day", "week", "month", "year", "all")
TIME_FILTER_LISTINGS = ("top", "controversial")
COMMENT_SORTS = ("confidence", "top", "new", "controversial", "old", "qa")
SUBREDDIT = "movies"
LISTING = "top"
LIMIT = 100  # submissions taken from a listing
COMMENT_SORT = "confidence"
MAX_RETRIES = 5
BACKOFF = 2.0  # seconds before the first retry


@dataclass(frozen=True)
class CrawlOptions:
    """What ``multiref lsdscc crawl`` crawls and how. ``None`` for ``subreddit``, ``listing``,
    ``time_filter`` and ``limit`` means not given (they apply to a listing, not to ``ids``)."""

    output: str | None = option(None, flag="--output", required=True, metavar="FOLDER",
                                help="folder for submissions.jsonl, comments.jsonl and the resume state "
                                     "(rerun the same command to resume)")
    subreddit: str | None = option(None, flag="--subreddit", help=f"subreddit of the listing (default: {SUBREDDIT})")
    listing: str | None = option(None, flag="--listing", choices=LISTINGS, exclusive="what",
                                 help=f"listing to crawl (default: {LISTING})")
    ids: str | None = option(None, flag="--ids", metavar="FILE", exclusive="what",
                             help="crawl these submissions instead of a listing: one id per line (abc123, t3_abc123 "
                                  "or a /comments/ URL; # starts a comment)")
    time_filter: str | None = option(None, flag="--time-filter", choices=TIME_FILTERS,
                                     help="period of the top/controversial listing (default: Reddit's, all)")
    limit: int | None = option(None, flag="--limit", parse=number_type(int, 0),
                               help=f"most submissions taken from the listing (default: {LIMIT}; 0: as many as "
                                    "Reddit gives, about 1000)")
    site: str | None = option(None, flag="--site", metavar="NAME",
                              help="praw.ini section with client_id, client_secret and user_agent "
                                   "(default: [multiref] if present, else $praw_site or [DEFAULT])")
    max_retries: int = option(MAX_RETRIES, flag="--max-retries", low=0, metavar="N",
                              help="retries of a request answered 429 or 5xx or cut off (default: %(default)s)")
    backoff: float = option(BACKOFF, flag="--backoff", low=0, metavar="SECONDS",
                            help="first retry wait, doubled at each retry, plus jitter (default: %(default)s)")
    requests_per_minute: int = option(REQUESTS_PER_MINUTE, flag="--requests-per-minute", low=1, high=100_000,
                                      metavar="N",
                                      help="at most N API requests in any minute, the token request included "
                                           "(default: %(default)s, Reddit's free-tier limit per OAuth client)")
    comment_sort: str = option(COMMENT_SORT, flag="--comment-sort", choices=COMMENT_SORTS,
                               help="order Reddit is asked for; the files are sorted by time anyway "
                                    "(default: %(default)s)")
    # For tests and API mirrors: the token URL base and the API URL base handed to praw.
    reddit_url: str | None = option(None, flag="--reddit-url", help=argparse.SUPPRESS)
    oauth_url: str | None = option(None, flag="--oauth-url", help=argparse.SUPPRESS)

