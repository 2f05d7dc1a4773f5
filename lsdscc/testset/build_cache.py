"""Where the test-set stage keeps its build cache: beside the dataset folder, never inside it.

The Lucene index, the Doc2Vec model and the snapshot of the corpus before leak removal are
reused by reruns but are not part of the dataset a user uploads, so they live in
``PARENT/NAME.cache/`` for the dataset folder ``PARENT/NAME``::

    NAME.cache/corpus-full-<sha16>/      the corpus as built (before leak removal) + state.json
    NAME.cache/rewritten/<sha32>.json    a leak-removed corpus -> the snapshot it came from
    NAME.cache/lucene-index-<hash>/
    NAME.cache/doc2vec-<hash>/doc2vec.model

Every entry is named by the content it was made from (the corpus's SHA-256 and the options),
so a failed or interrupted build can only add entries, never make one wrong; the atomic
publishing of the dataset (:mod:`multiref.output.publish`) has nothing to carry across. Delete the
folder to free the space: the next run rebuilds what it needs.
"""

from __future__ import annotations

import os

SUFFIX = ".cache"


def cache_for(dataset_folder: str) -> str:
    """The cache folder of ``dataset_folder`` (``PARENT/NAME.cache``)."""
    path = os.path.abspath(dataset_folder.rstrip("/\\") or dataset_folder)
    return os.path.join(os.path.dirname(path), os.path.basename(path) + SUFFIX)
