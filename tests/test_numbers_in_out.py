"""Numbers in, numbers out (issue 35, faults 6, 11, 12, 14, 15, 23, 25, 26, 28): every numeric
option has bounds checked before any work, every number read from a file is finite, resamples
are drawn in batches, and the evaluate modules name the position of a None.

Command-line cases are real ``multiref`` processes (exit status, one error line, no traceback,
nothing left beside the output); the rest call the library.
"""

from __future__ import annotations

import os
import tracemalloc

import numpy as np
import pytest

from multiref.metrics import significance
from tests.test_cli_errors import assert_one_error_line, run_multiref

os.environ["HF_EVALUATE_OFFLINE"] = "1"

DIGITS = "9" * 5000
BUILD = ["lsdscc", "build", "--output", "out", "--skip-testset"]
OPTION_CASES = {
    "num-shards-1e7": (BUILD + ["--num-shards", "10000000"], 1, "--num-shards must be 'auto' or an integer from 1 to"),
    "num-shards-5000-digits": (BUILD + ["--num-shards", DIGITS], 1, "--num-shards must be 'auto' or an integer"),
    "bm25-k1-inf": (["lsdscc", "testset", "--dataset", "ds", "--similarity", "bm25", "--bm25-k1", "inf"], 2,
                    "argument --bm25-k1: expected a finite number from 0 to 1000, got 'inf'"),
    "bm25-k1-nan": (["lsdscc", "testset", "--dataset", "ds", "--similarity", "bm25", "--bm25-k1", "nan"], 2,
                    "argument --bm25-k1: expected a finite number"),
    "bm25-b-2": (["lsdscc", "testset", "--dataset", "ds", "--bm25-b", "2"], 2, "argument --bm25-b: must be from 0 to 1"),
    "jvm-heap-100000g": (["lsdscc", "testset", "--dataset", "ds", "--jvm-heap", "100000g"], 2,
                         "argument --jvm-heap: must be from 16m to this machine's memory"),
    "jvm-heap-digits": (BUILD + ["--jvm-heap", DIGITS + "g"], 2, "argument --jvm-heap: expected a number with k, m or g"),
    "until-year-33658": (BUILD + ["--until", "999999999999"], 1, "--until: '999999999999' is out of range"),
    "since-2100": (BUILD + ["--since", "2100-01-01"], 1, "--since: '2100-01-01' is out of range"),
    "retrieval-depth-digits": (BUILD + ["--retrieval-depth", DIGITS], 2, "argument --retrieval-depth: expected an integer"),
    "paired-bs-n-digits": (["score", "-r", "r.jsonl", "-H", "h.txt", "--paired-bs-n", DIGITS], 2,
                           "argument --paired-bs-n: expected an integer"),
    "verify-hashes-dir": (BUILD + ["--verify-hashes", "."], 2, "argument --verify-hashes: . is a directory"),
}


@pytest.mark.parametrize("case", sorted(OPTION_CASES))
def test_numeric_options_are_bounded_before_any_work(case, tmp_path):
    argv, status, needle = OPTION_CASES[case]
    (tmp_path / "ds").mkdir()
    before = sorted(os.listdir(tmp_path))
    proc, seconds = run_multiref(argv, tmp_path)
    assert_one_error_line(proc, status, needle)
    assert len(proc.stderr) < 400 and proc.stdout == ""  # no 5,000-digit echo; no JVM output on stdout
    assert sorted(os.listdir(tmp_path)) == before  # no output, .lock or .staging
    assert seconds < 60


# ---------------------------------------------------------------- files with numbers

RATINGS_HEADER = "model,context_id,human_average_rating,response,prevgt,all_references\n"  # the default columns


def _ratings(rows):
    return RATINGS_HEADER + "".join(f"sys{i % 2},c{i},{r},response {i},reference {i},other {i}\n"
                                    for i, r in enumerate(rows))


RATINGS_CASES = {
    "nan": (_ratings([3, 4, "nan", 2]), "ratings.csv:4: rating 'nan' is not a finite number"),
    "inf": (_ratings([3, "inf", 4, 2]), "ratings.csv:3: rating 'inf' is not a finite number"),
    "1e400": (_ratings([3, 4, 2, "1e400"]), "ratings.csv:5: rating '1e400' is not a finite number"),
    "5000-digits": (_ratings([3, DIGITS, 2]), "ratings.csv:3: rating '9999"),
    "200000-char-cell": (RATINGS_HEADER + "a,c0,3,b,c,d\n" + "a,c1,3," + "x" * 200_000 + ",c,d\n",
                         "ratings.csv:3: not a valid CSV row (field larger than field limit"),
}


@pytest.mark.parametrize("case", sorted(RATINGS_CASES))
def test_a_bad_number_or_cell_in_a_ratings_file_is_refused_with_file_and_line(case, tmp_path):
    text, needle = RATINGS_CASES[case]
    (tmp_path / "ratings.csv").write_text(text)
    proc, _ = run_multiref(["analyze", "correlation", "--ratings", "ratings.csv", "--metric", "bleu1"], tmp_path)
    assert_one_error_line(proc, 1, needle)
    assert "nan" not in proc.stdout.lower()


def test_nan_in_json_lines_ratings_and_regression_scores(tmp_path):
    row = '{"model": "a", "context_id": "c", "response": "x", "prevgt": "y", "all_references": "z", '
    (tmp_path / "ratings.jsonl").write_text(row + '"human_average_rating": 3}\n' + row + '"human_average_rating": NaN}\n')
    proc, _ = run_multiref(["analyze", "correlation", "--ratings", "ratings.jsonl"], tmp_path)
    assert_one_error_line(proc, 1, "ratings.jsonl:2: rating 'nan' is not a finite number")
    (tmp_path / "scored.csv").write_text("input,reference,method,score\na,b,m,0.5\na,c,m,Infinity\n")
    proc, _ = run_multiref(["analyze", "regression", "--ratings", "scored.csv"], tmp_path)
    assert_one_error_line(proc, 1, "scored.csv:3: score 'Infinity' is not a finite number")


def test_warnings_are_one_line_without_source():
    import subprocess
    import sys

    code = ("import warnings, multiref_cli\nmultiref_cli._one_line_warnings()\n"
            "import numpy as np\nnp.mean(np.array([]))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    lines = proc.stderr.strip().splitlines()
    assert lines and all(line.startswith("multiref: warning: RuntimeWarning: ") for line in lines), proc.stderr
    assert "np.mean" not in proc.stderr


# ---------------------------------------------------------------- resamples in batches


def test_batched_bootstrap_draws_are_the_single_draw(monkeypatch):
    """Batches continue one generator: the same multiplicities as sacrebleu's single draw (the
    matrix products of smaller blocks may differ in the last bit, so scores are compared to 1e-12)."""
    rng = np.random.default_rng(0)
    whole = significance.bootstrap_counts(37, 500, 7)
    gen = np.random.default_rng(7)
    batched = np.concatenate([significance._counts(gen, 37, min(13, 500 - lo)) for lo in range(0, 500, 13)])
    np.testing.assert_array_equal(whole, batched)
    stats = [significance.mean_stats(rng.random(37)) for _ in range(3)]
    monkeypatch.setattr(significance, "DRAW_BATCH", 37 * 13)  # 13 rows a batch: 39 batches, the last short
    for a, b in zip([s.scores(whole) for s in stats], significance.bootstrap_scores(stats, 500, 7)):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    found = significance.compare(stats, [0.5, 0.6, 0.4], confidence=True, test="bs", n=500, seed=7)
    monkeypatch.setattr(significance, "DRAW_BATCH", 1 << 20)
    again = significance.compare(stats, [0.5, 0.6, 0.4], confidence=True, test="bs", n=500, seed=7)
    assert [f["p_value"] for f in found] == [f["p_value"] for f in again]
    np.testing.assert_allclose([f["ci"] for f in found], [f["ci"] for f in again], rtol=1e-12)


def test_many_resamples_stay_in_bounded_memory():
    """300,000 resamples of 60 items: one draw would hold 3 arrays of 144 MB; batches stay under 64 MB."""
    stats = [significance.mean_stats(np.linspace(0, 1, 60)), significance.mean_stats(np.linspace(0.1, 1, 60))]
    tracemalloc.start()
    found = significance.compare(stats, [0.5, 0.55], confidence=True, test="bs", n=300_000)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 64 << 20, peak
    assert found[1]["p_value"] is not None and found[1]["ci"][0] < found[1]["ci"][1]


# ---------------------------------------------------------------- evaluate modules and None

NONE_CASES = {
    ("multiref_metrics", "prediction-none"): ([None, "a b"], [["a b"], ["a b"]], "predictions[0] is None"),
    ("multiref_metrics", "reference-none"): (["a b", "a b"], [["a b"], None], "references[1] is None"),
    ("multiref_metrics", "none-in-references"): (["a b", "a b"], [["a b"], ["c", None]], "references[1][1] is None"),
    ("lsdscc_metrics", "none-in-predictions"): ([["a b", None]], [[["a b"]]], "predictions[0][1] is None"),
    ("lsdscc_metrics", "group-none"): ([["a b"]], [[["a b"], None]], "references[0][1] is None"),
    ("lsdscc_metrics", "none-in-a-group"): ([["a b"]], [[["a b", None]]], "references[0][0][1] is None"),
}


@pytest.mark.parametrize("module, case", sorted(NONE_CASES))
def test_evaluate_modules_name_the_position_of_a_none(module, case):
    import evaluate

    from multiref.metrics import evaluate_module_path

    predictions, references, needle = NONE_CASES[(module, case)]
    scorer = evaluate.load(evaluate_module_path(module))
    with pytest.raises(ValueError, match=needle.replace("[", r"\[").replace("]", r"\]")):
        scorer.compute(predictions=predictions, references=references)


# ---------------------------------------------------------------- DailyDialog digits


def test_a_5000_digit_number_in_dailydialog_is_text_not_a_crash(tmp_path):
    """A digit run past Python's 4,300-digit int() limit, in a dialogue and in its normalized
    key: the build finishes (exit 0), the number read digit by digit as any run over 15 digits."""
    import shutil

    from dailydialog_pp.normalize import spell_numbers
    from dailydialog_pp.steps import natural_key
    from tests.test_cli_errors import DD_SAMPLE

    assert spell_numbers("a 0000000000000000001 b") == "a  one  b"  # leading zeros: as int() read them
    assert spell_numbers("x " + DIGITS).split() == ["x"] + ["nine"] * 5000
    assert sorted(["2_10", "2_9", "1_" + DIGITS, "02_1"], key=natural_key)[1:] == ["02_1", "2_9", "2_10"]
    shutil.copytree(DD_SAMPLE, tmp_path / "dd")
    path = tmp_path / "dd" / "test" / "dialogues_test.txt"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[0] = lines[0].replace("Not yet .", f"Not yet , {DIGITS} .", 1)
    path.write_text("".join(lines), encoding="utf-8")
    proc, _ = run_multiref(["dailydialog", "build", "--dailydialog", "dd", "--output", "out"], tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr and (tmp_path / "out" / "dataset_meta.json").exists()
