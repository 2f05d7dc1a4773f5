"""Fuzz tier for the files ``multiref score`` reads: references (LSDSCC JSON, JSON lines, a JSON
array, dataset folders) and system outputs (JSON lines).

Seeded and bounded (same cases on every run, well under a minute): mutations of the real-shaped
fixtures in ``tests/data/score`` go through the same functions ``multiref score`` calls
(:func:`multiref.metrics.references.load_references`, :func:`~multiref.metrics.references.load_hypotheses`,
:func:`~multiref.metrics.references.match_items`, :func:`~multiref.metrics.references.to_items`, then a metric).
Every outcome must be a parsed result or a :class:`multiref.util.errors.UserError` whose one-line
message names the file; for the metrics (which the command wraps the same way) a ValueError or
TypeError with a message. Never another exception, never more than ``CASE_SECONDS`` on a case.
A handful of ``multiref score`` processes on mutated files must exit 0, 1 or 2 with at most one
error line and no traceback.

Cases (``CASES`` sums them): byte-level and structure-level mutations of reference files and of
hypothesis files, random JSON records from hypothesis (derandomized), dataset folders with
random column types and corrupted parquet bytes.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import signal
import subprocess
import sys

import pytest

from multiref.util.errors import UserError
from multiref.metrics.references import load_hypotheses, load_references, match_items, to_items
from tests.helpers import data_path

SEED = 20261124
BYTE_REF_CASES = 9_000
TREE_REF_CASES = 6_000
BYTE_HYP_CASES = 6_000
TREE_HYP_CASES = 4_000
HYPOTHESIS_CASES = 600  # records drawn by hypothesis, as reference and as hypothesis lines
DATASET_CASES = 400  # dataset folders: random column types, then corrupted parquet bytes
PROCESS_CASES = 8
CASES = (BYTE_REF_CASES + TREE_REF_CASES + BYTE_HYP_CASES + TREE_HYP_CASES + 2 * HYPOTHESIS_CASES
         + DATASET_CASES + PROCESS_CASES)
CASE_SECONDS = 5.0

D = data_path("score")
REF_SEEDS = {name: (D / name).read_bytes() for name in (
    "lsdscc_small.json", "refs_flat.jsonl", "err_lsdscc_wrong_type.json", "err_refs_wrong_type.jsonl")}
REF_SEEDS["array.json"] = json.dumps([json.loads(line) for line in REF_SEEDS["refs_flat.jsonl"].splitlines()]).encode()
REF_SEEDS["groups.jsonl"] = (b'{"id": 7, "query": "q", "groups": {"1": ["a b", "c"], "null": ["d"]}}\n'
                             b'{"id": "x", "groups": [["e f"], ["g"]], "group_ids": ["2", "1"]}\n')
HYP_SEEDS = {name: (D / name).read_bytes() for name in ("hyps_flat.jsonl", "hyps_lsdscc.jsonl")}

TOKENS = [b"[", b"]", b"{", b"}", b'"', b",", b":", b"\\", b"\\u", b'"\\ud800"', b"null", b"true", b"-", b"0",
          b"1e999", b"-1e999", b"9" * 5000, b"NaN", b"Infinity", b"\xff", b"\xc3", b"\x00", b"\n", b"\r\n", b"\t",
          b"[" * 150, b"{\"a\": " * 150, b"[" * 3000, b'{"id": 1}', b'"id"', b'"groups"', b'"references"',
          b'"weights"', b'"group_ids"', b'"hypotheses"', b'"hypothesis"', b'"query"', b'"null"', b"\xef\xbb\xbf",
          "\u00b2".encode(), "\u2028".encode(), b"\\n", b"[]", b"{}", b'""', b"1.5", b"-0", b"1" * 400]
VALUES = [None, True, False, 0, -1, 1.5, 10**30, float("inf"), "", "x", "null", "\ud800", "a\nb", [], {}, [1], ["a"],
          [[]], [["a"]], [[1]], {"1": ["a"]}, {"1": "a"}, {"": []}, [None], [["a"], "b"], [[[["deep"]]]],
          ["a"] * 3, {"k": {"k": {"k": []}}}, "[" * 500]
KEYS = ["id", "query", "groups", "references", "weights", "group_ids", "hypotheses", "hypothesis", "x", ""]


class _Hang(Exception):
    pass


def _alarm(signum, frame):
    raise _Hang


@contextlib.contextmanager
def case_timer(label):
    """Fail the case (not the whole run) when it takes over CASE_SECONDS: a hang."""
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, CASE_SECONDS)
    try:
        yield
    except _Hang:
        pytest.fail(f"{label}: over {CASE_SECONDS} s")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


# -- mutators --------------------------------------------------------------------------------


def mutate_bytes(rng: random.Random, data: bytes) -> bytes:
    """1 to 4 byte-level edits: replace, insert a token, delete or duplicate a span, swap lines,
    truncate."""
    for _ in range(rng.randint(1, 4)):
        n = len(data)
        op = rng.randrange(7)
        at = rng.randint(0, n)
        if op == 0 and n:
            at = min(at, n - 1)
            data = data[:at] + bytes([rng.randrange(256)]) + data[at + 1:]
        elif op in (1, 2):
            data = data[:at] + rng.choice(TOKENS) + data[at:]
        elif op == 3:
            data = data[:at] + data[at + rng.randint(1, 40):]
        elif op == 4:
            end = min(n, at + rng.randint(1, 200))
            data = data[:end] + data[at:end] + data[end:]
        elif op == 5:
            lines = data.split(b"\n")
            rng.shuffle(lines)
            data = b"\n".join(lines)
        else:
            data = data[:at]
    return data


def _nodes(value, path=()):
    yield path, value
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _nodes(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _nodes(v, path + (i,))


def mutate_tree(rng: random.Random, value):
    """1 to 3 structure-level edits of a parsed document: a node gets another JSON value, a
    key is removed, added or renamed."""
    import copy

    value = copy.deepcopy(value)
    for _ in range(rng.randint(1, 3)):
        path, node = rng.choice(list(_nodes(value)))
        if not path:
            continue
        parent = value
        for step in path[:-1]:
            parent = parent[step]
        op = rng.randrange(4)
        if op == 0 or not isinstance(parent, dict):
            parent[path[-1]] = copy.deepcopy(rng.choice(VALUES))
        elif op == 1:
            del parent[path[-1]]
        elif op == 2:
            parent[rng.choice(KEYS)] = copy.deepcopy(rng.choice(VALUES))
        else:
            parent[rng.choice(KEYS)] = parent.pop(path[-1])
    return value


def dump(document, lines: bool) -> bytes:
    """A document as JSON (``lines``: each element of a list on its own line)."""
    if lines and isinstance(document, list):
        return b"".join(json.dumps(r, ensure_ascii=rng_ascii(r)).encode("utf-8", "surrogatepass") + b"\n"
                        for r in document)
    return json.dumps(document, indent=1).encode("utf-8", "surrogatepass")


def rng_ascii(record) -> bool:
    return len(json.dumps(record)) % 2 == 0  # both escaped and raw UTF-8 text, deterministically


# -- outcomes ----------------------------------------------------------------------------------


def expect_parsed_or_user_error(label: str, path, load, *args):
    """``load(path, *args)``, or None after a UserError whose message is one line naming ``path``."""
    try:
        return load(str(path), *args)
    except UserError as exc:
        message = str(exc)
        assert message and "\n" not in message and path.name in message, f"{label}: {message!r}"
        return None


def score_once(label: str, refset, hyps, hyp_path) -> None:
    """Match, build items and score with the default metric, as ``multiref score`` does."""
    from multiref.metrics import get_metric

    try:
        pairs = match_items(refset, hyps, str(hyp_path), partial=True)
    except UserError as exc:
        assert str(exc) and "\n" not in str(exc), label
        return
    items = to_items(pairs)
    if not items:
        return
    metric = get_metric("maxbleu" if refset.grouped else "bleu")
    try:
        result = metric.score_items(items)
    except (ValueError, TypeError) as exc:  # `multiref score` turns these into one UserError line
        assert str(exc), label
        return
    assert 0.0 <= result.score <= 1.0 or result.score != result.score, label


def run_ref_case(tmp_path, label, data: bytes, suffix: str, hyps_seed) -> str:
    """``"parsed"`` or ``"refused"`` (a UserError) for one references file."""
    path = tmp_path / f"refs{suffix}"
    path.write_bytes(data)
    with case_timer(label):
        refset = expect_parsed_or_user_error(label, path, load_references)
        if refset is not None:
            assert refset.records, label
            score_once(label, refset, hyps_seed, path)
    return "refused" if refset is None else "parsed"


def run_hyp_case(tmp_path, label, data: bytes, refset) -> str:
    """``"parsed"`` or ``"refused"`` (a UserError) for one hypotheses file."""
    path = tmp_path / "hyps.jsonl"
    path.write_bytes(data)
    with case_timer(label):
        hyps = expect_parsed_or_user_error(label, path, load_hypotheses)
        if hyps is not None:
            assert hyps and all(isinstance(h, str) for hyp in hyps for h in hyp.hypotheses), label
            score_once(label, refset, hyps, path)
    return "refused" if hyps is None else "parsed"


def assert_both_outcomes(outcomes, minimum: int) -> None:
    """The mutations reach both sides: files that parse (and are scored) and files refused."""
    assert outcomes["parsed"] >= minimum and outcomes["refused"] >= minimum, outcomes


# -- the tier ----------------------------------------------------------------------------------


@pytest.fixture()
def scratch(tmp_path):
    """A folder in memory when there is one (tens of thousands of small writes; a disk's open()
    costs milliseconds), else pytest's temporary folder."""
    import shutil
    import tempfile
    from pathlib import Path

    if not os.access("/dev/shm", os.W_OK):
        yield tmp_path
        return
    folder = Path(tempfile.mkdtemp(prefix="multiref-fuzz-", dir="/dev/shm"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def seeds():
    refsets = {"flat": load_references(str(D / "refs_flat.jsonl")), "lsdscc": load_references(str(D / "lsdscc_small.json"))}
    hyps = {"flat": load_hypotheses(str(D / "hyps_flat.jsonl")), "lsdscc": load_hypotheses(str(D / "hyps_lsdscc.jsonl"))}
    return refsets, hyps


def _suffix(rng, name):
    return name[name.rindex("."):] if rng.random() < 0.8 else rng.choice([".json", ".jsonl", ".txt"])


def test_mutated_reference_files(scratch, seeds):
    from collections import Counter

    _, hyps = seeds
    rng = random.Random(SEED)
    names = sorted(REF_SEEDS)
    bytes_outcomes, tree_outcomes = Counter(), Counter()
    for i in range(BYTE_REF_CASES):
        name = rng.choice(names)
        data = mutate_bytes(rng, REF_SEEDS[name])
        bytes_outcomes[run_ref_case(scratch, f"byte case {i} of {name}: {data[:300]!r}", data, _suffix(rng, name),
                                    hyps["lsdscc" if "lsdscc" in name else "flat"])] += 1
    trees = {name: ([json.loads(line) for line in REF_SEEDS[name].splitlines()] if name.endswith(".jsonl")
                    else json.loads(REF_SEEDS[name])) for name in names}
    for i in range(TREE_REF_CASES):
        name = rng.choice(names)
        data = dump(mutate_tree(rng, trees[name]), name.endswith(".jsonl"))
        tree_outcomes[run_ref_case(scratch, f"tree case {i} of {name}: {data[:300]!r}", data, _suffix(rng, name),
                                   hyps["lsdscc" if "lsdscc" in name else "flat"])] += 1
    assert_both_outcomes(bytes_outcomes, 200)
    assert_both_outcomes(tree_outcomes, 300)


def test_mutated_hypothesis_files(scratch, seeds):
    from collections import Counter

    refsets, _ = seeds
    rng = random.Random(SEED + 1)
    names = sorted(HYP_SEEDS)
    bytes_outcomes, tree_outcomes = Counter(), Counter()
    for i in range(BYTE_HYP_CASES):
        name = rng.choice(names)
        data = mutate_bytes(rng, HYP_SEEDS[name])
        bytes_outcomes[run_hyp_case(scratch, f"byte case {i} of {name}: {data[:300]!r}", data,
                                    refsets["lsdscc" if "lsdscc" in name else "flat"])] += 1
    trees = {name: [json.loads(line) for line in HYP_SEEDS[name].splitlines()] for name in names}
    for i in range(TREE_HYP_CASES):
        name = rng.choice(names)
        data = dump(mutate_tree(rng, trees[name]), True)
        tree_outcomes[run_hyp_case(scratch, f"tree case {i} of {name}: {data[:300]!r}", data,
                                   refsets["lsdscc" if "lsdscc" in name else "flat"])] += 1
    assert_both_outcomes(bytes_outcomes, 200)
    assert_both_outcomes(tree_outcomes, 300)


def test_random_json_records(scratch, seeds):
    """Records drawn by hypothesis (any JSON value under the keys the loaders read), derandomized."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    refsets, hyps = seeds
    leaves = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
    values = st.recursive(leaves, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner,
                                                                                             max_size=3), max_leaves=12)
    records = st.dictionaries(st.sampled_from(KEYS), values, max_size=5)
    lines = st.lists(records, min_size=1, max_size=3)

    @settings(max_examples=HYPOTHESIS_CASES, derandomize=True, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(lines)
    def check(document):
        data = b"".join(json.dumps(r).encode() + b"\n" for r in document)
        run_ref_case(scratch, f"records {data[:300]!r}", data, ".jsonl", hyps["flat"])
        run_hyp_case(scratch, f"records {data[:300]!r}", data, refsets["flat"])

    check()


def _random_column(rng, kind: str, rows: int):
    import pyarrow as pa

    choices = {
        "id": [pa.array([f"i{k}" for k in range(rows)]), pa.array(list(range(rows)), pa.int64()),
               pa.array([1.5] * rows), pa.array([None] * rows, pa.string()), pa.array([["a"]] * rows)],
        "groups": [pa.array([[["a b"], ["c"]]] * rows), pa.array([["a b"]] * rows), pa.array([[[1]]] * rows),
                   pa.array(["a b"] * rows), pa.array(list(range(rows)), pa.int64()),
                   pa.array([None] * rows, pa.list_(pa.list_(pa.string()))), pa.array([[]] * rows, pa.list_(pa.string())),
                   pa.array([[None]] * rows, pa.list_(pa.list_(pa.string())))],
        "group_ids": [pa.array([["1", "2"]] * rows), pa.array([[1, 2]] * rows), pa.array(["12"] * rows),
                      pa.array(list(range(rows)), pa.int64()), pa.array([["1"]] * rows)],
        "references": [pa.array([["a b", "c"]] * rows), pa.array(["a b"] * rows), pa.array([[1]] * rows),
                       pa.array(list(range(rows)), pa.int64()), pa.array([[None]] * rows, pa.list_(pa.string()))],
        "query": [pa.array(["q"] * rows), pa.array(list(range(rows)), pa.int64()), pa.array([None] * rows, pa.string())],
    }
    return rng.choice(choices[kind])


def test_dataset_folders(scratch, seeds):
    """Dataset folders whose parquet columns have random types, then corrupted parquet bytes."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    refsets, hyps = seeds
    rng = random.Random(SEED + 2)
    folder = scratch / "corpus"
    (folder / "test_grouped").mkdir(parents=True)
    target = folder / "test_grouped" / "test-00000-of-00001.parquet"
    written = []
    for i in range(DATASET_CASES // 2):
        rows = rng.randint(0, 3)
        kinds = ["id"] + rng.sample(["groups", "group_ids", "references", "query"], rng.randint(0, 3))
        table = pa.table({k: _random_column(rng, k, rows) for k in kinds})
        pq.write_table(table, target)
        written.append(target.read_bytes())
        with case_timer(f"dataset case {i}: {table.schema}"):
            refset = expect_parsed_or_user_error(f"dataset case {i}", folder, load_references)
            if refset is not None:
                score_once(f"dataset case {i}", refset, hyps["flat"], D / "hyps_flat.jsonl")
    for i in range(DATASET_CASES - DATASET_CASES // 2):
        data = rng.choice(written)
        data = mutate_bytes(rng, data) if rng.random() < 0.7 else data[:rng.randint(0, len(data))]
        target.write_bytes(data)
        with case_timer(f"corrupt parquet case {i}"):
            expect_parsed_or_user_error(f"corrupt parquet case {i}", folder, load_references)


def test_score_processes_on_mutated_files(tmp_path):
    """The command itself: exit 0, 1 or 2, at most one error line, no traceback."""
    rng = random.Random(SEED + 3)
    for i in range(PROCESS_CASES):
        refs, hyps = tmp_path / f"r{i}.json", tmp_path / f"h{i}.jsonl"
        name = sorted(REF_SEEDS)[i % len(REF_SEEDS)]
        refs.write_bytes(mutate_bytes(rng, REF_SEEDS[name]) if i % 2 else REF_SEEDS[name])
        hyp_name = "hyps_lsdscc.jsonl" if "lsdscc" in name else "hyps_flat.jsonl"
        hyps.write_bytes(mutate_bytes(rng, HYP_SEEDS[hyp_name]) if i % 4 < 2 else HYP_SEEDS[hyp_name])
        extra = [["--bleu-order", str(rng.randint(-2, 12))], ["--partial"], ["-m", "distinct"], []][i % 4]
        proc = subprocess.run([sys.executable, "-m", "multiref_cli", "score", "-r", str(refs), "-H", str(hyps),
                               "--format", "json", *extra], capture_output=True, text=True, timeout=120)
        errors = [line for line in proc.stderr.splitlines() if line.startswith("multiref: error:")]
        assert proc.returncode in (0, 1, 2) and len(errors) <= 1 and "Traceback" not in proc.stderr, proc.stderr
        if proc.returncode == 0:
            assert json.load(io.StringIO(proc.stdout))
        else:
            assert len(errors) == 1, proc.stderr


@pytest.mark.parametrize("depth, refused", [(3, False), (100, False), (101, True), (1_000, True), (100_000, True)])
def test_nesting_bound_is_the_same_for_json_and_orjson(depth, refused):
    """The bound is checked on the text before a parser runs: ``json`` (1,000 frames of Python
    stack) and ``orjson`` (its own limit of 1,024) would otherwise each stop somewhere else."""
    import orjson

    from multiref.util.files import MAX_JSON_DEPTH, check_json_depth

    text = '{"id": "a", "references": ' + "[" * (depth - 1) + "]" * (depth - 1) + "}"
    assert MAX_JSON_DEPTH == 100
    if refused:
        with pytest.raises(UserError, match=r"refs.jsonl:7: JSON nested deeper than 100 levels \(column 126\)"):
            check_json_depth(text, "refs.jsonl", first_line=7)
    else:
        check_json_depth(text, "refs.jsonl", first_line=7)
        assert json.loads(text) == orjson.loads(text)
    check_json_depth(json.dumps({"id": "a", "references": ["[" * depth]}), "refs.jsonl")  # brackets in strings
