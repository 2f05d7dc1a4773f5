"""Sugiyama et al.'s evaluators over many scored references (docs/algorithms.md#7-sugiyama-regression).

Each input sentence has many references (responses of several generating methods), each with
a human score: its *winning rate*, the share of pairwise judgments against the other
references of the same input that it won (all pairs, or a seeded sample of pairs).

Similarity s(T, R) of a target response T to a reference R (tokenized):
- ``bleu``: sentence BLEU-4 with NIST geometric smoothing (NLTK ``method3``; multiref's
  ``get_metric("bleu", smoothing="nltk3")``, NLTK's ``sentence_bleu`` if unavailable);
- ``ribes``: NLTK's ``sentence_ribes([R], T)`` (0 when it is undefined);
- ``wer``: 1 - NL, ``wer2``: 1 - 2 NL, NL = token Levenshtein distance / the longer length.

Estimators for a target T, given references R_1..R_N with scores e_1..e_N:
- ``AM``: mean of s(T, R_m) over the M most similar references (M = 3);
- ``WS``: mean of e_m * s(T, R_m) over the M most similar references;
- ``SVR``: scikit-learn ``SVR(kernel="rbf", C=5, gamma="scale")`` trained on the references
  themselves: the features of R_i are (s(R_i, R_1), ..., s(R_i, R_N)), its target e_i; T's
  features are (s(T, R_1), ..., s(T, R_N)).

Evaluation is leave-one-out per input sentence: each reference is scored by estimators built
from the other references of its input; the quality of an estimator is the Pearson
correlation of its predictions with the human scores over all references (sentence-wise)
and over the means per generating method (system-wise).

Python API::

    ev = RegressionEvaluator(similarity="bleu").fit(references, scores)
    ev.score("a new response")       # SVR estimate; ev.am(...), ev.ws(...) for the others
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass
from typing import Callable, Sequence

from multiref.analysis import stats
from multiref.util.errors import UserError, where
from multiref.util.defaults import TOKENIZER

SIMILARITIES = ("bleu", "ribes", "wer", "wer2")
ESTIMATORS = ("AM", "WS", "SVR")


# -- winning rates -----------------------------------------------------------------------

def all_pairs(n: int) -> list:
    """Every unordered pair ``(i, j)``, i < j, of n references."""
    return list(itertools.combinations(range(n), 2))


def sample_pairs(n: int, count: int, seed: int) -> list:
    """A seeded sample of ``count`` distinct unordered pairs (all pairs if count is larger)."""
    import numpy as np

    pairs = all_pairs(n)
    if count >= len(pairs):
        return pairs
    rng = np.random.Generator(np.random.PCG64(seed))
    chosen = sorted(rng.choice(len(pairs), size=count, replace=False).tolist())
    return [pairs[i] for i in chosen]


def winning_rates(n: int, judgments: Sequence[tuple]) -> list:
    """Winning rate of each of n references from ``(winner, loser)`` index judgments.

    A reference's rate is its wins over the judgments it took part in; a reference never
    judged gets 0.5 (no information). A tie can be given as ``(i, j, 0.5)``: half a win each.
    """
    wins = [0.0] * n
    games = [0] * n
    for judgment in judgments:
        winner, loser = judgment[0], judgment[1]
        share = float(judgment[2]) if len(judgment) > 2 else 1.0
        if winner == loser or not (0 <= winner < n and 0 <= loser < n):
            raise ValueError(f"winning_rates: bad judgment {judgment!r} for {n} references")
        wins[winner] += share
        wins[loser] += 1.0 - share
        games[winner] += 1
        games[loser] += 1
    return [w / g if g else 0.5 for w, g in zip(wins, games)]


def judge_by_quality(quality: Sequence[float], pairs: Sequence[tuple]) -> list:
    """``(winner, loser)`` judgments in which the higher ``quality`` wins (ties: half each)."""
    out = []
    for i, j in pairs:
        if quality[i] > quality[j]:
            out.append((i, j))
        elif quality[j] > quality[i]:
            out.append((j, i))
        else:
            out.append((i, j, 0.5))
    return out


# -- similarities ------------------------------------------------------------------------

def levenshtein(a: Sequence, b: Sequence) -> int:
    """Token edit distance (insertions, deletions, substitutions all cost 1)."""
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, start=1):
        current = [i]
        for j, y in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        previous = current
    return previous[-1]


def normalized_levenshtein(a: Sequence, b: Sequence) -> float:
    """NL: edit distance over the longer length, in [0, 1] (0 for two empty sentences)."""
    longest = max(len(a), len(b))
    return levenshtein(a, b) / longest if longest else 0.0


@functools.lru_cache(maxsize=None)
def _bleu_function() -> Callable:
    try:
        from multiref.metrics import get_metric

        metric = get_metric("bleu", smoothing="nltk3")
        return lambda t, r: float(metric.tokenized_sentence_score(list(t), [list(r)]))
    except (ImportError, ValueError):  # multiref's BLEU not installed: NLTK's (same numbers)
        from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

        method3 = SmoothingFunction().method3
        return lambda t, r: float(sentence_bleu([list(r)], list(t), smoothing_function=method3))


def _ribes(t: Sequence, r: Sequence) -> float:
    from nltk.translate.ribes_score import sentence_ribes

    try:
        return float(sentence_ribes([list(r)], list(t)))
    except (ZeroDivisionError, ValueError):
        return 0.0


def similarity_function(name: str) -> Callable:
    """``s(target_tokens, reference_tokens) -> float`` for a similarity name."""
    if name == "bleu":
        return _bleu_function()
    if name == "ribes":
        return _ribes
    if name == "wer":
        return lambda t, r: 1.0 - normalized_levenshtein(t, r)
    if name == "wer2":
        return lambda t, r: 1.0 - 2.0 * normalized_levenshtein(t, r)
    raise ValueError(f"unknown similarity {name!r}; choose one of: {', '.join(SIMILARITIES)}")


# -- estimators --------------------------------------------------------------------------

@dataclass(frozen=True)
class RegressionConfig:
    """Options of the evaluators (recorded in reports)."""

    similarity: str = "bleu"
    tokenizer: str = TOKENIZER
    lowercase: bool = False
    top_m: int = 3
    svr_c: float = 5.0


def top_m_indices(similarities: Sequence[float], m: int) -> list:
    """Indices of the m largest similarities (ties: the lower index first)."""
    order = sorted(range(len(similarities)), key=lambda j: (-similarities[j], j))
    return order[:m]


def am_score(similarities: Sequence[float], m: int = 3) -> float:
    """AM: mean similarity to the m most similar references."""
    top = top_m_indices(similarities, m)
    return sum(similarities[j] for j in top) / len(top)


def ws_score(similarities: Sequence[float], scores: Sequence[float], m: int = 3) -> float:
    """WS: mean of score x similarity over the m most similar references."""
    top = top_m_indices(similarities, m)
    return sum(scores[j] * similarities[j] for j in top) / len(top)


def fit_svr(features, targets, c: float = 5.0):
    """An RBF-kernel SVR (C = c, gamma "scale") fitted on the feature rows and targets."""
    from sklearn.svm import SVR

    model = SVR(kernel="rbf", C=c, gamma="scale")
    model.fit(features, targets)
    return model


class RegressionEvaluator:
    """Score new responses to one input sentence from its scored references (section 7).

    ``fit(references, scores)`` stores the references, computes their similarity matrix and
    trains the SVR; ``score(response)`` is the SVR estimate, ``am``/``ws`` the other two.
    """

    def __init__(self, similarity: str = "bleu", top_m: int = 3, C: float = 5.0, tokenizer: str = TOKENIZER,
                 lowercase: bool = False):
        from multiref.metrics.tokenizers import get_tokenizer

        if top_m < 1:
            raise ValueError(f"top_m must be at least 1, got {top_m}")
        self.similarity_name = similarity
        self._similarity = similarity_function(similarity)
        self._tokenize = get_tokenizer(tokenizer, lowercase)
        self.top_m = top_m
        self.C = C
        self.references: list = []
        self.scores: list = []
        self.model = None

    def fit(self, references: Sequence[str], scores: Sequence[float]) -> "RegressionEvaluator":
        if len(references) != len(scores):
            raise ValueError(f"fit: {len(references)} references but {len(scores)} scores")
        if len(references) < 2:
            raise ValueError("fit: need at least 2 scored references")
        self.references = [self._tokenize(r) for r in references]
        self.scores = [float(s) for s in scores]
        matrix = [[self._similarity(a, b) for b in self.references] for a in self.references]
        self.model = fit_svr(matrix, self.scores, self.C)
        return self

    def features(self, response: str) -> list:
        """Similarities of a response to every stored reference."""
        if self.model is None:
            raise ValueError("RegressionEvaluator: call fit() first")
        tokens = self._tokenize(response)
        return [self._similarity(tokens, r) for r in self.references]

    def score(self, response: str) -> float:
        features = self.features(response)  # ValueError before fit()
        return float(self.model.predict([features])[0])

    def am(self, response: str) -> float:
        return am_score(self.features(response), self.top_m)

    def ws(self, response: str) -> float:
        return ws_score(self.features(response), self.scores, self.top_m)


# -- data and leave-one-out --------------------------------------------------------------

@dataclass(frozen=True)
class ScoredReference:
    input: str
    reference: str
    method: str
    score: float
    id: str = ""


@dataclass(frozen=True)
class ScoredColumns:
    input: str = "input"
    reference: str = "reference"
    method: str = "method"
    score: str = "score"
    id: str = "id"


def _rows(path: str, what: str):
    from multiref.util.files import read_csv, read_jsonl, require_file

    require_file(path, what)
    if path.lower().endswith((".csv", ".tsv")):
        yield from read_csv(path, what)
    else:
        yield from read_jsonl(path, what)


def load_scored_references(path: str, columns: ScoredColumns = ScoredColumns(), judgments: str | None = None) -> list:
    """Read scored references (JSON lines or CSV: input, reference, method, score[, id]).

    With ``judgments`` (rows ``input, winner, loser``, naming references by id or by text),
    the score column may be absent: each reference's score becomes its winning rate.
    """
    from multiref.util.files import finite_number

    out = []
    for line, record in _rows(path, "scored references file"):
        for col in (columns.input, columns.reference, columns.method):
            if record.get(col) is None:
                raise UserError(f"{where(path, line)}: missing column {col!r}")
        raw = record.get(columns.score)
        if judgments is None:
            score = finite_number(raw, path, line, "score")
        else:
            score = float("nan")
        out.append(ScoredReference(str(record[columns.input]), str(record[columns.reference]),
                                   str(record[columns.method]), score, str(record.get(columns.id) or "")))
    if judgments is not None:
        out = _apply_judgments(out, judgments)
    return out


def _apply_judgments(refs: list, path: str) -> list:
    by_input: dict = {}
    for i, r in enumerate(refs):
        by_input.setdefault(r.input, []).append(i)
    names = {}
    for idxs in by_input.values():
        for pos, i in enumerate(idxs):
            names[(refs[i].input, refs[i].id or refs[i].reference)] = pos
            names.setdefault((refs[i].input, refs[i].reference), pos)
    judged: dict = {k: [] for k in by_input}
    for line, record in _rows(path, "judgments file"):
        key = str(record.get("input"))
        try:
            winner, loser = names[(key, str(record.get("winner")))], names[(key, str(record.get("loser")))]
        except KeyError:
            raise UserError(f"{where(path, line)}: winner/loser not among the references of input {key!r}") from None
        judged[key].append((winner, loser))
    out = list(refs)
    for key, idxs in by_input.items():
        rates = winning_rates(len(idxs), judged[key])
        for pos, i in enumerate(idxs):
            r = refs[i]
            out[i] = ScoredReference(r.input, r.reference, r.method, rates[pos], r.id)
    return out


def summary(data: Sequence[ScoredReference]) -> dict:
    return {"inputs": len({r.input for r in data}), "references": len(data), "methods": len({r.method for r in data})}


def leave_one_out(data: Sequence[ScoredReference], config: RegressionConfig = RegressionConfig()) -> dict:
    """Leave-one-out predictions of AM, WS and SVR for every reference, and their quality.

    Returns ``{"predictions": {estimator: [...]}, "correlations": {estimator: {"sentence":
    {"value", "p"}, "system": {"value", "p"}}}}``; predictions follow ``data``'s order.
    Inputs with fewer than 3 references cannot be left out of and raise ValueError.
    """
    from multiref.metrics.tokenizers import get_tokenizer

    tokenize = get_tokenizer(config.tokenizer, config.lowercase)
    sim = similarity_function(config.similarity)
    groups: dict = {}
    for i, r in enumerate(data):
        groups.setdefault(r.input, []).append(i)
    predictions = {e: [0.0] * len(data) for e in ESTIMATORS}
    for key, idxs in groups.items():
        if len(idxs) < 3:
            raise ValueError(f"input {key!r} has {len(idxs)} references; leave-one-out needs at least 3")
        tokens = [tokenize(data[i].reference) for i in idxs]
        scores = [data[i].score for i in idxs]
        matrix = [[sim(a, b) for b in tokens] for a in tokens]
        for t, i in enumerate(idxs):
            others = [j for j in range(len(idxs)) if j != t]
            target = [matrix[t][j] for j in others]
            other_scores = [scores[j] for j in others]
            predictions["AM"][i] = am_score(target, config.top_m)
            predictions["WS"][i] = ws_score(target, other_scores, config.top_m)
            model = fit_svr([[matrix[a][b] for b in others] for a in others], other_scores, config.svr_c)
            predictions["SVR"][i] = float(model.predict([target])[0])
    human = [r.score for r in data]
    methods = [r.method for r in data]
    human_means = stats.system_means(human, methods)
    correlations = {}
    for est, values in predictions.items():
        est_means = stats.system_means(values, methods)
        names = list(human_means)
        correlations[est] = {
            "sentence": stats.correlation(values, human, "pearson"),
            "system": stats.correlation([est_means[m] for m in names], [human_means[m] for m in names], "pearson"),
        }
    return {"predictions": predictions, "correlations": correlations}


def synthetic_scored_references(inputs: int = 8, per_method: int = 8, seed: int = 7, pairs: int | None = None) -> list:
    """A data set whose answer is known, for testing the evaluators.

    Per input sentence there are a "good" and a "bad" core of 6 words. Method ``good`` writes
    references from the good core (2 words replaced by fillers), ``bad`` from the bad core
    (1 word replaced, so bad references look alike), ``mixed`` from half of each. A
    reference's latent quality is its share of good-core words; scores are winning rates of
    judgments where the higher quality wins (all pairs, or ``pairs`` seeded pairs per input).
    AM, blind to scores, rates the look-alike bad references high; WS and SVR should not.
    """
    import numpy as np

    rng = np.random.Generator(np.random.PCG64(seed))
    out = []
    for k in range(inputs):
        good = [f"g{k}_{i}" for i in range(6)]
        bad = [f"b{k}_{i}" for i in range(6)]
        refs = []
        for method in ("good", "bad", "mixed"):
            for n in range(per_method):
                if method == "good":
                    words = list(good)
                    for pos in rng.choice(6, 2, replace=False):
                        words[pos] = f"f{int(rng.integers(0, 40))}"
                elif method == "bad":
                    words = list(bad)
                    words[int(rng.integers(0, 6))] = f"f{int(rng.integers(0, 40))}"
                else:
                    take = rng.choice(6, 3, replace=False)
                    words = [good[i] if i in take else bad[i] for i in range(6)]
                quality = sum(w in good for w in words) / 6 + float(rng.uniform(0, 0.01))
                refs.append((" ".join(words), method, quality))
        n_refs = len(refs)
        chosen = all_pairs(n_refs) if pairs is None else sample_pairs(n_refs, pairs, seed * 1000 + k)
        rates = winning_rates(n_refs, judge_by_quality([q for _, _, q in refs], chosen))
        for idx, ((text, method, _), rate) in enumerate(zip(refs, rates)):
            out.append(ScoredReference(f"input{k}", text, method, rate, f"{k}_{idx}"))
    return out
