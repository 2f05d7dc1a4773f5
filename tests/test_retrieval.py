"""Lucene similar-query retrieval (lsdscc/testset/retrieval.py, docs/algorithms.md#test-set-step-1-similar-queries).

Expected scores are hand-computed from Lucene 9's documented formulas:
- ClassicSimilarity (TF-IDF): sum over query terms of sqrt(tf) * idf * 1/sqrt(doc length),
  idf = 1 + ln((N + 1) / (df + 1))   (org.apache.lucene.search.similarities.ClassicSimilarity)
- BM25Similarity(k1, b): sum of idf * tf / (tf + k1 * (1 - b + b * dl / avgdl)),
  idf = ln(1 + (N - df + 0.5) / (df + 0.5))   (org.apache.lucene.search.similarities.BM25Similarity)
Documents are short (< 24 tokens), so Lucene's length norms are exact; our scores are
rounded to 6 decimals.
"""

from __future__ import annotations

import math
import os

import pytest

from multiref.util.errors import UserError

DOCS = [
    ("d1", "the dark knight is the best batman movie"),  # 8 tokens
    ("d2", "best batman movie"),  # 3 tokens, the query itself
    ("d3", "batman begins"),  # 2
    ("d4", "i love pizza"),  # 3
    ("d5", "the best pizza in town"),  # 5
]
QUERY = ("d2", "best batman movie")
N = 5
DF = {"best": 3, "batman": 3, "movie": 2}
LENGTH = {"d1": 8, "d3": 2, "d5": 5}
MATCHED = {"d1": ["best", "batman", "movie"], "d3": ["batman"], "d5": ["best"]}


def tfidf(doc):
    return sum(1 + math.log((N + 1) / (DF[t] + 1)) for t in MATCHED[doc]) / math.sqrt(LENGTH[doc])


def bm25(doc, k1, b):
    avgdl = (8 + 3 + 2 + 3 + 5) / N
    norm = k1 * (1 - b + b * LENGTH[doc] / avgdl)
    return sum(math.log(1 + (N - DF[t] + 0.5) / (DF[t] + 0.5)) * 1 / (1 + norm) for t in MATCHED[doc])


@pytest.fixture(scope="session")
def jvm():
    from lsdscc.testset.jvm import start_jvm

    return start_jvm("1g")


@pytest.fixture(scope="module")
def index(jvm, tmp_path_factory):
    from lsdscc.testset.retrieval import RetrievalConfig, build_index

    folder = str(tmp_path_factory.mktemp("lucene") / "index")
    assert build_index(DOCS, folder, RetrievalConfig(analyzer="whitespace")) == 5
    return folder


@pytest.mark.parametrize(
    "options, expected",
    [
        # hand-computed: d1 1.592436, d3 0.993814, d5 0.628543; d4 shares no term
        ({"similarity": "tfidf"}, [("d1", tfidf("d1")), ("d3", tfidf("d3")), ("d5", tfidf("d5"))]),
        # BM25 Lucene defaults: d1 0.648069, d3 0.311815, d5 0.227288
        ({"similarity": "bm25", "k1": 1.2, "b": 0.75},
         [("d1", bm25("d1", 1.2, 0.75)), ("d3", bm25("d3", 1.2, 0.75)), ("d5", bm25("d5", 1.2, 0.75))]),
        # b = 0: no length normalisation, d3 and d5 tie (0.245) and ties go by doc id
        ({"similarity": "bm25", "k1": 1.2, "b": 0.0},
         [("d1", bm25("d1", 1.2, 0.0)), ("d3", bm25("d3", 1.2, 0.0)), ("d5", bm25("d5", 1.2, 0.0))]),
        # depth 1: only the best neighbour (the query itself, d2, is never returned)
        ({"similarity": "tfidf", "depth": 1}, [("d1", tfidf("d1"))]),
    ],
)
def test_neighbours_match_hand_computed_scores(index, options, expected):
    from lsdscc.testset.retrieval import RetrievalConfig, neighbours

    config = RetrievalConfig(analyzer="whitespace", **options)
    hits = neighbours(index, [QUERY], config)["d2"]
    assert [h.query_id for h in hits] == [doc for doc, _ in expected]
    for hit, (_, score) in zip(hits, expected):
        assert hit.score == pytest.approx(score, abs=2e-6)


def test_similarity_is_the_one_asked_for(index):
    from lsdscc.testset.retrieval import QuerySearcher, RetrievalConfig

    assert QuerySearcher(index, RetrievalConfig(analyzer="whitespace")).similarity_name == "ClassicSimilarity"
    bm = QuerySearcher(index, RetrievalConfig(analyzer="whitespace", similarity="bm25", k1=0.5, b=0.3))
    assert bm.similarity_name == "BM25(k1=0.5,b=0.3)"


def test_batch_of_queries_and_query_without_match(index):
    from lsdscc.testset.retrieval import RetrievalConfig, neighbours

    hits = neighbours(index, [("d4", "i love pizza"), ("x", "zebra")], RetrievalConfig(analyzer="whitespace"))
    assert [h.query_id for h in hits["d4"]] == ["d5"]  # only d5 shares "pizza"
    assert hits["x"] == []


def test_english_analyzer_stems(jvm, tmp_path):
    # Porter stemming makes "movies" match "movie"; the whitespace analyzer does not.
    from lsdscc.testset.retrieval import RetrievalConfig, build_index, neighbours

    docs = [("a", "great movies"), ("b", "a movie"), ("c", "pizza")]
    for analyzer, expected in (("english", ["b"]), ("whitespace", [])):
        config = RetrievalConfig(analyzer=analyzer)
        folder = str(tmp_path / analyzer)
        build_index(docs, folder, config)
        assert [h.query_id for h in neighbours(folder, [("a", "great movies")], config)["a"]] == expected


def test_missing_incomplete_and_broken_index(jvm, tmp_path, index):
    from lsdscc.testset.retrieval import MARKER, QuerySearcher, RetrievalConfig

    config = RetrievalConfig(analyzer="whitespace")
    with pytest.raises(UserError, match="Lucene index not found"):
        QuerySearcher(str(tmp_path / "nowhere"), config)
    (tmp_path / "half").mkdir()
    with pytest.raises(UserError, match="incomplete"):
        QuerySearcher(str(tmp_path / "half"), config)
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / MARKER).write_text('{"documents": 1, "options": %s}' % __import__("json").dumps(config.index_options()))
    (broken / "segments_1").write_bytes(b"not a lucene file")
    with pytest.raises(UserError, match="cannot open Lucene index"):
        QuerySearcher(str(broken), config)
    with pytest.raises(UserError, match="was built with"):
        QuerySearcher(index, RetrievalConfig(analyzer="english"))
    assert os.path.isdir(index)


@pytest.mark.parametrize(
    "options, message",
    [({"similarity": "cosine"}, "unknown similarity"), ({"analyzer": "klingon"}, "unknown analyzer"),
     ({"depth": 0}, "depth"), ({"similarity": "bm25", "b": 1.5}, "BM25")],
)
def test_config_errors(options, message):
    from lsdscc.testset.retrieval import RetrievalConfig

    with pytest.raises(UserError, match=message):
        RetrievalConfig(**options)


def test_bad_heap_is_a_user_error():
    from lsdscc.testset.jvm import _valid_heap

    assert _valid_heap("2g") and _valid_heap("512m")
    assert not _valid_heap("lots") and not _valid_heap("0g") and not _valid_heap("")
