"""Paragraph-vector re-ranking of retrieved queries (docs/algorithms.md#test-set-step-2-doc2vec-re-ranking).

A gensim ``Doc2Vec`` model is trained on every distinct sentence of the corpus (or a seeded
sample of a large one, below), queries and responses. Training reads a plain-text file, one
sentence per line (gensim's ``corpus_file`` mode: fast, and each document's tag is its line
number). The file lists the distinct query texts first (sorted), then the distinct response
texts that are not also queries (sorted), so a query's tag is its index in the sorted list
of distinct query texts.

**Decision: trained document vectors, not inferred ones.** The candidates to re-rank are
corpus queries, hence training documents: their trained vectors exist, need no extra
inference and carry no inference noise. The cosine of two queries is the cosine of their
trained vectors (``model.dv``). Candidates are kept when ``cosine >= threshold``
(default 0.9, the paper's) and ordered by cosine, highest first.

**Decision: a large corpus trains on a seeded sample, the compared queries always in it.**
Training costs time and memory in proportion to the distinct sentences, and the re-ranking
reads only the vectors of the sampled queries and of their Lucene hits (at most
300 x 101 texts). When the corpus has more than ``sample`` (``--doc2vec-sample``, default
2,000,000) distinct sentences, the model is trained on those compared query texts plus the
other sentences of lowest ``sha256("<seed>:<text>")``, up to ``sample`` in all
(:func:`select_training`): the choice depends on the texts and the seed only, not on the
corpus's order or sharding, and every vector read is still a trained one (none inferred).
The default trains the paper's corpus (738,095 pairs: about a million distinct sentences)
and the bundled sample in full; docs/testset.md#doc2vec-on-a-sample gives the measured cost
and the overlap of the re-ranked neighbours with the full-corpus model.

Reproducibility: with ``workers == 1`` the model, and so every cosine, is the same on every
run (gensim seeds its vectors from ``seed``); more workers train faster but the thread
scheduling (gensim's lock-free updates) makes the vectors differ between runs, so the
default is 1 (docs/testset.md: measured).

**Decision: every core through independent parts, not shared weights.** ``parts`` above 1
(``--doc2vec-parts``) trains that many independent single-threaded models, each on the
compared texts plus its hashed share of the other sentences, in up to one process per core,
and compares the concatenation of their normalised vectors
(:mod:`lsdscc.testset.doc2vec_parts`): the same bytes in one process or many. Default 1:
one model, as before (its card and cache key do not mention ``parts``).
"""

from __future__ import annotations

import contextlib
import hashlib
import heapq
import logging
import os
from dataclasses import dataclass
from typing import Collection, Iterable, Sequence

from multiref.util.errors import UserError
from multiref.util.options import option

_LOG = logging.getLogger(__name__)
EMPTY = "<empty>"  # stands for an empty sentence so that line numbers stay tags


@dataclass(frozen=True)
class Doc2VecConfig:
    """Doc2Vec options (gensim names) plus the re-ranking ``threshold``."""

    vector_size: int = option(100, flag="--doc2vec-vector-size", low=1, high=4096, help="dimensions of the vectors")
    epochs: int = option(10, flag="--doc2vec-epochs", low=1, high=1000, help="training passes over the sentences")
    window: int = option(5, flag="--doc2vec-window", low=1, high=1000, help="context window, in words")
    min_count: int = option(2, flag="--doc2vec-min-count", low=1, help="words seen fewer times are ignored")
    workers: int = option(1, flag="--doc2vec-workers", low=1, high=64,
                          help="training threads; 1 is reproducible, more is faster but not bit-reproducible")
    dm: int = option(1, flag="--doc2vec-dm", choices=(0, 1), help="1: PV-DM (gensim's default), 0: PV-DBOW")
    seed: int = option(1, flag="--testset-seed", help="seed of the sampling and of Doc2Vec")
    threshold: float = option(0.9, flag="--doc2vec-threshold", low=-1.0, high=1.0,
                              help="keep similar queries with Doc2Vec cosine >= this")
    sample: int = option(2_000_000, flag="--doc2vec-sample", metavar="N", low=1,
                         help="train on at most N distinct sentences: a larger corpus trains on a seeded sample "
                              "that always holds the queries the re-ranking compares")
    parts: int = option(1, flag="--doc2vec-parts", metavar="N", low=1, high=64,
                        help="train N independent single-threaded models, each on the compared queries and its "
                             "1/N share of the other sentences, in up to N processes (one per core), and compare "
                             "their concatenated vectors: the same bytes on every machine; 1: one model")

    def __post_init__(self):
        for name in ("vector_size", "epochs", "window", "workers", "sample", "parts"):
            if getattr(self, name) < 1:
                raise UserError(f"doc2vec {name} must be at least 1, got {getattr(self, name)}")
        if self.parts > 64:  # each part is a model and a process
            raise UserError(f"doc2vec parts must be at most 64, got {self.parts}")
        if self.min_count < 1:
            raise UserError(f"doc2vec min_count must be at least 1, got {self.min_count}")
        if self.dm not in (0, 1):
            raise UserError(f"doc2vec dm must be 0 (PV-DBOW) or 1 (PV-DM), got {self.dm}")
        if self.parts > 1 and self.workers > 1:
            raise UserError(f"--doc2vec-parts {self.parts} trains one single-threaded model per part: "
                            f"--doc2vec-workers must be 1, got {self.workers}")
        if not -1.0 <= self.threshold <= 1.0:
            raise UserError(f"doc2vec threshold is a cosine in [-1, 1], got {self.threshold}")

    def model_options(self) -> dict:
        """The options the trained model depends on (its cache key; not the threshold).
        ``parts`` only when above 1 (a one-model build keeps its card and cache key)."""
        options = {"vector_size": self.vector_size, "epochs": self.epochs, "window": self.window,
                   "min_count": self.min_count, "workers": self.workers, "dm": self.dm, "seed": self.seed,
                   "sample": self.sample}
        return dict(options, parts=self.parts) if self.parts > 1 else options

    def options(self) -> dict:
        """Every option that changes the data (for the dataset card)."""
        return dict(self.model_options(), threshold=self.threshold)


def _line(text: str) -> str:
    text = " ".join(text.split())
    return text if text else EMPTY


def write_sentences(path: str, query_texts: Sequence[str], response_texts: Iterable[str]) -> int:
    """Write the training file: ``query_texts`` (distinct, sorted; line i = tag i), then the
    distinct ``response_texts`` that are not queries, sorted. Returns the number of lines."""
    queries = set(query_texts)
    responses = sorted({t for t in response_texts if t not in queries})
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        for text in query_texts:
            fh.write(_line(text) + "\n")
        for text in responses:
            fh.write(_line(text) + "\n")
    os.replace(tmp, path)
    return len(query_texts) + len(responses)


def train(sentences_path: str, config: Doc2VecConfig):
    """Train a gensim Doc2Vec model on ``sentences_path`` (one document per line).

    Progress (one tick per epoch) goes to stderr when enabled (:mod:`multiref.util.progress`);
    an empty file is a UserError (gensim cannot build a vocabulary from nothing).
    """
    from gensim.models.doc2vec import Doc2Vec

    from multiref.util import progress

    if not os.path.exists(sentences_path) or os.path.getsize(sentences_path) == 0:
        raise UserError(f"Doc2Vec has no sentences to train on ({sentences_path} is empty): the corpus has no "
                        "pairs; build it from more input")
    with progress.task("Doc2Vec training", total=config.epochs, unit="epochs") as bar:
        model = Doc2Vec(
            corpus_file=sentences_path,
            vector_size=config.vector_size,
            epochs=config.epochs,
            window=config.window,
            min_count=config.min_count,
            workers=config.workers,
            dm=config.dm,
            seed=config.seed,
            callbacks=[_epoch_ticks(bar)],
        )
    model.callbacks = ()  # the progress bar is not part of the saved model
    return model


@dataclass(frozen=True)
class TrainingSet:
    """The sentences a model is trained on: ``queries`` (distinct, sorted: tag i =
    ``queries[i]``), then ``responses`` (distinct, sorted, none a query), chosen from the
    corpus's ``documents`` distinct sentences (:func:`select_training`)."""

    queries: Sequence[str]
    responses: Sequence[str]
    documents: int

    @property
    def size(self) -> int:
        return len(self.queries) + len(self.responses)

    @property
    def sampled(self) -> bool:
        return self.size < self.documents

    def counts(self) -> dict:
        """For the dataset card: whether a sample was used, its size and the corpus's."""
        return {"doc2vec_sampled": self.sampled, "doc2vec_trained_sentences": self.size,
                "doc2vec_corpus_sentences": self.documents}

    def digest(self) -> str:
        """sha256 of the trained sentences (part of a sampled model's cache key)."""
        digest = hashlib.sha256()
        for text in (*self.queries, "\0", *self.responses):
            digest.update(text.encode("utf-8") + b"\n")
        return digest.hexdigest()


def _rank(seed: int, text: str) -> bytes:
    return hashlib.sha256(f"{seed}:{text}".encode("utf-8")).digest()


def select_training(query_texts: Sequence[str], response_texts: Iterable[str], config: Doc2VecConfig,
                    needed: Collection[str] = ()) -> TrainingSet:
    """The sentences to train on (module docstring): every distinct sentence when there are
    at most ``config.sample``; otherwise the ``needed`` query texts (those whose vectors will
    be read) plus the other sentences of lowest ``sha256("<seed>:<text>")``, up to
    ``config.sample`` in all. ``query_texts``: distinct, sorted. Same texts and options, same
    choice, whatever the order of ``response_texts``."""
    queries = set(query_texts)
    responses = sorted({t for t in response_texts if t not in queries})
    documents = len(query_texts) + len(responses)
    if documents <= config.sample:
        return TrainingSet(list(query_texts), responses, documents)
    keep = {t for t in needed if t in queries}
    others = (t for texts in (query_texts, responses) for t in texts if t not in keep)
    keep.update(heapq.nsmallest(max(config.sample - len(keep), 0), others, key=lambda t: _rank(config.seed, t)))
    return TrainingSet([t for t in query_texts if t in keep], [t for t in responses if t in keep], documents)


def sample_note(training: TrainingSet, config: Doc2VecConfig) -> str:
    """A sentence for the card's description when ``training`` is a sample, else ''."""
    if not training.sampled:
        return ""
    return (f" Doc2Vec was trained on a seeded sample of {training.size:,} of the corpus's {training.documents:,} "
            f"distinct sentences (--doc2vec-sample {config.sample:,}, seed {config.seed}), every query the "
            "re-ranking compares among them.")


@contextlib.contextmanager
def sentence_file(training: TrainingSet, workdir: str, name: str = "sentences.txt"):
    """The path of ``training``'s sentences written to ``workdir/name`` (:func:`write_sentences`),
    removed when the block ends."""
    path = os.path.join(workdir, name)
    write_sentences(path, training.queries, training.responses)
    try:
        yield path
    finally:
        os.remove(path)


def train_set(training: TrainingSet, config: Doc2VecConfig, workdir: str):
    """Train on ``training`` (:func:`sentence_file` in ``workdir``)."""
    with sentence_file(training, workdir) as sentences:
        return train(sentences, config)


def _epoch_ticks(bar):
    """A gensim callback that advances ``bar`` once per epoch (gensim imported here, lazily)."""
    from gensim.models.callbacks import CallbackAny2Vec

    class EpochTicks(CallbackAny2Vec):
        def on_epoch_end(self, model):
            bar.update()

    return EpochTicks()


def load(path: str):
    """Load a model saved by :func:`train` + ``model.save``; UserError if unreadable."""
    from gensim.models.doc2vec import Doc2Vec

    try:
        return Doc2Vec.load(path)
    except Exception as exc:  # noqa: BLE001 - pickle/numpy errors of a broken file
        raise UserError(f"cannot load Doc2Vec model {path}: {exc}") from None


class QueryVectors:
    """Cosine similarity between corpus queries, from a model's trained document vectors.

    ``query_texts`` is the sorted list of distinct query texts the model was trained with
    (tag i = ``query_texts[i]``).
    """

    def __init__(self, model, query_texts: Sequence[str]):
        self._set(model.dv.vectors[: len(query_texts)], query_texts)

    @classmethod
    def of_rows(cls, vectors, texts: Sequence[str]) -> "QueryVectors":
        """From ``vectors``, row i the vector of ``texts[i]``."""
        self = cls.__new__(cls)
        self._set(vectors, texts)
        return self

    def _set(self, vectors, texts: Sequence[str]) -> None:
        import numpy as np

        self._index = {text: i for i, text in enumerate(texts)}
        vectors = np.asarray(vectors, dtype=np.float64)
        norms = np.linalg.norm(vectors, axis=1)
        norms[norms == 0] = 1.0
        self._unit = vectors / norms[:, None]

    def cosine(self, text_a: str, text_b: str) -> float:
        """Cosine of the trained vectors of two corpus query texts, rounded to 6 decimals."""
        a, b = self._index[text_a], self._index[text_b]
        return round(float(self._unit[a] @ self._unit[b]), 6)

    def rerank(self, query: str, candidates: Sequence, text_of, threshold: float) -> list:
        """Candidates whose query text has ``cosine >= threshold`` with ``query``.

        ``text_of(candidate)`` gives a candidate's query text. Returns ``[(candidate,
        cosine)]``, highest cosine first; ties keep the input (Lucene) order.
        """
        scored = [(c, self.cosine(query, text_of(c))) for c in candidates]
        kept = [(c, s) for c, s in scored if s >= threshold]
        return sorted(kept, key=lambda pair: -pair[1])
