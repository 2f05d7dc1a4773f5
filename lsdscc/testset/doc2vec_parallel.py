"""Prototype (not used by the stage): deterministic data-parallel Doc2Vec, parameter averaging.

gensim's own ``workers > 1`` is Hogwild (threads update the shared vectors without locks and
share one random state), so two runs differ. Here ``processes`` worker processes each hold a
copy of one model (same vocabulary, same initial weights: the model gensim builds for the
stage's sequential training, :func:`lsdscc.testset.doc2vec.train`). The sentences are split into
``processes`` fixed shards (sentence i goes to shard ``i % processes``), each cut into
``rounds`` consecutive parts. For each part of each epoch, worker k trains its shard's part
with gensim's own single-threaded ``train`` (one worker thread, alpha falling over that
part's slice of the usual linear schedule, the model's random state reseeded from
``sha256(seed, k, step)``); then the word vectors and the output weights (``syn1neg`` or
``syn1``) of all workers are combined in a fixed order (``combine="mean"``: their average;
``"sum"``: the start plus every worker's change) and every worker continues from the result.
A sentence's document vector is trained only in its shard; at the end they are gathered into
the returned model. Same sentences, options, ``processes``, ``rounds`` and ``combine``: the
same bytes on every run.

Workers are started with ``spawn`` (a clean interpreter: the stage's process holds a JVM), read
the initial model from a file in the work folder, and exchange weights through shared memory.

Measured (``benchmarks/bench_testset.py --pairs 200000 --overlap "" --overlap-processes 2``,
2 cores shared with other jobs): byte-identical across runs, but recall@10 of the re-ranked
hits against the sequential model is 0.40 for two processes (0.40 again with another seed,
with 8 combinations per epoch, or 0.35-0.37 with ``combine="sum"``), against 0.464 for the
sequential model with another seed (the noise floor; this module with one process: 0.469);
about what a half sample gives. Time: 1M pairs trained in 0.91x the sequential wall time
(143.7 s vs 157.4 s) for 8% more CPU. So the stage does not offer it.
"""

from __future__ import annotations

import glob
import hashlib
import os
from typing import Sequence

import numpy as np

_OUTPUT_WEIGHTS = ("syn1neg", "syn1")


def _shard_files(sentences_path: str, processes: int, rounds: int) -> list:
    """Split ``sentences_path`` into ``processes`` shards (line i goes to shard ``i % processes``,
    in order), each cut into ``rounds`` consecutive parts written beside it. Returns, per shard,
    ``[(path, lines, words), ...]`` per part (words: whitespace tokens, as gensim counts them)."""
    with open(sentences_path, "rb") as fh:
        total = sum(1 for _ in fh)
    if total < processes * rounds:
        raise ValueError(f"{total} sentences cannot fill {processes} shards of {rounds} parts")
    sizes = [(total - k + processes - 1) // processes for k in range(processes)]
    parts = [[[f"{sentences_path}.shard{k}.part{r}", 0, 0] for r in range(rounds)] for k in range(processes)]
    outs = [[open(path, "w", encoding="utf-8") for path, _, _ in shard] for shard in parts]
    try:
        with open(sentences_path, encoding="utf-8") as src:
            for i, line in enumerate(src):
                k, j = i % processes, i // processes
                r = j * rounds // sizes[k]
                outs[k][r].write(line)
                parts[k][r][1] += 1
                parts[k][r][2] += len(line.split())
    finally:
        for shard in outs:
            for fh in shard:
                fh.close()
    return [[tuple(part) for part in shard] for shard in parts]


def _seed(seed: int, shard: int, step: int) -> int:
    digest = hashlib.sha256(f"doc2vec-parallel:{seed}:{shard}:{step}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


def _alpha(alphas: tuple, progress: float) -> float:
    """The sequential schedule's alpha after ``progress`` (0 to 1) of the training (gensim's
    linear decay from ``alpha`` to ``min_alpha``)."""
    start, end = alphas
    return start - (start - end) * progress


def _view(raw, shape) -> np.ndarray:
    return np.frombuffer(raw, dtype=np.float32).reshape(shape)


def _combine_into(slots: np.ndarray, out: np.ndarray, combine: str) -> None:
    """Combine the workers' weights ``slots[0..P-1]`` into ``out`` (which holds the weights
    they all started the step from), in float64, in slot order (same bytes in every worker)."""
    if combine == "mean":
        total = slots[0].astype(np.float64)
        for k in range(1, len(slots)):
            total += slots[k]
        total /= len(slots)
    else:  # every worker's change applied, as a sequential pass over all shards would
        start = out.astype(np.float64)
        total = start.copy()
        for k in range(len(slots)):
            total += slots[k]
            total -= start
    out[:] = total.astype(np.float32)


def _worker(shard: int, processes: int, model_path: str, parts: list, epochs: int, seed: int, combine: str,
            shared: dict, barrier) -> None:
    """Worker ``shard`` (module docstring): ``parts`` of its shard (:func:`_shard_files`),
    each followed by a combination of the weights; ``shared``: name -> (RawArray, shape)."""
    model = _load_copy(model_path)
    docs = _view(*shared["docs"])
    mine_docs = np.ascontiguousarray(docs[shard::processes])  # this shard's documents, in its order
    names = [n for n in ("vectors",) + _OUTPUT_WEIGHTS if n in shared]
    mine = {n: _view(*shared[n])[shard] for n in names}
    combined = {n: _view(*shared[n + "_avg"]) for n in names}
    steps, first = epochs * len(parts), 0
    for step in range(steps):
        path, lines, words = parts[step % len(parts)]
        first = 0 if step % len(parts) == 0 else first
        model.dv.vectors = mine_docs[first:first + lines]  # a view: local tag t = row first + t
        model.dv.index_to_key = range(lines)
        first += lines
        model.random = np.random.RandomState(_seed(seed, shard, step))
        model.train(corpus_file=path, total_examples=lines, total_words=words, epochs=1,
                    start_alpha=_alpha(shared["alphas"], step / steps),
                    end_alpha=_alpha(shared["alphas"], (step + 1) / steps))
        for name in names:
            mine[name][:] = _weights(model, name)
        barrier.wait()
        for name in names[shard::processes]:  # each worker combines some of the matrices
            _combine_into(_view(*shared[name]), combined[name], combine)
        barrier.wait()
        for name in names:
            _weights(model, name)[:] = combined[name]
    docs[shard::processes] = mine_docs


def _load_copy(model_path: str):
    """The initial model, its word and output weights writable copies."""
    from gensim.models.doc2vec import Doc2Vec

    model = Doc2Vec.load(model_path, mmap="r")  # the big arrays are copied below, as needed
    model.wv.vectors = np.array(model.wv.vectors)
    for name in _OUTPUT_WEIGHTS:
        if getattr(model, name, None) is not None:
            setattr(model, name, np.array(getattr(model, name)))
    return model


def _weights(model, name: str) -> np.ndarray:
    return model.wv.vectors if name == "vectors" else getattr(model, name)


def train_parallel(model, sentences_path: str, epochs: int, seed: int, processes: int, workdir: str,
                   rounds: int = 1, combine: str = "mean"):
    """Train ``model`` (built by gensim on ``sentences_path``, vocabulary and initial weights
    set, not trained) for ``epochs`` epochs with ``processes`` worker processes, combining
    their weights ``rounds`` times per epoch (module docstring). Returns ``model`` with its
    trained vectors."""
    if combine not in ("mean", "sum") or processes < 1 or rounds < 1:
        raise ValueError(f"combine must be 'mean' or 'sum', processes and rounds at least 1; got "
                         f"{combine!r}, {processes}, {rounds}")
    import multiprocessing as mp

    ctx = mp.get_context("spawn")
    model_path = os.path.join(workdir, "doc2vec-initial.model")
    model.save(model_path)
    shared = {"alphas": (model.alpha, model.min_alpha)}
    docs_shape = model.dv.vectors.shape
    shared["docs"] = (ctx.RawArray("f", int(np.prod(docs_shape))), docs_shape)
    _view(*shared["docs"])[:] = model.dv.vectors
    for name in ("vectors",) + _OUTPUT_WEIGHTS:
        weights = _weights(model, name) if name == "vectors" else getattr(model, name, None)
        if weights is None or not weights.size:
            continue
        shape = (processes,) + weights.shape
        shared[name] = (ctx.RawArray("f", int(np.prod(shape))), shape)
        shared[name + "_avg"] = (ctx.RawArray("f", int(weights.size)), weights.shape)
        _view(*shared[name + "_avg"])[:] = weights  # the weights every worker starts from
    shards = _shard_files(sentences_path, processes, rounds)
    barrier = ctx.Barrier(processes)
    workers = [ctx.Process(target=_worker, name=f"doc2vec-shard-{k}",
                           args=(k, processes, model_path, shards[k], epochs, seed, combine, shared, barrier))
               for k in range(processes)]
    try:
        for w in workers:
            w.start()
        _join(workers, barrier)
    finally:
        for w in workers:
            if w.is_alive():
                w.kill()
                w.join()
        for path in [p for parts in shards for p, _, _ in parts] + glob.glob(model_path + "*"):
            os.remove(path)
    _collect(model, shared)
    return model


def _join(workers: Sequence, barrier) -> None:
    """Wait for every worker; if one fails, break the barrier so the others stop too."""
    pending = list(workers)
    while pending:
        for w in list(pending):
            w.join(timeout=0.2)
            if w.exitcode is None:
                continue
            pending.remove(w)
            if w.exitcode != 0:
                barrier.abort()
                raise RuntimeError(f"Doc2Vec worker {w.name} failed (exit code {w.exitcode})")


def _collect(model, shared: dict) -> None:
    model.dv.vectors = _view(*shared["docs"]).copy()
    model.dv.norms = None
    for name in ("vectors",) + _OUTPUT_WEIGHTS:
        if name in shared:
            _weights(model, name)[:] = _view(*shared[name + "_avg"])
    model.wv.norms = None


def train_file(sentences_path: str, config, processes: int, workdir: str, rounds: int = 1,
               combine: str = "mean"):
    """A Doc2Vec model of ``config`` (:class:`lsdscc.testset.doc2vec.Doc2VecConfig`) on
    ``sentences_path`` (one document per line, tag = line number), trained by
    :func:`train_parallel` with ``processes`` workers. Its vocabulary and initial weights are
    those of the sequential training's model."""
    from gensim.models.doc2vec import Doc2Vec

    model = Doc2Vec(vector_size=config.vector_size, epochs=config.epochs, window=config.window,
                    min_count=config.min_count, workers=1, dm=config.dm, seed=config.seed)
    model.build_vocab(corpus_file=sentences_path)
    return train_parallel(model, sentences_path, config.epochs, config.seed, processes, workdir, rounds, combine)
