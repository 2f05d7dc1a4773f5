"""How much a Doc2Vec model trained on a sample changes the test set's re-ranking
(``benchmarks/bench_testset.py --overlap N[,N...]``; docs/testset.md#doc2vec-on-a-sample).

On a generated corpus folder, the stage's own steps up to the re-ranking (read, sample the
strata, Lucene index and top-``depth`` search of the sampled queries), then Doc2Vec models:

- ``full``: every distinct sentence (the reference);
- ``full, seed + 1``: the same, another ``--testset-seed``: how much Doc2Vec's own
  randomness moves the lists, the floor any sample is measured against;
- ``sample N`` (the stage's rule, :func:`lsdscc.testset.doc2vec.select_training`): N
  sentences, the compared query texts always among them (trained vectors only);
- ``sample N, inferred`` (the alternative the stage does not use): a plain seeded sample of
  N sentences; a compared text outside it gets ``infer_vector`` (gensim draws from the
  model's random state, so it is reseeded per text from ``sha256(seed:text)``: reproducible);
- ``full, parts P (data), processes N``: ``--doc2vec-parts P`` trained in N processes (the
  bytes must not depend on N); ``(dims)``/``(epochs)``: the schemes tried and not offered.

For each sampled query, the re-ranked neighbour list (hits kept at ``cosine >= threshold``,
most similar first, as the assembly uses it) and the top-k hits by cosine (no threshold)
of each model are compared with the full model's: mean Jaccard of the kept sets, mean
recall of the full model's kept set, mean recall@k of the top-k, the share of queries
whose assembled candidate references are identical, and the mean absolute cosine change.
"""

from __future__ import annotations

import hashlib
import os
import resource
import time
from dataclasses import replace


def cpu_seconds() -> float:
    """CPU seconds of this process and its finished children (the training processes)."""
    usages = map(resource.getrusage, (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return sum(u.ru_utime + u.ru_stime for u in usages)


def _retrieval_state(folder: str, configs, workdir: str) -> dict:
    """The stage's steps before Doc2Vec: queries, the sampled ones, their Lucene hits."""
    from lsdscc.testset import assemble as ts
    from lsdscc.testset import retrieval as lucene

    retrieval, _, sampling = configs
    files = ts.config_files(folder, "single_turn")
    queries, cols = ts.queries_of_tables(ts.read_table(paths) for paths in files.values())
    sample = ts.sample_queries(queries, sampling, ts.stratum_limits(queries, sampling))
    to_expand = [(qid, queries[qid].text) for ids in sample.values() for qid in ids]
    index_dir = os.path.join(workdir, "lucene-index")
    lucene.build_index(((qid, queries[qid].text) for qid in sorted(queries)), index_dir, retrieval)
    hits = lucene.neighbours(index_dir, to_expand, retrieval)
    compared = {t for _, t in to_expand} | {queries[h.query_id].text for found in hits.values() for h in found}
    return {"queries": queries, "to_expand": to_expand, "hits": hits, "compared": compared,
            "query_texts": sorted({q.text for q in queries.values()}), "responses": cols["response"]}


class _Vectors:
    """Unit vectors of the compared texts, by text (a QueryVectors stand-in for mixed
    trained and inferred vectors)."""

    def __init__(self, model, training, texts, seed: int):
        import numpy as np

        index = {t: i for i, t in enumerate(training.queries)}
        rows, self.inferred = [], 0
        for text in texts:
            if text in index:
                rows.append(model.dv.vectors[index[text]])
                continue
            model.random = np.random.RandomState(int.from_bytes(hashlib.sha256(f"{seed}:{text}".encode()).digest()[:4],
                                                                "big"))
            rows.append(model.infer_vector(text.split()))
            self.inferred += 1
        vectors = np.asarray(rows, dtype=np.float64)
        norms = np.linalg.norm(vectors, axis=1)
        norms[norms == 0] = 1.0
        self._unit, self._row = vectors / norms[:, None], {t: i for i, t in enumerate(texts)}

    def cosine(self, a: str, b: str) -> float:
        return round(float(self._unit[self._row[a]] @ self._unit[self._row[b]]), 6)


def _lists(state: dict, vectors, threshold: float, top: int, references: int) -> dict:
    """Per sampled query: (kept neighbour ids, top-k hit ids by cosine, candidate texts, cosines)."""
    from lsdscc.testset import assemble as ts

    queries, out = state["queries"], {}
    for qid, text in state["to_expand"]:
        scored = [(h, vectors.cosine(text, queries[h.query_id].text)) for h in state["hits"][qid]]
        ranked = sorted(scored, key=lambda pair: -pair[1])  # stable: ties keep the Lucene order
        kept = [(h, c) for h, c in ranked if c >= threshold]
        found = ts.assemble_candidates(queries[qid], [(queries[h.query_id], h.score, c) for h, c in kept], references)
        out[qid] = ([h.query_id for h, _ in kept], [h.query_id for h, _ in ranked[:top]],
                    [c["text"] for c in found], [c for _, c in scored])
    return out


def _compare(reference: dict, other: dict, top: int) -> dict:
    jaccard, recall, recall_k, same, diffs = [], [], [], 0, []
    for qid, (kept, best, cands, cosines) in reference.items():
        o_kept, o_best, o_cands, o_cosines = other[qid]
        union = set(kept) | set(o_kept)
        jaccard.append(len(set(kept) & set(o_kept)) / len(union) if union else 1.0)
        if kept:
            recall.append(len(set(kept) & set(o_kept)) / len(kept))
        if best:
            recall_k.append(len(set(best) & set(o_best)) / len(best))
        same += cands == o_cands
        diffs.extend(abs(a - b) for a, b in zip(cosines, o_cosines))

    def mean(values):
        return round(sum(values) / len(values), 4) if values else None

    return {"kept_jaccard_mean": mean(jaccard), "kept_recall_mean": mean(recall), f"recall_at_{top}_mean": mean(recall_k),
            "identical_candidate_lists": same, "queries": len(reference), "cosine_abs_diff_mean": mean(diffs)}


def _variant(state: dict, d2v, needed, workdir: str, texts: list, processes: int = 0, parts=0):
    """Train one model (``processes``: 0 for the stage's training, else the data-parallel
    prototype, :mod:`lsdscc.testset.doc2vec_parallel`; ``parts``: the independent parts of
    :mod:`lsdscc.testset.doc2vec_parts` in ``processes`` processes) and read the vectors of ``texts``."""
    from lsdscc.testset import doc2vec

    start, cpu = time.perf_counter(), cpu_seconds()
    training = doc2vec.select_training(state["query_texts"], state["responses"], d2v, needed)
    if parts:
        model, training = _train_parts(training, state, d2v, workdir, parts[0], processes, parts[1])
    elif processes:
        model = _train_parallel(training, d2v, workdir, processes)
    else:
        model = doc2vec.train_set(training, d2v, workdir)
    vectors = _Vectors(model, training, texts, d2v.seed)
    digest = hashlib.sha256(model.dv.vectors.tobytes() + model.wv.vectors.tobytes()).hexdigest()[:16]
    info = {"trained_sentences": training.size, "inferred_vectors": vectors.inferred, "vectors_sha256": digest,
            "seconds": round(time.perf_counter() - start, 1), "cpu_seconds": round(cpu_seconds() - cpu, 1)}
    return vectors, info


def _train_parallel(training, d2v, workdir: str, processes: int):
    from lsdscc.testset.doc2vec_parallel import train_file
    from lsdscc.testset import doc2vec

    with doc2vec.sentence_file(training, workdir) as sentences:
        return train_file(sentences, d2v, processes, workdir)


def _train_parts(training, state, d2v, workdir: str, parts: int, processes: int, split: str):
    """``split`` ``data``: the stage's ``--doc2vec-parts`` (:mod:`lsdscc.testset.doc2vec_parts`);
    ``dims``/``epochs`` (tried, not offered): every part on all the sentences with its share
    of the dimensions or of the epochs. Returns (a stand-in model, the training set for
    :class:`_Vectors`)."""
    from types import SimpleNamespace

    import numpy as np

    from lsdscc.testset import doc2vec_parts

    config = replace(d2v, parts=parts)
    if split == "data":
        found = doc2vec_parts.train(training, config, workdir, state["compared"], processes)
        training, vectors = SimpleNamespace(queries=list(found.texts), size=training.size), found.vectors
    else:
        name = "vector_size" if split == "dims" else "epochs"
        total = getattr(d2v, name)
        configs = [replace(doc2vec_parts.part_config(config, k), **{name: total // parts + (k < total % parts)})
                   for k in range(parts)]
        vectors = doc2vec_parts.concatenate(_train_whole(training, configs, workdir, processes))
    return SimpleNamespace(dv=SimpleNamespace(vectors=vectors), wv=SimpleNamespace(vectors=np.zeros(0))), training


def _train_whole(training, configs, workdir: str, processes: int) -> list:
    """A model of each of ``configs`` on all of ``training``: their query vectors."""
    from lsdscc.testset import doc2vec, doc2vec_parts

    rows = list(range(len(training.queries)))
    with doc2vec.sentence_file(training, workdir) as sentences:
        return doc2vec_parts.train_files([(sentences, config, rows, processes > 1) for config in configs], processes)


def neighbour_overlap(folder: str, configs, samples, workdir: str, top: int = 10, processes=(), parts=()) -> dict:
    """The report (module docstring) for each sample size in ``samples`` and each number of
    training processes in ``processes`` (the full corpus trained twice with
    the data-parallel prototype, :mod:`lsdscc.testset.doc2vec_parallel`, with P processes: the
    second run's ``vectors_sha256`` must equal the first's) and each number of parts in
    ``parts`` (the full corpus split into P independent parts, :mod:`lsdscc.testset.doc2vec_parts`,
    trained in P processes, then in one: the same ``vectors_sha256``);
    ``configs`` are the stage's ``(RetrievalConfig, Doc2VecConfig, SamplingConfig)``."""
    _, d2v, sampling = configs
    state = _retrieval_state(folder, configs, workdir)
    texts = sorted(state["compared"])
    vectors, full_info = _variant(state, replace(d2v, sample=1 << 62), (), workdir, texts)
    reference = _lists(state, vectors, d2v.threshold, top, sampling.references)
    report = {"corpus_sentences": full_info["trained_sentences"], "compared_texts": len(texts),
              "full": dict(full_info, kept_neighbours=sum(len(v[0]) for v in reference.values())), "samples": {}}
    full = replace(d2v, sample=1 << 62)
    variants = [("full, seed + 1", replace(full, seed=d2v.seed + 1), (), 0, 0)]  # the noise floor
    for p in processes:
        variants += [(f"full, processes {p}{run}", full, (), p, 0) for run in ("", " again")]
    for spec in parts:
        p, split = (spec, "data") if isinstance(spec, int) else spec
        variants += [(f"full, parts {p} ({split}), processes {n}", full, (), n, (p, split)) for n in (p, 1)]
    for n in samples:
        variants += [(f"{n} stage", replace(d2v, sample=n), state["compared"], 0, 0),
                     (f"{n} inferred", replace(d2v, sample=n), (), 0, 0)]
    for name, config, needed, procs, n_parts in variants:
        vectors, info = _variant(state, config, needed, workdir, texts, procs, n_parts)
        lists = _lists(state, vectors, d2v.threshold, top, sampling.references)
        info.update(_compare(reference, lists, top), kept_neighbours=sum(len(v[0]) for v in lists.values()))
        report["samples"][name] = info
    return report
