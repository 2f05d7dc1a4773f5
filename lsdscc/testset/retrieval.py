"""Similar-query retrieval with Lucene (docs/algorithms.md#test-set-step-1-similar-queries).

Every query of the cleaned corpus is indexed once (one Lucene document per distinct
``query_id``, its text in the ``contents`` field). For each query to expand we take the
``depth`` (default 100) most similar indexed queries, the query itself excluded, scored with

- ``tfidf`` (default, the paper's choice): Lucene's ``ClassicSimilarity``, i.e. for a query
  term t in document d: ``sqrt(freq) * (1 + ln((N + 1) / (df + 1))) * 1/sqrt(|d|)``, summed
  over the query's terms (Lucene 9: no coord, no query norm);
- ``bm25``: Lucene's ``BM25Similarity(k1, b)`` (defaults 1.2 and 0.75, Lucene's own).

Lucene runs in-process through pyjnius (see :mod:`lsdscc.testset.jvm`): indexing with Anserini's
``IndexCollection`` over a ``JsonCollection`` folder (Java reads the file itself: no per-
document Python to Java call), searching with Anserini's ``SimpleSearcher.batch_search``
(multi-threaded, ties broken by document id, scores rounded by Anserini to 4 decimals).
``SimpleSearcher`` has no public switch for ClassicSimilarity, so we set its protected
``similarity`` field through JNI before the first search (its ``IndexSearcher`` is created
lazily from that field).

Analyzers (must match between index and search; recorded in the options hash):
``english`` (default; Anserini's default: Lucene's standard tokenizer, lowercasing, Lucene's
English stop words, Porter stemming), ``plain`` (same tokenizer, no stop words, no stemming)
and ``whitespace`` (split on spaces only: the corpus is already tokenized and lowercased).
"""

from __future__ import annotations

import gc
import json
import logging
import os
import shutil
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

from multiref.util.errors import UserError
from multiref.util.options import option
from lsdscc.testset.jvm import heap_error, heap_type

_LOG = logging.getLogger(__name__)

SIMILARITIES = ("tfidf", "bm25")
ANALYZERS = ("english", "plain", "whitespace")
MARKER = "multiref-index.json"


@dataclass(frozen=True)
class RetrievalConfig:
    """Options of the Lucene step. ``k1``/``b`` are read only when ``similarity == "bm25"``."""

    similarity: str = option("tfidf", flag="--similarity", choices=SIMILARITIES,
                             help="Lucene similarity for finding similar queries: tfidf = ClassicSimilarity, the "
                                  "paper's")
    k1: float = option(1.2, flag="--bm25-k1", low=0.0, high=1000.0, help="BM25 k1, with --similarity bm25, 0 to 1000")
    b: float = option(0.75, flag="--bm25-b", low=0.0, high=1.0, help="BM25 b, with --similarity bm25, 0 to 1")
    depth: int = option(100, flag="--retrieval-depth", help="similar queries retrieved per query")
    analyzer: str = option("english", flag="--lucene-analyzer", choices=ANALYZERS,
                           help="english: Porter stemming + stop words (Anserini's default); plain: neither; "
                                "whitespace: split on spaces")
    # indexing threads (search is one query at a time: 300 queries take seconds)
    threads: int = option(2, flag="--lucene-threads", help="threads for Lucene indexing")
    heap: str = option("2g", flag="--jvm-heap", parse=heap_type,
                       help="maximum JVM heap, e.g. 2g or 512m: 16m to this machine's memory")

    def __post_init__(self):
        if self.similarity not in SIMILARITIES:
            raise UserError(f"unknown similarity {self.similarity!r}; choose one of {', '.join(SIMILARITIES)}")
        if self.analyzer not in ANALYZERS:
            raise UserError(f"unknown analyzer {self.analyzer!r}; choose one of {', '.join(ANALYZERS)}")
        if self.depth < 1:
            raise UserError(f"retrieval depth must be at least 1, got {self.depth}")
        if self.threads < 1:
            raise UserError(f"retrieval threads must be at least 1, got {self.threads}")
        if self.similarity == "bm25" and not (0 <= self.k1 <= 1000 and 0 <= self.b <= 1):  # NaN fails both
            raise UserError(f"BM25 needs 0 <= k1 <= 1000 and 0 <= b <= 1, got k1={self.k1} b={self.b}")
        if heap_error(self.heap):
            raise UserError(f"--jvm-heap: {heap_error(self.heap)}")

    def options(self) -> dict:
        """The options that change the data (for the dataset card): not threads nor heap."""
        out = {"similarity": self.similarity, "depth": self.depth, "analyzer": self.analyzer}
        if self.similarity == "bm25":
            out.update(k1=self.k1, b=self.b)
        return out

    def index_options(self) -> dict:
        """The options the index itself depends on (part of the index cache key)."""
        return {"analyzer": self.analyzer, "anserini": "IndexCollection/JsonCollection"}


@dataclass(frozen=True)
class Hit:
    """One retrieved query: its ``query_id`` (the Lucene doc id) and Lucene score."""

    query_id: str
    score: float


def build_index(docs: Iterable[tuple[str, str]], index_dir: str, config: RetrievalConfig) -> int:
    """Index ``(query_id, query_text)`` pairs into a new Lucene index at ``index_dir``.

    The index is built in ``index_dir + ".tmp"`` and moved into place when complete, with a
    marker file recording the document count, so a crash never leaves a half index that a
    rerun would reuse. Returns the number of documents written.
    """
    from lsdscc.testset.jvm import java_class, start_jvm

    start_jvm(config.heap)
    tmp = index_dir + ".tmp"
    collection = index_dir + ".collection"
    for path in (tmp, collection):
        shutil.rmtree(path, ignore_errors=True)
    os.makedirs(collection)
    count = 0
    with open(os.path.join(collection, "queries.jsonl"), "w", encoding="utf-8") as fh:
        for query_id, text in docs:
            fh.write(json.dumps({"id": query_id, "contents": text}, ensure_ascii=False))
            fh.write("\n")
            count += 1
    args = ["-collection", "JsonCollection", "-input", collection, "-index", tmp,
            "-threads", str(config.threads), "-optimize", "-quiet"]
    args += {"english": [], "plain": ["-stemmer", "none", "-keepStopwords"], "whitespace": ["-pretokenized"]}[config.analyzer]
    from multiref.util import progress

    try:
        with progress.step(f"Lucene indexing {count:,} queries"):
            java_class("io.anserini.index.IndexCollection").main(args)
    except Exception as exc:  # noqa: BLE001 - a Java exception
        raise UserError(f"Lucene indexing into {index_dir} failed: {str(exc).splitlines()[0]}") from None
    finally:
        shutil.rmtree(collection, ignore_errors=True)
        gc.collect()  # release Java proxies on this thread (see pipelines.lsdscc.testset._retrieve)
    with open(os.path.join(tmp, MARKER), "w", encoding="utf-8") as fh:
        json.dump({"documents": count, "options": config.index_options()}, fh, sort_keys=True)
    shutil.rmtree(index_dir, ignore_errors=True)
    os.replace(tmp, index_dir)
    return count


def index_is_complete(index_dir: str) -> bool:
    """True when ``index_dir`` holds an index that :func:`build_index` finished."""
    return os.path.isfile(os.path.join(index_dir, MARKER))


def _analyzer(name: str):
    from lsdscc.testset.jvm import java_class

    english = java_class("io.anserini.analysis.DefaultEnglishAnalyzer")
    if name == "english":
        return english.newDefaultInstance()
    if name == "plain":
        return english.newNonStemmingInstance(java_class("org.apache.lucene.analysis.CharArraySet").EMPTY_SET)
    return java_class("org.apache.lucene.analysis.core.WhitespaceAnalyzer")()


class QuerySearcher:
    """Searches a query index built by :func:`build_index` (see the module docstring).

    Lucene's own ``IndexSearcher`` with the chosen similarity; each query is turned into a
    bag-of-words query by Anserini's ``BagOfWordsQueryGenerator`` (the query analyzed with the
    index's analyzer, one SHOULD clause per distinct term, as Anserini's ``SimpleSearcher``
    does); hits are sorted by score, then by the ``id`` field (deterministic ties).

    Raises UserError when ``index_dir`` is missing, incomplete or unreadable by Lucene.
    """

    def __init__(self, index_dir: str, config: RetrievalConfig):
        if not os.path.isdir(index_dir):
            raise UserError(f"Lucene index not found: {index_dir} (build it with `multiref lsdscc testset`)")
        if not index_is_complete(index_dir):
            raise UserError(f"Lucene index is incomplete (no {MARKER}): {index_dir}; delete it and rebuild")
        with open(os.path.join(index_dir, MARKER), encoding="utf-8") as fh:
            built = json.load(fh)
        if built.get("options") != config.index_options():
            raise UserError(f"Lucene index {index_dir} was built with {built.get('options')}, not {config.index_options()}")
        from lsdscc.testset.jvm import java_class, start_jvm

        start_jvm(config.heap)
        self.config = config
        try:
            directory = java_class("org.apache.lucene.store.FSDirectory").open(
                java_class("java.io.File")(os.path.abspath(index_dir)).toPath())
            self._reader = java_class("org.apache.lucene.index.DirectoryReader").open(directory)
        except Exception as exc:  # noqa: BLE001 - a Java exception (corrupt index)
            raise UserError(f"cannot open Lucene index {index_dir}: {str(exc).splitlines()[0]}") from None
        import jnius

        reader = jnius.cast("org.apache.lucene.index.IndexReader", self._reader)  # pick the right constructor
        self._searcher = java_class("org.apache.lucene.search.IndexSearcher")(reader)
        if config.similarity == "bm25":
            similarity = java_class("org.apache.lucene.search.similarities.BM25Similarity")(float(config.k1), float(config.b))
        else:
            similarity = java_class("org.apache.lucene.search.similarities.ClassicSimilarity")()
        self._searcher.setSimilarity(similarity)
        self.similarity_name = str(similarity.toString())
        self._analyzer = _analyzer(config.analyzer)
        self._generator = java_class("io.anserini.search.query.BagOfWordsQueryGenerator")()
        sort_field = java_class("org.apache.lucene.search.SortField")
        field_type = java_class("org.apache.lucene.search.SortField$Type")
        self._sort = java_class("org.apache.lucene.search.Sort")(
            sort_field.FIELD_SCORE, sort_field("id", field_type.STRING_VAL))
        self._ids = java_class("io.anserini.index.IndexReaderUtils")
        self._reader_for_ids = reader

    @property
    def num_docs(self) -> int:
        return int(self._reader.numDocs())

    def search(self, queries: Sequence[tuple[str, str]]) -> dict:
        """For each ``(query_id, text)``: the top ``depth`` hits, the query itself excluded.

        Returns ``{query_id: [Hit, ...]}`` best first (score, then doc id). A query whose
        text analyzes to nothing (e.g. only stop words) gets no hits.
        """
        from multiref.util import progress

        depth = self.config.depth
        out: dict = {}
        for query_id, text in progress.iterate(queries, f"Lucene top-{depth} search", unit="queries"):
            query = self._generator.buildQuery("contents", self._analyzer, text)
            top = self._searcher.search(query, depth + 1, self._sort, True)
            found = []
            for score_doc in top.scoreDocs:
                doc_id = self._ids.convertLuceneDocidToDocid(self._reader_for_ids, score_doc.doc)
                if doc_id != query_id:
                    found.append(Hit(doc_id, round(float(score_doc.score), 6)))
            out[query_id] = found[:depth]
        return out

    def close(self) -> None:
        self._reader.close()


def neighbours(index_dir: str, queries: Sequence[tuple[str, str]], config: RetrievalConfig) -> Mapping[str, list]:
    """Open the index at ``index_dir`` and return :meth:`QuerySearcher.search` of ``queries``
    (plain Python hits).

    Every Java proxy object is released here, on the calling thread, and collected before
    the caller starts other threads (Beam, gensim): a pyjnius object finalised on a foreign
    thread attaches that thread to the JVM, and a thread that exits attached crashes the JVM.
    """
    searcher = QuerySearcher(index_dir, config)
    try:
        return searcher.search(list(queries))
    finally:
        searcher.close()
        del searcher
        gc.collect()
