"""The slim worker requirements and the worker image (deploy/worker/, docs/cluster.md).

The requirement file names exactly the distributions that the corpus job's worker-side modules
import (tests/worker_imports.py reads them from the source: module level and inside functions,
less the driver-only functions), pinned as in constraints.txt, and pulls in none of the
driver's heavy dependencies. tests/test_worker_pool.py checks the same file against what real
workers import while they run the job. The Dockerfile cannot be built here (no registry); its
base image, its install lines and the files it copies are checked against the checkout.
"""

from __future__ import annotations

import fnmatch
import re

from tests import worker_imports as wi
from tests.helpers import REPO_DIR

DOCKERFILE = REPO_DIR / "deploy" / "worker" / "Dockerfile"


def _listed() -> dict:
    """``{canonical name: requirement line}`` of deploy/worker/requirements.txt."""
    return {wi.canonical(line.split("==")[0].split("[")[0]): line for line in wi.requirement_lines()}


def test_the_requirements_are_what_the_worker_modules_import():
    needed = wi.distributions_of(wi.worker_third_party(wi.project_modules_loaded()))
    assert set(_listed()) == set(needed), (sorted(_listed()), needed)
    assert _listed()["apache-beam"] == "apache-beam[gcp]==2.77.0"  # gs:// inputs and outputs on the workers


def test_the_requirements_are_pinned_as_the_constraints():
    pins = wi.pins()
    for name, line in _listed().items():
        assert re.fullmatch(r"[A-Za-z0-9_.-]+(\[[a-z,]+\])?==[\w.]+", line), line
        assert line.split("==")[1] == pins[name], (line, pins[name])


def test_the_requirements_pull_in_no_heavy_dependency():
    pulled = wi.closure(wi.requirement_lines())
    assert "apache-beam" in pulled and "nltk" in pulled  # read from this environment's metadata
    assert [h for h in wi.HEAVY if h in pulled] == []


def test_the_driver_only_imports_are_where_they_are_said_to_be():
    # an exclusion that no longer matches an import would hide nothing and rot
    for module, function, imported in sorted(wi.DRIVER_ONLY):
        assert (module, function, imported) in wi.static_imports(module), (module, function, imported)
        assert function, "a module-level import runs on the workers too"


def test_the_static_scan_sees_imports_inside_functions():
    found = wi.static_imports("lsdscc.corpus.cleaning")
    assert ("lsdscc.corpus.cleaning", "nltk_tokenizer", "nltk") in found  # only with --tokenizer nltk or treebank text
    assert ("lsdscc.corpus.sources", "_zstd", "zstandard") in wi.static_imports("lsdscc.corpus.sources")


def _dockerignored(path: str, patterns) -> bool:
    return any(fnmatch.fnmatch(path, p) or fnmatch.fnmatch(path.split("/")[0], p) for p in patterns)


def test_the_worker_image_installs_the_slim_set_on_beams_sdk_image():
    text = DOCKERFILE.read_text()
    beam = wi.pins()["apache-beam"]
    assert re.search(rf"^FROM apache/beam_python3\.11_sdk:{re.escape(beam)}$", text, flags=re.M)
    assert "-c /tmp/multiref/constraints.txt -r /tmp/multiref/requirements.txt" in text
    assert re.search(r"pip install [^\n]*--no-deps /src/multiref-dialog", text)
    ignored = [p.strip() for p in (REPO_DIR / ".dockerignore").read_text().splitlines()
               if p.strip() and not p.startswith("#")]
    copied = [src for line in re.findall(r"^COPY (.+)$", text, flags=re.M) for src in line.split()[:-1]]
    for src in copied:
        assert (REPO_DIR / src).exists(), src
        assert not _dockerignored(src, ignored), src
    for package in ("multiref_cli", "pipelines", "lsdscc", "dailydialog_pp", "multiref", "setup.py", "README.md"):
        assert package in copied, package  # setup.py reads README.md and installs every layer
