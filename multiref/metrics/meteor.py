"""METEOR: NLTK's (``impl="nltk"``, the default) or METEOR 1.5's jar (``impl="1.5"``, as nlg-eval;
:mod:`multiref.metrics.meteor_jar`), docs/algorithms.md sections 4 and 8.

``impl:`` is in the signature. METEOR 1.5 has its own parameters (``-l en``: exact, stem,
synonym and paraphrase modules, its tuned weights) and normalizes and lower-cases itself
(``-norm``); the tokens are sent joined by single spaces. Its multi-reference form (``max``)
is the jar's own (the best reference); :meth:`Meteor.score_items` then gives the jar's aggregate
over all segments (nlg-eval's and pycocoevalcap's corpus METEOR) and per item the mean of its
segment scores.

Scores come from ``nltk.translate.meteor_score`` (NLTK 3.10): exact, Porter-stem and WordNet
synonym matching in that order, then::

    P = m / |hyp|   R = m / |ref|   Fmean = P R / (alpha P + (1 - alpha) R)
    penalty = gamma * (chunks / m) ** beta      score = (1 - penalty) * Fmean

(Lavie & Agarwal 2007; NLTK defaults alpha = 0.9, beta = 3, gamma = 0.5). NLTK lower-cases
both sides itself (``preprocess=str.lower``) whatever the ``lowercase`` option says.

Multi-reference (option ``aggregate``): ``max`` (default) is NLTK's own ``meteor_score``
(the best single-reference score); ``mean`` averages over references.

NLTK's METEOR requires WordNet, which is NOT downloaded: it is looked for, at construction, as
``corpora/wordnet/`` or ``corpora/wordnet.zip`` under the folders in the ``NLTK_DATA``
environment variable and ``nltk.data.path``, then as Debian's ``wordnet`` package
(``apt-get install wordnet``: ``/usr/share/wordnet``). NLTK cannot read that folder as it is
(it lacks ``lexnames`` and ``index.sense``, and a symbolic link to it "escapes" NLTK's root), so
its database files are copied once into ``$XDG_CACHE_HOME/multiref/nltk_data/corpora/wordnet``
(default ``~/.cache``), with ``lexnames`` written from the table of WordNet 3.0's lexnames(5WN)
manual page and an empty ``index.sense`` (sense keys, which METEOR never looks up). Without any WordNet a one-line :class:`UserError` says what to do. The
reader itself is loaded on first use and shared per process. The signature records the
WordNet version read from the data files' header (``wn:3.0``, or ``wn:unknown``).
"""

from __future__ import annotations

import os
import threading
import warnings

from multiref.util.errors import UserError
from multiref.metrics.base import Metric
from multiref.util.defaults import TOKENIZER

_READERS: dict = {}
_LOCK = threading.Lock()
_REQUIRED_FILES = ("lexnames", "index.noun", "data.noun")
#: where Debian's and Ubuntu's ``wordnet`` package (``wordnet-base``) puts the WordNet 3.0 database
DEBIAN_WORDNET = "/usr/share/wordnet"
#: WordNet 3.0's lexicographer files, numbered 00..44 (the lexnames(5WN) manual page)
LEXNAMES = (
    "adj.all adj.pert adv.all noun.Tops noun.act noun.animal noun.artifact noun.attribute noun.body noun.cognition "
    "noun.communication noun.event noun.feeling noun.food noun.group noun.location noun.motive noun.object "
    "noun.person noun.phenomenon noun.plant noun.possession noun.process noun.quantity noun.relation noun.shape "
    "noun.state noun.substance noun.time verb.body verb.change verb.cognition verb.communication verb.competition "
    "verb.consumption verb.contact verb.creation verb.emotion verb.motion verb.perception verb.possession "
    "verb.social verb.stative verb.weather adj.ppl").split()
_SYNTACTIC_CATEGORY = {"noun": 1, "verb": 2, "adj": 3, "adv": 4}
METEOR_IMPLS = ("nltk", "1.5")
_NLTK_PARAMETERS = (0.9, 3.0, 0.5)  # alpha, beta, gamma: NLTK's defaults


def nltk_data_paths() -> list:
    """Folders searched for NLTK data: ``NLTK_DATA`` entries first, then ``nltk.data.path``."""
    import nltk.data

    paths = [p for p in os.environ.get("NLTK_DATA", "").split(os.pathsep) if p]
    for p in nltk.data.path:
        if isinstance(p, str) and p not in paths:
            paths.append(p)
    return paths


def find_wordnet(paths=None) -> tuple:
    """``(data_root, location)`` of the first WordNet found: ``location`` is the
    ``corpora/wordnet`` folder or the ``corpora/wordnet.zip`` file under ``data_root``.

    Raises :class:`UserError` naming ``NLTK_DATA`` and the folders searched when there is none,
    or when a ``corpora/wordnet`` folder lacks the WordNet files.
    """
    paths = nltk_data_paths() if paths is None else list(paths)
    for root in paths:
        folder = os.path.join(root, "corpora", "wordnet")
        if os.path.isdir(folder):
            missing = [f for f in _REQUIRED_FILES if not os.path.isfile(os.path.join(folder, f))]
            if missing:
                raise UserError(f"{folder}: not a WordNet folder (missing {', '.join(missing)}); "
                                "METEOR needs NLTK's WordNet data under NLTK_DATA")
            return root, folder
        archive = folder + ".zip"
        if os.path.isfile(archive):
            return root, archive
    if os.path.isfile(os.path.join(DEBIAN_WORDNET, "data.noun")):
        return debian_wordnet(DEBIAN_WORDNET)
    raise UserError(
        "METEOR needs WordNet: apt-get install wordnet (Debian/Ubuntu), or set NLTK_DATA to a folder containing "
        f"corpora/wordnet (none found in: {', '.join(paths) or '(no folders)'}), or use --meteor-impl 1.5"
    )


def _cache_home() -> str:
    return os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")


def debian_wordnet(source: str, cache: str | None = None) -> tuple:
    """``(data_root, folder)`` of an NLTK-readable copy of the WordNet database in ``source``
    (Debian's layout: the database files, no ``lexnames``), made once under ``cache``
    (default ``$XDG_CACHE_HOME/multiref``) and published by renaming a finished folder."""
    import shutil
    import tempfile

    root = os.path.join(cache or os.path.join(_cache_home(), "multiref"), "nltk_data")
    folder = os.path.join(root, "corpora", "wordnet")
    if os.path.isfile(os.path.join(folder, "lexnames")):
        return root, folder
    try:
        os.makedirs(os.path.dirname(folder), exist_ok=True)
        work = tempfile.mkdtemp(prefix=".wordnet-", dir=os.path.dirname(folder))
        for name in sorted(os.listdir(source)):
            path = os.path.join(source, name)
            if os.path.isfile(path):
                shutil.copyfile(path, os.path.join(work, name))  # a copy, not a link: NLTK refuses links out of its root
        if not os.path.isfile(os.path.join(work, "lexnames")):
            with open(os.path.join(work, "lexnames"), "w", encoding="ascii") as fh:
                fh.writelines(f"{i:02d}\t{name}\t{_SYNTACTIC_CATEGORY[name.split('.')[0]]}\n"
                              for i, name in enumerate(LEXNAMES))
        if not os.path.isfile(os.path.join(work, "index.sense")):
            open(os.path.join(work, "index.sense"), "w").close()  # sense keys: NLTK opens it, METEOR never reads it
        try:
            os.rename(work, folder)
        except OSError:  # another process published it first
            shutil.rmtree(work, ignore_errors=True)
    except OSError as exc:
        raise UserError(f"METEOR: cannot copy {source} for NLTK into {root} ({exc.strerror}); set XDG_CACHE_HOME "
                        "to a writable folder") from None
    return root, folder


def _open_wordnet_file(location: str, name: str):
    """Open a file of a WordNet folder or zip as text (for reading the header)."""
    if location.endswith(".zip"):
        import io
        import zipfile

        archive = zipfile.ZipFile(location)
        return io.TextIOWrapper(archive.open(f"wordnet/{name}"), encoding="utf-8", errors="replace")
    return open(os.path.join(location, name), encoding="utf-8", errors="replace")


def wordnet_version(location: str) -> str:
    """The WordNet version in ``data.adj``'s license header (``3.0``), or ``unknown``. Cheap."""
    import re

    try:
        with _open_wordnet_file(location, "data.adj") as fh:
            for line in fh:
                if not line.startswith("  "):
                    break
                match = re.search(r"Word[nN]et (\d+\+?|\d+\.\d+) Copyright", line)
                if match:
                    return match.group(1)
    except (OSError, KeyError):
        pass
    return "unknown"


def load_wordnet(root: str, location: str):
    """NLTK's ``WordNetCorpusReader`` for the WordNet at ``location`` (cached per process)."""
    with _LOCK:
        if location in _READERS:
            return _READERS[location]
        import nltk.data
        from nltk.corpus.reader.wordnet import WordNetCorpusReader

        # NLTK's reader looks its own corpus up again by name (index.sense, for the OMW map),
        # so the folder must be on nltk.data.path even when NLTK_DATA was set after import.
        if root not in nltk.data.path:
            nltk.data.path.append(root)
        pointer = nltk.data.find("corpora/wordnet.zip/wordnet/", paths=[root]) if location.endswith(".zip") \
            else location
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "multilingual functions are not available": not used here
            reader = WordNetCorpusReader(pointer, None)
        _READERS[location] = reader
        return reader


class Meteor(Metric):
    """METEOR (``meteor``). Options: ``impl`` (``nltk`` default, ``1.5``), NLTK's ``alpha`` (0.9),
    ``beta`` (3.0), ``gamma`` (0.5), ``tokenizer``, ``lowercase``, ``aggregate`` (``max`` = the
    implementation's multi-reference form, ``mean``)."""

    name = "meteor"
    version = "1"
    aggregates = ("max", "mean")
    default_aggregate = "max"

    def __init__(self, alpha: float = 0.9, beta: float = 3.0, gamma: float = 0.5, tokenizer: str = TOKENIZER,
                 lowercase: bool = False, aggregate: str | None = None, impl: str = "nltk"):
        super().__init__(tokenizer=tokenizer, lowercase=lowercase, aggregate=aggregate)
        if impl not in METEOR_IMPLS:
            raise ValueError(f"meteor: unknown impl {impl!r}; choose one of: {', '.join(METEOR_IMPLS)}")
        self.impl = impl
        self.alpha, self.beta, self.gamma = (self._number(k, v) for k, v in
                                             (("alpha", alpha), ("beta", beta), ("gamma", gamma)))
        if not 0.0 <= self.alpha <= 1.0:
            raise ValueError(f"meteor: alpha must be in [0, 1], got {alpha!r}")
        if not 0.0 <= self.gamma <= 1.0:
            raise ValueError(f"meteor: gamma must be in [0, 1], got {gamma!r}")
        if not 0.0 <= self.beta < float("inf"):  # a negative or NaN beta gave scores outside [0, 1]
            raise ValueError(f"meteor: beta must be a non-negative finite number, got {beta!r}")
        self._wordnet = None
        self._stemmer = None
        if impl == "1.5":
            if (self.alpha, self.beta, self.gamma) != _NLTK_PARAMETERS:
                raise ValueError("meteor: alpha, beta and gamma are NLTK's; METEOR 1.5 uses its own (-l en)")
            from multiref.metrics.meteor_jar import jar_folder, java_executable

            jar_folder(), java_executable()  # a UserError now, not at the first segment
            return
        self.wordnet_root, self.wordnet_location = find_wordnet()
        self.wordnet_version = wordnet_version(self.wordnet_location)
        self._wordnet = None
        self._stemmer = None

    @staticmethod
    def _number(key, value) -> float:
        try:
            return float(value)
        except (TypeError, ValueError):
            raise ValueError(f"meteor: {key} must be a number, got {value!r}") from None

    def signature_fields(self) -> list:
        if self.impl == "1.5":
            return super().signature_fields() + [("impl", "1.5"), ("lang", "en"), ("norm", "yes")]
        return super().signature_fields() + [("impl", "nltk"),
            ("alpha", f"{self.alpha:g}"), ("beta", f"{self.beta:g}"), ("gamma", f"{self.gamma:g}"),
            ("stem", "porter"), ("wn", self.wordnet_version), ("nltk", _nltk_version()),
        ]

    def _nltk_args(self) -> dict:
        if self._wordnet is None:
            from nltk.stem.porter import PorterStemmer

            self._wordnet = load_wordnet(self.wordnet_root, self.wordnet_location)
            self._stemmer = PorterStemmer()
        return dict(stemmer=self._stemmer, wordnet=self._wordnet, alpha=self.alpha, beta=self.beta, gamma=self.gamma)

    def _jar_score(self, hyp: list, refs: list) -> float:
        from multiref.metrics.meteor_jar import shared_jar

        jar = shared_jar()
        return jar.evaluate([jar.stats(" ".join(hyp), [" ".join(r) for r in refs])])[0][0]

    def pair_score(self, hypothesis: list, reference: list) -> float:
        if self.impl == "1.5":
            return self._jar_score(hypothesis, [reference])
        from nltk.translate.meteor_score import single_meteor_score

        return float(single_meteor_score(reference, hypothesis, **self._nltk_args()))

    def tokenized_sentence_score(self, hyp: list, refs: list) -> float:
        if not refs:
            raise ValueError(f"{self.name}: no references")
        if self.aggregate == "max" and self.impl == "1.5":
            return self._jar_score(hyp, refs)
        if self.aggregate == "max":
            from nltk.translate.meteor_score import meteor_score

            return float(meteor_score(refs, hyp, **self._nltk_args()))
        return super().tokenized_sentence_score(hyp, refs)

    def score_items(self, items):
        """METEOR 1.5 with ``max``: every segment's statistics, then one EVAL: ``score`` is the jar's
        aggregate (pycocoevalcap's and nlg-eval's corpus METEOR), ``per_item`` the mean of an item's
        segment scores. Otherwise the mean of item scores (:meth:`Metric.score_items`)."""
        if self.impl != "1.5" or self.aggregate != "max" or not items:
            return super().score_items(items)
        from multiref.metrics.base import Score
        from multiref.metrics.meteor_jar import shared_jar

        self._set_nrefs(items)
        jar, stats, owners = shared_jar(), [], []
        for i, item in enumerate(items):
            hyps, refs = self.tokenized_item(item)
            joined = [" ".join(r) for r in refs]
            stats += [jar.stats(" ".join(h), joined) for h in hyps]
            owners += [i] * len(hyps)
        scores, aggregate = jar.evaluate(stats)
        sums, counts, item_stats = [0.0] * len(items), [0] * len(items), [None] * len(items)
        for i, value, line in zip(owners, scores, stats):
            sums[i] += value
            counts[i] += 1
            numbers = [float(x) for x in line.split()]
            item_stats[i] = numbers if item_stats[i] is None else [a + b for a, b in zip(item_stats[i], numbers)]
        per_item = [s / c for s, c in zip(sums, counts)]
        extra = {"items": len(items), "segments": len(scores), "segment_mean": sum(scores) / len(scores)}
        return Score(self.name, float(aggregate), self.signature, per_item, extra, item_stats)

    def resampling_stats(self, score, items, vocabulary: dict | None = None):
        """METEOR 1.5: the jar's per-item statistics and its aggregate (:meth:`resample_stats`);
        NLTK's METEOR: the mean of the item scores."""
        own = self.resample_stats(score.item_stats)
        if own is None:
            return super().resampling_stats(score, items, vocabulary)
        from multiref.metrics.resampling import ItemStats

        return ItemStats(*own)

    def resample_stats(self, item_stats) -> tuple | None:
        """``(table, finish)`` for the resampling tests (:mod:`multiref.metrics.significance`): METEOR 1.5's
        per-item statistics (the jar's, summed over the item's segments) and ``finish(sums)``, the jar's
        score of each row of summed statistics, as its aggregate scores the test set's sum. None for NLTK's."""
        if self.impl != "1.5" or item_stats is None:
            return None
        import numpy as np

        from multiref.metrics.meteor_jar import shared_jar

        def finish(sums):
            jar = shared_jar()
            return np.array([jar.evaluate([" ".join(repr(float(x)) for x in row)])[1] for row in sums])

        return np.asarray(item_stats, dtype=float), finish

    def __getstate__(self):  # the reader is reloaded (once per process) where the metric is unpickled
        state = dict(self.__dict__)
        state["_wordnet"] = None
        state["_stemmer"] = None
        return state


def _nltk_version() -> str:
    import nltk

    return nltk.__version__
