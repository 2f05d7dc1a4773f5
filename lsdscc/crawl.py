"""Crawl r/movies threads with praw into Pushshift-dump-schema JSON lines (GitHub issue #3).

LSDSCC (ALGORITHMS.md section 1) is built from r/movies threads: submissions with their full
comment trees. The build pipeline reads them in the schema of the Pushshift / Arctic Shift
monthly dumps (see ../shared/data/reddit-samples/PROVENANCE.md); this module fetches live
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
(``lsdscc.sources.resolve_inputs``) sees only the two record files.

Records are JSON objects with sorted keys; within a thread comments are ordered by
(``created_utc``, id as a base-36 number), as Arctic Shift orders its dumps; threads follow
the crawl order. Same server answers and the same ``retrieved_on`` clock give byte-identical files.

Resuming: each thread is fetched completely into memory, appended to the data files (then
fsync), and committed by atomically replacing ``crawl_state/state.json``. On start, every file
is truncated back to its committed size, so records of a thread that was being written
when the crawl died are discarded, and finished threads are never fetched again.

Rate limits: prawcore paces requests from Reddit's ``x-ratelimit-*`` headers. On top of
that :class:`BackoffRequestor` retries every HTTP request answered 429 or 5xx (or dropped
by the network) with exponential backoff plus seeded jitter, honouring ``Retry-After`` and
an exhausted rate-limit window, and logs each wait. Credentials come only from praw.ini or
``praw_*`` environment variables, read by praw itself; nothing here logs or writes them.
"""

from __future__ import annotations

import json
import logging
import os
import random
import re
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping

from multiref.errors import UserError, where

log = logging.getLogger(__name__)

LISTINGS = ("hot", "new", "top", "controversial", "rising")
TIME_FILTERS = ("hour", "day", "week", "month", "year", "all")
TIME_FILTER_LISTINGS = ("top", "controversial")
DEFAULT_SITE = "multiref"

SUBMISSION_FIELDS = (
    "id", "name", "title", "selftext", "author", "author_fullname", "created_utc", "subreddit", "subreddit_id",
    "num_comments", "score", "permalink", "url", "is_self", "over_18", "stickied", "distinguished",
    "link_flair_text", "edited", "retrieved_on",
)
COMMENT_FIELDS = (
    "id", "name", "parent_id", "link_id", "body", "author", "author_fullname", "created_utc", "subreddit",
    "subreddit_id", "score", "distinguished", "stickied", "edited", "controversiality", "retrieved_on",
)
# author_fullname is absent when Reddit does not give it (deleted accounts), as in the dumps.
OPTIONAL_FIELDS = ("author_fullname",)

SUBMISSIONS_FILE = "submissions.jsonl"
COMMENTS_FILE = "comments.jsonl"
STATE_DIR = "crawl_state"
SKIPPED_FILE = f"{STATE_DIR}/skipped.jsonl"
DONE_FILE = f"{STATE_DIR}/done.txt"
STATE_FILE = f"{STATE_DIR}/state.json"
RUNS_FILE = f"{STATE_DIR}/runs.jsonl"
DATA_FILES = (SUBMISSIONS_FILE, COMMENTS_FILE, SKIPPED_FILE, DONE_FILE)
STATE_VERSION = 1

_ID = re.compile(r"^[0-9a-z]{1,13}$")


# ----------------------------------------------------------------------------- options


@dataclass(frozen=True)
class RetryPolicy:
    """Backoff for HTTP 429 / 5xx answers and dropped connections.

    The wait before retry ``k`` (0-based) is ``min(max_delay, backoff * 2**k)`` times a jitter
    factor in ``[1, 1 + jitter)`` drawn from ``random.Random(seed)``, and never less than the
    server's ``Retry-After`` or, when the rate-limit window is used up, its ``x-ratelimit-reset``.
    """

    max_retries: int = 5
    backoff: float = 2.0
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
    subreddit: str = "movies"
    listing: str = "top"
    time_filter: str | None = None  # top/controversial only; None means Reddit's default, "all"
    limit: int | None = 100  # None: as many as the listing gives (Reddit stops near 1000)
    ids: tuple[str, ...] | None = None
    comment_sort: str = "confidence"

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


# ----------------------------------------------------------------------------- records


def _as_int(value: Any) -> int | None:
    if value is None or isinstance(value, bool):
        return value  # type: ignore[return-value]
    return int(float(value))


def _edited(value: Any) -> bool | int:
    """``false`` or the edit timestamp (int), as in the dumps."""
    if isinstance(value, bool) or value is None:
        return bool(value)
    return int(float(value))


def _author(value: Any) -> str:
    if value is None:
        return "[deleted]"
    return str(getattr(value, "name", value))


def _subreddit(value: Any) -> str:
    return str(getattr(value, "display_name", value))


def submission_record(raw: Mapping[str, Any], retrieved_on: int) -> dict:
    """One submission in the RS dump schema, from the Reddit API's ``t3`` data (or praw's ``vars``).

    ``author`` becomes ``"[deleted]"`` when missing; ``created_utc`` and ``edited`` become ints.
    """
    rec = {
        "id": raw["id"],
        "name": raw.get("name") or f"t3_{raw['id']}",
        "title": raw.get("title", ""),
        "selftext": raw.get("selftext") or "",
        "author": _author(raw.get("author")),
        "created_utc": _as_int(raw["created_utc"]),
        "subreddit": _subreddit(raw.get("subreddit")),
        "subreddit_id": raw.get("subreddit_id"),
        "num_comments": _as_int(raw.get("num_comments")),
        "score": _as_int(raw.get("score")),
        "permalink": raw.get("permalink"),
        "url": raw.get("url"),
        "is_self": bool(raw.get("is_self", False)),
        "over_18": bool(raw.get("over_18", False)),
        "stickied": bool(raw.get("stickied", False)),
        "distinguished": raw.get("distinguished"),
        "link_flair_text": raw.get("link_flair_text"),
        "edited": _edited(raw.get("edited")),
        "retrieved_on": int(retrieved_on),
    }
    if raw.get("author_fullname"):
        rec["author_fullname"] = raw["author_fullname"]
    return rec


def comment_record(raw: Mapping[str, Any], retrieved_on: int) -> dict:
    """One comment in the RC dump schema, from the Reddit API's ``t1`` data (or praw's ``vars``).

    ``parent_id`` keeps its ``t1_``/``t3_`` prefix; ``link_id`` is ``t3_<submission id>``.
    """
    rec = {
        "id": raw["id"],
        "name": raw.get("name") or f"t1_{raw['id']}",
        "parent_id": raw["parent_id"],
        "link_id": raw["link_id"],
        "body": raw.get("body") or "",
        "author": _author(raw.get("author")),
        "created_utc": _as_int(raw["created_utc"]),
        "subreddit": _subreddit(raw.get("subreddit")),
        "subreddit_id": raw.get("subreddit_id"),
        "score": _as_int(raw.get("score")),
        "distinguished": raw.get("distinguished"),
        "stickied": bool(raw.get("stickied", False)),
        "edited": _edited(raw.get("edited")),
        "controversiality": _as_int(raw.get("controversiality")) or 0,
        "retrieved_on": int(retrieved_on),
    }
    if raw.get("author_fullname"):
        rec["author_fullname"] = raw["author_fullname"]
    return rec


def record_order(rec: Mapping[str, Any]) -> tuple[int, int]:
    """Sort key within a thread: (created_utc, id read as a base-36 number)."""
    return (rec["created_utc"], int(rec["id"], 36))


def dumps(rec: Mapping[str, Any]) -> str:
    """One JSON line: sorted keys, compact separators, UTF-8 text kept as is."""
    return json.dumps(rec, sort_keys=True, ensure_ascii=False, separators=(",", ":")) + "\n"


def thread_records(submission, retrieved_on: int) -> tuple[dict, list[dict]]:
    """The submission record and its sorted comment records, from a praw Submission whose
    comment tree has been expanded (``replace_more(limit=None)``).

    Attributes are read from ``vars(...)`` so no lazy praw fetch is triggered.
    """
    from praw.models import MoreComments

    sub = submission_record(vars(submission), retrieved_on)
    seen: dict[str, dict] = {}
    for comment in submission.comments.list():
        if isinstance(comment, MoreComments):  # replace_more(limit=None) leaves none; never guess
            raise RuntimeError(f"unexpanded 'more comments' left in thread t3_{sub['id']}")
        rec = comment_record(vars(comment), retrieved_on)
        seen.setdefault(rec["id"], rec)
    return sub, sorted(seen.values(), key=record_order)


# ----------------------------------------------------------------------------- selection


def parse_id(text: str) -> str | None:
    """A submission id from ``abc123`` or ``t3_abc123`` (a URL's ``/comments/<id>/`` too); None if invalid."""
    text = text.strip()
    m = re.search(r"/comments/([0-9a-z]+)", text)
    if m:
        text = m.group(1)
    if text.startswith("t3_"):
        text = text[3:]
    return text if _ID.match(text) else None


def read_ids(path: str) -> tuple[str, ...]:
    """Submission ids from a file, one per line (``#`` comments and blank lines skipped).

    Duplicates are kept once, in first-seen order. A malformed line raises UserError ``file:line``.
    """
    if not os.path.isfile(path):
        raise UserError(f"ids file not found: {path}")
    ids: dict[str, None] = {}
    with open(path, encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            text = line.split("#", 1)[0].strip()
            if not text:
                continue
            sid = parse_id(text)
            if sid is None:
                raise UserError(f"{where(path, number)}: not a submission id: {text!r} (expected e.g. 8abc12 or t3_8abc12)")
            ids.setdefault(sid, None)
    if not ids:
        raise UserError(f"{path}: no submission ids in the file")
    return tuple(ids)


# ----------------------------------------------------------------------------- state


class CrawlState:
    """The output folder's append-only files and their committed sizes (see module docstring)."""

    def __init__(self, folder: str):
        self.folder = folder
        self.sizes = {name: 0 for name in DATA_FILES}
        self.done: set[str] = set()
        self.threads = 0
        self.comments = 0

    def path(self, name: str) -> str:
        return os.path.join(self.folder, *name.split("/"))

    def open(self) -> "CrawlState":
        """Create or reopen the folder; roll every file back to its committed size."""
        if os.path.exists(self.folder) and not os.path.isdir(self.folder):
            raise UserError(f"--output is a file, expected a folder: {self.folder}")
        os.makedirs(os.path.join(self.folder, STATE_DIR), exist_ok=True)
        state_path = self.path(STATE_FILE)
        if os.path.exists(state_path):
            try:
                with open(state_path, encoding="utf-8") as fh:
                    state = json.load(fh)
                sizes = {name: int(state["files"][name]) for name in DATA_FILES}
                self.threads, self.comments = int(state["threads"]), int(state["comments"])
            except (ValueError, KeyError, TypeError) as exc:
                raise UserError(f"{state_path}: unreadable crawl state ({type(exc).__name__}); "
                                "crawl into a new --output folder") from None
            for name, size in sizes.items():
                path = self.path(name)
                actual = os.path.getsize(path) if os.path.exists(path) else 0
                if actual < size:
                    raise UserError(f"{path}: shorter ({actual} bytes) than its committed size ({size}); "
                                    "the folder was changed outside the crawler; crawl into a new --output folder")
                if actual > size:
                    log.warning("discarding %d bytes of an unfinished thread at the end of %s", actual - size, path)
                    with open(path, "r+b") as fh:
                        fh.truncate(size)
                        fh.flush()
                        os.fsync(fh.fileno())
            self.sizes = sizes
            if os.path.exists(self.path(DONE_FILE)):
                with open(self.path(DONE_FILE), encoding="utf-8") as fh:
                    self.done = {line.strip() for line in fh if line.strip()}
        else:
            leftovers = [n for n in (SUBMISSIONS_FILE, COMMENTS_FILE, DONE_FILE)
                         if os.path.exists(self.path(n)) and os.path.getsize(self.path(n)) > 0]
            if leftovers:
                raise UserError(f"{self.path(leftovers[0])} exists but {state_path} does not; "
                                "crawl into a new --output folder")
            for name in DATA_FILES:  # start clean (e.g. an empty file left by a crash before the first commit)
                open(self.path(name), "wb").close()
            self._commit()
        return self

    def append_thread(self, sid: str, submission: dict | None, comments: list[dict], skipped: dict | None = None) -> None:
        """Append one finished thread (or its skip record) and commit it."""
        chunks = {
            SUBMISSIONS_FILE: dumps(submission) if submission is not None else "",
            COMMENTS_FILE: "".join(dumps(c) for c in comments),
            SKIPPED_FILE: dumps(skipped) if skipped is not None else "",
            DONE_FILE: sid + "\n",
        }
        for name, text in chunks.items():
            if not text:
                continue
            data = text.encode("utf-8")
            with open(self.path(name), "ab") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            self.sizes[name] += len(data)
        self.done.add(sid)
        if submission is not None:
            self.threads += 1
            self.comments += len(comments)
        self._commit()

    def _commit(self) -> None:
        state = {"version": STATE_VERSION, "files": self.sizes, "threads": self.threads, "comments": self.comments}
        tmp = self.path(STATE_FILE + ".tmp")
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(state, fh, sort_keys=True, indent=1)
            fh.write("\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self.path(STATE_FILE))
        try:  # make the rename durable
            dir_fd = os.open(os.path.dirname(self.path(STATE_FILE)), os.O_RDONLY)
        except OSError:
            return
        try:
            os.fsync(dir_fd)
        except OSError:
            pass
        finally:
            os.close(dir_fd)


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
                     stats: CrawlStats | None = None, **kwargs):
            super().__init__(*args, **kwargs)
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
                sleep: Callable[[float], None] = time.sleep, stats: CrawlStats | None = None):
    """A read-only ``praw.Reddit`` (client-credentials grant) using :class:`BackoffRequestor`.

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
        "requestor_kwargs": {"retry_policy": retry_policy, "sleep": sleep, "stats": stats},
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


def fetch_thread(reddit, sid: str, retrieved_on: int, comment_sort: str = "confidence") -> tuple[dict, list[dict]]:
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
          on_thread_done: Callable[[str, int], None] | None = None) -> CrawlStats:
    """Crawl the selected threads into ``config.output`` (see the module docstring); return counts.

    ``reddit`` may be a ready praw.Reddit (tests); otherwise one is made by :func:`make_reddit`.
    ``on_thread_done(sid, n_done)`` is called after each committed thread (tests use it to
    simulate a crash). Network and API failures become one-line UserErrors; the folder stays
    resumable.
    """
    import prawcore

    stats = CrawlStats()
    if reddit is None:
        reddit = make_reddit(site=site, retry_policy=retry_policy, reddit_url=reddit_url, oauth_url=oauth_url,
                             sleep=sleep, stats=stats)
    state = CrawlState(config.output).open()
    _record_run(state, config, retry_policy, clock)
    say = progress or (lambda message: None)
    where_from = (f"{len(config.ids)} submission ids" if config.ids is not None else
                  f"r/{config.subreddit}/{config.listing}"
                  + (f" ({config.time_filter})" if config.time_filter else "")
                  + (f", limit {config.limit}" if config.limit else ""))
    try:
        try:
            ids = select_ids(reddit, config)
        except prawcore.exceptions.ResponseException as exc:
            if _is_auth_failure(exc):
                raise
            raise UserError(f"could not list {where_from}: HTTP {_http_status(exc)} "
                            f"(is r/{config.subreddit} a public subreddit?)") from None
        stats.threads_selected = len(ids)
        todo = [sid for sid in ids if sid not in state.done]
        stats.threads_already_done = len(ids) - len(todo)
        say(f"crawl: {where_from}: {len(ids)} threads, {stats.threads_already_done} already done, "
            f"{len(todo)} to fetch into {config.output}")
        n_done = stats.threads_already_done
        for sid in todo:
            try:
                submission, comments = fetch_thread(reddit, sid, int(clock()), config.comment_sort)
            except (prawcore.exceptions.NotFound, prawcore.exceptions.Forbidden,
                    prawcore.exceptions.Redirect, prawcore.exceptions.UnavailableForLegalReasons) as exc:
                reason = f"http-{_http_status(exc)}"
                log.warning("skipping thread t3_%s: %s", sid, reason)
                skipped = {"id": sid, "reason": reason}
                state.append_thread(sid, None, [], skipped)
                stats.threads_skipped += 1
                stats.skipped.append(skipped)
                outcome = f"skipped ({reason})"
            else:
                state.append_thread(sid, submission, comments)
                stats.threads_crawled += 1
                stats.comments += len(comments)
                outcome = f"{len(comments)} comments"
            n_done += 1
            say(f"crawl: [{n_done}/{len(ids)}] t3_{sid}: {outcome} "
                f"(this run: {stats.threads_crawled} threads, {stats.comments} comments)")
            if on_thread_done is not None:
                on_thread_done(sid, n_done)
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
    stats.total_threads, stats.total_comments = state.threads, state.comments
    skipped_note = f" (listed in {state.path(SKIPPED_FILE)})" if stats.threads_skipped else ""
    say(f"crawl: done: {stats.threads_crawled} threads and {stats.comments} comments fetched, "
        f"{stats.threads_skipped} skipped{skipped_note}, {stats.retries} retries; folder holds "
        f"{state.threads} threads, {state.comments} comments")
    return stats


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


def iter_records(path: str) -> Iterator[dict]:
    """The records of a crawl output file (for tests and quick checks)."""
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                yield json.loads(line)


__all__ = [
    "COMMENT_FIELDS", "CrawlConfig", "CrawlState", "CrawlStats", "RetryPolicy", "RetriesExhausted",
    "SUBMISSION_FIELDS", "comment_record", "crawl", "fetch_thread", "make_reddit", "parse_id", "read_ids",
    "submission_record", "thread_records",
]
