"""Dump eras, months and the time range of a build (issue: real releases as downloaded).

Reddit dumps changed shape over the years (the Arctic Shift schema statistics,
docs/corpus.md#dump-schema-by-era). :data:`ERAS` names the periods whose records look alike:

- ``2005-12..2015-07``: Pushshift, ``name`` present, ``created_utc`` often a string;
- ``2015-08..2021-01``: no ``name`` field (``id`` only);
- ``2021-02..2023-03``: ``name`` back, ``retrieved_utc`` in some months;
- ``2023-04..2023-10``: Arctic Shift: records and keys sorted, ``body_html`` gone, ``retrieved_on``;
- ``2023-11..``: a second retrieval adds ``_meta`` (deletions: :mod:`lsdscc.corpus.deletions`).

:class:`SchemaTally` counts the records of the wanted subreddits by month of ``created_utc``
and collects the top-level fields seen in each era; :func:`low_months` flags a month with far
fewer records than both its neighbours (the June 2023 blackout, a missing dump file).

**The time range** (``--since`` / ``--until``, :func:`lsdscc.corpus.config.parse_date`) selects *threads*: a thread
is in range when its submission was created in range, both ends included, and then all of
its comments are kept, also those written after ``--until`` (a reply a week later, in the
next month's dump). A thread whose submission is not in the input is judged by its earliest
comment. Why threads and not records: the corpus's unit is the thread (pairs, conversations,
the train/validation split and the shards all follow the thread id), so cutting a thread at
a date would turn half of a conversation into orphans, and the rows kept would depend on how
the dumps were cut into months. Every post of a thread out of range counts as
``dropped-out-of-range``.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections import Counter

from lsdscc.corpus import records


#: (first month, label) of each era, oldest first; an era runs until the next one starts.
ERAS = (
    ("0000-00", "2005-12..2015-07"),
    ("2015-08", "2015-08..2021-01"),
    ("2021-02", "2021-02..2023-03"),
    ("2023-04", "2023-04..2023-10"),
    ("2023-11", "2023-11.."),
)
#: A month is flagged when it has fewer records than this share of each neighbour's count.
LOW_MONTH_SHARE = 0.5


def utc_text(epoch: int | None) -> str | None:
    """Epoch seconds as ``YYYY-MM-DDTHH:MM:SSZ`` (None stays None)."""
    if epoch is None:
        return None
    return _dt.datetime.fromtimestamp(epoch, _dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def month_of(epoch: int) -> str:
    """``YYYY-MM`` of epoch seconds (UTC)."""
    return _dt.datetime.fromtimestamp(epoch, _dt.timezone.utc).strftime("%Y-%m")


def era_of(month: str) -> str:
    """The label of the era (:data:`ERAS`) that ``month`` (``YYYY-MM``) falls in."""
    label = ERAS[0][1]
    for first, name in ERAS:
        if month >= first:
            label = name
    return label


def unwrapped(record: dict) -> dict:
    """The record itself, out of the Reddit API's ``{"kind", "data"}`` wrapper when it has one."""
    if "data" in record and "kind" in record and isinstance(record["data"], dict):
        return record["data"]
    return record


def record_created(record: dict) -> int | None:
    """A parsed record's ``created_utc`` (number or string, any era), or None when unreadable
    (missing, not a number, out of :data:`lsdscc.corpus.records.CREATED_RANGE`)."""
    try:
        return records._created(unwrapped(record))
    except (records.Malformed, OverflowError, ValueError):
        return None


def in_range(epoch: int, since: int | None, until: int | None) -> bool:
    """True when ``since <= epoch <= until`` (a None bound is open)."""
    return (since is None or epoch >= since) and (until is None or epoch <= until)


def thread_time(posts) -> int | None:
    """The time a thread is judged by: its submission's ``created_utc``, else (no submission
    in the input) its earliest comment's; None for no posts. ``posts``: Post-like tuples
    ``(kind, id, link_id, parent_id, created_utc, text)``."""
    submission = [p[4] for p in posts if p[0] == "t3"]
    if submission:
        return min(submission)
    times = [p[4] for p in posts]
    return min(times) if times else None


#: A field name as the dumps' schemas have them; any other key of a record (a hostile dump can
#: hold any text there, a username or a lone surrogate) is counted as :data:`OTHER_FIELD`, so
#: what the card publishes is the schema, never a record's text.
_FIELD_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}\Z")
OTHER_FIELD = "<other>"


class SchemaTally:
    """Records by month and the fields seen per era, from records as they are read."""

    #: bound on the remembered (era, key tuple) pairs and days: a dump of ever-new key sets
    #: (hostile or not) only costs the uncached path, never memory
    SEEN_LIMIT = 4096

    def __init__(self):
        self.months: Counter = Counter()
        self.fields: dict = {}
        self._seen: set = set()  # (era, key tuple) already added: the same fields again
        self._days: dict = {}  # UTC day number -> YYYY-MM (a day lies in one month)

    def add(self, record: dict, created: int | None) -> None:
        """Count one parsed record (``created``: its ``created_utc``, None when unreadable)."""
        if created is None:
            return
        try:
            month, era = self._month(created)
        except (OverflowError, OSError, ValueError):
            return  # a time no calendar holds: counted nowhere (the record itself is handled elsewhere)
        self.months[month] += 1
        seen = (era, tuple(record))
        if seen in self._seen:
            return
        if len(self._seen) >= self.SEEN_LIMIT:
            self._seen.clear()
        self._seen.add(seen)
        fields = self.fields.setdefault(era, set())
        fields.update(k if _FIELD_NAME.match(k) else OTHER_FIELD for k in record)

    def _month(self, created) -> tuple:
        """``(YYYY-MM, era)`` of the UTC day of ``created``."""
        day = created // 86400
        month = self._days.get(day)
        if month is None:
            month = month_of(day * 86400)
            month = (month, era_of(month))
            if len(self._days) >= self.SEEN_LIMIT:
                self._days.clear()
            self._days[day] = month
        return month

    def __bool__(self):
        return bool(self.months)

    def as_data(self) -> tuple:
        """A picklable ``(months dict, {era: sorted fields})``."""
        return dict(self.months), {era: sorted(f) for era, f in self.fields.items()}


def merge_schema(parts) -> dict:
    """``(months, fields)`` pairs -> ``{"months": {YYYY-MM: n}, "fields_by_era": {era: [..]}}``,
    keys sorted."""
    months: Counter = Counter()
    fields: dict = {}
    for part_months, part_fields in parts:
        months.update(part_months)
        for era, names in part_fields.items():
            fields.setdefault(era, set()).update(names)
    return {"months": dict(sorted(months.items())),
            "fields_by_era": {era: sorted(names) for era, names in sorted(fields.items())}}


def _next_month(month: str) -> str:
    year, mon = int(month[:4]), int(month[5:7])
    return f"{year + mon // 12:04d}-{mon % 12 + 1:02d}"


def low_months(months: dict, share: float = LOW_MONTH_SHARE) -> list:
    """Months with fewer records than ``share`` of *both* neighbours' counts, as
    ``{"month", "records", "previous", "next"}``. Months between the first and the last with
    no record count as 0 (a missing dump file is flagged too); the first and last months are
    never flagged (a range often starts or ends inside a month)."""
    if not months:
        return []
    ordered, month = [], min(months)
    while month <= max(months):
        ordered.append((month, int(months.get(month, 0))))
        month = _next_month(month)
    flagged = []
    for (_, before), (name, n), (_, after) in zip(ordered, ordered[1:], ordered[2:]):
        if n < share * before and n < share * after:
            flagged.append({"month": name, "records": n, "previous": before, "next": after})
    return flagged
