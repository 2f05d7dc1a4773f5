"""Contexts of the two DailyDialog-derived datasets (docs/algorithms.md sections 4 and 5).

Pure functions over :class:`dailydialog_pp.readers.Dialogue`; the Beam pipeline
(``pipelines/dailydialog/job.py``) wraps them.

MultiRef-DD (section 4): a dialogue u_1..u_n gives contexts u_1..u_i for i = 1..n-1, whose
first reference is u_{i+1}; the released multi-reference line of the same dialogue adds its
``responses[1:]`` (4 human references) when its utterances match the dialogue's under
:func:`dailydialog_pp.normalize.match_key`.

DD++ (section 5): duplicate dialogues are removed first (:func:`dailydialog_pp.normalize.dialogue_key`);
a dialogue shorter than ``long_dialogue`` (8) turns gives one context, all turns but the last;
a longer one is cut into chunks by :func:`chunk_spans` and each chunk gives one context.
"""

from __future__ import annotations

from dataclasses import dataclass

from multiref.util.options import option, recorded

from dailydialog_pp.normalize import (
    TextOptions, canonical_text, collapse_spaces, dialogue_key, match_key, normalize_text)
from dailydialog_pp.readers import SPLIT_ORDER, Dialogue, MultirefDialogue


# --- MultiRef-DD -------------------------------------------------------------------------

def multiref_matches(dialogue: Dialogue, released: MultirefDialogue) -> bool:
    """True if the released line has the dialogue's utterances, turn by turn, under match_key.

    (Raw text differs: the release maps ’ to ', re-splits "six.We" and "6.5"; match_key
    drops everything but letters and digits, which matches all 1,000 test dialogues.)
    """
    if len(dialogue.turns) != len(released.texts):
        return False
    return all(match_key(a) == match_key(b) for a, b in zip(dialogue.turns, released.texts))


def multiref_contexts(dialogue: Dialogue, released: MultirefDialogue | None = None,
                      text: TextOptions = TextOptions(), released_first: bool = False) -> list[dict]:
    """Rows of the ``multiref`` config for one dialogue (section 4).

    Row: id ``"<index>_<turn>"`` (multirefeval's test_duid_mapping key), dialogue_id,
    context (turns 0..turn, written with ``text``), references (the original next turn,
    then the released ``responses[1:]`` when ``released`` is given; released strings are
    kept as released except that whitespace runs are collapsed and empty strings dropped).
    ``released_first``: take the first reference from the release's ``responses[0]``
    (lowercased, PTB-tokenized, as multirefeval's test.tgt) instead of the DailyDialog text.
    The caller checks :func:`multiref_matches` first.
    """
    turns = [normalize_text(t, text) for t in dialogue.turns]
    rows = []
    for turn in range(len(turns) - 1):
        references = [turns[turn + 1]]
        if released is not None:
            if released_first and collapse_spaces(released.responses[turn][0]):
                references = [collapse_spaces(released.responses[turn][0])]
            extra = [collapse_spaces(r) for r in released.responses[turn][1:]]
            references += [r for r in extra if r]
        rows.append({
            "id": f"{dialogue.index}_{turn}",
            "dialogue_id": dialogue.dialogue_id,
            "context": turns[: turn + 1],
            "references": references,
        })
    return rows


def context_pairs(dialogue: Dialogue, text: TextOptions = TextOptions()) -> list[dict]:
    """Rows of the ``contexts`` config for one dialogue of any split: ``id`` ``"<index>_<turn>"``
    (as the multiref config's), ``context`` (turns 0..turn, written with ``text``) and
    ``response`` (turn ``turn + 1``), for turn = 0..n-2. A corpus of context-response pairs,
    e.g. for ``multiref augment`` (retrieving references for a test set from train)."""
    turns = [normalize_text(t, text) for t in dialogue.turns]
    return [{"id": f"{dialogue.index}_{turn}", "context": turns[: turn + 1], "response": turns[turn + 1]}
            for turn in range(len(turns) - 1)]


def empty_references(released: MultirefDialogue) -> int:
    """How many released extra references (responses[1:]) are empty after collapsing spaces."""
    return sum(1 for rs in released.responses for r in rs[1:] if not collapse_spaces(r))


# --- DD++ --------------------------------------------------------------------------------

@dataclass(frozen=True)
class ChunkOptions:
    """How DD++ cuts dialogues into contexts (section 5; recorded in the dataset card).

    long_dialogue: dialogues with at least this many turns are cut into chunks (paper: 8).
    chunk_length: turns per chunk (4: three context turns and the answered turn).
    min_chunk: a final chunk needs at least this many turns (3).
    max_chunk: a short tail (< min_chunk turns) is merged into the previous chunk if that
      makes at most ``max_chunk`` turns (5); otherwise the final chunk is the dialogue's
      last ``min_chunk`` turns, overlapping the previous chunk by the missing turns.
    These defaults reproduce the released contexts: e.g. 9 turns -> [0:4] [4:9];
    10 turns -> [0:4] [4:8] [7:10]; 11 turns -> [0:4] [4:8] [8:11].
    """

    long_dialogue: int = option(8, flag="--long-dialogue", low=1,
                                help="dialogues with at least this many turns are cut into chunks")
    chunk_length: int = option(4, flag="--chunk-length", low=1, help="turns per chunk")
    min_chunk: int = option(3, flag="--min-chunk", low=1, help="fewest turns of a final chunk")
    max_chunk: int = option(5, flag="--max-chunk", low=1,
                            help="a short tail is merged into the last chunk up to this many turns")

    def __post_init__(self):
        if self.chunk_length < 2:
            raise ValueError(f"chunk_length must be at least 2, got {self.chunk_length}")
        if not 2 <= self.min_chunk <= self.chunk_length <= self.max_chunk:
            raise ValueError(f"need 2 <= min_chunk ({self.min_chunk}) <= chunk_length ({self.chunk_length}) "
                             f"<= max_chunk ({self.max_chunk})")
        if self.long_dialogue < 2:
            raise ValueError(f"long_dialogue must be at least 2, got {self.long_dialogue}")

    def as_dict(self) -> dict:
        return recorded(self)


def chunk_spans(n: int, options: ChunkOptions = ChunkOptions()) -> list[tuple[int, int]]:
    """``[start, end)`` turn spans of the chunks of an ``n``-turn dialogue (section 5).

    n < 2: no span; n < long_dialogue: one span [0, n); else consecutive chunks of
    chunk_length with the tail rule of :class:`ChunkOptions`.
    """
    if n < 2:
        return []
    if n < options.long_dialogue:
        return [(0, n)]
    spans = [(s, s + options.chunk_length) for s in range(0, n - options.chunk_length + 1, options.chunk_length)]
    tail = n - spans[-1][1]
    if tail == 0:
        return spans
    if tail >= options.min_chunk:
        spans.append((spans[-1][1], n))
    elif options.chunk_length + tail <= options.max_chunk:
        spans[-1] = (spans[-1][0], n)
    else:
        spans.append((n - options.min_chunk, n))
    return spans


def ddpp_contexts(dialogue: Dialogue, options: ChunkOptions = ChunkOptions(),
                  text: TextOptions = TextOptions()) -> list[dict]:
    """One context per chunk: ``{id, dialogue_id, chunk, start, context, response}``.

    id is ``<dialogue_id>_<chunk>``; context is the chunk's turns but the last (written with
    ``text``); response is the chunk's last turn (the original answer).
    """
    rows = []
    for chunk, (start, end) in enumerate(chunk_spans(len(dialogue.turns), options)):
        turns = [normalize_text(t, text) for t in dialogue.turns[start:end]]
        rows.append({
            "id": f"{dialogue.dialogue_id}_{chunk}",
            "dialogue_id": dialogue.dialogue_id,
            "chunk": chunk,
            "start": start,
            "context": turns[:-1],
            "raw_context": list(dialogue.turns[start:end - 1]),
            "response": turns[-1],
        })
    return rows


def dialogue_order(dialogue: Dialogue) -> tuple:
    """Sort key of dialogues: release split order (train, validation, test), then line."""
    return (SPLIT_ORDER.get(dialogue.split, len(SPLIT_ORDER)), dialogue.split, dialogue.index)


def near_duplicate_block(dialogue: Dialogue) -> str:
    """Blocking key for near-duplicate search: the first and last utterances' canonical text."""
    return canonical_text(dialogue.turns[0]) + "|" + canonical_text(dialogue.turns[-1])


def similarity(a: str, b: str) -> float:
    """difflib ratio of two duplicate keys (1.0 = identical), with cheap upper bounds first."""
    import difflib

    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    if matcher.real_quick_ratio() == 0 or matcher.quick_ratio() == 0:
        return 0.0
    return matcher.ratio()


def cluster_duplicates(dialogues, near_ratio: float | None = None) -> list[tuple[Dialogue, list[Dialogue]]]:
    """Group ``dialogues`` into duplicates; return ``[(kept, removed), ...]``.

    Two dialogues are duplicates when their :func:`dailydialog_pp.normalize.dialogue_key`
    is equal, or, with ``near_ratio``, when the keys (turn boundaries ignored) have a
    difflib similarity of at least ``near_ratio`` (edited copies: a word added, a typo fixed).
    Each group keeps its first dialogue in :func:`dialogue_order`; a dialogue joins the
    first group whose kept dialogue it duplicates.
    """
    groups = []  # [key, flat key, kept, removed]
    for d in sorted(dialogues, key=dialogue_order):
        key = dialogue_key(d.turns)
        flat = key.replace("|", "")
        for group in groups:
            if group[0] == key or (near_ratio is not None and similarity(group[1], flat) >= near_ratio):
                group[3].append(d)
                break
        else:
            groups.append([key, flat, d, []])
    return [(g[2], g[3]) for g in groups]


def pick_released(candidates):
    """Of released DD++ contexts sharing a context key, the one used for the join:
    train/dev/test (which have adversarial negatives) before data_positives, then by line."""
    rank = {"ddpp_train": 0, "ddpp_dev": 1, "ddpp_test": 2, "ddpp_positives": 3}
    return sorted(candidates, key=lambda r: (rank.get(r.source, 9), r.source, r.line))[0]
