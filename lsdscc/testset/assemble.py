"""LSDSCC multi-reference test set: sampling, candidate assembly, leak removal (docs/algorithms.md#2-lsdscc-test-set).

Pure functions over plain Python values, plus the reading and writing of dataset folders
(:mod:`multiref.output.hfdata`). The driver that chains them with Lucene and Doc2Vec is
:mod:`pipelines.lsdscc.testset`.

Rules (each a default that an option changes, every option recorded in the card):

- **Strata** (step 3): a query's response number is its number of pairs in the corpus
  (train + validation). Bounds ``(low, high) = (3, 5)`` give ``lt3`` (n < 3), ``3to5``
  (3 <= n <= 5) and ``gt5`` (n > 5).
- **Sampling**: within a stratum, queries are ordered by ``sha256("<seed>:<query_id>")`` and
  the first ``per_stratum`` are taken, skipping a query whose text was already taken (the
  public JSON is keyed by query text, so two equal texts would merge) and empty queries.
  The order does not depend on how the corpus is sharded or sorted.
- **Candidates** (step 4): the query's own responses first (by ``created_utc``, then pair
  id), then the responses of the kept similar queries, most similar (Doc2Vec cosine) first,
  each query's responses in the same order; never the same string twice, never the query's
  own text, never an empty string; at most ``references`` (15).
- **Small corpora**: at most ``max_share`` (0.5) of a stratum's queries are sampled, so the
  test set never takes a whole stratum and the training data keeps rows; when that is fewer
  than ``per_stratum``, the stage warns and the card says so (:func:`stratum_limits`).
- **Short queries**: a query with fewer than ``references`` candidates is kept with what it
  has and counted (``short_queries``); ``drop_short`` drops it instead (no replacement).
- **No leakage** (step 5): a single-turn pair is removed from train and validation when its
  query is a test query (same ``query_id``, reason ``test_query``), when its query text equals
  a test query's text (``test_query_text``), or when it is the source pair of a candidate
  reference (``test_reference``). A multi-turn conversation is dropped
  (``test_conversation``) when it contains a removed pair (a removed pair's response id
  after the first comment) or a test query followed by a reply.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

from multiref.util.errors import UserError
from multiref.util.options import option

CANDIDATES_CONFIG = "test_candidates"
GROUPED_CONFIG = "test_grouped"
LEAK_REASONS = ("test_query", "test_query_text", "test_reference")


@dataclass(frozen=True)
class SamplingConfig:
    """Stratified sampling and assembly options (docs/algorithms.md#2-lsdscc-test-set, steps 3 and 4)."""

    per_stratum: int = option(100, flag="--per-stratum", help="queries sampled per response-number stratum")
    bounds: tuple = option((3, 5), flag="--strata-bounds", metavar=("LOW", "HIGH"),
                           help="strata: fewer than LOW, LOW to HIGH, more than HIGH responses")
    references: int = option(15, flag="--references-per-query", help="candidate references per query")
    seed: int = option(1, flag="--testset-seed", help="seed of the sampling and of Doc2Vec")
    drop_short: bool = option(False, flag="--drop-short",
                              help="drop queries that cannot reach --references-per-query candidates (default: "
                                   "keep and count them)")
    max_share: float = option(0.5, flag="--max-stratum-share",
                              help="at most this share of a stratum's queries is sampled, so a small corpus keeps "
                                   "training rows")

    def __post_init__(self):
        low, high = self.bounds
        if not 1 <= low <= high:
            raise UserError(f"strata bounds must satisfy 1 <= low <= high, got {low} {high}")
        if self.per_stratum < 1 or self.references < 1:
            raise UserError("per-stratum and references per query must be at least 1")
        if not 0 < self.max_share < 1:
            raise UserError(f"--max-stratum-share must be above 0 and below 1, got {self.max_share}")

    def stratum(self, response_number: int) -> str:
        """The stratum name of a query with ``response_number`` responses."""
        low, high = self.bounds
        if response_number < low:
            return f"lt{low}"
        if response_number > high:
            return f"gt{high}"
        return f"{low}to{high}"

    @property
    def strata(self) -> tuple:
        low, high = self.bounds
        return (f"lt{low}", f"{low}to{high}", f"gt{high}")

    def options(self) -> dict:
        return {"per_stratum": self.per_stratum, "bounds": list(self.bounds), "references": self.references,
                "seed": self.seed, "drop_short": self.drop_short, "max_stratum_share": self.max_share}


@dataclass
class Query:
    """One corpus query: its text and its own pairs ``[(pair_id, response)]`` in order."""

    query_id: str
    text: str
    pairs: list = field(default_factory=list)


def candidates_schema():
    import pyarrow as pa

    candidate = pa.struct([
        ("text", pa.string()), ("source_pair_id", pa.string()), ("source_query", pa.string()),
        ("lucene_score", pa.float64()), ("doc2vec_cosine", pa.float64()), ("own", pa.bool_()),
    ])
    return pa.schema([
        ("id", pa.string()), ("query", pa.string()), ("query_id", pa.string()), ("stratum", pa.string()),
        ("response_number", pa.int64()), ("candidates", pa.list_(candidate)),
    ])


def grouped_schema():
    import pyarrow as pa

    return pa.schema([("id", pa.string()), ("query", pa.string()), ("groups", pa.list_(pa.list_(pa.string()))),
                      ("group_ids", pa.list_(pa.string()))])


# ---------------------------------------------------------------- pure steps


#: the single_turn columns the test-set stage reads, in :func:`group_pairs`' order
PAIR_COLUMNS = ("id", "query_id", "query", "response", "created_utc")


def queries_of_tables(tables) -> tuple:
    """``(queries, columns)`` of single_turn Arrow tables: :func:`group_pairs` of their
    :data:`PAIR_COLUMNS`, and those columns as lists (``{name: [values]}``, tables in order)."""
    cols: dict = {c: [] for c in PAIR_COLUMNS}
    for table in tables:
        for c in cols:
            cols[c].extend(table.column(c).to_pylist())
    return group_pairs(*(cols[c] for c in PAIR_COLUMNS)), cols


def group_pairs(pair_ids: Sequence[str], query_ids: Sequence[str], queries: Sequence[str],
                responses: Sequence[str], created: Sequence[int]) -> dict:
    """Group single-turn pairs (parallel columns) by ``query_id`` -> ``{query_id: Query}``.

    Each query's pairs are ordered by ``(created_utc, pair_id)``; the dict by ``query_id``.
    """
    order = sorted(range(len(pair_ids)), key=lambda i: (query_ids[i], created[i] or 0, pair_ids[i]))
    out: dict = {}
    for i in order:
        q = out.get(query_ids[i])
        if q is None:
            q = out[query_ids[i]] = Query(query_ids[i], queries[i])
        q.pairs.append((pair_ids[i], responses[i]))
    return out


def _rank(seed: int, query_id: str) -> str:
    return hashlib.sha256(f"{seed}:{query_id}".encode("utf-8")).hexdigest()


def _by_stratum(queries: Mapping[str, Query], config: SamplingConfig) -> dict:
    by_stratum: dict = {name: [] for name in config.strata}
    for query_id, q in queries.items():
        by_stratum[config.stratum(len(q.pairs))].append(query_id)
    return by_stratum


def stratum_limits(queries: Mapping[str, Query], config: SamplingConfig) -> dict:
    """``{stratum: queries to sample}``: ``per_stratum``, or fewer on a small corpus, where at
    most ``max_share`` of a stratum's queries may become test queries (module docstring)."""
    return {name: min(config.per_stratum, int(len(ids) * config.max_share))
            for name, ids in _by_stratum(queries, config).items()}


def sample_queries(queries: Mapping[str, Query], config: SamplingConfig, limits: Mapping[str, int] | None = None) -> dict:
    """Stratified sample: ``{stratum: [query_id, ...]}`` in sampling order (module docstring).

    ``limits`` (from :func:`stratum_limits`) caps each stratum; default ``per_stratum``."""
    by_stratum = _by_stratum(queries, config)
    taken_texts: set = set()
    out = {}
    for name in config.strata:
        chosen = []
        limit = config.per_stratum if limits is None else limits[name]
        for query_id in sorted(by_stratum[name], key=lambda qid: _rank(config.seed, qid)):
            if len(chosen) >= limit:
                break
            text = queries[query_id].text
            if not text.strip() or text in taken_texts:
                continue
            taken_texts.add(text)
            chosen.append(query_id)
        out[name] = chosen
    return out


def small_corpus_limits(queries: Mapping[str, Query], sampling: SamplingConfig, counts: dict, progress) -> dict:
    """Per-stratum sample sizes (:func:`stratum_limits`); on a corpus too small
    for ``--per-stratum`` a warning (through ``progress``) and a note for the card in ``counts``."""
    limits = stratum_limits(queries, sampling)
    if all(n >= sampling.per_stratum for n in limits.values()):
        return limits
    sizes = ", ".join(f"{name} {n}" for name, n in limits.items())
    if not any(limits.values()):
        raise UserError(f"the corpus has too few distinct queries ({len(queries)}) for a test set: at most "
                        f"{sampling.max_share:g} of each response-number stratum may be sampled; build with "
                        "--skip-testset, or from a larger corpus")
    note = (f" Small corpus: {sizes} queries were sampled instead of {sampling.per_stratum} per stratum (at most "
            f"{sampling.max_share:g} of a stratum's {len(queries):,} queries in all, --max-stratum-share), so "
            "the training data keeps rows.")
    progress(f"warning: the corpus is small ({len(queries):,} distinct queries): sampling {sizes} queries instead of "
              f"{sampling.per_stratum} per stratum (at most {sampling.max_share:g} of each stratum; --max-stratum-share)")
    counts["small_corpus_note"] = note
    return limits


def check_training_kept(train, removed: Mapping, test_queries: int) -> None:
    """UserError when leak removal would leave single_turn train with no rows."""
    if train is not None and train.num_rows and len(removed) >= train.num_rows:
        raise UserError(f"the test set would leave single_turn train empty: its {test_queries} queries, the pairs "
                        f"sharing their text and their candidates' source pairs are all {train.num_rows} training "
                        "pairs; lower --per-stratum or --max-stratum-share (or --references-per-query), or build "
                        "with --skip-testset")


def assemble_candidates(query: Query, neighbours: Sequence[tuple], limit: int) -> list:
    """The candidate references of one query (module docstring, step 4).

    ``neighbours`` are ``(Query, lucene_score, doc2vec_cosine)``, most similar first.
    Returns dicts with the ``test_candidates`` candidate fields, at most ``limit``.
    """
    seen = {query.text}
    out: list = []

    def add(source: Query, lucene, cosine, own):
        for pair_id, text in source.pairs:
            if len(out) >= limit:
                return
            if not text.strip() or text in seen:
                continue
            seen.add(text)
            out.append({"text": text, "source_pair_id": pair_id, "source_query": source.text,
                        "lucene_score": lucene, "doc2vec_cosine": cosine, "own": own})

    add(query, None, None, True)
    for neighbour, lucene, cosine in neighbours:
        if len(out) >= limit:
            break
        add(neighbour, lucene, cosine, False)
    return out


def used_pairs(rows: Iterable[Mapping]) -> dict:
    """What a test set uses, from its ``test_candidates`` rows: query ids, query texts and
    the source pair ids of its candidate references."""
    query_ids, texts, pair_ids = set(), set(), set()
    for row in rows:
        query_ids.add(row["query_id"])
        texts.add(row["query"])
        pair_ids.update(c["source_pair_id"] for c in row["candidates"])
    return {"query_ids": query_ids, "query_texts": texts, "pair_ids": pair_ids}


def leak_reason(pair_id: str, query_id: str, query: str, used: Mapping) -> str | None:
    """Why a single-turn pair must leave train/validation (a LEAK_REASONS name), or None."""
    if query_id in used["query_ids"]:
        return "test_query"
    if query in used["query_texts"]:
        return "test_query_text"
    if pair_id in used["pair_ids"]:
        return "test_reference"
    return None


def leak_reasons_batch(pair_ids, query_ids, queries, used: Mapping) -> list:
    """:func:`leak_reason` for whole Arrow arrays at once (vectorized); a list, one per row."""
    import pyarrow as pa
    import pyarrow.compute as pc

    def member(values, pool):
        return pc.is_in(values, value_set=pa.array(sorted(pool), type=pa.string())).fill_null(False).to_pylist()

    by_id, by_text, by_pair = (member(query_ids, used["query_ids"]), member(queries, used["query_texts"]),
                               member(pair_ids, used["pair_ids"]))
    return ["test_query" if a else "test_query_text" if b else "test_reference" if c else None
            for a, b, c in zip(by_id, by_text, by_pair)]


def conversation_leaks(comment_ids: Sequence[str], removed_pair_ids: set, test_query_ids: set) -> bool:
    """True when a multi-turn conversation contains a removed pair or a test query's reply."""
    ids = list(comment_ids)
    return any(c in removed_pair_ids for c in ids[1:]) or any(c in test_query_ids for c in ids[:-1])


# ---------------------------------------------------------------- dataset folder I/O


def config_files(folder: str, config: str) -> dict:
    """``{split: [parquet paths]}`` of a config of a dataset folder (from dataset_meta.json)."""
    from multiref.output import hfdata

    meta = hfdata.load_meta(folder)
    if config not in meta.get("configs", {}):
        raise UserError(f"{folder} has no {config!r} config (dataset_meta.json); build the corpus first")
    out = {}
    for split, pattern in sorted(meta["configs"][config]["data_files"].items()):
        files = sorted(glob.glob(os.path.join(folder, pattern)))
        if not files:
            raise UserError(f"{folder}: config {config!r} split {split!r} has no files matching {pattern}")
        out[split] = files
    return out


def read_table(paths: Sequence[str]):
    """Concatenate parquet files into one Arrow table (UserError if one is unreadable)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    tables = []
    for path in paths:
        try:
            tables.append(pq.read_table(path))
        except Exception as exc:  # noqa: BLE001 - arrow errors of a broken file
            raise UserError(f"cannot read parquet file {path}: {exc}") from None
    return pa.concat_tables(tables) if tables else None


def fingerprint(paths: Iterable[str], root: str) -> str:
    """sha256 over the relative names and bytes of ``paths`` (the corpus the cache keys on)."""
    digest = hashlib.sha256()
    for path in sorted(paths):
        digest.update(os.path.relpath(path, root).encode("utf-8") + b"\0")
        with open(path, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                digest.update(chunk)
    return digest.hexdigest()


def options_hash(payload: Mapping) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode("utf-8")).hexdigest()[:16]


def candidate_rows(sample: Mapping[str, list], queries: Mapping[str, Query], candidates: Mapping[str, list]) -> list:
    """``test_candidates`` rows, stratum by stratum in sampling order."""
    rows = []
    for stratum, query_ids in sample.items():
        for query_id in query_ids:
            if query_id not in candidates:
                continue
            q = queries[query_id]
            rows.append({"id": query_id, "query": q.text, "query_id": query_id, "stratum": stratum,
                         "response_number": len(q.pairs), "candidates": candidates[query_id]})
    return rows


def read_candidates(folder: str) -> list:
    """The ``test_candidates`` rows of a dataset folder, as dicts in file order."""
    files = config_files(folder, CANDIDATES_CONFIG)
    table = read_table(files.get("test", []))
    if table is None:
        raise UserError(f"{folder}: {CANDIDATES_CONFIG} has no test split")
    return table.to_pylist()
