"""Doc2Vec in independent parts, one process per part: every core, the same bytes (``--doc2vec-parts``).

gensim's own ``workers > 1`` is not reproducible (its threads update shared vectors without
locks). Here the training set (:class:`lsdscc.testset.doc2vec.TrainingSet`) is split into
``parts`` independent models instead (:func:`split_training`): every part trains on the
``needed`` query texts (those whose vectors the re-ranking reads) plus its own share of the
other sentences, chosen by ``sha256("doc2vec-part:<seed>:<text>")`` modulo ``parts``; each is
an ordinary single-threaded gensim Doc2Vec of the stage's options with its own seed
(:func:`part_seed`). A needed text's vector is the concatenation of its part vectors, each
L2-normalised and scaled by ``1 / sqrt(parts)`` (:func:`concatenate`), so the cosine of two
texts is the mean of the parts' cosines. Nothing is shared between parts, so they run in
``min(parts, cores)`` processes (``spawn``: the stage's process holds a JVM) and give the
same bytes in one process or many, on any machine.

Each part trains on about ``1 / parts`` of the sentences (plus the needed ones), so two
parts on two cores take a little over half the wall time. Measured (docs/testset.md): at
200,000 and 1,000,000 generated pairs, recall@10 of the re-ranked hits against one model
0.448 and 0.436, where one model with another seed gives 0.464 and 0.434; wall time 0.53x
and 0.57x, CPU 1.00x and 1.08x. The mean of two cosines is less often extreme than one, so
fewer hits pass a high threshold. Worker processes are started with ``spawn``: a script that
calls this with ``processes`` above 1 needs the usual ``if __name__ == "__main__":`` guard.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from dataclasses import dataclass, replace
from typing import Collection, Sequence

import numpy as np

from lsdscc.testset import doc2vec
from multiref.util.errors import UserError


def part_seed(seed: int, part: int) -> int:
    """Part ``part``'s gensim seed: 31 bits of ``sha256("doc2vec-part:<seed>:<part>")``."""
    digest = hashlib.sha256(f"doc2vec-part:{seed}:{part}".encode()).digest()
    return int.from_bytes(digest[:4], "big") >> 1


def _part_of(seed: int, text: str, parts: int) -> int:
    digest = hashlib.sha256(f"doc2vec-part:{seed}:{text}".encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % parts


def split_training(training: doc2vec.TrainingSet, needed: Collection[str], parts: int, seed: int) -> list:
    """The parts' training sets: each holds the ``needed`` texts among ``training.queries``,
    and the other sentences go to one part each by their hash (module docstring)."""
    if parts < 2:
        raise ValueError(f"parts must be at least 2, got {parts}")
    needed = set(needed)
    query_part = {t: _part_of(seed, t, parts) for t in training.queries if t not in needed}
    response_part = [_part_of(seed, t, parts) for t in training.responses]
    return [doc2vec.TrainingSet([t for t in training.queries if t in needed or query_part[t] == k],
                                [t for t, p in zip(training.responses, response_part) if p == k], training.documents)
            for k in range(parts)]


def part_config(config: doc2vec.Doc2VecConfig, part: int) -> doc2vec.Doc2VecConfig:
    """One part's options: the stage's, with the part's seed, one worker, one part."""
    return replace(config, seed=part_seed(config.seed, part), workers=1, parts=1)


def concatenate(part_vectors: Sequence[np.ndarray]) -> np.ndarray:
    """Vectors ``(n, sum d_k)`` (float32) from the parts' ``(n, d_k)``: each row of each part
    L2-normalised (a zero row stays zero) and scaled by ``1 / sqrt(parts)``."""
    scale = 1.0 / np.sqrt(len(part_vectors))
    out = []
    for vectors in part_vectors:
        vectors = np.asarray(vectors, dtype=np.float64)
        norms = np.linalg.norm(vectors, axis=1)
        norms[norms == 0] = 1.0
        out.append(vectors * (scale / norms)[:, None])
    return np.concatenate(out, axis=1).astype(np.float32)


@dataclass(frozen=True)
class PartVectors:
    """The concatenated vectors of ``texts`` (sorted needed query texts), one row each."""

    texts: tuple
    vectors: np.ndarray

    def save(self, path: str) -> None:
        """Write the vectors (``.npy`` format) to ``path``; the texts are the caller's key."""
        with open(path, "wb") as fh:
            np.save(fh, self.vectors, allow_pickle=False)

    @classmethod
    def load(cls, path: str, texts: Sequence[str]) -> "PartVectors":
        """Read :meth:`save`'s file for ``texts``; UserError if unreadable or not one row each."""
        try:
            with open(path, "rb") as fh:
                vectors = np.load(fh, allow_pickle=False)
        except (OSError, ValueError) as exc:
            raise UserError(f"cannot load Doc2Vec part vectors {path}: {exc}") from None
        if vectors.ndim != 2 or vectors.shape[0] != len(texts):
            raise UserError(f"cannot load Doc2Vec part vectors {path}: {vectors.shape} vectors for {len(texts)} texts")
        return cls(tuple(texts), vectors)

    def query_vectors(self) -> doc2vec.QueryVectors:
        return doc2vec.QueryVectors.of_rows(self.vectors, self.texts)


def needed_texts(training: doc2vec.TrainingSet, needed: Collection[str]) -> list:
    """The texts whose vectors :func:`train` returns: the ``needed`` training queries, sorted."""
    return sorted(set(needed) & set(training.queries))


def texts_digest(texts: Sequence[str]) -> str:
    """sha256 of ``texts`` (part of the parts' cache key: they choose every part's sentences)."""
    digest = hashlib.sha256()
    for text in texts:
        digest.update(text.encode("utf-8") + b"\n")
    return digest.hexdigest()


def _train_part(args: tuple) -> np.ndarray:
    """Train one part on its sentence file (here, or in a worker process with its progress
    off): the vectors of its lines ``rows``, in order."""
    path, config, rows, silent = args
    if silent:
        from multiref.util import progress

        progress.configure(quiet=True)
    model = doc2vec.train(path, config)
    return np.array(model.dv.vectors[rows], dtype=np.float32)


def train_vectors(training: doc2vec.TrainingSet, config: doc2vec.Doc2VecConfig, workdir: str,
                  needed: Collection[str] = ()):
    """The stage's training: one gensim model on ``training`` (:func:`lsdscc.testset.doc2vec.train_set`)
    or, with ``config.parts`` above 1, the parts' vectors of the ``needed`` texts (:func:`train`)."""
    if config.parts == 1:
        return doc2vec.train_set(training, config, workdir)
    return train(training, config, workdir, needed)


def vectors_of(model, training: doc2vec.TrainingSet) -> doc2vec.QueryVectors:
    """The :class:`lsdscc.testset.doc2vec.QueryVectors` of what :func:`train_vectors` returned for ``training``."""
    if isinstance(model, PartVectors):
        return model.query_vectors()
    return doc2vec.QueryVectors(model, training.queries)


def processes_for(parts: int) -> int:
    """``min(parts, cores)``: the cores this process may run on (the bytes never depend on it)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(parts, cores))


def train(training: doc2vec.TrainingSet, config: doc2vec.Doc2VecConfig, workdir: str, needed: Collection[str],
          processes: int | None = None) -> PartVectors:
    """Train ``config.parts`` parts on ``training`` (:func:`split_training`; sentence files
    in ``workdir``, removed) in ``processes`` processes (default :func:`processes_for`; 1:
    here, one part after the other) and return the concatenated vectors of the ``needed``
    query texts. Same bytes for any ``processes``."""
    texts = needed_texts(training, needed)
    if not texts:
        raise ValueError("Doc2Vec parts need the query texts whose vectors will be read (none given)")
    processes = processes_for(config.parts) if processes is None else processes
    with contextlib.ExitStack() as files:
        jobs = []
        for k, part in enumerate(split_training(training, texts, config.parts, config.seed)):
            path = files.enter_context(doc2vec.sentence_file(part, workdir, f"sentences-part{k}.txt"))
            row = {t: i for i, t in enumerate(part.queries)}
            jobs.append((path, part_config(config, k), [row[t] for t in texts], processes > 1))
        return PartVectors(tuple(texts), concatenate(train_files(jobs, processes)))


def train_files(jobs: list, processes: int) -> list:
    """Train a model per job ``(sentence file, config, rows, silent)`` (:func:`_train_part`)
    and return the vectors of its lines ``rows``, in job order: here, one after the other
    (``processes`` 1), or in ``processes`` ``spawn`` workers."""
    if processes == 1:
        return [_train_part(job) for job in jobs]
    import multiprocessing as mp

    from multiref.util import progress

    with progress.task("Doc2Vec training", total=len(jobs), unit="parts") as bar:
        pool = mp.get_context("spawn").Pool(min(processes, len(jobs)))
        try:
            out = []
            for vectors in pool.imap(_train_part, jobs, chunksize=1):
                out.append(vectors)
                bar.update()
            pool.close()
        except BaseException:
            pool.terminate()
            raise
        finally:
            pool.join()  # the workers' CPU time is counted once they are waited for
    return out
