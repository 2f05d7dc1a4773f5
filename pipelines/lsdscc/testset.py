"""The LSDSCC test-set stage over a corpus folder (docs/algorithms.md#2-lsdscc-test-set).

Run it after the corpus (``multiref lsdscc build`` does, unless ``--skip-testset``)::

    multiref lsdscc testset --dataset out/lsdscc
    python -m pipelines.lsdscc.testset --dataset out/lsdscc [--similarity bm25 ...] [beam flags]

Steps: read ``single_turn`` (train + validation), sample the strata, index every query
with Lucene and retrieve the similar queries of the sampled ones, re-rank them with a
Doc2Vec model trained on all sentences (a seeded sample of a large corpus:
``--doc2vec-sample``), assemble 15 candidate references per query, write the
``test_candidates`` config, then remove every used pair from ``single_turn`` and every
conversation containing one from ``multi_turn``.

Where Beam is used, and why: the leak removal runs as a Beam pipeline whose elements are
the row groups of the corpus's parquet files; each DoFn reads its own row group
(``ClassifyLeaks``, then ``DropLeakedConversations`` with the removed pair ids as a side
input), with one counter per reason; it is the step that scales with the corpus.
Indexing, search and Doc2Vec training run on the driver: each is one JVM or one model over
the whole corpus (the index and the model are single shared artifacts; a DoFn would have to
ship them to every worker), and searching 300 queries takes seconds. The rewritten parquet
files are written by the driver, rows in the corpus's own order, so reruns give
byte-identical files. Rules and their rationale: :mod:`lsdscc.testset.assemble`.

Artifacts (reused by a rerun with the same corpus and options) live in a build cache beside
the dataset folder, never inside it (:mod:`lsdscc.testset.build_cache`: ``FOLDER.cache/``)::

    FOLDER.cache/corpus-full-<sha16>/    the corpus as built, before leak removal (+ state.json)
    FOLDER.cache/rewritten/<sha32>.json  a leak-removed corpus -> its snapshot
    FOLDER.cache/lucene-index-<hash>/
    FOLDER.cache/doc2vec-<hash>/doc2vec.model
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from typing import Mapping, Sequence

from lsdscc.corpus.published import describe_published
from lsdscc.testset import assemble as ts
from lsdscc.testset.doc2vec import Doc2VecConfig
from lsdscc.testset.retrieval import RetrievalConfig
from multiref.util.location import is_remote
from pipelines.lsdscc.leaks import classify_leaks  # noqa: F401  (tests reach it here too)

CARD_SECTION = """\
Built by the test-set stage (docs/algorithms.md §2): every query of `single_turn` indexed
with Lucene; for each sampled query the most similar queries (TF-IDF by default), re-ranked
by the cosine of their Doc2Vec vectors and kept at or above the threshold; queries sampled
equally from three strata of response number; up to 15 candidate references each (own
responses first). Every pair the test set uses (its queries' pairs, pairs whose query text
equals a test query, and the source pair of every candidate) was removed from `single_turn`
train/validation, and every `multi_turn` conversation containing one of them was dropped
(counts under `test_set_leak_removal`; `response_number` still counts the corpus as built).
The Lucene index, the Doc2Vec model and the corpus before leak removal are a build cache
for reruns kept beside this folder (`<folder>.cache/`), not part of the dataset.
"""
CORPUS_CONFIGS = ("single_turn", "multi_turn")


def _progress(message: str) -> None:
    from multiref.util import progress

    if not progress.quiet():  # --quiet silences the stage's notes
        print(f"[lsdscc testset] {message}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------- corpus snapshot


def _corpus_source(folder: str, cache: str) -> tuple:
    """The corpus as built (before any leak removal) and its metadata.

    The first run copies the current ``single_turn``/``multi_turn`` files to
    ``CACHE/corpus-full-<sha16>`` (named by their content). A rerun whose current files are
    ones this stage wrote (``CACHE/rewritten/<sha32>.json`` names them) reads the snapshot
    they came from. Returns ``(files {config: {split: [paths]}}, state, cache)``; ``state``
    holds ``original`` (the corpus's SHA-256) and ``original_meta``.
    """
    from multiref.output import hfdata

    current = {c: ts.config_files(folder, c) for c in CORPUS_CONFIGS}
    current_paths = [p for c in current.values() for ps in c.values() for p in ps]
    original = current_fp = ts.fingerprint(current_paths, folder)
    link = os.path.join(cache, "rewritten", f"{current_fp[:32]}.json")
    if os.path.exists(link):
        with open(link, encoding="utf-8") as fh:
            original = json.load(fh)["original"]
    backup = os.path.join(cache, f"corpus-full-{original[:16]}")
    state_path = os.path.join(backup, "state.json")
    if not os.path.exists(state_path):
        if original != current_fp:
            from multiref.util.errors import UserError

            raise UserError(f"{link} names a corpus snapshot that is gone: delete {cache} and rebuild the corpus")
        _progress(f"snapshot of the corpus before leak removal -> {backup}")
        tmp = backup + ".tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        for path in current_paths:
            target = os.path.join(tmp, os.path.relpath(path, folder))
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copyfile(path, target)
        meta = hfdata.load_meta(folder)
        _write_state(os.path.join(tmp, "state.json"),
                     {"original": current_fp, "original_meta": {c: meta["configs"][c] for c in CORPUS_CONFIGS}})
        shutil.rmtree(backup, ignore_errors=True)
        os.replace(tmp, backup)  # complete or absent
    with open(state_path, encoding="utf-8") as fh:
        state = json.load(fh)
    files = {c: {split: [os.path.join(backup, os.path.relpath(p, folder)) for p in paths]
                 for split, paths in current_by.items()} for c, current_by in current.items()}
    return files, state, cache


def _write_state(path: str, state: Mapping) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(state, fh, indent=2, sort_keys=True)
        fh.write("\n")


# ---------------------------------------------------------------- artifacts


def _lucene_index(folder: str, state: Mapping, queries: Mapping, config: RetrievalConfig, counts: dict) -> str:
    from lsdscc.testset import retrieval

    key = ts.options_hash({"corpus": state["original"], "index": config.index_options()})
    index_dir = os.path.join(folder, f"lucene-index-{key}")  # folder: the build cache
    if retrieval.index_is_complete(index_dir):
        _progress(f"reused Lucene index {index_dir}")
        counts["lucene_index_reused"] = True
        return index_dir
    start = time.perf_counter()
    docs = ((qid, queries[qid].text) for qid in sorted(queries))
    n = retrieval.build_index(docs, index_dir, config)
    counts["lucene_index_reused"] = False
    _progress(f"indexed {n:,} queries with Lucene in {time.perf_counter() - start:.1f}s -> {index_dir}")
    return index_dir


def _doc2vec_model(folder: str, state: Mapping, training, config: Doc2VecConfig, counts: dict, needed=()):
    """Train (or reuse) the model on ``training`` (a :class:`lsdscc.testset.doc2vec.TrainingSet`;
    with ``--doc2vec-parts``, the parts' vectors of the ``needed`` texts)."""
    from lsdscc.testset import doc2vec, doc2vec_parts

    key = {"corpus": state["original"], "doc2vec": config.model_options()}
    key = dict(key, sentences=training.digest()) if training.sampled else key
    texts = doc2vec_parts.needed_texts(training, needed) if config.parts > 1 else None
    key = ts.options_hash(dict(key, needed=doc2vec_parts.texts_digest(texts)) if texts is not None else key)
    model_dir = os.path.join(folder, f"doc2vec-{key}")  # folder: the build cache
    model_path = os.path.join(model_dir, "doc2vec.model")
    counts.update(training.counts())
    if os.path.exists(model_path):
        _progress(f"reused Doc2Vec model {model_path}")
        counts["doc2vec_model_reused"] = True
        return doc2vec.load(model_path) if texts is None else doc2vec_parts.PartVectors.load(model_path, texts)
    tmp_dir = model_dir + ".tmp"  # trained and saved here, then moved into place whole
    shutil.rmtree(tmp_dir, ignore_errors=True)
    os.makedirs(tmp_dir)
    start = time.perf_counter()
    model = doc2vec_parts.train_vectors(training, config, tmp_dir, needed)
    model.save(os.path.join(tmp_dir, "doc2vec.model"))  # gensim may add .npy files beside it
    with open(os.path.join(tmp_dir, "options.json"), "w", encoding="utf-8") as fh:
        json.dump({"doc2vec": config.model_options(), "corpus_sha256": state["original"], **training.counts()}, fh,
                  indent=2, sort_keys=True)
    shutil.rmtree(model_dir, ignore_errors=True)
    os.replace(tmp_dir, model_dir)
    counts["doc2vec_model_reused"] = False
    _progress(f"trained Doc2Vec on {training.size:,} sentences in {time.perf_counter() - start:.1f}s -> {model_path}")
    return model


def _retrieve(cache, state, queries, to_expand, config: RetrievalConfig, counts: dict, seconds: dict) -> dict:
    """Index (or reuse) and search on the driver; returns plain Python hits (every Java
    proxy released before Beam and gensim start their threads: :func:`lsdscc.testset.retrieval.neighbours`)."""
    from lsdscc.testset import retrieval

    start = time.perf_counter()
    index_dir = _lucene_index(cache, state, queries, config, counts)
    seconds["lucene_index"] = time.perf_counter() - start
    start = time.perf_counter()
    hits = retrieval.neighbours(index_dir, to_expand, config)
    seconds["lucene_search"] = time.perf_counter() - start
    _progress(f"retrieved top {config.depth} for {len(to_expand)} queries in {time.perf_counter() - start:.1f}s")
    return hits


# ---------------------------------------------------------------- the stage


def run_stage(folder: str, retrieval: RetrievalConfig, d2v: Doc2VecConfig, sampling: ts.SamplingConfig,
              beam_args: Sequence[str] = (), cache: str | None = None) -> dict:
    """Build ``test_candidates`` for the corpus in ``folder`` and remove the used pairs from
    its training data. Returns the counts also written to the dataset card. ``cache``: the
    build cache (default :func:`lsdscc.testset.build_cache.cache_for` of ``folder``; a staging folder
    passes its target's)."""
    from lsdscc.testset.build_cache import cache_for
    from lsdscc.testset import doc2vec, doc2vec_parts

    counts: dict = {}
    seconds: dict = {}
    clock = time.perf_counter()
    files, state, cache = _corpus_source(folder, cache or cache_for(folder))
    single = {split: ts.read_table(paths) for split, paths in files["single_turn"].items()}
    multi = {split: ts.read_table(paths) for split, paths in files["multi_turn"].items()}
    queries, cols = ts.queries_of_tables(single.values())
    counts.update(corpus_pairs=len(cols["id"]), corpus_queries=len(queries))
    _progress(f"{len(cols['id']):,} pairs, {len(queries):,} distinct queries")

    seconds["read_corpus"] = time.perf_counter() - clock
    limits = ts.small_corpus_limits(queries, sampling, counts, _progress)
    sample = ts.sample_queries(queries, sampling, limits)
    for name, ids in sample.items():
        counts[f"sampled_{name}"] = len(ids)

    to_expand = [(qid, queries[qid].text) for ids in sample.values() for qid in ids]
    hits = _retrieve(cache, state, queries, to_expand, retrieval, counts, seconds)

    start = time.perf_counter()
    compared = {t for _, t in to_expand} | {queries[h.query_id].text for found in hits.values() for h in found}
    training = doc2vec.select_training(sorted({q.text for q in queries.values()}), cols["response"], d2v, compared)
    model = _doc2vec_model(cache, state, training, d2v, counts, compared)
    seconds["doc2vec_train"] = time.perf_counter() - start
    start = time.perf_counter()
    vectors = doc2vec_parts.vectors_of(model, training)
    counts["doc2vec_sample_note"] = doc2vec.sample_note(training, d2v)
    del cols, model, training

    candidates, short, dropped, kept_neighbours = _rerank_and_assemble(to_expand, queries, hits, vectors, d2v, sampling)
    rows = ts.candidate_rows(sample, queries, candidates)
    seconds["doc2vec_rerank_and_assembly"] = time.perf_counter() - start
    counts.update(test_queries=len(rows), short_queries=short, dropped_short_queries=dropped,
                  retrieved_neighbours=sum(len(h) for h in hits.values()), kept_neighbours=kept_neighbours,
                  candidates=sum(len(r["candidates"]) for r in rows),
                  own_candidates=sum(c["own"] for r in rows for c in r["candidates"]))

    options = {"retrieval": retrieval.options(), "doc2vec": d2v.options(), "sampling": sampling.options(),
               "corpus_sha256": state["original"]}
    _write_candidates(folder, rows, options, sampling.references, counts)

    start = time.perf_counter()
    counts.update(_remove_leaks(folder, files, single, multi, ts.used_pairs(rows), state, cache, beam_args))
    describe_published(folder, {f"removed_{r}": counts[f"removed_{r}"] for r in ts.LEAK_REASONS})
    seconds["leak_removal"] = time.perf_counter() - start
    seconds["total"] = time.perf_counter() - clock
    counts["seconds"] = {k: round(v, 2) for k, v in seconds.items()}  # not in the card: not reproducible
    return counts


def _rerank_and_assemble(to_expand, queries, hits, vectors, d2v: Doc2VecConfig, sampling) -> tuple:
    """Each sampled query's Lucene hits reranked by Doc2Vec and assembled into candidates.
    Returns ``(candidates by query id, short queries, dropped short queries, kept neighbours)``."""
    candidates, short, dropped, kept_neighbours = {}, 0, 0, 0
    for qid, text in to_expand:
        ranked = vectors.rerank(text, hits[qid], lambda h: queries[h.query_id].text, d2v.threshold)
        kept_neighbours += len(ranked)
        neighbours = [(queries[h.query_id], h.score, cos) for h, cos in ranked]
        found = ts.assemble_candidates(queries[qid], neighbours, sampling.references)
        if len(found) < sampling.references:
            short += 1
            if sampling.drop_short:
                dropped += 1
                continue
        candidates[qid] = found
    return candidates, short, dropped, kept_neighbours


def _write_candidates(folder: str, rows: list, options: dict, references: int, counts: dict) -> None:
    """The ``test_candidates`` parquet file and its card entry (``counts`` loses its
    ``small_corpus_note`` and ``doc2vec_sample_note``, which go into the description)."""
    from multiref.output import hfdata

    small_corpus_note = counts.pop("small_corpus_note", "") + counts.pop("doc2vec_sample_note", "")
    path = hfdata.shard_path(folder, ts.CANDIDATES_CONFIG, "test")
    hfdata.write_parquet(path, rows, ts.candidates_schema())
    hfdata.add_config(folder, hfdata.ConfigInfo(
        name=ts.CANDIDATES_CONFIG,
        description=("LSDSCC test-set candidates (docs/algorithms.md §2): per sampled query, up to "
                     f"{references} candidate references with their provenance (source pair id, "
                     "source query, Lucene score, Doc2Vec cosine; own responses first). Annotate them with "
                     "`multiref lsdscc annotate export/import` to get `test_grouped`." + small_corpus_note),
        splits={"test": len(rows)}, features=ts.candidates_schema(), options=options,
        counts={k: v for k, v in counts.items() if not k.endswith("_reused")}),
        sections={"LSDSCC test set": CARD_SECTION})
    _progress(f"wrote {len(rows)} test queries -> {path}")


def _remove_leaks(folder, files, single, multi, used, state, cache, beam_args) -> dict:
    """Rewrite single_turn and multi_turn without the test set's pairs; return counts."""
    import pyarrow as pa
    from multiref.output import hfdata

    start = time.perf_counter()
    reasons, leaks, beam_counters = classify_leaks(files["single_turn"], files["multi_turn"], used, beam_args)
    counts = {f"removed_{r}": 0 for r in ts.LEAK_REASONS}
    counts["removed_test_conversation"] = 0
    for marks in reasons.values():
        for reason in marks.values():
            counts[f"removed_{reason}"] += 1
    counts["removed_test_conversation"] = sum(len(m) for m in leaks.values())
    ts.check_training_kept(single.get("train"), reasons.get("train", {}), len(used["query_ids"]))
    for config, tables, flags in (("single_turn", single, reasons), ("multi_turn", multi, leaks)):
        original = state["original_meta"][config]
        splits = {}
        for name in sorted(tables):
            table = tables[name]
            marks = flags.get(name, {})
            keep = pa.array([i not in marks for i in range(table.num_rows)], type=pa.bool_())
            kept = table.filter(keep).replace_schema_metadata(None)
            for old in ts.config_files(folder, config).get(name, []):
                os.remove(old)
            path = hfdata.shard_path(folder, config, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            hfdata.write_table(kept, path)
            splits[name] = kept.num_rows
        if config == "single_turn":
            removed = {f"removed_{r}": counts[f"removed_{r}"] for r in ts.LEAK_REASONS}
        else:
            removed = {"removed_test_conversation": counts["removed_test_conversation"]}
        hfdata.add_config(folder, hfdata.ConfigInfo(
            name=config, description=original["description"], splits=splits, features=kept.schema,
            options=original.get("options", {}),
            counts=dict(original.get("counts", {}), test_set_leak_removal=removed),
            data_files=original["data_files"]))
    rewritten = ts.fingerprint([p for c in CORPUS_CONFIGS for ps in ts.config_files(folder, c).values() for p in ps],
                               folder)
    _write_state(os.path.join(cache, "rewritten", f"{rewritten[:32]}.json"), {"original": state["original"]})
    _progress(f"removed the test pairs from the training data in {time.perf_counter() - start:.1f}s "
              f"({json.dumps(counts, sort_keys=True)})")
    counts["beam_counters"] = beam_counters
    return counts


def check_corpus(folder: str) -> None:
    """UserError if the single_turn corpus in ``folder`` has no pairs, read from the parquet
    footers before the JVM or Doc2Vec start."""
    import glob

    from multiref.util.errors import UserError

    files = sorted(glob.glob(os.path.join(folder, "single_turn", "*.parquet")))
    if not files:
        return  # the stage names what is missing
    import pyarrow.parquet as pq

    try:
        rows = sum(pq.read_metadata(name).num_rows for name in files)
    except Exception as exc:  # noqa: BLE001 - pyarrow raises several types for a damaged file
        first = next((line.strip() for line in str(exc).splitlines() if line.strip()), "unknown error")
        raise UserError(f"{folder}: unreadable parquet file in single_turn/ ({first})") from None
    if rows == 0:
        raise UserError(f"{folder}: the single_turn corpus has no pairs, so there is nothing to build a test set "
                        "from (build the corpus from more input)")


def run_testset_stage(dataset_folder: str, job, cache: str | None = None) -> dict:
    """Run the test-set stage on a corpus folder (``job``: a
    :class:`pipelines.lsdscc.testset_options.TestsetJob`); return its counts (also
    in the card). ``cache``: the build cache (default: beside ``dataset_folder``,
    :mod:`lsdscc.testset.build_cache`). UserError for a remote folder or a corpus without pairs."""
    from pipelines.beam.runner import is_local
    from multiref.util.errors import UserError
    if is_remote(dataset_folder):
        raise UserError(f"the test-set stage needs a local corpus folder, not {dataset_folder}: copy it locally and run "
        "`multiref lsdscc testset --dataset FOLDER` (or build with --skip-testset)")
    check_corpus(dataset_folder)
    beam_args = list(job.beam_args)
    if not is_local(beam_args):
        print("[lsdscc testset] the test-set stage runs locally (the JVM and Doc2Vec run on this machine); "
        "ignoring the remote runner options", file=sys.stderr)
        beam_args = []
    counts = run_stage(dataset_folder, job.retrieval, job.doc2vec, job.sampling, beam_args=beam_args, cache=cache)
    counts.pop("beam_counters", None)
    return counts


def run(argv=None) -> dict:
    """Command-line entry point (``python -m pipelines.lsdscc.testset --dataset FOLDER``):
    ``--dataset`` and the flags of :mod:`pipelines.lsdscc.testset_options`; the rest go to Beam.

    The stage reads its input from the dataset folder (tests write small folders with
    :mod:`multiref.output.hfdata`), so there is no in-memory ``source`` to inject."""
    from multiref.util.errors import UserError
    from multiref.util.options import from_args
    from pipelines.lsdscc.testset_options import StageInput, add_stage_arguments, testset_job

    parser = argparse.ArgumentParser(prog="python -m pipelines.lsdscc.testset", description=__doc__.splitlines()[0])
    add_stage_arguments(parser)
    parsed, beam_args = parser.parse_known_args(argv)
    dataset = from_args(StageInput, parsed).dataset
    if not dataset:
        raise UserError("--dataset FOLDER is required (a corpus folder written by `multiref lsdscc build`)")
    job = testset_job(parsed, beam_args)
    from multiref.output.publish_target import check_local

    check_local(dataset)  # the stage rewrites the folder in place: only a dataset this tool wrote
    return run_testset_stage(dataset, job)


if __name__ == "__main__":
    from multiref.util.errors import UserError

    try:
        print(json.dumps(run(), indent=2, sort_keys=True))
    except UserError as exc:
        print(f"multiref: error: {exc}", file=sys.stderr)
        sys.exit(1)
