"""Paragraph-vector re-ranking of retrieved queries (docs/algorithms.md#test-set-step-2-doc2vec-re-ranking).

A gensim ``Doc2Vec`` model is trained on every distinct sentence of the corpus, queries and
responses. Training reads a plain-text file, one sentence per line (gensim's ``corpus_file``
mode: fast, and each document's tag is its line number). The file lists the distinct query
texts first (sorted), then the distinct response texts that are not also queries (sorted),
so a query's tag is its index in the sorted list of distinct query texts.

**Decision: trained document vectors, not inferred ones.** The candidates to re-rank are
corpus queries, hence training documents: their trained vectors exist, need no extra
inference and carry no inference noise. The cosine of two queries is the cosine of their
trained vectors (``model.dv``). Candidates are kept when ``cosine >= threshold``
(default 0.9, the paper's) and ordered by cosine, highest first.

Reproducibility: with ``workers == 1`` the model, and so every cosine, is the same on every
run (gensim seeds its vectors from ``seed``); more workers train faster but the thread
scheduling makes the vectors differ slightly between runs.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from typing import Iterable, Sequence

from multiref.util.errors import UserError
from multiref.util.options import option

_LOG = logging.getLogger(__name__)
EMPTY = "<empty>"  # stands for an empty sentence so that line numbers stay tags


@dataclass(frozen=True)
class Doc2VecConfig:
    """Doc2Vec options (gensim names) plus the re-ranking ``threshold``."""

    vector_size: int = option(100, flag="--doc2vec-vector-size", help="dimensions of the vectors")
    epochs: int = option(10, flag="--doc2vec-epochs", help="training passes over the sentences")
    window: int = option(5, flag="--doc2vec-window", help="context window, in words")
    min_count: int = option(2, flag="--doc2vec-min-count", help="words seen fewer times are ignored")
    workers: int = option(1, flag="--doc2vec-workers",
                          help="training threads; 1 is reproducible, more is faster but not bit-reproducible")
    dm: int = option(1, flag="--doc2vec-dm", choices=(0, 1), help="1: PV-DM (gensim's default), 0: PV-DBOW")
    seed: int = option(1, flag="--testset-seed", help="seed of the sampling and of Doc2Vec")
    threshold: float = option(0.9, flag="--doc2vec-threshold", help="keep similar queries with Doc2Vec cosine >= this")

    def __post_init__(self):
        for name in ("vector_size", "epochs", "window", "workers"):
            if getattr(self, name) < 1:
                raise UserError(f"doc2vec {name} must be at least 1, got {getattr(self, name)}")
        if self.min_count < 1:
            raise UserError(f"doc2vec min_count must be at least 1, got {self.min_count}")
        if self.dm not in (0, 1):
            raise UserError(f"doc2vec dm must be 0 (PV-DBOW) or 1 (PV-DM), got {self.dm}")
        if not -1.0 <= self.threshold <= 1.0:
            raise UserError(f"doc2vec threshold is a cosine in [-1, 1], got {self.threshold}")

    def model_options(self) -> dict:
        """The options the trained model depends on (its cache key; not the threshold)."""
        return {"vector_size": self.vector_size, "epochs": self.epochs, "window": self.window,
                "min_count": self.min_count, "workers": self.workers, "dm": self.dm, "seed": self.seed}

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


def train_on(query_texts: Sequence[str], response_texts: Iterable[str], config: Doc2VecConfig, workdir: str):
    """Train on ``query_texts`` (distinct, sorted: tag i = ``query_texts[i]``) and the
    responses (:func:`write_sentences`), the sentence file written in ``workdir`` and removed.
    Returns ``(model, number of sentences)``; pass the model and ``query_texts`` to
    :class:`QueryVectors`."""
    sentences = os.path.join(workdir, "sentences.txt")
    n = write_sentences(sentences, query_texts, response_texts)
    try:
        model = train(sentences, config)
    finally:
        os.remove(sentences)
    return model, n


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
        import numpy as np

        self._index = {text: i for i, text in enumerate(query_texts)}
        vectors = model.dv.vectors[: len(query_texts)].astype(np.float64)
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
