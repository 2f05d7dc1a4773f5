"""Shared test helpers: test data paths anchored at this file, and the real-data tier.

The real-data tier runs when ``MULTIREF_DATA`` points at a folder laid out like
``../shared/data`` (``lsdscc/``, ``dailydialog/``, ``multiref-dailydialog/``,
``dailydialog-plusplus/``, ``reddit-samples/``). ``.ci/run`` sets it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

TESTS_DIR = Path(__file__).resolve().parent
REPO_DIR = TESTS_DIR.parent


def data_path(*parts: str) -> Path:
    """A file under ``tests/data/``."""
    return TESTS_DIR.joinpath("data", *parts)


def real_data(*parts: str) -> Path:
    """A file or folder of the real-data tier; skips the test when MULTIREF_DATA is unset."""
    root = os.environ.get("MULTIREF_DATA")
    if not root:
        pytest.skip("real-data tier: set MULTIREF_DATA to a folder like ../shared/data")
    path = Path(root).joinpath(*parts)
    if not path.exists():
        pytest.fail(f"MULTIREF_DATA is set but {path} does not exist")
    return path


def file_digests(folder) -> dict:
    """``{relative path: sha256}`` of every file under ``folder``: two folders are byte-identical
    when their digests are equal."""
    import hashlib

    out = {}
    for root, _, files in os.walk(folder):
        for name in files:
            path = os.path.join(root, name)
            with open(path, "rb") as fh:
                out[os.path.relpath(path, folder)] = hashlib.sha256(fh.read()).hexdigest()
    return out
