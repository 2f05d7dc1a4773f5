"""Test-set stage on a hand-made corpus (docs/algorithms.md#2-lsdscc-test-set, steps 3-5).

The corpus (tests/data/testset/corpus.json) is written as a dataset folder with
multiref.output.hfdata, in the columns of docs/corpus.md#output-folder-and-columns, like the corpus pipeline writes it.
"""

from __future__ import annotations

import json
import os

from tests.helpers import data_path

CORPUS = data_path("testset", "corpus.json")


def make_corpus(folder) -> dict:
    """Write the hand-made corpus as a dataset folder; return the parsed JSON."""
    import pyarrow as pa
    from multiref.output import hfdata

    spec = json.loads(CORPUS.read_text(encoding="utf-8"))
    single = pa.schema([("id", pa.string()), ("thread_id", pa.string()), ("query_id", pa.string()),
                        ("response_id", pa.string()), ("query", pa.string()), ("response", pa.string()),
                        ("created_utc", pa.int64()), ("response_number", pa.int64())])
    multi = pa.schema([("id", pa.string()), ("thread_id", pa.string()), ("comment_ids", pa.list_(pa.string())),
                       ("turns", pa.list_(pa.string())), ("created_utc", pa.int64())])
    rows = {"train": [], "validation": []}
    for n, (qid, split, text, responses) in enumerate(spec["queries"]):
        for k, response in enumerate(responses, start=1):
            rid = f"{qid}_r{k}"
            rows[split].append({"id": rid, "thread_id": f"t3_th{n}", "query_id": qid, "response_id": rid,
                                "query": text, "response": response, "created_utc": 1000 * n + k,
                                "response_number": len(responses)})
    folder = str(folder)
    for split, split_rows in rows.items():
        hfdata.write_parquet(hfdata.shard_path(folder, "single_turn", split), split_rows, single)
    hfdata.add_config(folder, hfdata.ConfigInfo(
        name="single_turn", description="hand-made pairs", splits={s: len(r) for s, r in rows.items()},
        features=single, options={"made_by": "test"}, counts={"pairs": sum(len(r) for r in rows.values())}),
        title="test corpus")
    convs = [{"id": ids[-1], "thread_id": ids[0], "comment_ids": ids, "turns": [f"turn {k}" for k in range(len(ids))],
              "created_utc": i} for i, ids in enumerate(spec["multi_turn"])]
    hfdata.write_parquet(hfdata.shard_path(folder, "multi_turn", "train"), convs, multi)
    hfdata.add_config(folder, hfdata.ConfigInfo(
        name="multi_turn", description="hand-made conversations", splits={"train": len(convs)}, features=multi))
    return spec


def spec_pairs(spec) -> dict:
    """{pair_id: (query_id, query, response)} of the hand-made corpus."""
    return {f"{qid}_r{k}": (qid, text, r) for qid, _, text, rs in spec["queries"] for k, r in enumerate(rs, start=1)}


# ---------------------------------------------------------------- pure functions

import pytest  # noqa: E402

from multiref.util.errors import UserError  # noqa: E402


@pytest.mark.parametrize(
    "bounds, n, stratum",
    [((3, 5), 1, "lt3"), ((3, 5), 2, "lt3"), ((3, 5), 3, "3to5"), ((3, 5), 5, "3to5"), ((3, 5), 6, "gt5"),
     ((2, 4), 1, "lt2"), ((2, 4), 2, "2to4"), ((2, 4), 5, "gt4")],
)
def test_stratum_bounds(bounds, n, stratum):
    from lsdscc.testset.assemble import SamplingConfig

    assert SamplingConfig(bounds=bounds).stratum(n) == stratum


def _synthetic_queries(per_bucket=30):
    from lsdscc.testset.assemble import Query

    out = {}
    for bucket, n in (("a", 1), ("b", 4), ("c", 9)):
        for i in range(per_bucket):
            qid = f"t1_{bucket}{i:03d}"
            out[qid] = Query(qid, f"query {bucket} {i}", [(f"{qid}_r{k}", f"resp {k}") for k in range(n)])
    return out


def test_sampling_strata_sizes_and_seed():
    from lsdscc.testset.assemble import Query, SamplingConfig, sample_queries

    queries = _synthetic_queries()
    config = SamplingConfig(per_stratum=10, seed=1)
    sample = sample_queries(queries, config)
    assert {k: len(v) for k, v in sample.items()} == {"lt3": 10, "3to5": 10, "gt5": 10}
    assert all(qid[3] == "a" for qid in sample["lt3"]) and all(qid[3] == "c" for qid in sample["gt5"])
    # same seed, other insertion order: same sample; another seed: another sample
    reordered = dict(reversed(list(queries.items())))
    assert sample_queries(reordered, config) == sample
    other = sample_queries(queries, SamplingConfig(per_stratum=10, seed=2))
    assert other != sample and {k: len(v) for k, v in other.items()} == {"lt3": 10, "3to5": 10, "gt5": 10}
    # a stratum smaller than per_stratum gives all it has
    assert len(sample_queries(queries, SamplingConfig(per_stratum=50))["gt5"]) == 30
    # duplicate query texts are sampled once; empty queries never
    queries["t1_dup"] = Query("t1_dup", queries[sample["lt3"][0]].text, [("t1_dup_r0", "x")])
    queries["t1_empty"] = Query("t1_empty", " ", [("t1_empty_r0", "x")])
    texts = [queries[q].text for q in sample_queries(queries, SamplingConfig(per_stratum=40))["lt3"]]
    assert len(texts) == len(set(texts)) == 30 and " " not in texts


def test_assemble_candidates_order_dedup_and_provenance():
    from lsdscc.testset.assemble import Query, assemble_candidates

    query = Query("q", "best batman movie", [("q_r1", "the dark knight"), ("q_r2", "best batman movie"), ("q_r3", "")])
    n1 = Query("n1", "batman movie", [("n1_r1", "the dark knight"), ("n1_r2", "batman returns")])
    n2 = Query("n2", "a batman film", [("n2_r1", "mask of the phantasm"), ("n2_r2", "batman returns"), ("n2_r3", "x")])
    got = assemble_candidates(query, [(n1, 2.5, 0.97), (n2, 3.0, 0.93)], limit=3)
    assert got == [
        {"text": "the dark knight", "source_pair_id": "q_r1", "source_query": "best batman movie",
         "lucene_score": None, "doc2vec_cosine": None, "own": True},
        # q_r2 is the query's own text and q_r3 is empty: skipped; n1_r1 duplicates q_r1
        {"text": "batman returns", "source_pair_id": "n1_r2", "source_query": "batman movie",
         "lucene_score": 2.5, "doc2vec_cosine": 0.97, "own": False},
        {"text": "mask of the phantasm", "source_pair_id": "n2_r1", "source_query": "a batman film",
         "lucene_score": 3.0, "doc2vec_cosine": 0.93, "own": False},
    ]
    assert len(assemble_candidates(query, [(n1, 2.5, 0.97), (n2, 3.0, 0.93)], limit=15)) == 4  # short: kept


def test_leak_rules():
    from lsdscc.testset.assemble import conversation_leaks, leak_reason

    used = {"query_ids": {"t3_q"}, "query_texts": {"best movie"}, "pair_ids": {"t1_r9"}}
    assert leak_reason("t1_r1", "t3_q", "other text", used) == "test_query"
    assert leak_reason("t1_r2", "t1_other", "best movie", used) == "test_query_text"
    assert leak_reason("t1_r9", "t1_other", "x", used) == "test_reference"
    assert leak_reason("t1_r3", "t1_other", "x", used) is None
    assert conversation_leaks(["t3_a", "t1_r9", "t1_c"], {"t1_r9"}, set())
    assert conversation_leaks(["t3_q", "t1_c"], set(), {"t3_q"})  # test query followed by a reply
    assert not conversation_leaks(["t3_a", "t3_q"], set(), {"t3_q"})  # test query as the leaf only
    assert not conversation_leaks(["t1_r9", "t1_c"], {"t1_r9"}, set())  # a removed pair id as the root


def test_sampling_config_errors():
    from lsdscc.testset.assemble import SamplingConfig

    with pytest.raises(UserError, match="bounds"):
        SamplingConfig(bounds=(5, 3))
    with pytest.raises(UserError, match="at least 1"):
        SamplingConfig(per_stratum=0)


# ---------------------------------------------------------------- the stage on the hand-made corpus


def stage_args(*extra):
    import argparse

    from multiref_cli.lsdscc import testset as testset_cli

    parser = argparse.ArgumentParser()
    testset_cli.add_testset_arguments(parser)
    base = ["--per-stratum", "2", "--retrieval-depth", "6", "--doc2vec-min-count", "1", "--doc2vec-epochs", "5",
            "--doc2vec-vector-size", "16", "--doc2vec-threshold", "-1", "--jvm-heap", "1g"]
    return testset_cli.testset_job(parser.parse_args(base + list(extra)))


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The stage run twice on one folder: (folder, spec, first counts, second counts, mtimes, bytes)."""
    from pipelines.lsdscc.testset import run_testset_stage

    folder = tmp_path_factory.mktemp("testset") / "corpus"
    spec = make_corpus(folder)
    first = run_testset_stage(str(folder), stage_args())
    artifacts = sorted((folder.parent / "corpus.cache").rglob("*"))  # the build cache, beside the folder
    mtimes = {p: p.stat().st_mtime_ns for p in artifacts if p.is_file()}
    files = {p: p.read_bytes() for p in folder.rglob("*.parquet")}
    assert not (folder / "artifacts").exists() and artifacts
    files[folder / "README.md"] = (folder / "README.md").read_bytes()
    second = run_testset_stage(str(folder), stage_args())
    return folder, spec, first, second, mtimes, files


def _table(folder, config, split):
    import pyarrow.parquet as pq

    return pq.read_table(str(folder / config / f"{split}-00000-of-00001.parquet")).to_pylist()


def test_stage_strata_and_candidates(built):
    folder, spec, counts, _, _, _ = built
    rows = _table(folder, "test_candidates", "test")
    pairs = spec_pairs(spec)
    n_responses = {qid: len(rs) for qid, _, _, rs in spec["queries"]}
    assert [r["stratum"] for r in rows] == ["lt3", "lt3", "3to5", "3to5", "gt5", "gt5"]
    assert counts["test_queries"] == 6 and counts["corpus_pairs"] == len(pairs) == 69
    for row in rows:
        n = n_responses[row["query_id"]]
        assert row["response_number"] == n
        assert row["stratum"] == ("lt3" if n < 3 else "gt5" if n > 5 else "3to5")
        cands = row["candidates"]
        texts = [c["text"] for c in cands]
        assert 1 <= len(cands) <= 15 and len(set(texts)) == len(texts) and row["query"] not in texts
        own = [c for c in cands if c["own"]]
        assert cands[: len(own)] == own  # own responses first
        assert len(own) == min(15, n)
        for c in cands:  # provenance points at the real corpus pair
            qid, query, response = pairs[c["source_pair_id"]]
            assert (c["text"], c["source_query"]) == (response, query)
            assert (c["lucene_score"] is None) == c["own"] == (qid == row["query_id"])
        cosines = [c["doc2vec_cosine"] for c in cands if not c["own"]]
        assert cosines == sorted(cosines, reverse=True)  # most similar first
    assert counts["candidates"] == sum(len(r["candidates"]) for r in rows)


def test_stage_removes_every_used_pair(built):
    folder, spec, counts, _, _, _ = built
    rows = _table(folder, "test_candidates", "test")
    used_pairs = {c["source_pair_id"] for r in rows for c in r["candidates"]}
    test_ids = {r["query_id"] for r in rows}
    test_texts = {r["query"] for r in rows}
    remaining = _table(folder, "single_turn", "train") + _table(folder, "single_turn", "validation")
    assert remaining, "everything was removed: the test is too weak"
    for pair in remaining:
        assert pair["id"] not in used_pairs and pair["query_id"] not in test_ids and pair["query"] not in test_texts
    removed = 69 - len(remaining)
    assert removed == counts["removed_test_query"] + counts["removed_test_query_text"] + counts["removed_test_reference"]
    removed_ids = set(spec_pairs(spec)) - {p["id"] for p in remaining}
    conversations = _table(folder, "multi_turn", "train")
    for conv in conversations:
        assert not set(conv["comment_ids"][1:]) & removed_ids
        assert not set(conv["comment_ids"][:-1]) & test_ids
    assert len(conversations) + counts["removed_test_conversation"] == len(spec["multi_turn"])
    # the card's counts follow the rewrite
    meta = json.loads((folder / "dataset_meta.json").read_text())
    st = meta["configs"]["single_turn"]
    assert sum(st["splits"].values()) == len(remaining)
    assert st["options"] == {"made_by": "test"}  # the corpus job's options are kept
    assert st["counts"]["test_set_leak_removal"]["removed_test_query"] == counts["removed_test_query"]
    assert meta["configs"]["test_candidates"]["options"]["retrieval"] == {"similarity": "tfidf", "depth": 6,
                                                                         "analyzer": "english"}
    assert meta["configs"]["test_candidates"]["options"]["doc2vec"]["threshold"] == -1.0


def test_rerun_reuses_artifacts_and_is_byte_identical(built):
    folder, _, first, second, mtimes, files = built
    assert (first["lucene_index_reused"], first["doc2vec_model_reused"]) == (False, False)
    assert (second["lucene_index_reused"], second["doc2vec_model_reused"]) == (True, True)
    for path, mtime in mtimes.items():
        if "rewritten" in path.parts:  # the leak-removed corpus's link, written again
            continue
        assert path.stat().st_mtime_ns == mtime, path
    for path, data in files.items():
        assert path.read_bytes() == data, path  # the rerun reads the corpus snapshot: same output
    def stable(counts):
        return {k: v for k, v in counts.items() if not k.endswith("_reused") and k != "seconds"}

    assert stable(first) == stable(second)
    assert set(first["seconds"]) >= {"lucene_index", "lucene_search", "doc2vec_train", "leak_removal", "total"}


def test_doc2vec_sample_is_used_recorded_and_reproducible(built, tmp_path):
    """--doc2vec-sample below the corpus's distinct sentences: the model trains on a seeded
    sample (the compared queries in it), the card says so, a rerun gives the same bytes."""
    from pipelines.lsdscc.testset import run_testset_stage

    folder, spec, full, _, _, _ = built
    assert full["doc2vec_sampled"] is False and full["doc2vec_trained_sentences"] == full["doc2vec_corpus_sentences"]
    size = full["doc2vec_corpus_sentences"] - 25
    runs = []
    for name in ("a", "b"):
        make_corpus(tmp_path / name)
        counts = run_testset_stage(str(tmp_path / name), stage_args("--doc2vec-sample", str(size)))
        runs.append((counts, {p.relative_to(tmp_path / name): p.read_bytes() for p in (tmp_path / name).rglob("*")
                              if p.is_file()}))
    (counts, files), (_, again) = runs
    assert files == again  # the same sample and model: byte-identical output
    assert counts["doc2vec_sampled"] is True and counts["doc2vec_trained_sentences"] == size
    assert counts["doc2vec_corpus_sentences"] == full["doc2vec_corpus_sentences"]
    meta = json.loads((tmp_path / "a" / "dataset_meta.json").read_text())["configs"]["test_candidates"]
    assert meta["options"]["doc2vec"]["sample"] == size and meta["counts"]["doc2vec_sampled"] is True
    assert f"seeded sample of {size:,} of the corpus's {full['doc2vec_corpus_sentences']:,}" in meta["description"]
    rows, full_rows = _table(tmp_path / "a", "test_candidates", "test"), _table(folder, "test_candidates", "test")
    cosines = [c["doc2vec_cosine"] for r in rows for c in r["candidates"] if not c["own"]]
    assert cosines and cosines != [c["doc2vec_cosine"] for r in full_rows for c in r["candidates"] if not c["own"]]
    assert "seeded sample" not in json.loads((folder / "dataset_meta.json").read_text())["configs"][
        "test_candidates"]["description"]


def test_doc2vec_parts_are_recorded_and_give_the_same_bytes_in_one_process_or_two(built, tmp_path):
    """--doc2vec-parts 2: the card records it, the cosines are the parts' (not the one model's),
    and the output is byte-identical whether the parts train in two processes or (this thread
    limited to one core) in one; a rerun reuses the cached vectors."""
    from lsdscc.testset import doc2vec_parts
    from pipelines.lsdscc.testset import run_testset_stage

    folder = built[0]
    cpus = os.sched_getaffinity(0)
    runs = []
    for name, mask in (("a", cpus), ("b", {min(cpus)})):
        make_corpus(tmp_path / name)
        os.sched_setaffinity(0, mask)  # this thread: the stage's processes_for sees these cores
        try:
            processes = doc2vec_parts.processes_for(2)
            counts = run_testset_stage(str(tmp_path / name), stage_args("--doc2vec-parts", "2"))
        finally:
            os.sched_setaffinity(0, cpus)
        runs.append((processes, counts, _files(tmp_path / name)))
    (two, counts, files), (one, _, again) = runs
    assert (two, one) == (min(2, len(cpus)), 1)
    assert files == again and counts["doc2vec_model_reused"] is False
    meta = json.loads((tmp_path / "a" / "dataset_meta.json").read_text())["configs"]["test_candidates"]
    assert meta["options"]["doc2vec"]["parts"] == 2
    assert "parts" not in json.loads((folder / "dataset_meta.json").read_text())["configs"]["test_candidates"][
        "options"]["doc2vec"]
    rows, full_rows = _table(tmp_path / "a", "test_candidates", "test"), _table(folder, "test_candidates", "test")
    cosines = [c["doc2vec_cosine"] for r in rows for c in r["candidates"] if not c["own"]]
    assert cosines and cosines != [c["doc2vec_cosine"] for r in full_rows for c in r["candidates"] if not c["own"]]
    rerun = run_testset_stage(str(tmp_path / "a"), stage_args("--doc2vec-parts", "2"))
    assert rerun["doc2vec_model_reused"] is True and _files(tmp_path / "a") == files


def _files(folder) -> dict:
    return {p.relative_to(folder): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_threshold_and_drop_short(tmp_path):
    """Through the pipeline's own entry point (python -m pipelines.lsdscc.testset), Beam flags passed on."""
    from pipelines.lsdscc.testset import run

    spec = make_corpus(tmp_path)
    argv = ["--dataset", str(tmp_path), "--per-stratum", "2", "--retrieval-depth", "6", "--doc2vec-min-count", "1",
            "--doc2vec-epochs", "5", "--doc2vec-vector-size", "16", "--jvm-heap", "1g",
            "--doc2vec-threshold", "0.5", "--drop-short", "--similarity", "bm25", "--bm25-k1", "0.8",
            "--direct_num_workers", "1"]
    counts = run(argv)
    rows = _table(tmp_path, "test_candidates", "test")
    assert all(c["doc2vec_cosine"] >= 0.5 for r in rows for c in r["candidates"] if not c["own"])
    assert all(len(r["candidates"]) == 15 for r in rows)
    assert counts["test_queries"] == 6 - counts["dropped_short_queries"]
    assert counts["dropped_short_queries"] == counts["short_queries"] > 0
    meta = json.loads((tmp_path / "dataset_meta.json").read_text())
    assert meta["configs"]["test_candidates"]["options"]["retrieval"]["k1"] == 0.8
    cache = tmp_path.parent / (tmp_path.name + ".cache")
    assert not os.path.isdir(tmp_path / "artifacts") and os.path.isdir(cache)
    assert sorted(p.name.rsplit("-", 1)[0] for p in cache.iterdir()) == ["corpus-full", "doc2vec", "lucene-index",
                                                                          "rewritten"]
    assert spec


def test_cli_testset_and_missing_corpus(tmp_path, capsys):
    from multiref_cli import main

    assert main(["lsdscc", "testset", "--dataset", str(tmp_path / "none")]) == 1
    assert "has no 'single_turn' config" in capsys.readouterr().err


def test_leak_pipeline_counters(tmp_path):
    """The Beam leak-removal pipeline: rows numbered across files and row groups, one counter per reason."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from pipelines.lsdscc import testset as stage

    def write(name, table):
        path = str(tmp_path / name)
        pq.write_table(table, path, row_group_size=2)  # several row groups per file
        return path

    single = {
        "train": [write("t0.parquet", pa.table({"id": ["p1", "p2", "p3"], "query_id": ["q1", "q1", "q2"],
                                                "query": ["a", "a", "b"]})),
                  write("t1.parquet", pa.table({"id": ["p4", "p7"], "query_id": ["q3", "q7"], "query": ["same text", "e"]}))],
        "validation": [write("v0.parquet", pa.table({"id": ["p5"], "query_id": ["q9"], "query": ["c"]}))],
    }
    multi = {"train": [write("m0.parquet", pa.table({"comment_ids": [["t3_x", "q2", "p3"], ["t3_x", "q2", "p9"],
                                                                     ["q1", "p1"], ["q1"]]}))]}
    used = {"query_ids": {"q1"}, "query_texts": {"a", "same text"}, "pair_ids": {"p5"}}
    reasons, leaks, counters = stage.classify_leaks(single, multi, used)
    assert reasons == {"train": {0: "test_query", 1: "test_query", 3: "test_query_text"}, "validation": {0: "test_reference"}}
    # p3 survives, so the first conversation stays; ["q1", "p1"] holds a removed pair; ["q1"] is a leaf only
    assert leaks == {"train": {2: True}}
    assert counters == {"lsdscc_testset/kept-multi_turn": 3, "lsdscc_testset/kept-single_turn": 2,
                        "lsdscc_testset/removed-test_conversation": 1, "lsdscc_testset/removed-test_query": 2,
                        "lsdscc_testset/removed-test_query_text": 1, "lsdscc_testset/removed-test_reference": 1}


def test_vectorized_leak_reasons_match_the_rule():
    import pyarrow as pa

    from lsdscc.testset.assemble import leak_reason, leak_reasons_batch

    used = {"query_ids": {"q1", "q4"}, "query_texts": {"a", "d"}, "pair_ids": {"p3", "p1", "p6"}}
    ids, qids, texts = ["p1", "p2", "p3", "p4", "p5", "p6"], ["q1", "q2", "q3", "q4", "q5", "q6"], ["x", "a", "y", "d", "z", "w"]
    expected = [leak_reason(p, q, t, used) for p, q, t in zip(ids, qids, texts)]
    assert expected == ["test_query", "test_query_text", "test_reference", "test_query", None, "test_reference"]
    assert leak_reasons_batch(pa.array(ids), pa.array(qids), pa.array(texts), used) == expected


def test_remote_folder_is_a_user_error():
    from pipelines.lsdscc.testset import run_testset_stage

    with pytest.raises(UserError, match="needs a local corpus folder"):
        run_testset_stage("gs://bucket/lsdscc", stage_args())


def test_build_prints_the_test_set_counts_on_one_line_with_its_total_time():
    from multiref_cli.lsdscc.build import format_testset_counts

    line = format_testset_counts({"candidates": 3036, "lucene_index_reused": False, "test_queries": 300,
                                  "seconds": {"lucene_index": 1.6, "total": 5.24}})
    assert line == "test set: candidates 3,036, lucene_index_reused false, test_queries 300 (5.2 s)"
    assert format_testset_counts({"test_queries": 3}) == "test set: test_queries 3"
