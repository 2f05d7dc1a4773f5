"""Reddit dump records -> normalized comments and submissions (docs/algorithms.md#1-lsdscc-corpus, input).

Accepts the Pushshift / Arctic Shift dump schema and its variants (docs/corpus.md#dump-schema-by-era):
``created_utc`` as number or string, ``retrieved_on`` or ``retrieved_utc``
(ignored), missing ``name`` / ``permalink`` / ``author_fullname``, the ``_meta`` object,
``parent_id`` / ``link_id`` with or without their ``t1_`` / ``t3_`` prefixes, the BigQuery
export where every value is a string, and the Reddit API's ``{"kind", "data"}`` wrapper.

:func:`normalize` returns an outcome (:mod:`lsdscc.corpus.outcomes`): ``Kept(post)`` with a
:class:`Post` (a small tuple: what the pipeline carries), ``Dropped(reason)`` (``other-subreddit``,
``deleted``, ``removed``, ``bot``, or a ``_meta`` reason of
:mod:`lsdscc.corpus.deletions`), or ``Rejected(reason, detail)`` for a
malformed record. A deleted or removed post is recognised before any check that could reject
it, and its ``Dropped`` carries a tombstone (:data:`DELETED`) that leaves out every other copy
of the post in its thread (docs/data-safety.md#deletion-wins-and-no-usernames). The subreddit
is checked first: a record with a string ``subreddit`` outside ``CorpusConfig.subreddits`` is ``other-subreddit`` whatever else
it holds, as the reader's byte prefilter (:func:`lsdscc.corpus.sources.read_items`) assumes. Usernames are read only to recognise bots; they
never leave this module.

Dead letters (:func:`dead_letter`) are published with the dataset, so their excerpts are
redacted (:func:`redact`, :func:`redact_record`): no author, flair or moderator field, no
post's text, no u/name mention, no e-mail, and of a line that does not parse only its shape.
"""

from __future__ import annotations

import json
import re
from typing import NamedTuple

from lsdscc.corpus.cleaning import USERNAME, is_removal_marker
from lsdscc.corpus.config import CorpusConfig
from lsdscc.corpus.deletions import field_drop_reason, meta_drop_reason
from lsdscc.corpus.outcomes import Dropped, Kept, Rejected


class Malformed(Exception):
    """Raised inside :func:`normalize` for a record that cannot be used (``reason`` names the
    dead-letter counter); :func:`normalize` returns it as a :class:`Rejected` outcome."""

    def __init__(self, reason: str, detail: str):
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


class Post(NamedTuple):
    """A normalized submission (kind ``t3``) or comment (kind ``t1``).

    ``id`` is the fullname (``t1_abc`` / ``t3_xyz``); ``link_id`` the thread's ``t3_`` id;
    ``parent_id`` the parent's fullname ("" for a submission); ``text`` the body, or for a
    submission its title and self-text joined by a blank line.

    ``kind`` is also :data:`DELETED` for a tombstone (a deleted or removed post: ids only, no
    text, created_utc 0) and :data:`TITLE_ONLY` for a submission whose self-text was deleted or
    removed (``text`` is its title); :func:`lsdscc.corpus.threads.resolve_thread` lets either
    win over every other copy of the post.
    """

    kind: str
    id: str
    link_id: str
    parent_id: str
    created_utc: int
    text: str


#: The kind of a tombstone, and of a submission published as its title only (:class:`Post`).
DELETED, TITLE_ONLY = "deleted", "t3-title"

_BASE36 = re.compile(r"^[0-9a-z]+$")


def _get_str(record: dict, key: str, required: bool = True) -> str | None:
    value = record.get(key)
    if value is None:
        if required:
            raise Malformed("missing-field", f"no {key!r}")
        return None
    if not isinstance(value, str):
        raise Malformed("wrong-type", f"{key!r} should be a string, got {type(value).__name__}")
    return value


def _shown_id(value: str) -> str:
    """An id field's bad value as a dead letter's detail shows it: an account's fullname
    (``t2_...``, which names a user) is not shown."""
    return "an account id" if value.lower().startswith("t2_") else repr(value)


def _fullname(value: str, prefix: str, key: str) -> str:
    if not (value.isalnum() and value.isascii() and value.lower() == value):  # (a bare base-36 id: the usual case)
        value = value.strip()
        if value.startswith(("t1_", "t3_")):
            if prefix != "any" and not value.startswith(prefix):
                raise Malformed("wrong-type", f"{key!r} should start with {prefix}, got {value!r}")
            return value
        if not _BASE36.match(value):
            raise Malformed("wrong-type", f"{key!r} is not a reddit id: {_shown_id(value)}")
    return (prefix if prefix != "any" else "t1_") + value


#: ``created_utc`` must lie in [1970-01-01, 2100-01-01): whole seconds since the epoch, as
#: Reddit's dumps give them (a millisecond stamp is out of range). It fits every int64 column.
CREATED_RANGE = (0, 4_102_444_800)


#: Longer texts are rejected (``too-long``) before cleaning: Reddit allows 10,000 characters in
#: a comment and 300 + 40,000 in a submission's title and self-text, so no real record is
#: longer, and some cleaning rules take time quadratic in a hostile text's length.
MAX_TEXT_CHARS = 40_400


def _created(record: dict) -> int:
    """The record's ``created_utc`` (or ``created``) as whole seconds in :data:`CREATED_RANGE`."""
    value = record.get("created_utc")
    if type(value) is int and CREATED_RANGE[0] <= value < CREATED_RANGE[1]:  # the usual case
        return value
    value = record.get("created_utc", record.get("created"))
    if value is None:
        raise Malformed("missing-field", "no 'created_utc'")
    if isinstance(value, bool):
        raise Malformed("wrong-type", "'created_utc' is a boolean")
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise Malformed("wrong-type", f"'created_utc' is not a number: {value[:40]!r}") from None
    if not isinstance(value, (int, float)):
        raise Malformed("wrong-type", f"'created_utc' should be a number, got {type(value).__name__}")
    low, high = CREATED_RANGE
    if not low <= value < high:  # False for NaN too
        shown = repr(value) if isinstance(value, float) or value.bit_length() < 100 else f"an integer of {value.bit_length()} bits"
        raise Malformed("out-of-range", f"'created_utc' is not a time between 1970 and 2100 in seconds: {shown}")
    return int(value)


def _own_id(record: dict, prefix: str) -> str:
    raw = record.get("id")
    if raw is None:
        raw = record.get("name")
    if raw is None:
        raise Malformed("missing-field", "no 'id' or 'name'")
    if not isinstance(raw, str):
        raise Malformed("wrong-type", f"'id' should be a string, got {type(raw).__name__}")
    return _fullname(raw, prefix, "id")


def record_kind(record: dict) -> str:
    """``t1`` (comment) or ``t3`` (submission), from the fields present."""
    if "body" in record or "parent_id" in record:
        return "t1"
    if "title" in record or "selftext" in record:
        return "t3"
    raise Malformed("unknown-kind", "neither a comment (body, parent_id) nor a submission (title)")


def is_bot(author: str | None, config: CorpusConfig) -> bool:
    """True for AutoModerator and other bot accounts (config.bots, config.bot_pattern)."""
    if not author:
        return False
    return author.lower() in _bot_names(config.bots) or _bot_regex(config.bot_pattern).search(author) is not None


_BOT_CACHE: dict = {}
_SUBREDDIT_CACHE: dict = {}


def _lowered(subreddits: tuple) -> frozenset:
    names = _SUBREDDIT_CACHE.get(subreddits)
    if names is None:
        names = _SUBREDDIT_CACHE[subreddits] = frozenset(s.lower() for s in subreddits)
    return names


def _bot_regex(pattern: str) -> re.Pattern:
    compiled = _BOT_CACHE.get(pattern)  # (bot name tuples and pattern strings never compare equal)
    if compiled is None:
        compiled = _BOT_CACHE[pattern] = re.compile(pattern)
    return compiled


def _bot_names(bots: tuple) -> frozenset:
    names = _BOT_CACHE.get(bots)
    if names is None:
        names = _BOT_CACHE[bots] = frozenset(b.lower() for b in bots)
    return names


def _is_unicode(text: str) -> bool:
    """True when ``text`` can be written as UTF-8 (no lone surrogate, which JSON escapes allow)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def normalize(record: dict, config: CorpusConfig) -> Kept | Dropped | Rejected:
    """One parsed dump record -> ``Kept(post)`` (a :class:`Post`), ``Dropped(reason)``, or
    ``Rejected(reason, detail)``.

    Rejection reasons: ``unknown-kind``, ``missing-field``, ``wrong-type``, ``out-of-range``
    for a ``created_utc`` outside :data:`CREATED_RANGE`, ``too-long`` for a text over
    :data:`MAX_TEXT_CHARS`, ``not-utf8`` for a text with a lone surrogate; any exception is a bug.
    """
    try:
        return _normalize(record, config)
    except Malformed as exc:
        return Rejected(exc.reason, exc.detail)


def _normalize(record: dict, config: CorpusConfig) -> Kept | Dropped:
    """:func:`normalize`, raising :class:`Malformed` for a malformed record."""
    if "data" in record and "kind" in record and isinstance(record["data"], dict):
        record = record["data"]  # Reddit API listing child
    subreddit = _get_str(record, "subreddit")
    if subreddit.lower() not in _lowered(config.subreddits):
        return Dropped("other-subreddit")  # first, so the reader's byte prefilter agrees (lsdscc.corpus.sources)
    kind = record_kind(record)
    deleted = _deletion(record, kind, config)
    if deleted is not None:  # before any check that would make the record a dead letter
        return deleted
    created = _created(record)
    post_id, link_id, parent_id, text = _comment_fields(record) if kind == "t1" else _submission_fields(record)
    if len(text) > MAX_TEXT_CHARS:
        raise Malformed("too-long", f"the text has {len(text):,} characters; Reddit allows at most {MAX_TEXT_CHARS:,}")
    if not (text.isascii() and post_id.isascii() and link_id.isascii() and parent_id.isascii()):
        _check_utf8(text=text, id=post_id, link_id=link_id, parent_id=parent_id)
    author = record.get("author")
    if author is not None and not isinstance(author, str):
        raise Malformed("wrong-type", f"'author' should be a string, got {type(author).__name__}")
    if kind == "t1" and is_bot(author, config):
        return Dropped("bot")
    if kind == "t3" and _is_marker(record.get("selftext")):
        kind = TITLE_ONLY
    return Kept(Post(kind, post_id, link_id, parent_id, created, text))


def _is_marker(value) -> bool:
    return isinstance(value, str) and is_removal_marker(value)


def _deletion(record: dict, kind: str, config: CorpusConfig) -> Dropped | None:
    """``Dropped(reason, tombstone)`` when the post was deleted or removed, else None: its text
    (a comment's body, a submission's title) is a removal marker (``deleted`` or ``removed``),
    a field of the first retrieval says so (:func:`lsdscc.corpus.deletions.field_drop_reason`),
    or ``_meta`` does (:func:`lsdscc.corpus.deletions.meta_drop_reason`). The tombstone is None
    when the record's ids do not parse (no copy can be matched to it then)."""
    text = record.get("body" if kind == "t1" else "title")
    if _is_marker(text):
        reason = "removed" if "removed" in text.lower() else "deleted"
    else:
        reason = field_drop_reason(record) or meta_drop_reason(record.get("_meta"),
                                                                keep_later=not config.drop_deleted_later)
        if reason is None:
            return None
    return Dropped(reason, _tombstone(record, kind))


def _tombstone(record: dict, kind: str) -> Post | None:
    """The :data:`DELETED` post standing for ``record`` in its thread, or None when its ids do not parse."""
    try:
        post_id = _own_id(record, kind + "_")
        link_id = post_id if kind == "t3" else _fullname(_get_str(record, "link_id"), "t3_", "link_id")
    except Malformed:
        return None
    if not (post_id.isascii() and link_id.isascii()):
        return None
    return Post(DELETED, post_id, link_id, "", 0, "")


def _check_utf8(**texts: str) -> None:
    """Malformed ``not-utf8`` for the first of ``texts`` holding a lone surrogate: the row coder
    and the parquet writer need UTF-8."""
    for name, value in texts.items():
        if not (value.isascii() or _is_unicode(value)):
            raise Malformed("not-utf8", f"the {name} holds a lone surrogate (an escape such as \\ud800), "
                            "not a character")


def _comment_fields(record: dict) -> tuple[str, str, str, str]:
    """A comment's ``(fullname, link_id, parent_id, body)``; a bare parent id equal to the
    thread's own id means a top-level comment."""
    post_id = _own_id(record, "t1_")
    body = _get_str(record, "body")
    link_id = _fullname(_get_str(record, "link_id"), "t3_", "link_id")
    raw_parent = _get_str(record, "parent_id").strip()
    if raw_parent.startswith(("t1_", "t3_")):
        parent_id = raw_parent
    else:
        parent_id = link_id if "t3_" + raw_parent == link_id else _fullname(raw_parent, "t1_", "parent_id")
    return post_id, link_id, parent_id, body


def _submission_fields(record: dict) -> tuple[str, str, str, str]:
    """A submission's ``(fullname, link_id = its fullname, "", title [+ blank line + self-text])``."""
    post_id = _own_id(record, "t3_")
    title = _get_str(record, "title")
    selftext = _get_str(record, "selftext", required=False) or ""
    text = title if not selftext.strip() or is_removal_marker(selftext) else f"{title}\n\n{selftext}"
    return post_id, post_id, "", text


# Dead letters are published: an excerpt keeps no author, author_* or flair field, no post's
# text (a letter cannot know whether another copy of the post, in another file, was deleted),
# no u/name (or /user/name) mention, no e-mail address and no [deleted]/[removed] marker.
_PRIVATE_KEY = re.compile(r"author|flair|_by$|reports", re.I)  # also approved_by, mod_reports (moderators)
_PRIVATE_FIELD = re.compile(  # a private key and a simple value (string, literal, flat object, array of those)
    r'"[^"\\]*(?:author|flair)[^"\\]*"\s*:\s*'
    r'(?:"[^"\\]*(?:\\.[^"\\]*)*"|[-+.\w]+|\[(?:[^\[\]{}]|\{[^\[\]{}]*\})*\]|\{[^\[\]{}]*\})\s*,?\s*', re.I)
# An unparsed line keeps its shape only (the names of known dump keys, numbers, punctuation); a
# parsed record its known keys, with strings only as values of the keys in _SAFE_VALUES (ids,
# subreddit, timestamps) that look like one. Everything else is "…", texts included.
_STRING_LITERAL = re.compile(r'"(?:[^"\\]|\\.)*"?')
_KNOWN_KEYS = frozenset((
    "_meta", "archived", "body", "controversiality", "created", "created_utc", "data", "distinguished", "downs",
    "edited", "gilded", "id", "is_self", "kind", "link_id", "name", "num_comments", "over_18", "parent_id",
    "permalink", "retrieved_2nd_on", "retrieved_on", "retrieved_utc", "score", "score_hidden", "selftext",
    "stickied", "subreddit", "subreddit_id", "title", "ups", "url", "was_deleted_later"))
_KEY_COLON = re.compile(r"\s*:\s*")
_BARE_WORD = re.compile(r"\w+")
_LITERALS = frozenset({"true", "false", "null", "NaN", "Infinity"})
_SAFE_VALUES = {
    **dict.fromkeys(("id", "name", "parent_id", "link_id", "subreddit_id"), re.compile(r"(?:t[135]_)?[0-9a-z]{1,10}")),
    "subreddit": re.compile(r"[A-Za-z0-9_]{1,21}"),
    **dict.fromkeys(("created_utc", "created", "retrieved_on", "retrieved_utc"), re.compile(r"[0-9.eE+-]{1,30}")),
    "kind": re.compile(r"t\d|Listing|more"),
}
_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
_MARKER = re.compile(r"\[\s*(deleted|removed)\b[^\]]{0,80}\]", re.I)
#: The characters of an e-mail address, a mention or a marker's word: a run of them cut by the
#: excerpt's end is taken whole first (or left out) so that none is shown in part.
_WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._%+-@/\\")
_WORD_MARGIN = 320
_MAX_EXCERPT_DEPTH = 20


def redact(text: str, limit: int = 500, fields_removed: bool = False) -> str:
    """A line as a publishable excerpt of at most ``limit`` characters (plus ``...``).

    ``text`` is an unparsed line (see :func:`_line_shape`: only its shape is kept, so a
    mangled ``author`` key cannot carry its value out), or with ``fields_removed``
    a text without private fields (JSON from :func:`redact_record`, a message). Then u/name and
    /user/name mentions (:data:`lsdscc.corpus.cleaning.USERNAME`) become ``<user>``, e-mail
    addresses ``<email>``, [deleted]/[removed] markers ``<deleted>``/``<removed>``; lone
    surrogates are escaped. All of this runs before the excerpt is cut to ``limit``; the part
    of ``text`` it reads (``limit * 4`` characters) never ends inside an address or a name
    (:func:`_excerpt_window`), so none is shown in part.
    """
    text, cut = _excerpt_window(text, limit * 4)
    text = _PRIVATE_FIELD.sub("", text) if fields_removed else _line_shape(text)
    text = USERNAME.sub("<user>", text)
    text = _EMAIL.sub("<email>", text)
    text = _MARKER.sub(lambda m: f"<{m.group(1).lower()}>", text)
    if not text.isascii():  # valid characters stay, lone surrogates become \\udxxx
        text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    if len(text) > limit:
        text, cut = text[:limit], True
    return text + "..." if cut else text


def _excerpt_window(text: str, size: int) -> tuple[str, bool]:
    """``(the first `size` characters of text, whether some were left out)``, the end moved
    out of a run of address and name characters (:data:`_WORD_CHARS`) it would cut: to the
    run's end when that is at most 320 characters further, else back to the run's start."""
    if len(text) <= size:
        return text, False
    end, stop = size, min(len(text), size + _WORD_MARGIN)
    while end < stop and text[end] in _WORD_CHARS:
        end += 1
    if end < len(text) and text[end] in _WORD_CHARS:
        end = size
        while end > 0 and text[end - 1] in _WORD_CHARS:
            end -= 1
    return text[:end], end < len(text)


def _line_shape(text: str) -> str:
    """An unparsed line with every string replaced by ``"…"`` except the names of known dump
    keys, and every bare word that is not a JSON literal or a number replaced by ``…``. Its
    values are not shown at all: in a line that does not parse (a lost quote, a corrupt
    stream) any value may hold parts of another, a username included."""
    out, pos = [], 0
    for m in _STRING_LITERAL.finditer(text):
        out.append(_BARE_WORD.sub(_bare_word, text[pos:m.start()]))
        pos, literal = m.end(), m[0]
        inner = literal[1:-1] if len(literal) > 1 and literal.endswith('"') else literal[1:]
        out.append(literal if inner in _KNOWN_KEYS and _KEY_COLON.match(text, pos) else '"…"')
    out.append(_BARE_WORD.sub(_bare_word, text[pos:]))
    return "".join(out)


def _bare_word(word: re.Match) -> str:
    return word[0] if word[0] in _LITERALS or word[0].isdigit() else "…"


def _record_shape(value, key=None, depth: int = 0):
    """A parsed record cut to what a dead letter may show, as :func:`_line_shape` does for a
    line: known keys only (at any depth, down to 20 levels), strings only as values of the
    keys in ``_SAFE_VALUES`` that look like one, numbers and literals as they are."""
    if isinstance(value, dict):
        if depth >= _MAX_EXCERPT_DEPTH:
            return "…"
        return {k: _record_shape(v, k, depth + 1) for k, v in value.items() if isinstance(k, str) and k in _KNOWN_KEYS}
    if isinstance(value, (list, tuple)):
        return [_record_shape(v, None, depth + 1) for v in value] if depth < _MAX_EXCERPT_DEPTH else "…"
    if isinstance(value, str):
        safe = _SAFE_VALUES.get(key)
        return value if safe is not None and safe.fullmatch(value) else "…"
    return value if value is None or isinstance(value, (bool, int, float)) else "…"


def redact_record(record, limit: int = 500) -> str:
    """A parsed record as a publishable excerpt: sorted JSON of :func:`_record_shape` (no
    author, flair or unknown key, no text), then :func:`redact`."""
    text = json.dumps(_record_shape(record), sort_keys=True, ensure_ascii=False)
    return redact(text, limit, fields_removed=True)


def dead_letter(path, line, reason, detail, raw, offset=None) -> dict:
    """A dead letter safe to publish: ``file`` is the input's name without its folder (None for
    a letter of the thread stage), ``line`` and ``offset`` (byte offset of the line's start in
    the decompressed file) say where, ``reason`` and ``detail`` (the path in it shortened to the
    name too) why, ``text`` is a redacted excerpt of ``raw`` (the line as text, or the parsed
    record): no author/flair field, mention, e-mail or [deleted] marker
    (:func:`lsdscc.corpus.records.redact`, :func:`~lsdscc.corpus.records.redact_record`)."""
    name = None
    if path is not None:
        from lsdscc.corpus.provenance import source_name

        name = source_name(str(path)) or str(path)
        detail = detail.replace(str(path), name)
    text = redact(raw) if isinstance(raw, str) else redact_record(raw)
    return {"reason": reason, "file": name, "line": line, "offset": offset,
            "detail": redact(detail, 300, fields_removed=True), "text": text}
