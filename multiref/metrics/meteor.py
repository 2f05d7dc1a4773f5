"""METEOR through NLTK (docs/algorithms.md sections 4 and 8).

Scores come from ``nltk.translate.meteor_score`` (NLTK 3.10): exact, Porter-stem and WordNet
synonym matching in that order, then::

    P = m / |hyp|   R = m / |ref|   Fmean = P R / (alpha P + (1 - alpha) R)
    penalty = gamma * (chunks / m) ** beta      score = (1 - penalty) * Fmean

(Lavie & Agarwal 2007; NLTK defaults alpha = 0.9, beta = 3, gamma = 0.5). NLTK lower-cases
both sides itself (``preprocess=str.lower``) whatever the ``lowercase`` option says.

Multi-reference (option ``aggregate``): ``max`` (default) is NLTK's own ``meteor_score``
(the best single-reference score); ``mean`` averages over references.

WordNet is required and is NOT downloaded: it is looked for, at construction, as
``corpora/wordnet/`` or ``corpora/wordnet.zip`` under the folders in the ``NLTK_DATA``
environment variable and ``nltk.data.path``. Without it a :class:`UserError` says so. The
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
    raise UserError(
        "METEOR needs NLTK's WordNet data: set NLTK_DATA to a folder containing corpora/wordnet "
        f"(none found in: {', '.join(paths) or '(no folders)'})"
    )


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
    """METEOR (``meteor``) via NLTK. Options: ``alpha`` (0.9), ``beta`` (3.0), ``gamma`` (0.5),
    ``tokenizer``, ``lowercase``, ``aggregate`` (``max`` = NLTK's multi-reference form, ``mean``)."""

    name = "meteor"
    version = "1"
    aggregates = ("max", "mean")
    default_aggregate = "max"

    def __init__(self, alpha: float = 0.9, beta: float = 3.0, gamma: float = 0.5, tokenizer: str = TOKENIZER,
                 lowercase: bool = False, aggregate: str | None = None):
        super().__init__(tokenizer=tokenizer, lowercase=lowercase, aggregate=aggregate)
        self.alpha, self.beta, self.gamma = (self._number(k, v) for k, v in
                                             (("alpha", alpha), ("beta", beta), ("gamma", gamma)))
        if not 0.0 <= self.alpha <= 1.0:
            raise ValueError(f"meteor: alpha must be in [0, 1], got {alpha!r}")
        if not 0.0 <= self.gamma <= 1.0:
            raise ValueError(f"meteor: gamma must be in [0, 1], got {gamma!r}")
        if not 0.0 <= self.beta < float("inf"):  # a negative or NaN beta gave scores outside [0, 1]
            raise ValueError(f"meteor: beta must be a non-negative finite number, got {beta!r}")
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
        return super().signature_fields() + [
            ("alpha", f"{self.alpha:g}"), ("beta", f"{self.beta:g}"), ("gamma", f"{self.gamma:g}"),
            ("stem", "porter"), ("wn", self.wordnet_version), ("nltk", _nltk_version()),
        ]

    def _nltk_args(self) -> dict:
        if self._wordnet is None:
            from nltk.stem.porter import PorterStemmer

            self._wordnet = load_wordnet(self.wordnet_root, self.wordnet_location)
            self._stemmer = PorterStemmer()
        return dict(stemmer=self._stemmer, wordnet=self._wordnet, alpha=self.alpha, beta=self.beta, gamma=self.gamma)

    def pair_score(self, hypothesis: list, reference: list) -> float:
        from nltk.translate.meteor_score import single_meteor_score

        return float(single_meteor_score(reference, hypothesis, **self._nltk_args()))

    def tokenized_sentence_score(self, hyp: list, refs: list) -> float:
        if not refs:
            raise ValueError(f"{self.name}: no references")
        if self.aggregate == "max":
            from nltk.translate.meteor_score import meteor_score

            return float(meteor_score(refs, hyp, **self._nltk_args()))
        return super().tokenized_sentence_score(hyp, refs)

    def __getstate__(self):  # the reader is reloaded (once per process) where the metric is unpickled
        state = dict(self.__dict__)
        state["_wordnet"] = None
        state["_stemmer"] = None
        return state


def _nltk_version() -> str:
    import nltk

    return nltk.__version__
