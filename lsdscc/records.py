"""Reddit dump records -> normalized comments and submissions (ALGORITHMS.md section 1, input).

Accepts the Pushshift / Arctic Shift dump schema and its variants (PROVENANCE.md of the
reddit samples): ``created_utc`` as number or string, ``retrieved_on`` or ``retrieved_utc``
(ignored), missing ``name`` / ``permalink`` / ``author_fullname``, the ``_meta`` object,
``parent_id`` / ``link_id`` with or without their ``t1_`` / ``t3_`` prefixes, the BigQuery
export where every value is a string, and the Reddit API's ``{"kind", "data"}`` wrapper.

:func:`normalize` returns a :class:`Post` (a small tuple: what the pipeline carries), a drop
reason (``other-subreddit``, ``deleted``, ``removed``, ``bot``, or a ``_meta`` reason of
:mod:`lsdscc.deletions`), or raises
:class:`Rejected` for a malformed record. The subreddit is checked first: a record with a
string ``subreddit`` outside ``CorpusConfig.subreddits`` is ``other-subreddit`` whatever else
it holds, as the reader's byte prefilter (:func:`lsdscc.sources.read_items`) assumes. Usernames are read only to recognise bots; they
never leave this module.
"""

from __future__ import annotations

import json
import re
from typing import NamedTuple

from lsdscc.cleaning import DELETED_BODIES
from lsdscc.config import CorpusConfig
from lsdscc.deletions import meta_drop_reason


class Rejected(Exception):
    """A record that cannot be used; ``reason`` names the dead-letter counter."""

    def __init__(self, reason: str, detail: str):
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


class Post(NamedTuple):
    """A normalized submission (kind ``t3``) or comment (kind ``t1``).

    ``id`` is the fullname (``t1_abc`` / ``t3_xyz``); ``link_id`` the thread's ``t3_`` id;
    ``parent_id`` the parent's fullname ("" for a submission); ``text`` the body, or for a
    submission its title and self-text joined by a blank line.
    """

    kind: str
    id: str
    link_id: str
    parent_id: str
    created_utc: int
    text: str


_BASE36 = re.compile(r"^[0-9a-z]+$")


def _get_str(record: dict, key: str, required: bool = True) -> str | None:
    value = record.get(key)
    if value is None:
        if required:
            raise Rejected("missing-field", f"no {key!r}")
        return None
    if not isinstance(value, str):
        raise Rejected("wrong-type", f"{key!r} should be a string, got {type(value).__name__}")
    return value


def _fullname(value: str, prefix: str, key: str) -> str:
    value = value.strip()
    if value.startswith(("t1_", "t3_")):
        if prefix != "any" and not value.startswith(prefix):
            raise Rejected("wrong-type", f"{key!r} should start with {prefix}, got {value!r}")
        return value
    if not _BASE36.match(value):
        raise Rejected("wrong-type", f"{key!r} is not a reddit id: {value!r}")
    return (prefix if prefix != "any" else "t1_") + value


def _created(record: dict) -> int:
    value = record.get("created_utc", record.get("created"))
    if value is None:
        raise Rejected("missing-field", "no 'created_utc'")
    if isinstance(value, bool):
        raise Rejected("wrong-type", "'created_utc' is a boolean")
    if isinstance(value, (int, float)):
        return int(value)
    if isinstance(value, str):
        try:
            return int(float(value))
        except ValueError:
            raise Rejected("wrong-type", f"'created_utc' is not a number: {value[:40]!r}") from None
    raise Rejected("wrong-type", f"'created_utc' should be a number, got {type(value).__name__}")


def _own_id(record: dict, prefix: str) -> str:
    raw = record.get("id")
    if raw is None:
        raw = record.get("name")
    if raw is None:
        raise Rejected("missing-field", "no 'id' or 'name'")
    if not isinstance(raw, str):
        raise Rejected("wrong-type", f"'id' should be a string, got {type(raw).__name__}")
    return _fullname(raw, prefix, "id")


def record_kind(record: dict) -> str:
    """``t1`` (comment) or ``t3`` (submission), from the fields present."""
    if "body" in record or "parent_id" in record:
        return "t1"
    if "title" in record or "selftext" in record:
        return "t3"
    raise Rejected("unknown-kind", "neither a comment (body, parent_id) nor a submission (title)")


def is_bot(author: str | None, config: CorpusConfig) -> bool:
    """True for AutoModerator and other bot accounts (config.bots, config.bot_pattern)."""
    if not author:
        return False
    return author.lower() in _bot_names(config.bots) or re.search(config.bot_pattern, author) is not None


_BOT_CACHE: dict = {}
_SUBREDDIT_CACHE: dict = {}


def _lowered(subreddits: tuple) -> frozenset:
    names = _SUBREDDIT_CACHE.get(subreddits)
    if names is None:
        names = _SUBREDDIT_CACHE[subreddits] = frozenset(s.lower() for s in subreddits)
    return names


def _bot_names(bots: tuple) -> frozenset:
    names = _BOT_CACHE.get(bots)
    if names is None:
        names = _BOT_CACHE[bots] = frozenset(b.lower() for b in bots)
    return names


def normalize(record: dict, config: CorpusConfig) -> Post | str:
    """One parsed dump record -> a :class:`Post`, or the reason it is dropped (a str).

    Raises :class:`Rejected` (reasons ``unknown-kind``, ``missing-field``, ``wrong-type``).
    """
    if "data" in record and "kind" in record and isinstance(record["data"], dict):
        record = record["data"]  # Reddit API listing child
    subreddit = _get_str(record, "subreddit")
    if subreddit.lower() not in _lowered(config.subreddits):
        return "other-subreddit"  # first, so the reader's byte prefilter agrees (lsdscc.sources)
    kind = record_kind(record)
    created = _created(record)
    if kind == "t1":
        post_id = _own_id(record, "t1_")
        body = _get_str(record, "body")
        link_id = _fullname(_get_str(record, "link_id"), "t3_", "link_id")
        raw_parent = _get_str(record, "parent_id").strip()
        if raw_parent.startswith(("t1_", "t3_")):
            parent_id = raw_parent
        else:  # a bare id: the thread's own id means a top-level comment
            parent_id = link_id if "t3_" + raw_parent == link_id else _fullname(raw_parent, "t1_", "parent_id")
        text = body
    else:
        post_id = _own_id(record, "t3_")
        link_id = post_id
        parent_id = ""
        title = _get_str(record, "title")
        selftext = _get_str(record, "selftext", required=False) or ""
        text = title if selftext.strip() in DELETED_BODIES or not selftext.strip() else f"{title}\n\n{selftext}"
    author = record.get("author")
    if author is not None and not isinstance(author, str):
        raise Rejected("wrong-type", f"'author' should be a string, got {type(author).__name__}")
    if kind == "t1":
        stripped = body.strip()
        if stripped in DELETED_BODIES:
            return "removed" if "removed" in stripped else "deleted"
        if is_bot(author, config):
            return "bot"
    dropped = meta_drop_reason(record.get("_meta"), keep_later=not config.drop_deleted_later)
    if dropped is not None:  # lsdscc.deletions: removed or deleted after the first retrieval
        return dropped
    return Post(kind, post_id, link_id, parent_id, created, text)


_AUTHOR_FIELDS = re.compile(r'("author(?:_fullname|_flair_text|_flair_css_class)?"\s*:\s*)"(?:[^"\\]|\\.)*"')


def redact(text: str, limit: int = 2000) -> str:
    """A raw line for the dead-letter file, with author fields blanked and length capped."""
    text = _AUTHOR_FIELDS.sub(r'\1"<redacted>"', text)
    return text if len(text) <= limit else text[:limit] + "..."


def redact_record(record) -> str:
    """A parsed record for the dead-letter file, as sorted JSON without author fields."""
    if isinstance(record, dict):
        record = {k: ("<redacted>" if k.startswith("author") and v is not None else v) for k, v in record.items()}
    return redact(json.dumps(record, sort_keys=True, ensure_ascii=False))
