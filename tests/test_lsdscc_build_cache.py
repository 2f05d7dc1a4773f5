"""The test-set stage's build cache lives beside the dataset, not in the folder a user uploads
(issue 21 item 6): ``multiref lsdscc build`` and ``multiref lsdscc testset`` through the real
CLI and the atomic publishing, on the bundled sample."""

from __future__ import annotations

import os
import subprocess
import sys

from lsdscc.testset.build_cache import cache_for
from tests.helpers import REPO_DIR, file_digests


def _cli(*args):
    env = dict(os.environ, PYTHONPATH=str(REPO_DIR))
    return subprocess.run([sys.executable, "-m", "multiref_cli", *args], capture_output=True, text=True,
                          cwd=REPO_DIR, env=env, timeout=900)


def test_cache_for_names_a_sibling(tmp_path):
    assert cache_for(str(tmp_path / "out" / "lsdscc")) == str(tmp_path / "out" / "lsdscc.cache")
    assert cache_for(str(tmp_path / "out" / "lsdscc") + "/") == str(tmp_path / "out" / "lsdscc.cache")


def test_build_keeps_its_cache_beside_the_dataset_and_reuses_it(tmp_path):
    out = tmp_path / "lsdscc"
    first = _cli("lsdscc", "build", "--output", str(out), "--quiet")
    assert first.returncode == 0, first.stderr
    assert not (out / "artifacts").exists()
    published = file_digests(out)
    assert not [p for p in published if p.startswith(("artifacts", "lucene", "doc2vec", "corpus-full"))]
    cache = tmp_path / "lsdscc.cache"
    kinds = sorted(p.name.rsplit("-", 1)[0] for p in cache.iterdir())
    assert kinds == ["corpus-full", "doc2vec", "lucene-index", "rewritten"]
    assert "doc2vec_model_reused false" in first.stdout and "lucene_index_reused false" in first.stdout
    again = _cli("lsdscc", "build", "--output", str(out), "--quiet")
    assert again.returncode == 0, again.stderr
    assert "doc2vec_model_reused true" in again.stdout and "lucene_index_reused true" in again.stdout
    assert file_digests(out) == published  # same bytes, from the cache
    # a folder of an older build, with its cache inside: the test-set command leaves it out
    (out / "artifacts" / "lucene-index-0000000000000000").mkdir(parents=True)
    (out / "artifacts" / "lucene-index-0000000000000000" / "x").write_text("old")
    proc = _cli("lsdscc", "testset", "--dataset", str(out), "--quiet")
    assert proc.returncode == 0, proc.stderr
    assert not (out / "artifacts").exists()
    assert '"lucene_index_reused": true' in proc.stdout
