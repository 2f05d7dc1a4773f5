"""Grow candidate references for a test set from a training corpus (docs/algorithms.md section 2).

The driver step of ``multiref augment``: LSDSCC's test-set method (Lucene top-k similar
contexts, Doc2Vec re-ranking with a threshold, the kept contexts' responses as candidates)
with the code of the LSDSCC test-set stage (:mod:`pipelines.lsdscc.testset`): the same
Lucene index and search (:mod:`lsdscc.testset.retrieval`), the same Doc2Vec training and re-ranking
(:mod:`lsdscc.testset.doc2vec`), the same candidate assembly (:mod:`lsdscc.testset.assemble`); the rules of
this use are in :mod:`lsdscc.testset.augment`. Like that stage, it runs on the driver: the index and
the model are single artifacts over the whole corpus. Both are built in a temporary folder
and deleted afterwards (they are not part of the output).

Input: two dataset folders (ours, with ``dataset_meta.json``, or any parquet folder; a config
and a split each) or table files (``.jsonl``, ``.json``, ``.csv``, ``.tsv``, ``.parquet``;
:mod:`multiref.util.tables`). Output (written into ``folder``): configs ``test_candidates`` and
``test_auto`` (split ``test``) and their card::

    multiref augment --corpus out/dd --corpus-config contexts --corpus-split train \\
        --test out/dd --test-config contexts --test-split test --output out/dd-augmented
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass

from lsdscc.testset import augment as aug
from lsdscc.testset.doc2vec import Doc2VecConfig
from lsdscc.testset.retrieval import RetrievalConfig
from multiref.util.errors import UserError
from multiref.util.tables import ColumnNames

CARD_SECTION = """\
Built by `multiref augment` (LSDSCC's test-set method, docs/algorithms.md section 2, applied to a test
set outside the corpus): every distinct context of the corpus split indexed with Lucene; for each
test context the `top_k` most similar corpus contexts (TF-IDF by default), re-ranked by the cosine
of their Doc2Vec vectors and kept at or above the threshold; their responses, most similar context
first, are the candidates. A context with fewer than `min_candidates` candidates gets its best
`min_candidates` among the contexts at or above `floor_threshold` (`filled_by_floor` counts them;
`min_candidates` 0 is LSDSCC's rule); `coverage` is the share of test items with any candidate. Leakage rules: candidates only from the corpus split; none equal to one
of the test item's references; a corpus pair with the test item's own context is never used.
`test_candidates` is in the LSDSCC schema (annotate it with `multiref lsdscc annotate export`);
`test_auto` holds the original references followed by every candidate, unchecked by people.
"""


@dataclass(frozen=True)
class Source:
    """One input: a dataset ``folder`` (with its ``config`` and ``split``; None: the only one) or
    a table file (``.jsonl``, ``.json``, ``.csv``, ``.tsv``, ``.parquet``); ``role`` names its
    flags in messages (``corpus``: ``--corpus-config``); ``columns`` renames its columns."""

    folder: str
    config: str | None = None
    split: str | None = None
    role: str = "corpus"
    columns: ColumnNames = ColumnNames()

    def card(self, fingerprint: str) -> dict:
        out = {"dataset": os.path.basename(os.path.normpath(self.folder)), "config": self.config,
               "split": self.split, "sha256": fingerprint}
        return {**out, **self.columns.options()}


def _note(message: str) -> None:
    from multiref.util import progress

    if not progress.quiet():
        print(f"[augment] {message}", file=sys.stderr, flush=True)


def read_rows(source: Source) -> tuple:
    """``(rows, where, fingerprint of the files read, the source with its config and split
    resolved)`` of ``source`` (UserError naming it)."""
    from dataclasses import replace

    from lsdscc.testset import assemble as ts
    from multiref.util import tables

    flags = (f"--{source.role}-config", f"--{source.role}-split")
    if os.path.isfile(source.folder):
        if source.config is not None or source.split is not None:
            raise UserError(f"{source.folder}: {flags[0]}/{flags[1]} only apply to a dataset folder, not to a file")
        rows = tables.read_rows(source.folder, f"--{source.role} file")
        files, root, where = [source.folder], os.path.dirname(os.path.abspath(source.folder)), source.folder
    elif os.path.isdir(source.folder):
        choices = tables.folder_choices(source.folder)
        config, split = tables.choose(source.folder, choices, source.config, source.split, flags)
        source = replace(source, config=config, split=split)
        where = f"{source.folder} {config}/{split}"
        files, root = choices[config][split], source.folder
        rows = tables.read_files(files, where, f"--{source.role} file")
    else:
        raise UserError(f"--{source.role} {source.folder}: no such file or dataset folder")
    return rows, where, ts.fingerprint(files, root), source


def own_names(names: ColumnNames, columns, other) -> ColumnNames:
    """The column names for one input: a name given for the other input only (absent here, present
    there) falls back to this input's usual names; one absent from both stays (and is an error)."""
    from dataclasses import replace

    def mine(name):
        return None if name is not None and name not in columns and name in other else name

    refs = tuple(n for n in names.references if mine(n) is not None)
    return replace(names, context=mine(names.context), response=mine(names.response), id=mine(names.id),
                   references=refs)


def read_items(corpus: Source, test: Source) -> tuple:
    """``((corpus items, fingerprint, resolved source), (test items, ...))``; the column flags
    apply to both inputs (:func:`own_names`)."""
    read = [read_rows(corpus), read_rows(test)]
    out = []
    for (rows, where, fingerprint, source), (other, *_rest) in zip(read, reversed(read)):
        names = own_names(source.columns, rows.columns, other.columns)
        items = aug.items_from_columns(rows, where, references=source is read[1][3], names=names)
        out.append((items, fingerprint, source))
    return tuple(out)


def retrieve(queries: dict, test: list, config: aug.AugmentConfig, retrieval: RetrievalConfig, workdir: str,
             seconds: dict) -> dict:
    """Index the corpus queries in ``workdir`` and search every test item's retrieval text;
    ``{test query id: [Hit]}`` (plain Python, every Java object released)."""
    from lsdscc.testset import retrieval as lucene

    start = time.perf_counter()
    index_dir = os.path.join(workdir, "lucene-index")
    lucene.build_index(((qid, queries[qid].text) for qid in sorted(queries)), index_dir, retrieval)
    seconds["lucene_index"] = time.perf_counter() - start
    start = time.perf_counter()
    searches = [(aug.test_query_id(item.id), aug.retrieval_text(item.turns, config.context_turns)) for item in test]
    hits = lucene.neighbours(index_dir, searches, retrieval)
    seconds["lucene_search"] = time.perf_counter() - start
    return hits


def rerank_and_assemble(queries: dict, contexts: dict, corpus_responses, test: list, hits: dict,
                        config: aug.AugmentConfig, d2v: Doc2VecConfig, workdir: str, counts: dict,
                        seconds: dict) -> list:
    """Train Doc2Vec (corpus texts and responses, test retrieval texts), keep the hits at or
    above the threshold, assemble each test item's candidates; ``[(item, candidates)]``."""
    from lsdscc.testset import doc2vec, doc2vec_parts

    start = time.perf_counter()
    test_texts = [aug.retrieval_text(item.turns, config.context_turns) for item in test]
    query_texts = sorted({q.text for q in queries.values()} | set(test_texts))
    compared = set(test_texts) | {queries[h.query_id].text for found in hits.values() for h in found}
    training = doc2vec.select_training(query_texts, corpus_responses, d2v, compared)
    vectors = doc2vec_parts.vectors_of(doc2vec_parts.train_vectors(training, d2v, workdir, compared), training)
    seconds["doc2vec_train"] = time.perf_counter() - start
    counts["doc2vec_sentences"] = training.size
    if training.sampled:  # the card says so (an unsampled build keeps its bytes)
        counts.update(training.counts())
    start = time.perf_counter()
    out, kept = [], 0
    for item, text in zip(test, test_texts):
        found = hits.get(aug.test_query_id(item.id), [])
        ranked = vectors.rerank(text, found, lambda h: queries[h.query_id].text, config.lowest(d2v.threshold))
        kept += len(ranked)
        neighbours = [(queries[h.query_id], h.score, cosine) for h, cosine in ranked]
        out.append((item, aug.candidates_for(item, neighbours, contexts, config, counts, d2v.threshold)))
    counts["kept_neighbours"] = kept
    seconds["doc2vec_rerank_and_assembly"] = time.perf_counter() - start
    return out


def run_augment(corpus: Source, test: Source, folder: str, config: aug.AugmentConfig, retrieval: RetrievalConfig,
                d2v: Doc2VecConfig) -> dict:
    """Write ``test_candidates`` and ``test_auto`` for ``test`` grown from ``corpus`` into
    ``folder``; return the counts (also in the card) with ``seconds`` (not in the card)."""
    clock = time.perf_counter()
    seconds: dict = {}
    (corpus_items, corpus_fp, corpus), (test_items, test_fp, test) = read_items(corpus, test)
    for source, items in ((corpus, corpus_items), (test, test_items)):
        if not items:
            raise UserError(f"{source.folder} {source.config}/{source.split}: no rows")
    queries, contexts = aug.corpus_queries(corpus_items, config.context_turns)
    counts = {"corpus_pairs": len(corpus_items), "corpus_contexts": len(queries), "test_items": len(test_items)}
    seconds["read"] = time.perf_counter() - clock
    _note(f"corpus {len(corpus_items):,} pairs ({len(queries):,} distinct contexts), test {len(test_items):,} items")
    workdir = tempfile.mkdtemp(prefix="multiref-augment-")
    try:
        hits = retrieve(queries, test_items, config, retrieval, workdir, seconds)
        counts["retrieved_neighbours"] = sum(len(h) for h in hits.values())
        responses = [item.references[0] for item in corpus_items if item.references]
        del corpus_items
        found = rerank_and_assemble(queries, contexts, responses, test_items, hits, config, d2v, workdir, counts,
                                    seconds)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    options = {"corpus": corpus.card(corpus_fp), "test": test.card(test_fp), "retrieval": retrieval.options(),
               "doc2vec": d2v.options(), "augment": config.options()}
    write_outputs(folder, found, options, counts)
    _note(f"{counts['items_with_candidates']:,} of {len(test_items):,} test items ({100 * counts['coverage']:.1f} %) "
          f"got candidates, {counts['candidates']:,} in all ({counts['filled_by_floor']:,} filled to "
          f"--min-candidates {config.min_candidates})")
    seconds["total"] = time.perf_counter() - clock
    counts["seconds"] = {k: round(v, 2) for k, v in seconds.items()}
    return counts


def augment(corpus: Source, test: Source, output: str, config: aug.AugmentConfig, retrieval: RetrievalConfig,
            d2v: Doc2VecConfig) -> dict:
    """``multiref augment`` as one call: :func:`run_augment` into a staging folder beside the
    dataset folder ``output``, checked (``test_candidates`` and ``test_auto``) and published whole
    (:mod:`multiref.output.publish`: a foreign folder or one holding an input is refused, the old
    folder kept on any failure). UserError when ``output`` is one of the input folders. Returns
    :func:`run_augment`'s counts."""
    from multiref.output import publish, published

    for source in (corpus, test):
        if os.path.abspath(source.folder) == os.path.abspath(output):
            raise UserError(f"--output {output} is an input folder; augment writes a new dataset folder")
    with publish.publishing(output, command="multiref augment", inputs=[corpus.folder, test.folder]) as pub:
        counts = run_augment(corpus, test, pub.staging, config, retrieval, d2v)
        published.check_dataset(pub.staging, required=[("test_candidates", "test"), ("test_auto", "test")])
    return counts


def write_outputs(folder: str, found: list, options: dict, counts: dict) -> None:
    """The two configs and the card; adds the candidate counts to ``counts``."""
    from lsdscc.testset.assemble import candidates_schema
    from multiref.output import hfdata

    rows = [aug.candidate_row(item, cands) for item, cands in found]
    auto = [aug.auto_row(item, cands) for item, cands in found]
    covered = sum(1 for r in rows if r["candidates"])
    counts.update(candidates=sum(len(r["candidates"]) for r in rows), items_with_candidates=covered,
                  coverage=round(covered / len(rows), 4) if rows else 0.0,
                  candidates_per_item=aug.per_item_histogram(rows))
    counts.setdefault("filled_by_floor", 0)
    counts.setdefault("dropped_own_context", 0)
    counts.setdefault("dropped_equal_to_reference", 0)
    hfdata.write_parquet(hfdata.shard_path(folder, aug.CANDIDATES_CONFIG, "test"), rows, candidates_schema())
    hfdata.write_parquet(hfdata.shard_path(folder, aug.AUTO_CONFIG, "test"), auto, aug.auto_schema())
    card_counts = dict(sorted(counts.items()))
    hfdata.add_config(folder, hfdata.ConfigInfo(
        name=aug.CANDIDATES_CONFIG,
        description=("Candidate references retrieved from a training corpus (LSDSCC's method, docs/algorithms.md "
                     "section 2), in the LSDSCC test_candidates schema: annotate them with `multiref lsdscc "
                     "annotate export/import`. `query` is the test context, turns joined by ' __eou__ '."),
        splits={"test": len(rows)}, features=candidates_schema(), options=options, counts=card_counts),
        title="Multi-reference test set grown by retrieval",
        summary=("Candidate references for a test set, retrieved from a training corpus with LSDSCC's method "
                 "(`multiref augment`)."),
        sections={"Augmentation": CARD_SECTION})
    hfdata.add_config(folder, hfdata.ConfigInfo(
        name=aug.AUTO_CONFIG,
        description=("Automatic multi-reference test set: the original references (the first "
                     "`original_references`), then every retrieved candidate; ungrouped, not checked by people."),
        splits={"test": len(auto)}, features=aug.auto_schema(), options=options, counts=card_counts))
