"""Multi-reference BLEU, sentence and corpus level (docs/algorithms.md#8-metric-definitions).

Matches NLTK 3.10's ``nltk.translate.bleu_score`` (``sentence_bleu`` / ``corpus_bleu``)
to 1e-9 for every smoothing ``nltk0``..``nltk7`` (= ``SmoothingFunction().method0..7``
with its default epsilon 0.1, alpha 5, k 5), without building ``Fraction`` objects:

- modified precision per order: clipped matches (each n-gram's count clipped by its
  maximum count in any single reference) over ``max(1, hypothesis n-gram count)``;
  corpus level sums numerators and denominators over segments;
- brevity penalty from the reference length closest to the hypothesis length (ties to the
  shorter), ``exp(1 - r/c)``, 0 for an empty hypothesis; it can be switched off;
- geometric mean ``bp * exp(fsum(w_n * log p_n))`` over the orders with ``p_n > 0``;
- a score of 0 when no unigram matches (NLTK returns 0 before smoothing).

NLTK quirks reproduced on purpose so that ``corpus_bleu`` parity holds: ``method4`` uses the
corpus hypothesis length, ``method5``/``method7`` use the order-5 precision of the *last*
segment, ``method6`` the n-gram count of the *last* hypothesis. One deliberate difference:
NLTK's ``method6`` asserts a non-zero trigram precision (an ``AssertionError``, or an
``IndexError`` below order 3); we compute its formula anyway, which is what NLTK itself
computes under ``python -O``.

Other smoothing names: ``none`` is exact BLEU (0 as soon as an order with a positive weight
has no match; NLTK's ``method0`` instead returns a tiny positive number, ~1e-77 for BLEU-4),
and ``add1`` adds one to the matched and to the possible n-gram counts of every order, the
``smooth=True`` formula of Google's ``compute_bleu`` (tensor2tensor / nmt ``bleu.py``) that
the public LSDSCC scorer uses (possible counts are raw there: no ``max(1, .)``; our brevity
penalty keeps the closest reference length, Google's uses the shortest).

Aggregates: ``standard`` (default; clipped multi-reference counts, and ``score_items`` gives
corpus BLEU over every hypothesis of every item), ``max`` and ``mean`` over single-reference
sentence BLEU (docs/algorithms.md#4-multiref-dd; ``score_items`` then averages item scores).

Conventions (option ``convention``, ``conv:`` in the signature): ``nltk`` (default, the formulas
above: NLTK's, which the papers we reproduce used); ``sacrebleu``: sacrebleu's ``corpus_bleu``
(its ``BLEU.compute_bleu`` on the same counts: raw n-gram counts as denominators, an order with
no n-gram gives 0; smoothing ``none``, ``exp``, ``floor``, ``add-k`` with sacrebleu's defaults;
segments are ``rstrip``-ed before tokenizing, and an item with fewer references than the
test set's most counts each missing one as an empty reference of length 0, as sacrebleu does
with reference streams padded with empty strings); ``nlgeval``: nlg-eval's BLEU, i.e.
pycocoevalcap's ``Bleu`` (``BleuScorer`` with ``option='closest'``: the 1e-15 / 1e-9 guards,
the geometric mean as a product raised to ``1/order``, no smoothing choice). Both peers take
uniform weights and always apply the brevity penalty; custom weights or ``brevity_penalty=False``
are refused under them.

Pure functions (:func:`ngram_counts`, :func:`max_ref_counts`, :func:`bleu_stats`,
:func:`sum_stats`, :func:`bleu_from_stats`) let callers precompute reference tables once.
"""

from __future__ import annotations

import math
import sys
from typing import NamedTuple, Sequence

from multiref.metrics._ngrams import clipped_matches, closest_ref_length, max_ref_counts, ngram_counts
from multiref.metrics.base import MAX_ORDER, Item, Metric, Score, check_order
from multiref.util.defaults import TOKENIZER

__all__ = [
    "BLEU", "BleuStats", "RefTable", "SMOOTHINGS", "ngram_counts", "max_ref_counts", "clipped_matches",
    "closest_ref_length", "ref_table", "bleu_stats", "sum_stats", "bleu_from_stats", "resolve_weights",
    "stat_order", "sentence_bleu", "sentence_scorer", "brevity_penalty_factor", "CONVENTIONS",
    "ALL_SMOOTHINGS", "convention_score", "sacrebleu_from_stats", "nlgeval_from_stats",
]

CONVENTIONS = ("nltk", "sacrebleu", "nlgeval")
DEFAULT_CONVENTION = "nltk"
#: the smoothings each convention offers (``none`` in all: exact BLEU, or pycocoevalcap's guards)
CONVENTION_SMOOTHINGS = {
    "nltk": ("none",) + tuple(f"nltk{i}" for i in range(8)) + ("add1",),
    "sacrebleu": ("none", "exp", "floor", "add-k"),
    "nlgeval": ("none",),
}
#: NLTK's (the default convention's) smoothings
SMOOTHINGS = CONVENTION_SMOOTHINGS["nltk"]
#: every smoothing name of some convention (the command line's choices)
ALL_SMOOTHINGS = SMOOTHINGS + ("exp", "floor", "add-k")

# SmoothingFunction() defaults in NLTK (Chen & Cherry 2014)
_EPSILON = 0.1
_ALPHA = 5
_K = 5


class RefTable(NamedTuple):
    """A reference set, counted once: per-order max-count dicts and the reference lengths."""

    max_counts: tuple
    lengths: tuple


class BleuStats(NamedTuple):
    """Sufficient statistics of one segment, or of a corpus (see :func:`sum_stats`).

    ``matches[n-1]``: clipped matches of order n; ``denominators``: ``max(1, hyp n-gram
    count)`` (NLTK), summed over segments; ``totals``: raw hyp n-gram counts (add1);
    ``hyp_len``/``ref_len``: hypothesis length and closest reference length (summed);
    ``last_hyp_len``/``last_p5``: the last segment's hypothesis length and order-5 precision
    ``(numerator, denominator)``, for NLTK's method5/6/7 (``None`` if not counted).
    """

    matches: tuple
    denominators: tuple
    totals: tuple
    hyp_len: int
    ref_len: int
    last_hyp_len: int
    last_p5: tuple | None


def resolve_weights(order: int = 4, weights: Sequence[float] | None = None) -> tuple:
    """Uniform weights ``1/order`` for n = 1..order, or the given custom weights (validated);
    at most :data:`~multiref.metrics.base.MAX_ORDER` orders either way."""
    if weights is None:
        order = check_order("bleu", order)
        return tuple(1.0 / order for _ in range(order))
    try:
        weights = tuple(float(w) for w in weights)
    except (TypeError, ValueError):
        raise ValueError(f"bleu: weights must be numbers, got {weights!r}") from None
    if len(weights) > MAX_ORDER:
        raise ValueError(f"bleu: at most {MAX_ORDER} weights, got {len(weights)}")
    if not weights or any(not math.isfinite(w) or w < 0 for w in weights) or not any(weights):
        raise ValueError(f"bleu: weights must be non-negative finite numbers, not all zero; got {weights!r}")
    return weights


def stat_order(n_weights: int, smoothing: str) -> int:
    """How many n-gram orders to count: the weights' length, at least 5 for nltk5/nltk7."""
    return max(n_weights, 5) if smoothing in ("nltk5", "nltk7") else n_weights


def ref_table(references: Sequence[Sequence[str]], max_order: int) -> RefTable:
    """Count a tokenized reference set once: :class:`RefTable`."""
    if not references:
        raise ValueError("bleu: no references")
    return RefTable(max_ref_counts(references, max_order), tuple(len(r) for r in references))


def bleu_stats(hyp_counts: tuple, hyp_len: int, table: RefTable) -> BleuStats:
    """Statistics of one hypothesis (``ngram_counts(hyp, k)``, its length) against a table.

    The number of orders is ``len(hyp_counts)`` (the table must have at least as many).
    """
    matches = tuple(clipped_matches(hc, rc) for hc, rc in zip(hyp_counts, table.max_counts))
    totals = tuple(max(0, hyp_len - n) for n in range(len(hyp_counts)))
    denominators = tuple(t if t > 0 else 1 for t in totals)
    p5 = (matches[4], denominators[4]) if len(matches) >= 5 else None
    return BleuStats(matches, denominators, totals, hyp_len, closest_ref_length(table.lengths, hyp_len), hyp_len, p5)


def sum_stats(segments: Sequence[BleuStats]) -> BleuStats:
    """Corpus statistics: sums over segments (NLTK ``corpus_bleu``), plus the last segment's extras."""
    if not segments:
        raise ValueError("bleu: no segments to score")
    k = len(segments[0].matches)
    matches, dens, totals = [0] * k, [0] * k, [0] * k
    hyp_len = ref_len = 0
    for s in segments:
        for i in range(k):
            matches[i] += s.matches[i]
            dens[i] += s.denominators[i]
            totals[i] += s.totals[i]
        hyp_len += s.hyp_len
        ref_len += s.ref_len
    last = segments[-1]
    return BleuStats(tuple(matches), tuple(dens), tuple(totals), hyp_len, ref_len, last.last_hyp_len, last.last_p5)


def _smoothed(stats: BleuStats, k: int, smoothing: str):
    """Precisions p_1..p_k after smoothing, or None when the score is 0 (no unigram match)."""
    nums = stats.matches[:k]
    dens = stats.denominators[:k]
    if smoothing == "add1":
        return [(m + 1.0) / (t + 1.0) for m, t in zip(nums, stats.totals[:k])]
    if nums[0] == 0:
        return None
    p = [m / d for m, d in zip(nums, dens)]
    if smoothing == "none" or smoothing == "nltk0":
        if smoothing == "nltk0":
            p = [pi if m != 0 else sys.float_info.min for pi, m in zip(p, nums)]
        return p
    if smoothing == "nltk1":
        return [(m + _EPSILON) / d if m == 0 else pi for pi, m, d in zip(p, nums, dens)]
    if smoothing == "nltk2":
        return [p[0]] + [(m + 1) / (d + 1) for m, d in zip(nums[1:], dens[1:])]
    if smoothing == "nltk3":
        inc = 1
        for i in range(k):
            if nums[i] == 0:
                p[i] = 1 / (2 ** inc * dens[i])
                inc += 1
        return p
    if smoothing in ("nltk4", "nltk7"):
        p = _method4(p, nums, dens, stats.hyp_len)
        if smoothing == "nltk4":
            return p
        return _method5(p, stats)
    if smoothing == "nltk5":
        return _method5(p, stats)
    if smoothing == "nltk6":
        for i in range(2, k):
            pi0 = 0 if p[i - 2] == 0 else p[i - 1] ** 2 / p[i - 2]
            n_grams = max(0, stats.last_hyp_len - i)
            p[i] = (nums[i] + _ALPHA * pi0) / (n_grams + _ALPHA)
        return p
    raise ValueError(f"bleu: unknown smoothing {smoothing!r}; choose one of: {', '.join(SMOOTHINGS)}")


def _method4(p, nums, dens, hyp_len):
    inc = 1
    for i in range(len(p)):
        if nums[i] == 0 and hyp_len > 1:
            numerator = 1 / (2 ** inc * _K / math.log(hyp_len))
            p[i] = numerator / dens[i]
            inc += 1
    return p


def _method5(p, stats):
    if stats.last_p5 is None:
        raise ValueError("bleu: nltk5/nltk7 smoothing needs order-5 statistics (use stat_order())")
    num5, den5 = stats.last_p5
    plus1 = p + [num5 / den5]
    prev = p[0] + 1
    for i in range(len(p)):
        p[i] = (prev + p[i] + plus1[i + 1]) / 3
        prev = p[i]
    return p


def brevity_penalty_factor(hyp_len: int, ref_len: int) -> float:
    """BLEU's brevity penalty: 1 if the hypothesis is longer than the (closest) reference,
    0 if it is empty, else ``exp(1 - r/c)``."""
    return 1.0 if hyp_len > ref_len else (0.0 if hyp_len == 0 else math.exp(1 - ref_len / hyp_len))


def bleu_from_stats(stats: BleuStats, weights: Sequence[float], smoothing: str = "none",
                    brevity_penalty: bool = True) -> float:
    """BLEU from :class:`BleuStats` (one segment or :func:`sum_stats` of a corpus).

    ``len(weights)`` orders are used; ``stats`` must hold at least that many (and 5 for
    nltk5/nltk7). Returns a float in [0, 1].
    """
    k = len(weights)
    if len(stats.matches) < k:
        raise ValueError(f"bleu: statistics have {len(stats.matches)} orders, weights need {k}")
    p = _smoothed(stats, k, smoothing)
    if p is None:
        return 0.0
    if smoothing == "none" and any(pi == 0 for pi, w in zip(p, weights) if w > 0):
        return 0.0
    bp = brevity_penalty_factor(stats.hyp_len, stats.ref_len) if brevity_penalty else 1.0
    s = math.fsum(w * math.log(pi) for w, pi in zip(weights, p) if pi > 0)
    return float(bp * math.exp(s))


def sacrebleu_from_stats(stats: BleuStats, order: int, smoothing: str = "none") -> float:
    """sacrebleu's BLEU of ``stats`` (its ``BLEU.compute_bleu`` on the clipped matches, the raw
    hypothesis n-gram counts and the two lengths, no effective order), divided by 100: the same
    float as ``sacrebleu.corpus_bleu(...).score / 100`` on the same counts."""
    from sacrebleu.metrics.bleu import BLEU as SacreBLEU

    k = order
    result = SacreBLEU.compute_bleu(list(stats.matches[:k]), list(stats.totals[:k]), int(stats.hyp_len),
                                    int(stats.ref_len), smooth_method=smoothing, max_ngram_order=k)
    return float(result.score / 100)


#: pycocoevalcap's BleuScorer guards: ``tiny`` on the numerators and the hypothesis length, ``small``
#: on the denominators and the reference length
_COCO_TINY = 1e-15
_COCO_SMALL = 1e-9


def nlgeval_from_stats(stats: BleuStats, order: int) -> float:
    """pycocoevalcap's BLEU-``order`` of ``stats`` (``BleuScorer.compute_score``: the product of the
    guarded precisions raised to ``1/order``, times ``exp(1 - 1/ratio)`` when the guarded length
    ratio is below 1), operation for operation, so the floats are the same."""
    bleu = 1.0
    for n in range(order):
        bleu *= float(stats.matches[n] + _COCO_TINY) / (stats.totals[n] + _COCO_SMALL)
    value = bleu ** (1.0 / order)
    ratio = (stats.hyp_len + _COCO_TINY) / (stats.ref_len + _COCO_SMALL)
    if ratio < 1:
        value *= math.exp(1 - 1 / ratio)
    return float(value)


def convention_score(stats: BleuStats, weights: Sequence[float], smoothing: str = "none",
                     brevity_penalty: bool = True, convention: str = DEFAULT_CONVENTION) -> float:
    """BLEU of ``stats`` under ``convention`` (:data:`CONVENTIONS`); ``nltk`` is :func:`bleu_from_stats`."""
    if convention == "nltk":
        return bleu_from_stats(stats, weights, smoothing, brevity_penalty)
    if convention == "sacrebleu":
        return sacrebleu_from_stats(stats, len(weights), smoothing)
    if convention == "nlgeval":
        return nlgeval_from_stats(stats, len(weights))
    raise ValueError(f"bleu: unknown convention {convention!r}; choose one of: {', '.join(CONVENTIONS)}")


def _stats_of(matches, hyp_len: int, ref_len: int, n_stats: int) -> BleuStats:
    totals = tuple(max(0, hyp_len - n) for n in range(n_stats))
    dens = tuple(t if t > 0 else 1 for t in totals)
    m = tuple(matches[:n_stats])
    return BleuStats(m, dens, totals, hyp_len, ref_len, hyp_len, (m[4], dens[4]) if n_stats >= 5 else None)


def sentence_scorer(weights: Sequence[float], smoothing: str = "none", brevity_penalty: bool = True,
                    convention: str = DEFAULT_CONVENTION):
    """A fast ``f(matches, hyp_len, ref_len) -> float`` for one segment.

    ``matches``: clipped matches per order (at least ``stat_order(len(weights), smoothing)``
    of them); ``ref_len``: the closest reference length. Gives bit-identical results to
    :func:`bleu_from_stats` (same operations in the same order), without building
    :class:`BleuStats`; ``none``, ``nltk1`` and ``add1`` have inlined paths, the other
    smoothings go through :func:`bleu_from_stats` (and the other conventions through
    :func:`convention_score`).
    """
    weights = tuple(weights)
    k = len(weights)
    check_smoothing("bleu", smoothing, convention)
    if convention != "nltk":
        return lambda matches, hyp_len, ref_len: convention_score(_stats_of(matches, hyp_len, ref_len, k), weights,
                                                                  smoothing, brevity_penalty, convention)
    log, exp, fsum = math.log, math.exp, math.fsum

    def bp(c, r):
        return brevity_penalty_factor(c, r) if brevity_penalty else 1.0

    if smoothing == "add1":
        def score(matches, hyp_len, ref_len):
            terms = [w * log((matches[i] + 1.0) / (max(0, hyp_len - i) + 1.0)) for i, w in enumerate(weights)]
            return float(bp(hyp_len, ref_len) * exp(fsum(terms)))
    elif smoothing in ("none", "nltk1"):
        exact = smoothing == "none"
        indexed = tuple(enumerate(weights))

        def score(matches, hyp_len, ref_len):
            if matches[0] == 0:
                return 0.0
            terms = []
            for i, w in indexed:
                m, t = matches[i], hyp_len - i
                if m:
                    terms.append(w * log(m / (t if t > 0 else 1)))
                elif exact:
                    if w > 0:
                        return 0.0  # p_i = 0 with a positive weight (a zero weight skips it)
                else:
                    terms.append(w * log((m + _EPSILON) / (t if t > 0 else 1)))
            factor = brevity_penalty_factor(hyp_len, ref_len) if brevity_penalty else 1.0
            return float(factor * exp(fsum(terms)))
    else:
        n_stats = stat_order(k, smoothing)

        def score(matches, hyp_len, ref_len):
            return bleu_from_stats(_stats_of(matches, hyp_len, ref_len, n_stats), weights, smoothing, brevity_penalty)
    return score


def sentence_bleu(hypothesis: Sequence[str], references: Sequence[Sequence[str]], weights=(0.25,) * 4,
                  smoothing: str = "none", brevity_penalty: bool = True) -> float:
    """Tokenized sentence BLEU in one call (counts everything; prefer tables in loops)."""
    k = stat_order(len(weights), smoothing)
    return bleu_from_stats(bleu_stats(ngram_counts(hypothesis, k), len(hypothesis), ref_table(references, k)),
                           weights, smoothing, brevity_penalty)


def check_smoothing(name: str, smoothing: str, convention: str = DEFAULT_CONVENTION) -> None:
    """ValueError unless ``convention`` is known and offers ``smoothing``, naming the choices."""
    if convention not in CONVENTIONS:
        raise ValueError(f"{name}: unknown convention {convention!r}; choose one of: {', '.join(CONVENTIONS)}")
    choices = CONVENTION_SMOOTHINGS[convention]
    if smoothing not in choices:
        where = "" if smoothing not in ALL_SMOOTHINGS else f" under convention {convention}"
        raise ValueError(f"{name}: unknown smoothing {smoothing!r}{where}; choose one of: {', '.join(choices)}")


def set_bleu_options(metric, order: int, weights, smoothing: str, brevity_penalty: bool,
                     convention: str = DEFAULT_CONVENTION) -> None:
    """Validate and set the BLEU-family options shared by bleu, maxbleu, mds and pds (these three
    keep NLTK's formulas: ``convention`` is for bleu, delta_bleu and self_bleu)."""
    check_smoothing(metric.name, smoothing, convention)
    if convention != "nltk" and weights is not None:
        raise ValueError(f"{metric.name}: convention {convention} takes uniform weights (use order), not weights")
    if convention != "nltk" and not brevity_penalty:
        raise ValueError(f"{metric.name}: convention {convention} always applies the brevity penalty")
    metric.custom_weights = weights is not None
    metric.weights = resolve_weights(order, weights)
    metric.order = len(metric.weights)
    metric.smoothing = smoothing
    metric.brevity_penalty = bool(brevity_penalty)
    metric.convention = convention


class BLEU(Metric):
    """Multi-reference BLEU (``bleu``). Options (all in the signature):

    - ``order`` (default 4): uniform weights 1/order over n = 1..order ("BLEU-2" = order 2);
    - ``weights``: custom per-order weights (override ``order``);
    - ``smoothing``: ``none`` (default), ``nltk0``..``nltk7``, ``add1`` (NLTK convention);
      ``none``, ``exp``, ``floor``, ``add-k`` (sacrebleu convention); ``none`` (nlgeval);
    - ``brevity_penalty`` (default True);
    - ``convention``: ``nltk`` (default), ``sacrebleu``, ``nlgeval`` (module docstring);
    - ``tokenizer``, ``lowercase``, ``aggregate`` (``standard`` default, ``max``, ``mean``).
    """

    name = "bleu"
    version = "1"
    aggregates = ("standard", "max", "mean")
    default_aggregate = "standard"

    def __init__(self, order: int = 4, weights: Sequence[float] | None = None, smoothing: str = "none",
                 brevity_penalty: bool = True, tokenizer: str = TOKENIZER, lowercase: bool = False,
                 aggregate: str | None = None, convention: str = DEFAULT_CONVENTION):
        super().__init__(tokenizer=tokenizer, lowercase=lowercase, aggregate=aggregate)
        set_bleu_options(self, order, weights, smoothing, brevity_penalty, convention)
        self.stat_order = stat_order(self.order, smoothing)

    # -- signature -----------------------------------------------------------------------
    def bleu_signature_fields(self) -> list:
        fields = [("order", self.order)]
        if self.custom_weights:
            fields.append(("weights", ",".join(f"{w:g}" for w in self.weights)))
        fields += [("smooth", self.smoothing), ("bp", "yes" if self.brevity_penalty else "no"),
                   ("conv", self.convention)]
        return fields

    def signature_fields(self) -> list:
        return super().signature_fields() + self.bleu_signature_fields()

    def __getstate__(self):  # pickles (Beam) stay small: the reference-table cache is rebuilt
        state = dict(self.__dict__)
        state.pop("_tables", None)
        return state

    def tokenize(self, text: str) -> list:
        """The metric's tokenizer; under the sacrebleu convention on ``text.rstrip()``, as sacrebleu."""
        if self.convention == "sacrebleu" and isinstance(text, str):
            text = text.rstrip()
        return super().tokenize(text)

    # -- precomputation ------------------------------------------------------------------
    def hyp_counts(self, tokens: Sequence[str]) -> tuple:
        """``ngram_counts`` of a tokenized hypothesis up to :attr:`stat_order`."""
        return ngram_counts(tokens, self.stat_order)

    def ref_table(self, references: Sequence[Sequence[str]]) -> RefTable:
        """A :class:`RefTable` of tokenized references up to :attr:`stat_order`."""
        return ref_table(references, self.stat_order)

    def stats(self, hyp: Sequence[str], references: Sequence[Sequence[str]]) -> BleuStats:
        return bleu_stats(self.hyp_counts(hyp), len(hyp), self.ref_table(references))

    def score_stats(self, stats: BleuStats) -> float:
        """BLEU with this metric's weights, smoothing, brevity penalty and convention."""
        return convention_score(stats, self.weights, self.smoothing, self.brevity_penalty, self.convention)

    def score_table(self, hyp_counts: tuple, hyp_len: int, table: RefTable) -> float:
        """Fast path: a precounted hypothesis against a precounted reference table."""
        return self.score_stats(bleu_stats(hyp_counts, hyp_len, table))

    # -- Metric interface ----------------------------------------------------------------
    def pair_score(self, hypothesis: list, reference: list) -> float:
        return self.score_stats(self.stats(hypothesis, [reference]))

    def multi_score(self, hypothesis: list, references: list) -> float:
        return self.score_stats(self.stats(hypothesis, references))

    def tokenized_sentence_score(self, hyp: list, refs: list) -> float:
        if not refs:
            raise ValueError(f"{self.name}: no references")
        return super().tokenized_sentence_score(hyp, refs)

    def item_score(self, item: Item) -> float:
        hyps, refs = self.tokenized_item(item)
        if self.aggregate == "standard":
            table = self.ref_table(refs)
            values = [self.score_table(self.hyp_counts(toks), len(toks), table) for toks in hyps]
        else:
            values = [self.tokenized_sentence_score(toks, refs) for toks in hyps]
        return sum(values) / len(values)

    def score_items(self, items: Sequence[Item]) -> Score:
        """``standard``: corpus BLEU over every hypothesis of every item (NLTK ``corpus_bleu``),
        ``per_item`` the mean sentence BLEU of each item; ``max``/``mean``: mean of item scores."""
        if not items:
            raise ValueError(f"{self.name}: no items to score")
        self._set_nrefs(items)
        if self.aggregate != "standard":
            return super().score_items(items)
        scorer = sentence_scorer(self.weights, self.smoothing, self.brevity_penalty, self.convention)  # = score_stats
        if self.convention == "sacrebleu":
            segments, per_item, item_stats = self._item_stats(items, scorer, _padding(items))
        elif _batchable(items):
            segments, per_item, item_stats = _batch_item_stats(self, items, scorer)
        else:
            segments, per_item, item_stats = self._item_stats(items, scorer)
        value = self.score_stats(sum_stats(segments))
        extra = {"items": len(items), "segments": len(segments), "sentence_mean": sum(per_item) / len(per_item)}
        return Score(self.name, float(value), self.signature, per_item, extra, item_stats)

    def resampling_stats(self, score: Score, items: Sequence[Item], vocabulary: dict | None = None):
        """Corpus BLEU: each item's summed :class:`BleuStats` (``standard``), else the item mean."""
        if score.item_stats is None:
            return super().resampling_stats(score, items, vocabulary)
        from multiref.metrics.resampling import bleu_item_stats

        return bleu_item_stats(self, score.item_stats, sum_stats(score.item_stats), (BleuStats, bleu_from_stats))

    def _item_stats(self, items: Sequence[Item], scorer, streams: int = 0) -> tuple:
        """``(segments, per_item, item_stats)`` of :meth:`score_items`, item by item. ``streams``: pad
        each item's reference lengths with zeros up to this many references (sacrebleu's padded streams)."""
        segments, per_item, item_stats = [], [], []
        previous, tables = (getattr(self, "_tables", {}), {}) if not streams else ({}, {})
        for item in items:
            if not item.hypotheses:
                raise ValueError(f"{self.name}: item {item.id!r} has no hypotheses")
            key = tuple(item.references)
            table = tables.get(key) or previous.get(key)
            if table is None:
                refs = [self.tokenize(r) for r in item.references]
                if not refs:
                    raise ValueError(f"{self.name}: item {item.id!r} has no references")
                table = self.ref_table(refs)
                if len(table.lengths) < streams:
                    table = table._replace(lengths=table.lengths + (0,) * (streams - len(table.lengths)))
            tables[key] = table
            scores = []
            start = len(segments)
            for h in item.hypotheses:
                toks = self.tokenize(h)
                st = bleu_stats(self.hyp_counts(toks), len(toks), table)
                segments.append(st)
                scores.append(scorer(st.matches, st.hyp_len, st.ref_len))
            per_item.append(sum(scores) / len(scores))
            item_stats.append(segments[start] if len(segments) == start + 1 else sum_stats(segments[start:]))
        if not streams:
            self._tables = tables  # several systems on the same references count them once
        return segments, per_item, item_stats


def _padding(items: Sequence[Item]) -> int:
    """The number of reference streams sacrebleu would get: the most references of an item."""
    return max((len(item.references) for item in items), default=0)


#: from this many items on, corpus BLEU counts clipped matches of a whole test set in numpy
BATCH_MIN_ITEMS = 64
#: the reference side of the last test set counted in batch, ``[(key, side)]`` (kept across systems)
_SIDE_MEMO: list = []


def _batchable(items: Sequence[Item]) -> bool:
    """Enough items, each with hypotheses and references, all strings (else the item-by-item
    path raises the errors)."""
    if len(items) < BATCH_MIN_ITEMS:
        return False
    return all(item.hypotheses and item.references and all(isinstance(t, str) for t in item.hypotheses)
               and all(isinstance(t, str) for t in item.references) for item in items)


def _batch_item_stats(metric: BLEU, items: Sequence[Item], scorer) -> tuple:
    """``(segments, per_item, item_stats)`` of :meth:`BLEU.score_items` with the clipped matches of
    all hypotheses from :func:`multiref.metrics._batch_matches.clipped_matches` (the references as
    one group per item, counted once per run); the same integers and floats as item by item."""
    from multiref.metrics._batch_matches import cached_side, clipped_matches, reference_side
    from multiref.metrics.tokenizers import tokenize_all

    k = metric.stat_order

    def build():
        refs = [tokenize_all(item.references, metric.tokenizer_name, metric.lowercase) for item in items]
        return reference_side([[r] for r in refs], k), [tuple(len(r) for r in item_refs) for item_refs in refs]

    side = cached_side(_SIDE_MEMO, (metric.tokenizer_name, metric.lowercase, k), [item.references for item in items],
                       tuple, build)
    hyps = tokenize_all([h for item in items for h in item.hypotheses], metric.tokenizer_name, metric.lowercase)
    owner = [i for i, item in enumerate(items) for _ in item.hypotheses]
    all_matches = clipped_matches(side[0], hyps, owner)[:, 0, :].tolist()
    ref_lengths, by_length = side[1], {}  # by_length: hyp_len -> (denominators, totals)
    segments, per_item, item_stats, row = [], [], [], 0
    for i, item in enumerate(items):
        scores, start = [], row
        for _ in item.hypotheses:
            hyp_len, matches = len(hyps[row]), tuple(all_matches[row])
            counts = by_length.get(hyp_len)
            if counts is None:
                totals = tuple(max(0, hyp_len - n) for n in range(k))
                counts = by_length[hyp_len] = (tuple(t if t > 0 else 1 for t in totals), totals)
            st = BleuStats(matches, counts[0], counts[1], hyp_len, closest_ref_length(ref_lengths[i], hyp_len),
                           hyp_len, (matches[4], counts[0][4]) if k >= 5 else None)
            segments.append(st)
            scores.append(scorer(st.matches, st.hyp_len, st.ref_len))
            row += 1
        per_item.append(sum(scores) / len(scores))
        item_stats.append(segments[start] if row == start + 1 else sum_stats(segments[start:]))
    return segments, per_item, item_stats
