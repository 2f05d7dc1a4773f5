"""Where data lives (issue 33 item 3): :mod:`multiref.util.location` is the one place that tells
a local path from a remote URL; no ``"://" in`` test is left anywhere else in the packages."""

from __future__ import annotations

import re

import pytest

from multiref.util.location import Location, is_local, is_remote, without_scheme
from tests.helpers import REPO_DIR

PACKAGES = ("multiref_cli", "pipelines", "lsdscc", "dailydialog_pp", "multiref")
#: ``"://"`` tests that are not about locations: URLs inside Reddit comment text.
NOT_LOCATIONS = {"lsdscc/corpus/cleaning.py"}
SCHEME_TEST = re.compile(r"""["']://["']\s+(?:not\s+)?in\b|\.(?:split|find|partition)\(\s*["']://["']""")


@pytest.mark.parametrize("text, remote", [
    ("gs://bucket/lsdscc", True), ("s3://b/x.zst", True), ("hdfs://nn/x", True), ("file:///tmp/x", True),
    ("out/lsdscc", False), ("/abs/path", False), ("./gs:/x", False), ("", False), (None, False),
])
def test_is_remote(text, remote):
    assert is_remote(text) is remote
    assert is_local(text) is (not remote)


def test_paths_are_accepted_as_path_objects(tmp_path):
    assert not is_remote(tmp_path) and Location(tmp_path).text == str(tmp_path)


def test_join_and_name():
    from apache_beam.io.filesystems import FileSystems

    for base, parts in (("gs://b/out/", ("a", "b.txt")), ("gs://b/out", ("a/", "b.txt")), ("gs://b", ("x",))):
        assert Location(base).join(*parts).text == FileSystems.join(base, *parts)  # Beam's rule for gs://
    assert Location("out").join("a", "b.txt").text == "out/a/b.txt"
    assert Location("gs://b/out/lsdscc/").name == "lsdscc"
    assert Location("out/lsdscc/").name == "lsdscc" and Location(".").name  # a path's name is taken absolute
    assert without_scheme("gs://b/x") == "b/x" and without_scheme("a/b") == "a/b"


def test_local_exists_and_open_round_trip(tmp_path):
    where = Location(tmp_path).join("x.bin")
    assert not where.exists()
    with where.open("wb") as fh:
        fh.write(b"bytes")
    assert where.exists()
    with where.open("rb") as fh:
        assert fh.read() == b"bytes"
    with pytest.raises(ValueError, match="mode"):
        where.open("r")


def test_the_checker_sees_a_scheme_test():
    for line in ('if "://" in path:', "x = [i for i in inputs if '://' not in i]", 'rest = url.split("://", 1)[-1]'):
        assert SCHEME_TEST.search(line), line
    assert not SCHEME_TEST.search('if is_remote(path):') and not SCHEME_TEST.search('SCHEME = "://"')


def test_no_scheme_test_outside_the_location_module():
    found = []
    for package in PACKAGES:
        for path in sorted((REPO_DIR / package).rglob("*.py")):
            rel = path.relative_to(REPO_DIR).as_posix()
            if rel == "multiref/util/location.py" or rel in NOT_LOCATIONS:
                continue
            found += [f"{rel}:{n}" for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
                      if SCHEME_TEST.search(line)]
    assert found == []
