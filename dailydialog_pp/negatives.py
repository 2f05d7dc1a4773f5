"""Random negative responses for DD++ contexts (docs/algorithms.md#5-dd).

"5 random negatives (responses of other contexts; avoid short generic ones)": each context
draws ``count`` responses from a pool of the responses of all contexts (their original answer
and their positives), never from its own dialogue, never shorter than ``min_words``
whitespace words, never equal (under match_key) to one of its positives, and without repeats.
Draws are seeded per context from (seed, context id), so a context's negatives do not depend
on which worker handles it or on the order of the rows.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from multiref.util.options import option, recorded

from dailydialog_pp.normalize import match_key


@dataclass(frozen=True)
class NegativeOptions:
    """count random negatives per context, min_words per negative, seed (recorded in the card).

    keep_released: a context matched to a released DD++ context that has random negatives
    (train/dev/test files) keeps those instead of drawing new ones.
    """

    count: int = option(5, flag="--random-negatives", low=0, help="random negatives per context")
    min_words: int = option(5, flag="--negative-min-words", low=1, help="shortest random negative, in words")
    seed: int = option(0, flag="--seed", help="seed of random negatives and shuffles")
    keep_released: bool = option(False, flag="--released-random-negatives",
                                 help="contexts matched to released dev/test (or train) contexts keep the released "
                                      "random negatives")

    def __post_init__(self):
        if self.count < 0:
            raise ValueError(f"random negative count must be >= 0, got {self.count}")
        if self.min_words < 1:
            raise ValueError(f"min_words must be >= 1, got {self.min_words}")

    def as_dict(self) -> dict:
        return recorded(self)


def pool_entries(row: dict, options: NegativeOptions) -> list[tuple[str, str]]:
    """``(text, dialogue_id)`` pool entries a context contributes: its answer and positives
    with at least ``min_words`` words."""
    texts = [row["response"]] + list(row.get("positive_responses") or [])
    return [(t, row["dialogue_id"]) for t in dict.fromkeys(texts) if len(t.split()) >= options.min_words]


def build_pool(entries) -> list[tuple[str, str]]:
    """The sorted, de-duplicated pool (sorting makes draws independent of input order)."""
    return sorted(set(entries))


def sample_negatives(row_id: str, dialogue_id: str, positives, pool, options: NegativeOptions) -> list[str]:
    """Draw ``options.count`` negatives for one context from ``pool`` (see the module doc).

    Returns fewer only when the pool has too few acceptable entries.
    """
    if options.count == 0 or not pool:
        return []
    rng = random.Random(f"{options.seed}:{row_id}")
    banned = {match_key(p) for p in positives}
    chosen, seen = [], set()
    tries = 0
    limit = 50 * options.count + 100
    while len(chosen) < options.count and tries < limit:
        tries += 1
        text, source = pool[rng.randrange(len(pool))]
        key = match_key(text)
        if source == dialogue_id or key in banned or key in seen:
            continue
        seen.add(key)
        chosen.append(text)
    if len(chosen) < options.count:  # tiny pools: fall back to a deterministic scan
        for text, source in pool:
            key = match_key(text)
            if len(chosen) >= options.count:
                break
            if source != dialogue_id and key not in banned and key not in seen:
                seen.add(key)
                chosen.append(text)
    return chosen
