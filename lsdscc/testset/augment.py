"""Candidate references for any test set, grown from a training corpus (docs/algorithms.md section 2).

LSDSCC's test-set method (steps 1, 2 and 4) applied to a test set that is not part of the
corpus: every distinct context of the corpus is a Lucene document; each test context's
``top_k`` most similar corpus contexts are re-ranked by the cosine of their Doc2Vec vectors
and kept at or above ``threshold``; the responses of the kept contexts, most similar first,
are the test context's candidate references (at most ``max_candidates``). Pure functions
over plain values; the driver that runs Lucene and Doc2Vec is :mod:`pipelines.augment.job`,
with the code of the LSDSCC test-set stage (:mod:`lsdscc.testset.retrieval`, :mod:`lsdscc.testset.doc2vec`,
:func:`lsdscc.testset.assemble.assemble_candidates`).

Rules (each recorded in the card):

- **What is matched**: a context's *retrieval text* is its last ``context_turns`` turns
  joined by a space (default 1: the turn a response answers, as LSDSCC's single-turn
  queries; 0: every turn). Corpus pairs with the same retrieval text form one Lucene
  document, whose responses are ordered by pair id.
- **Doc2Vec**: trained on the corpus's retrieval texts and responses plus the test set's
  retrieval texts (never its references), so every context compared has a trained vector
  (:mod:`lsdscc.testset.doc2vec`'s decision); the test set's contexts are inputs, not answers.
- **No leakage**: candidates come only from the corpus split given; a candidate whose text
  equals one of the test item's own references (casefolded, whitespace collapsed) is
  dropped (``dropped_equal_to_reference``); a corpus pair whose whole context equals the
  test item's whole context (the same context found in the corpus: a duplicated
  dialogue, or the test split given as corpus) is never used (``dropped_own_context``); a
  candidate equal to the retrieval text itself, an empty one or a repeated one is skipped,
  as in LSDSCC's step 4.
- **Outputs**: ``test_candidates`` (LSDSCC's schema: annotate it with ``multiref lsdscc
  annotate``; ``own`` is always false, the test item's references are not candidates;
  ``stratum`` is ``augment``, ``response_number`` the number of original references) and
  ``test_auto`` (the original references, then every candidate: an ungrouped
  multi-reference set with no human check).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Mapping, Sequence

from lsdscc.testset.assemble import Query, assemble_candidates
from multiref.util.errors import UserError
from multiref.util.options import option

CANDIDATES_CONFIG = "test_candidates"
AUTO_CONFIG = "test_auto"
STRATUM = "augment"
CONTEXT_SEPARATOR = " __eou__ "  # how a multi-turn context is shown as one `query` string (DailyDialog's)
CONTEXT_COLUMNS = ("context", "query")
REFERENCE_COLUMNS = ("references", "response")


@dataclass(frozen=True)
class AugmentConfig:
    """Options of the assembly (the Lucene and Doc2Vec options are their own configs)."""

    max_candidates: int = option(15, flag="--max-candidates", metavar="M",
                                 help="candidate references per test context at most (the paper's 15)")
    context_turns: int = option(1, flag="--context-turns", metavar="N",
                                help="match the last N turns of a context (0: all; 1: the answered turn, "
                                     "as LSDSCC's single-turn queries)")
    min_candidates: int = option(5, flag="--min-candidates", metavar="F",
                                 help="a context with fewer than F candidates at --threshold gets its best F at "
                                      "Doc2Vec cosine >= --floor-threshold (0: the paper's rule, --threshold only)")
    floor_threshold: float = option(0.5, flag="--floor-threshold", metavar="L", low=-1.0, high=1.0,
                                    help="the cosine the --min-candidates floor goes down to")

    def __post_init__(self):
        if self.max_candidates < 1:
            raise UserError(f"--max-candidates must be at least 1, got {self.max_candidates}")
        if self.min_candidates < 0:
            raise UserError(f"--min-candidates must be 0 (no floor) or more, got {self.min_candidates}")
        if self.context_turns < 0:
            raise UserError(f"--context-turns must be 0 (all turns) or more, got {self.context_turns}")

    def options(self) -> dict:
        return {"max_candidates": self.max_candidates, "context_turns": self.context_turns,
                "min_candidates": self.min_candidates, "floor_threshold": self.floor_threshold}

    def lowest(self, threshold: float) -> float:
        """The lowest cosine any candidate may have: ``threshold``, or the floor's when lower."""
        return min(threshold, self.floor_threshold) if self.min_candidates else threshold


@dataclass(frozen=True)
class Item:
    """One context of a dataset: ``id``, its turns, and its references (test) or response (corpus)."""

    id: str
    turns: tuple
    references: tuple


def text_key(text: str) -> str:
    """How two texts are compared by the leakage rules: casefolded, whitespace collapsed."""
    return " ".join(text.split()).casefold()


def context_key(turns: Sequence[str]) -> str:
    """The comparison key of a whole context (every turn, :func:`text_key`)."""
    return "\n".join(text_key(t) for t in turns)


def retrieval_text(turns: Sequence[str], context_turns: int) -> str:
    """The text matched against the corpus: the last ``context_turns`` turns (0: all), spaces collapsed."""
    chosen = turns[-context_turns:] if context_turns else turns
    return " ".join(" ".join(chosen).split())


def items_from_columns(table, where: str, *, references: bool, names=None) -> list:
    """The :class:`Item` rows of a table (an Arrow table, or :class:`multiref.util.tables.Rows`)
    with an ``id`` column (else the row number), a context column (``context``: a list of turns
    or a string; or ``query``) and, with ``references``, a ``references`` list or a ``response``
    string (else a ``response``); ``names`` (:class:`multiref.util.tables.ColumnNames`) renames
    them. UserError naming ``where`` and the columns it has when one is missing, or an id repeats."""
    from multiref.util.tables import ColumnNames, Rows, pick, shown

    names = names or ColumnNames()
    if not isinstance(table, Rows):
        table = Rows(where, list(table.column_names), table.to_pylist())
    columns = table.columns
    context = pick(where, columns, names.context, CONTEXT_COLUMNS, "--context-column", "the context")
    answers = REFERENCE_COLUMNS if references else ("response",)
    given = (names.references[0] if names.references else None) if references else None
    answer = pick(where, columns, given or names.response, answers,
                  "--references-column" if given else "--response-column", "the references or response")
    if context is None or answer is None:
        raise UserError(f"{where}: needs a context column ({' or '.join(CONTEXT_COLUMNS)}, or --context-column) and a "
                        f"{' or '.join(answers)} column (or --response-column); it has {shown(columns)}")
    id_column = pick(where, columns, names.id, ("id",), "--id-column", "the item id")
    ids = [str(v) for v in table.values(id_column)] if id_column else [str(i) for i in range(len(table.rows))]
    if len(set(ids)) != len(ids):
        raise UserError(f"{where}: the id column repeats a value; each row needs its own id")
    out = []
    for row_id, ctx, ans in zip(ids, table.values(context), table.values(answer)):
        turns = tuple(_text(t) for t in ctx) if isinstance(ctx, list) else (_text(ctx),)
        answers_ = [_text(a) for a in ans] if isinstance(ans, list) else [_text(ans)]
        refs = tuple(a for a in answers_ if a.strip())
        out.append(Item(row_id, turns, refs))
    return out


def _text(value) -> str:
    """A cell as text: None is empty, anything else its ``str``."""
    return "" if value is None else str(value)


def corpus_queries(corpus: Sequence[Item], context_turns: int) -> tuple:
    """Group corpus pairs by retrieval text -> ``(queries {query_id: Query}, pair_id -> context key)``. A query's id is ``q<n>``, n its text's rank among the sorted
    distinct texts; its pairs ``(pair id, response)`` are sorted by pair id."""
    by_text: dict = {}
    contexts: dict = {}
    for item in corpus:
        response = item.references[0] if item.references else ""
        by_text.setdefault(retrieval_text(item.turns, context_turns), []).append((item.id, response))
        contexts[item.id] = context_key(item.turns)
    ids = {text: f"q{n}" for n, text in enumerate(sorted(by_text))}
    queries = {ids[text]: Query(ids[text], text, sorted(pairs)) for text, pairs in by_text.items()}
    return queries, contexts


def neighbour_queries(item: Item, ranked: Sequence[tuple], contexts: Mapping[str, str], counts: dict) -> list:
    """``ranked`` (``(Query, lucene score, cosine)``, most similar first) with the pairs the
    leakage rules forbid for ``item`` removed (module docstring), counted in ``counts``."""
    own_context = context_key(item.turns)
    references = {text_key(r) for r in item.references}
    out = []
    for query, lucene, cosine in ranked:
        pairs = []
        for pair_id, response in query.pairs:
            if contexts.get(pair_id) == own_context:
                counts["dropped_own_context"] = counts.get("dropped_own_context", 0) + 1
            elif text_key(response) in references:
                counts["dropped_equal_to_reference"] = counts.get("dropped_equal_to_reference", 0) + 1
            else:
                pairs.append((pair_id, response))
        if pairs:
            out.append((Query(query.query_id, query.text, pairs), lucene, cosine))
    return out


def candidates_for(item: Item, ranked: Sequence[tuple], contexts: Mapping[str, str], config: AugmentConfig,
                   counts: dict, threshold: float | None = None) -> list:
    """The candidate references of one test item (``test_candidates`` candidate dicts), from
    ``ranked`` neighbours at or above :meth:`AugmentConfig.lowest`: those of the neighbours at or
    above ``threshold`` (None: all of ``ranked``), or, when they are fewer than
    ``min_candidates``, the best ``min_candidates`` of all (``filled_by_floor`` counts them)."""
    neighbours = neighbour_queries(item, ranked, contexts, counts)
    own = Query(item.id, retrieval_text(item.turns, config.context_turns), [])
    found = assemble_candidates(own, neighbours, config.max_candidates)
    strict = len(found) if threshold is None else sum(1 for c in found if c["doc2vec_cosine"] >= threshold)
    if strict >= config.min_candidates or len(found) == strict:
        return found[:strict]
    counts["filled_by_floor"] = counts.get("filled_by_floor", 0) + 1
    return found[:max(strict, config.min_candidates)]


def candidate_row(item: Item, candidates: list) -> dict:
    """One ``test_candidates`` row (LSDSCC's schema, :func:`lsdscc.testset.assemble.candidates_schema`)."""
    return {"id": item.id, "query": CONTEXT_SEPARATOR.join(item.turns), "query_id": item.id, "stratum": STRATUM,
            "response_number": len(item.references), "candidates": candidates}


def auto_row(item: Item, candidates: list) -> dict:
    """One ``test_auto`` row: the original references, then the candidates' texts."""
    return {"id": item.id, "context": list(item.turns), "references": list(item.references) + [c["text"] for c in candidates],
            "original_references": len(item.references)}


def auto_schema():
    import pyarrow as pa

    strings = pa.list_(pa.string())
    return pa.schema([("id", pa.string()), ("context", strings), ("references", strings),
                      ("original_references", pa.int64())])


def per_item_histogram(rows: Sequence[Mapping]) -> dict:
    """``{"<n>": items with n candidates}`` (keys as strings, for the card's JSON)."""
    out: dict = {}
    for row in rows:
        n = len(row["candidates"])
        out[str(n)] = out.get(str(n), 0) + 1
    return dict(sorted(out.items(), key=lambda kv: int(kv[0])))


def test_query_id(item_id: str) -> str:
    """The id a test item is searched under: never a corpus query's ``q<n>``, so Lucene's
    self-exclusion (by id) never removes a corpus context from a test item's hits."""
    return "t" + hashlib.sha1(item_id.encode("utf-8")).hexdigest()[:16]
