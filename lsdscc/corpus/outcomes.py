"""What a step did with one input: kept it, dropped it by a rule, or rejected it as malformed.

Every per-record rule of the corpus job returns (or yields) one of these, so a caller never
tells the cases apart by a value's type or a tag string:

- :class:`Kept`: ``value`` goes on (a :class:`lsdscc.corpus.records.Post`, a row of
  :mod:`lsdscc.corpus.threads`);
- :class:`Dropped`: a rule of the paper removed the input; ``reason`` names its counter;
- :class:`Rejected`: the input is malformed; ``reason`` names its counter and dead letter,
  ``detail`` says what is wrong (it is published, redacted, with the dead letter).
"""

from __future__ import annotations

from typing import NamedTuple, Union


class Kept(NamedTuple):
    """The input passed the step; ``value`` is what the step made of it."""

    value: object


class Dropped(NamedTuple):
    """A rule removed the input; ``reason``: the counter's name (e.g. ``bot``). ``tombstone``:
    for a post that was deleted or removed, what the job carries on in its place (a
    :class:`lsdscc.corpus.records.Post` of kind ``deleted``, without text), so that no other
    copy of that post is published either; None otherwise."""

    reason: str
    tombstone: object = None


class Rejected(NamedTuple):
    """The input is malformed: ``reason`` names the counter, ``detail`` says what is wrong."""

    reason: str
    detail: str


Outcome = Union[Kept, Dropped, Rejected]
