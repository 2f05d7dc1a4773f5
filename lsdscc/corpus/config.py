"""The LSDSCC corpus job's options as one frozen dataclass, recorded in the dataset card.

Each field the user sets carries its flag (:func:`multiref.util.options.option`): the
``multiref lsdscc build`` flags, the job's Beam options class and the card all derive from
this class (:mod:`pipelines.lsdscc.options`).

Every field changes the data; :meth:`CorpusConfig.as_options` is what the card records
(docs/algorithms.md#1-lsdscc-corpus gives the defaults: vocabulary 50,000, query <= 100 tokens,
response <= 60 tokens; the validation fraction 0.15 follows the LSDSCC release).
"""

from __future__ import annotations

import calendar
import datetime as _dt
import re
from dataclasses import dataclass
from typing import ClassVar

from multiref.util.options import option, recorded

#: Text conventions by name, the default first (rules: :mod:`lsdscc.corpus.cleaning`, README "Text
#: conventions"). Defined here, not in lsdscc.corpus.cleaning, so that reading the options does not
#: compile the cleaning's regular expressions (``multiref --help`` stays fast).
CONVENTIONS = ("lsdscc", "treebank")
DEFAULT_CONVENTION = CONVENTIONS[0]

#: Accounts dropped as bots (case-insensitive), besides names matching ``bot_pattern``.
DEFAULT_BOTS = (
    "AutoModerator",
    "RemindMeBot",
    "WikiTextBot",
    "sneakpeekbot",
    "imguralbumbot",
    "Mentioned_Videos",
    "TweetsInCommentsBot",
    "HelperBot_",
    "converter-bot",
    "timezone_bot",
    "youtubefactsbot",
    "RepostSleuthBot",
    "SaveVideo",
    "GifReversingBot",
)


_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")
_EPOCH = re.compile(r"^\d{1,12}$")
#: the dates --since/--until may name: [1970-01-01, 2100-01-01), as a dump's ``created_utc``
#: (:data:`lsdscc.corpus.records.CREATED_RANGE`, which imports this module); checked when the
#: options are parsed, before the job starts
DATE_RANGE = (0, 4_102_444_800)


def parse_date(text: str, end: bool = False) -> int:
    """``YYYY-MM-DD`` (UTC) or epoch seconds -> epoch seconds. With ``end``, a date stands
    for its last second (``--until 2023-06-30`` keeps the whole 30th). ValueError otherwise."""
    text = str(text).strip()
    m = _DATE.match(text)
    if _EPOCH.match(text):
        value = int(text)
    elif not m:
        raise ValueError(f"expected a date YYYY-MM-DD (UTC) or epoch seconds, got {text[:40]!r}")
    else:
        try:
            day = _dt.date(int(m[1]), int(m[2]), int(m[3]))
        except ValueError as exc:
            raise ValueError(f"not a calendar date: {text!r} ({exc})") from None
        value = calendar.timegm(day.timetuple()) + (86_399 if end else 0)
    if not DATE_RANGE[0] <= value < DATE_RANGE[1]:
        raise ValueError(f"{text!r} is out of range: dates go from 1970-01-01 to 2099-12-31 (epoch seconds 0 to "
                         f"{DATE_RANGE[1] - 1})")
    return value


def _epoch(text, flag: str, end: bool) -> int | None:
    """``--since`` / ``--until`` as epoch seconds (None when not given); ValueError naming the flag."""
    if text is None or isinstance(text, int):
        return text
    try:
        return parse_date(str(text), end=end)
    except ValueError as exc:
        raise ValueError(f"{flag}: {exc}") from None


@dataclass(frozen=True)
class CorpusConfig:
    """Options of the corpus pipeline (docs/algorithms.md#1-lsdscc-corpus).

    - ``subreddits``: only records of these subreddits are kept (case-insensitive).
    - ``lowercase``: lowercase the text before tokenizing (the public LSDSCC set is lowercase).
    - ``tokenizer``: ``treebank`` (NLTK TreebankWordTokenizer) or ``nltk`` (NLTKWordTokenizer).
    - ``text_convention``: ``lsdscc`` (default: the released LSDSCC text: ``didn t``, no
      ``.`` or ``/``, every digit run ``digits``) or ``treebank`` (``did n't``, numbers
      replaced only where they stand alone); :mod:`lsdscc.corpus.cleaning` and the README's "Text
      conventions" give the rules.
    - ``vocab_size``: words outside the ``vocab_size`` most frequent become ``unk_token`` (step 6).
    - ``max_query_tokens`` / ``max_response_tokens``: length pruning (step 7).
    - ``rare_max_count``: tokens seen at most this often are candidates for splitting (step 5).
    - ``piece_min_count``: every piece of a split must be seen at least this often.
    - ``min_split_length``: shorter tokens are never split.
    - ``long_word_length``: words longer than this count as "over-long" noise in the stats.
    - ``validation_fraction``: share of threads (by a hash of the thread id) in validation.
    - ``min_turns``: multi-turn conversations need at least this many turns (root included).
    - ``drop_deleted_later``: drop records that ``_meta`` says were deleted or removed after
      their first retrieval (:mod:`lsdscc.corpus.deletions`; records deleted before it are always dropped).
    - ``since`` / ``until``: keep threads whose submission was created in this range of UTC
      epoch seconds, both ends included (None: no bound); :mod:`lsdscc.corpus.eras` gives the rule.
    - ``bots`` / ``bot_pattern``: authors dropped as bots.
    - ``num_shards``: parquet files per split (does not change the rows; a hash of the thread
      id picks a row's file). The pipeline resolves its ``--num-shards auto`` from the input
      size before building this config, so the card records the number used.
    """

    subreddits: tuple = option(("movies",), flag="--subreddit", repeat=True, metavar="NAME",
                               help="keep this subreddit (repeatable; default: movies)")
    lowercase: bool = option(True, flag="--lowercase",
                             help="lowercase the text, as the public LSDSCC set is (default: yes; --no-lowercase "
                                  "keeps the case)")
    tokenizer: str = option("treebank", flag="--tokenizer", choices=("treebank", "nltk"),
                            help="NLTK tokenizer: TreebankWordTokenizer or NLTKWordTokenizer")
    text_convention: str = option(DEFAULT_CONVENTION, flag="--text-convention", choices=CONVENTIONS,
                                  help="text convention: lsdscc (the released LSDSCC text: didn t, no . or /, "
                                       "digits) or treebank (did n't, standalone numbers)")
    text_conventions: ClassVar[tuple] = CONVENTIONS  # the choices of text_convention
    vocab_size: int = option(50_000, flag="--vocab-size", help="kept vocabulary")
    max_query_tokens: int = option(100, flag="--max-query-tokens", help="drop pairs with longer queries")
    max_response_tokens: int = option(60, flag="--max-response-tokens", help="drop pairs with longer responses")
    rare_max_count: int = option(2, flag="--rare-max-count",
                                 help="tokens seen at most this often may be split into frequent words")
    piece_min_count: int = option(10, flag="--piece-min-count", help="each piece of a split must be seen this often")
    min_split_length: int = 7
    long_word_length: int = 20
    validation_fraction: float = option(0.15, flag="--validation-fraction",
                                        help="share of threads in validation, by hash of the thread id")
    min_turns: int = option(3, flag="--min-turns", help="shortest multi-turn conversation")
    drop_deleted_later: bool = option(True, flag="--keep-deleted-later", inverse=True,
                                      help="keep posts that the dump's _meta says were deleted or removed after it "
                                           "was first archived (default: drop them; recorded in the card); posts "
                                           "deleted before are always dropped")
    since: int | None = option(None, flag="--since", metavar="DATE", convert=lambda t: _epoch(t, "--since", False),
                               help="keep threads whose submission was created on or after DATE (UTC; YYYY-MM-DD "
                                    "or epoch seconds), with all their comments")
    until: int | None = option(None, flag="--until", metavar="DATE", convert=lambda t: _epoch(t, "--until", True),
                               help="keep threads whose submission was created on or before DATE (UTC, the whole "
                                    "day; YYYY-MM-DD or epoch seconds), with all their comments")
    bots: tuple = DEFAULT_BOTS
    bot_pattern: str = r"(?i)bot[-_]?$"
    unk_token: str = "<unk>"
    num_shards: int = 1

    def __post_init__(self):
        if not self.subreddits:
            raise ValueError("subreddits must name at least one subreddit")
        if self.tokenizer not in ("treebank", "nltk"):
            raise ValueError(f"tokenizer must be 'treebank' or 'nltk', got {self.tokenizer!r}")
        if self.text_convention not in self.text_conventions:
            raise ValueError(f"text_convention must be one of {', '.join(CONVENTIONS)}, got {self.text_convention!r}")
        for name in ("vocab_size", "max_query_tokens", "max_response_tokens", "num_shards", "min_turns"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        for name in ("since", "until"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
                raise ValueError(f"{name} must be epoch seconds (an integer) or None, got {value!r}")
        if self.since is not None and self.until is not None and self.since > self.until:
            raise ValueError(f"since ({self.since}) is after until ({self.until})")
        if not isinstance(self.unk_token, str) or self.unk_token.split() != [self.unk_token]:
            raise ValueError(f"unk_token must be one token (no whitespace), got {self.unk_token!r}")
        if not 0.0 <= self.validation_fraction < 1.0:
            raise ValueError(f"validation_fraction must be in [0, 1), got {self.validation_fraction!r}")

    def as_options(self) -> dict:
        """The options as a JSON-friendly dict (tuples become lists), for the card."""
        return dict(sorted(recorded(self).items()))
