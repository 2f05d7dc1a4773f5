"""The crawler's output files (see :mod:`lsdscc.crawl.crawler` for the folder's layout): records in
the Pushshift / Arctic Shift dump schema, thread ids from the command line or a file, and
:class:`CrawlState`, which appends finished threads and commits their byte sizes so an
interrupted crawl resumes exactly where its last commit left the files.
"""

from __future__ import annotations

import json
import logging
import os
import re
from typing import Any, Mapping

from multiref.util.errors import UserError, where

log = logging.getLogger("lsdscc.crawl.crawler")  # one logger for the whole crawler

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
