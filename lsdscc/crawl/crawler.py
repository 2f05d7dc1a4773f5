"""Crawl r/movies threads with praw into Pushshift-dump-schema JSON lines (GitHub issue #3).

LSDSCC (docs/algorithms.md#1-lsdscc-corpus) is built from r/movies threads: submissions with their full
comment trees. The build pipeline reads them in the schema of the Pushshift / Arctic Shift
monthly dumps (docs/corpus.md#dump-schema-by-era); this module fetches live
threads through the Reddit API and writes that same schema, so a crawl and a dump feed the
same reader.

Output folder:

- ``submissions.jsonl``: one record per thread (fields in :data:`SUBMISSION_FIELDS`).
- ``comments.jsonl``: one record per comment, every comment of the tree including those
  behind "load more comments" and "continue this thread" (fields in :data:`COMMENT_FIELDS`).
- ``crawl_state/skipped.jsonl``: threads Reddit would not serve (``{"id", "reason"}``, e.g.
  ``http-404``), never silently dropped.
- ``crawl_state/done.txt``: the ids of finished threads (crawled or skipped), one per line.
- ``crawl_state/state.json``: the committed byte size of each of the files above.
- ``crawl_state/runs.jsonl``: one line per run: its options, start time and praw version
  (provenance; never credentials).

The bookkeeping sits in a subfolder so that a dump reader given the folder
(``lsdscc.corpus.sources.resolve_inputs``) sees only the two record files.

Records are JSON objects with sorted keys; within a thread comments are ordered by
(``created_utc``, id as a base-36 number), as Arctic Shift orders its dumps; threads follow
the crawl order. Same server answers and the same ``retrieved_on`` clock give byte-identical files.

Resuming: each thread is fetched completely into memory, appended to the data files (then
fsync), and committed by atomically replacing ``crawl_state/state.json``. On start, every file
is truncated back to its committed size, so records of a thread that was being written
when the crawl died are discarded, and finished threads are never fetched again.

Rate limits: Reddit's free tier allows 100 queries per minute per OAuth client (since
2023-07); :class:`lsdscc.crawl.pace.RequestPacer` keeps every crawl under that on our side
(``--requests-per-minute``), and prawcore also paces from the ``x-ratelimit-*`` headers. On top of
that :class:`BackoffRequestor` retries every HTTP request answered 429 or 5xx (or dropped
by the network) with exponential backoff plus seeded jitter, honouring ``Retry-After`` and
an exhausted rate-limit window, and logs each wait. Credentials come only from praw.ini or
``praw_*`` environment variables, read by praw itself; nothing here logs or writes them.
"""

from __future__ import annotations

import contextlib
import logging
import os
import random
import re
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from lsdscc.crawl.files import (
    SUBMISSION_FIELDS, COMMENT_FIELDS, SKIPPED_FILE, RUNS_FILE, submission_record,
    comment_record, dumps, thread_records, parse_id, read_ids,
    CrawlState,
)
from lsdscc.crawl.pace import RequestPacer
from multiref.util.errors import UserError

log = logging.getLogger(__name__)

from lsdscc.crawl.config import (BACKOFF, COMMENT_SORT, LIMIT, LISTING, LISTINGS, MAX_RETRIES, SUBREDDIT,  # noqa: F401
                                  TIME_FILTER_LISTINGS, TIME_FILTERS, CrawlOptions)

DEFAULT_SITE = "multiref"



# ----------------------------------------------------------------------------- options


@dataclass(frozen=True)
class RetryPolicy:
    """Backoff for HTTP 429 / 5xx answers and dropped connections.

    The wait before retry ``k`` (0-based) is ``min(max_delay, backoff * 2**k)`` times a jitter
    factor in ``[1, 1 + jitter)`` drawn from ``random.Random(seed)``, and never less than the
    server's ``Retry-After`` or, when the rate-limit window is used up, its ``x-ratelimit-reset``.
    """

    max_retries: int = MAX_RETRIES
    backoff: float = BACKOFF
    max_delay: float = 300.0
    jitter: float = 0.25
    seed: int = 0

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {self.max_retries}")
        if self.backoff < 0 or self.max_delay < 0 or self.jitter < 0:
            raise ValueError("backoff, max_delay and jitter must be >= 0")

    def delay(self, attempt: int, rng: random.Random, server_wait: float = 0.0) -> float:
        """Seconds to wait before retry ``attempt`` (0-based)."""
        base = min(self.max_delay, self.backoff * (2 ** attempt))
        return max(base * (1.0 + self.jitter * rng.random()), server_wait)


@dataclass(frozen=True)
class CrawlConfig:
    """What to crawl. Either ``ids`` (submission ids, no prefix) or a ``listing`` of ``subreddit``."""

    output: str
    subreddit: str = SUBREDDIT
    listing: str = LISTING
    time_filter: str | None = None  # top/controversial only; None means Reddit's default, "all"
    limit: int | None = LIMIT  # None: as many as the listing gives (Reddit stops near 1000)
    ids: tuple[str, ...] | None = None
    comment_sort: str = COMMENT_SORT

    def __post_init__(self) -> None:
        if self.ids is None:
            if self.listing not in LISTINGS:
                raise ValueError(f"listing must be one of {', '.join(LISTINGS)}, got {self.listing!r}")
            if self.time_filter is not None:
                if self.time_filter not in TIME_FILTERS:
                    raise ValueError(f"time filter must be one of {', '.join(TIME_FILTERS)}, got {self.time_filter!r}")
                if self.listing not in TIME_FILTER_LISTINGS:
                    raise ValueError(f"a time filter applies to the top and controversial listings only, not {self.listing!r}")
        if self.limit is not None and self.limit < 1:
            raise ValueError(f"limit must be >= 1, got {self.limit}")


@dataclass
class CrawlStats:
    """Counts of one run (``threads_*`` count this run; ``total_*`` include earlier runs)."""

    threads_selected: int = 0
    threads_already_done: int = 0
    threads_crawled: int = 0
    threads_skipped: int = 0
    comments: int = 0
    total_threads: int = 0
    total_comments: int = 0
    retries: int = 0
    skipped: list[dict] = field(default_factory=list)


class RetriesExhausted(Exception):
    """Raised by :class:`BackoffRequestor` when a request still fails after every retry."""


# ----------------------------------------------------------------------------- praw


def _backoff_requestor_class():
    """A prawcore Requestor whose ``request`` retries 429 / 5xx answers and network failures.

    Wrapping at the HTTP level retries exactly the failed request (one listing page, one
    ``morechildren`` call), never a whole thread. When retries run out it raises
    :class:`RetriesExhausted`, which prawcore passes through unchanged (it only retries its
    own ``RequestException``), so a failing request is not retried twice over.
    """
    import prawcore
    import requests

    network_errors = (requests.exceptions.ConnectionError, requests.exceptions.Timeout,
                      requests.exceptions.ChunkedEncodingError)

    class BackoffRequestor(prawcore.Requestor):
        def __init__(self, *args, retry_policy: RetryPolicy, sleep: Callable[[float], None] = time.sleep,
                     stats: CrawlStats | None = None, pacer: RequestPacer | None = None, **kwargs):
            super().__init__(*args, **kwargs)
            self.pacer = pacer
            self.retry_policy = retry_policy
            self.rng = random.Random(retry_policy.seed)
            self.sleep = sleep
            self.stats = stats

        def request(self, method, url, *args, **kwargs):
            policy = self.retry_policy
            short = re.sub(r"^https?://[^/]+", "", url)
            attempt = 0
            while True:
                server_wait = 0.0
                if self.pacer is not None:  # Reddit's per-client limit, kept on our side too
                    self.pacer.wait()
                try:
                    response = super().request(method, url, *args, **kwargs)
                except prawcore.exceptions.RequestException as exc:
                    if not isinstance(exc.original_exception, network_errors):
                        raise
                    problem = f"network error ({type(exc.original_exception).__name__})"
                else:
                    status = response.status_code
                    if status != 429 and not 500 <= status <= 599:
                        return response
                    problem = f"HTTP {status}"
                    server_wait = _server_wait(response.headers)
                if attempt >= policy.max_retries:
                    raise RetriesExhausted(f"{problem} from {method.upper()} {short} after "
                                           f"{policy.max_retries} retr{'y' if policy.max_retries == 1 else 'ies'}")
                wait = policy.delay(attempt, self.rng, server_wait)
                attempt += 1
                if self.stats is not None:
                    self.stats.retries += 1
                log.warning("%s from %s %s; waiting %.2f s before retry %d of %d",
                            problem, method.upper(), short, wait, attempt, policy.max_retries)
                self.sleep(wait)

    return BackoffRequestor


def _server_wait(headers: Mapping[str, str]) -> float:
    """Seconds the server asks us to wait: ``Retry-After``, or the reset of a used-up rate-limit window."""
    wait = 0.0
    try:
        wait = max(wait, float(headers.get("retry-after") or 0))
    except ValueError:
        pass
    try:
        if float(headers.get("x-ratelimit-remaining", "1")) <= 0:
            wait = max(wait, float(headers.get("x-ratelimit-reset") or 0))
    except ValueError:
        pass
    return wait


_CREDENTIALS_HELP = ("put client_id, client_secret and user_agent in the [{site}] section of praw.ini "
                     "(./praw.ini or ~/.config/praw.ini) or set praw_client_id, praw_client_secret and "
                     "praw_user_agent in the environment")


def make_reddit(*, site: str | None = None, retry_policy: RetryPolicy = RetryPolicy(),
                reddit_url: str | None = None, oauth_url: str | None = None,
                sleep: Callable[[float], None] = time.sleep, stats: CrawlStats | None = None,
                pacer: RequestPacer | None = None):
    """A read-only ``praw.Reddit`` (client-credentials grant) using :class:`BackoffRequestor`,
    paced by ``pacer`` (:class:`lsdscc.crawl.pace.RequestPacer`; None: no client-side pacing).

    Credentials come from praw.ini section ``site`` (default: ``[multiref]`` when it exists,
    else ``$praw_site`` or ``[DEFAULT]``) and ``praw_*`` environment variables; praw reads them.
    Missing credentials or an unknown section raise a one-line UserError.
    """
    import configparser

    import praw
    from praw.exceptions import MissingRequiredAttributeException

    kwargs: dict[str, Any] = {
        "check_for_updates": False,  # never call PyPI from a crawl
        "requestor_class": _backoff_requestor_class(),
        "requestor_kwargs": {"retry_policy": retry_policy, "sleep": sleep, "stats": stats, "pacer": pacer},
    }
    if reddit_url:
        kwargs["reddit_url"] = reddit_url.rstrip("/")
    if oauth_url:
        kwargs["oauth_url"] = oauth_url.rstrip("/")
    section = site or DEFAULT_SITE  # the section a missing-credentials message points to
    missing_section = site
    try:
        if site is None:
            try:
                reddit = praw.Reddit(DEFAULT_SITE, **kwargs)
            except configparser.NoSectionError:
                missing_section = os.environ.get("praw_site")  # praw falls back to $praw_site, then [DEFAULT]
                reddit = praw.Reddit(**kwargs)
        else:
            reddit = praw.Reddit(site, **kwargs)
    except configparser.NoSectionError:
        raise UserError(f"praw.ini has no section [{missing_section}] (looked in ./praw.ini and ~/.config/praw.ini); "
                        + _CREDENTIALS_HELP.format(site=missing_section)) from None
    except MissingRequiredAttributeException as exc:
        m = re.search(r"setting '(\w+)' missing", str(exc))
        what = f"{m.group(1)} is not set" if m else "incomplete"
        raise UserError(f"Reddit API credentials missing ({what}): " + _CREDENTIALS_HELP.format(site=section)) from None
    reddit.read_only = True
    return reddit


def _http_status(exc: BaseException) -> int | None:
    response = getattr(exc, "response", None)
    return getattr(response, "status_code", None)


# ----------------------------------------------------------------------------- crawl


def select_ids(reddit, config: CrawlConfig) -> list[str]:
    """The submission ids to crawl: ``config.ids``, or the listing's ids in listing order."""
    if config.ids is not None:
        return list(config.ids)
    subreddit = reddit.subreddit(config.subreddit)
    method = getattr(subreddit, config.listing)
    kwargs: dict[str, Any] = {"limit": config.limit}
    if config.listing in TIME_FILTER_LISTINGS and config.time_filter is not None:
        kwargs["time_filter"] = config.time_filter
    ids: dict[str, None] = {}
    for submission in method(**kwargs):
        ids.setdefault(submission.id, None)
    return list(ids)


def fetch_thread(reddit, sid: str, retrieved_on: int, comment_sort: str = COMMENT_SORT) -> tuple[dict, list[dict]]:
    """Fetch one submission with its whole comment tree; return (submission record, comment records)."""
    submission = reddit.submission(id=sid)
    submission.comment_sort = comment_sort
    submission.comments.replace_more(limit=None)  # drives /api/morechildren and "continue this thread"
    return thread_records(submission, retrieved_on)


def _stderr_progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def crawl(config: CrawlConfig, *, reddit=None, site: str | None = None, retry_policy: RetryPolicy = RetryPolicy(),
          reddit_url: str | None = None, oauth_url: str | None = None,
          clock: Callable[[], float] = time.time, sleep: Callable[[float], None] = time.sleep,
          progress: Callable[[str], None] | None = _stderr_progress,
          on_thread_done: Callable[[str, int], None] | None = None,
          pacer: RequestPacer | None = None) -> CrawlStats:
    """Crawl the selected threads into ``config.output`` (see the module docstring); return counts.

    ``reddit`` may be a ready praw.Reddit (tests); otherwise one is made by :func:`make_reddit`.
    ``on_thread_done(sid, n_done)`` is called after each committed thread (tests use it to
    simulate a crash). Network and API failures become one-line UserErrors; the folder stays
    resumable. ``pacer``: the client-side request limit (default: Reddit's 100 requests per
    minute, :class:`lsdscc.crawl.pace.RequestPacer`, sleeping with ``sleep``).
    """
    stats = CrawlStats()
    if reddit is None:
        reddit = make_reddit(site=site, retry_policy=retry_policy, reddit_url=reddit_url, oauth_url=oauth_url,
                             sleep=sleep, stats=stats, pacer=pacer if pacer is not None else RequestPacer(sleep=sleep))
    state = CrawlState(config.output).open()
    _record_run(state, config, retry_policy, clock)
    say = progress or (lambda message: None)
    where_from = _source_label(config)
    with _reddit_errors():
        ids = _list_ids(reddit, config, where_from)
        stats.threads_selected = len(ids)
        todo = [sid for sid in ids if sid not in state.done]
        stats.threads_already_done = len(ids) - len(todo)
        say(f"crawl: {where_from}: {len(ids)} threads, {stats.threads_already_done} already done, "
            f"{len(todo)} to fetch into {config.output}")
        n_done = stats.threads_already_done
        for sid in todo:
            outcome = _crawl_thread(reddit, state, stats, sid, int(clock()), config.comment_sort)
            n_done += 1
            say(f"crawl: [{n_done}/{len(ids)}] t3_{sid}: {outcome} "
                f"(this run: {stats.threads_crawled} threads, {stats.comments} comments)")
            if on_thread_done is not None:
                on_thread_done(sid, n_done)
    stats.total_threads, stats.total_comments = state.threads, state.comments
    skipped_note = f" (listed in {state.path(SKIPPED_FILE)})" if stats.threads_skipped else ""
    say(f"crawl: done: {stats.threads_crawled} threads and {stats.comments} comments fetched, "
        f"{stats.threads_skipped} skipped{skipped_note}, {stats.retries} retries; folder holds "
        f"{state.threads} threads, {state.comments} comments")
    return stats


def selection(config: CrawlOptions) -> CrawlConfig:
    """The :class:`CrawlConfig` of the command's options ``config``: the ids file read, or the
    listing with its defaults. UserError for an output folder that is a dataset's or the ids
    file, and for a listing's option given with ``ids``."""
    from multiref.output.file_output import check_output_folder
    from multiref.util.errors import UserError

    check_output_folder(config.output, "--output", [config.ids])  # not the ids file, not in a dataset folder
    if config.ids is not None:
        for flag, value in (("--subreddit", config.subreddit), ("--time-filter", config.time_filter),
                            ("--limit", config.limit)):
            if value is not None:
                raise UserError(f"{flag} applies to a listing and cannot be used with --ids")
        from multiref.util.files import read_text

        read_text(config.ids, "--ids file")  # a missing, binary or empty file: one line naming it
        return CrawlConfig(output=config.output, ids=read_ids(config.ids), comment_sort=config.comment_sort)
    listing = config.listing or LISTING
    if config.time_filter is not None and listing not in TIME_FILTER_LISTINGS:
        raise UserError(f"--time-filter applies to the top and controversial listings only, not --listing {listing}")
    limit = LIMIT if config.limit is None else (config.limit or None)
    return CrawlConfig(output=config.output, subreddit=config.subreddit or SUBREDDIT, listing=listing,
                       time_filter=config.time_filter, limit=limit, comment_sort=config.comment_sort)


def run(config: CrawlOptions, *, progress: Callable[[str], None] | None = _stderr_progress) -> CrawlStats:
    """``multiref lsdscc crawl``: crawl what the command's options ``config`` select
    (:func:`selection`), with their retries and request limit; ``progress``: where the counts
    go (None: nowhere)."""
    what = selection(config)
    return crawl(what, site=config.site, retry_policy=RetryPolicy(max_retries=config.max_retries, backoff=config.backoff),
                 reddit_url=config.reddit_url, oauth_url=config.oauth_url,
                 pacer=RequestPacer(config.requests_per_minute), progress=progress)


def _source_label(config: CrawlConfig) -> str:
    """What is crawled, for messages: the ids, or the subreddit's listing and its options."""
    if config.ids is not None:
        return f"{len(config.ids)} submission ids"
    return (f"r/{config.subreddit}/{config.listing}" + (f" ({config.time_filter})" if config.time_filter else "")
            + (f", limit {config.limit}" if config.limit else ""))


def _list_ids(reddit, config: CrawlConfig, where_from: str) -> list:
    """:func:`select_ids`; an HTTP error other than an authentication failure -> UserError."""
    import prawcore

    try:
        return select_ids(reddit, config)
    except prawcore.exceptions.ResponseException as exc:
        if _is_auth_failure(exc):
            raise
        raise UserError(f"could not list {where_from}: HTTP {_http_status(exc)} "
                        f"(is r/{config.subreddit} a public subreddit?)") from None


def _crawl_thread(reddit, state: CrawlState, stats: CrawlStats, sid: str, now: int, comment_sort: str) -> str:
    """Fetch thread ``sid`` and commit it to ``state`` (a thread Reddit will not serve is
    committed as skipped); count it in ``stats``; return what happened, for the progress line."""
    import prawcore

    try:
        submission, comments = fetch_thread(reddit, sid, now, comment_sort)
    except (prawcore.exceptions.NotFound, prawcore.exceptions.Forbidden,
            prawcore.exceptions.Redirect, prawcore.exceptions.UnavailableForLegalReasons) as exc:
        reason = f"http-{_http_status(exc)}"
        log.warning("skipping thread t3_%s: %s", sid, reason)
        skipped = {"id": sid, "reason": reason}
        state.append_thread(sid, None, [], skipped)
        stats.threads_skipped += 1
        stats.skipped.append(skipped)
        return f"skipped ({reason})"
    state.append_thread(sid, submission, comments)
    stats.threads_crawled += 1
    stats.comments += len(comments)
    return f"{len(comments)} comments"


@contextlib.contextmanager
def _reddit_errors():
    """Network, API and credential failures inside the block -> one-line UserErrors (the
    crawl folder stays resumable)."""
    import prawcore

    try:
        yield
    except RetriesExhausted as exc:
        raise UserError(f"gave up: {exc}; rerun the same command to resume (finished threads are kept)") from None
    except prawcore.exceptions.OAuthException:
        raise UserError("Reddit rejected the credentials (OAuth error); check client_id and client_secret") from None
    except prawcore.exceptions.ResponseException as exc:
        if _is_auth_failure(exc):
            raise UserError(f"Reddit rejected the credentials (HTTP {_http_status(exc)} from the token endpoint); "
                            "check client_id and client_secret of your praw.ini site or praw_* variables") from None
        raise UserError(f"Reddit answered HTTP {_http_status(exc)}; rerun the same command to resume") from None
    except prawcore.exceptions.RequestException as exc:
        raise UserError(f"could not reach Reddit ({type(exc.original_exception).__name__}); "
                        "rerun the same command to resume") from None


def _record_run(state: CrawlState, config: CrawlConfig, policy: RetryPolicy, clock: Callable[[], float]) -> None:
    """Append this run's options to ``crawl_state/runs.jsonl`` (no credentials, no site name)."""
    import praw

    run = {"started_utc": int(clock()), "praw": praw.__version__, "subreddit": config.subreddit,
           "listing": None if config.ids is not None else config.listing, "time_filter": config.time_filter,
           "limit": config.limit, "ids": None if config.ids is None else len(config.ids),
           "comment_sort": config.comment_sort, "max_retries": policy.max_retries, "backoff": policy.backoff}
    if config.ids is not None:
        run["subreddit"] = None
        run["time_filter"] = run["limit"] = None
    with open(state.path(RUNS_FILE), "a", encoding="utf-8") as fh:
        fh.write(dumps(run))


def _is_auth_failure(exc: BaseException) -> bool:
    response = getattr(exc, "response", None)
    url = getattr(getattr(response, "request", None), "url", "") or getattr(response, "url", "") or ""
    return _http_status(exc) in (400, 401, 403) and "/api/v1/access_token" in url


__all__ = [
    "COMMENT_FIELDS", "CrawlConfig", "CrawlState", "CrawlStats", "RetryPolicy", "RetriesExhausted",
    "SUBMISSION_FIELDS", "comment_record", "crawl", "fetch_thread", "make_reddit", "parse_id", "read_ids",
    "submission_record", "thread_records",
]
