"""The LSDSCC corpus job's options as one frozen dataclass, recorded in the dataset card.

Every field changes the data; :meth:`CorpusConfig.as_options` is what the card records
(ALGORITHMS.md section 1 gives the defaults: vocabulary 50,000, query <= 100 tokens,
response <= 60 tokens; the validation fraction 0.15 follows the LSDSCC release).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar

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


@dataclass(frozen=True)
class CorpusConfig:
    """Options of the corpus pipeline (ALGORITHMS.md section 1).

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
    - ``drop_deleted_later``: drop comments whose ``_meta.was_deleted_later`` is true.
    - ``bots`` / ``bot_pattern``: authors dropped as bots.
    - ``num_shards``: parquet files per split (does not change the rows; a hash of the thread
      id picks a row's file). The pipeline resolves its ``--num-shards auto`` from the input
      size before building this config, so the card records the number used.
    """

    subreddits: tuple = ("movies",)
    lowercase: bool = True
    tokenizer: str = "treebank"
    text_convention: str = DEFAULT_CONVENTION
    text_conventions: ClassVar[tuple] = CONVENTIONS  # the choices of text_convention
    vocab_size: int = 50_000
    max_query_tokens: int = 100
    max_response_tokens: int = 60
    rare_max_count: int = 2
    piece_min_count: int = 10
    min_split_length: int = 7
    long_word_length: int = 20
    validation_fraction: float = 0.15
    min_turns: int = 3
    drop_deleted_later: bool = True
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
        if not 0.0 <= self.validation_fraction < 1.0:
            raise ValueError(f"validation_fraction must be in [0, 1), got {self.validation_fraction!r}")

    def as_options(self) -> dict:
        """The options as a JSON-friendly dict (tuples become lists), for the card."""
        out = dataclasses.asdict(self)
        return {k: list(v) if isinstance(v, tuple) else v for k, v in sorted(out.items())}
