"""Reddit dump records in the shapes of six eras, written as Arctic Shift monthly files.

The shapes follow the Arctic Shift schema statistics (docs/corpus.md#dump-schema-by-era):

- 2008, 2012: ``created_utc`` a JSON string, ``name`` present, ``score_hidden``/``ups``/``downs``;
- 2016, 2020: no ``name``; 2020 adds ``permalink``, ``author_fullname``, ``is_submitter``;
- 2023 (before November): keys sorted, ``retrieved_on``, no ``body_html``, ``name`` back;
- 2026: as 2023 plus ``_meta`` (second retrieval) and the later fields (74 comment fields).

:func:`thread` makes one submission and its comments for a month; :func:`write_month` writes
``RC_YYYY-MM.zst`` / ``RS_YYYY-MM.zst`` (zstd, sorted keys from 2023 as Arctic Shift does).
Texts are plain sentences; authors are synthetic and never reach the dataset.
"""

from __future__ import annotations

import calendar
import json
import os

import zstandard

YEARS = (2008, 2012, 2016, 2020, 2023, 2026)
_WORDS = ("the film was great and the cast did a fine job with the script".split()
          + "i liked the ending more than the start of the story".split())


_SPELL = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa "
          "quebec romeo sierra tango uniform victor whiskey xray yankee zulu").split()


def _spelled(seed: int) -> str:
    """``seed`` in words (the lsdscc text convention turns digits into ``digits``)."""
    words = []
    while True:
        seed, rest = divmod(seed, len(_SPELL))
        words.append(_SPELL[rest])
        if not seed:
            return " ".join(reversed(words))


def _text(seed: int, n: int = 9) -> str:
    return " ".join(_WORDS[(seed * 7 + i * 3) % len(_WORDS)] for i in range(n)) + " code " + _spelled(seed)


def _extra_2026(kind: str) -> dict:
    """Fields of the 2024-2026 dumps beyond the core (enough to reach their key counts)."""
    names = ["all_awardings", "approved_at_utc", "approved_by", "associated_award", "author_flair_background_color",
             "author_flair_richtext", "author_flair_template_id", "author_flair_text_color", "author_flair_type",
             "author_patreon_flair", "author_premium", "awarders", "banned_at_utc", "banned_by", "can_gild",
             "can_mod_post", "collapsed", "collapsed_because_crowd_control", "collapsed_reason",
             "collapsed_reason_code", "comment_type", "gildings", "likes", "locked", "mod_note",
             "mod_reason_by", "mod_reason_title", "mod_reports", "no_follow", "num_reports", "removal_reason",
             "report_reasons", "saved", "send_replies", "subreddit_name_prefixed", "subreddit_type",
             "top_awarded_type", "total_awards_received", "treatment_tags", "unrepliable_reason",
             "user_reports", "author_is_blocked", "body_sha1", "controversiality_2nd"]
    return {name: None for name in names}


def record(year: int, kind: str, post_id: str, created: int, *, link: str = "", parent: str = "",
           text: str = "", title: str = "", meta: dict | None = None) -> dict:
    """One record of ``kind`` (``t1`` comment, ``t3`` submission) in ``year``'s shape."""
    base = {"author": f"user{post_id}", "id": post_id, "subreddit": "movies", "subreddit_id": "t5_2qh3s",
            "score": 3, "gilded": 0, "distinguished": None, "edited": False, "retrieved_on": created + 3600,
            "author_flair_text": None, "author_flair_css_class": None}
    if kind == "t1":
        base.update({"body": text, "link_id": link, "parent_id": parent, "controversiality": 0})
    else:
        base.update({"title": title, "selftext": text, "num_comments": 2, "is_self": True, "over_18": False,
                     "url": f"https://www.reddit.com/r/movies/comments/{post_id}/", "domain": "self.movies"})
    if year <= 2012:
        base.update({"created_utc": str(created), "name": f"{kind}_{post_id}", "score_hidden": False,
                     "ups": 3, "downs": 0, "archived": True})
        return base
    base["created_utc"] = created
    if year >= 2016:
        base["stickied"] = False
    if year >= 2020:
        base.update({"permalink": f"/r/movies/comments/{link[3:] or post_id}/x/{post_id}/",
                     "author_fullname": f"t2_{post_id}", "is_submitter": False, "no_follow": True})
    if year >= 2023:
        base["name"] = f"{kind}_{post_id}"
    if year >= 2026:
        base.update(_extra_2026(kind))
        base["_meta"] = dict({"retrieved_2nd_on": created + 36 * 3600, "was_deleted_later": False,
                              "is_edited": False}, **(meta or {}))
    return base


def epoch(year: int, month: int, day: int = 10, hour: int = 12) -> int:
    return calendar.timegm((year, month, day, hour, 0, 0))


def thread(year: int, month: int, number: int, *, day: int = 10, comments: int = 3, late_days: int = 0,
           metas: dict | None = None) -> tuple[dict, list]:
    """One submission ``s<year><month><number>`` and a chain of ``comments`` comments.

    ``late_days``: the last comment is written this many days after the others (a reply in a
    later month); ``metas``: ``{comment index: _meta fields}`` (2026 shape only).
    """
    sid = f"s{year}{month:02d}{number}"
    start = epoch(year, month, day)
    sub = record(year, "t3", sid, start, title=f"what did you think of film {_spelled(year * 100 + month * 10 + number)}",
                 text=_text(year * 100 + month * 10 + number))
    out, parent = [], f"t3_{sid}"
    for i in range(comments):
        cid = f"c{year}{month:02d}{number}x{i}"
        created = start + 60 * (i + 1) + (late_days * 86400 if i == comments - 1 else 0)
        out.append(record(year, "t1", cid, created, link=f"t3_{sid}", parent=parent,
                          text=_text(year * 1000 + month * 50 + number * 10 + i), meta=(metas or {}).get(i)))
        parent = f"t1_{cid}"
    return sub, out


def write_month(folder, year: int, month: int, submissions, comments) -> list:
    """``RS_/RC_YYYY-MM.zst`` in ``folder``; records sorted by time (keys sorted from 2023)."""
    os.makedirs(folder, exist_ok=True)
    paths = []
    for prefix, rows in (("RS", submissions), ("RC", comments)):
        rows = sorted(rows, key=lambda r: (int(r["created_utc"]), r["id"]))
        text = "".join(json.dumps(r, sort_keys=year >= 2023) + "\n" for r in rows)
        path = os.path.join(folder, f"{prefix}_{year}-{month:02d}.zst")
        with open(path, "wb") as fh:
            fh.write(zstandard.ZstdCompressor(level=3).compress(text.encode("utf-8")))
        paths.append(path)
    return paths


def era_dumps(folder, threads_per_month: int = 2) -> list:
    """One month (June) of each era in :data:`YEARS`, ``threads_per_month`` threads each."""
    paths = []
    for year in YEARS:
        subs, comments = [], []
        for n in range(threads_per_month):
            sub, coms = thread(year, 6, n)
            subs.append(sub)
            comments += coms
        paths += write_month(folder, year, 6, subs, comments)
    return sorted(paths)
