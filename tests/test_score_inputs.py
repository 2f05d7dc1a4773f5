"""``multiref score`` inputs as researchers have them (multiref.metrics.score_inputs): plain text, the
public LSDSCC scorer's ``</s>`` lines, standard input, a BOM, several systems, matching by id or
query against every reference source; and the honest-number checks of the same issue
(Self-BLEU null, partial coverage in the signature, tokenization and casing warnings,
warnings only for the metrics of the run, --verbose)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from multiref_cli import main
from tests.helpers import data_path

D = data_path("score")
LSDSCC = str(D / "lsdscc_small.json")
HYPS_LSDSCC = str(D / "hyps_lsdscc.jsonl")
REFS_FLAT = str(D / "refs_flat.jsonl")
HYPS_FLAT = str(D / "hyps_flat.jsonl")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(capsys, *argv):
    code = main(["score", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def scores(capsys, *argv):
    code, out, err = run(capsys, *argv, "--format", "json", "-q")
    assert code == 0, err
    return {name: value["score"] for name, value in json.loads(out).items()}


def _flat_hypotheses():
    by_id = {}
    for line in open(HYPS_FLAT, encoding="utf-8"):
        record = json.loads(line)
        by_id[record["id"]] = record.get("hypotheses") or [record["hypothesis"]]
    order = [json.loads(line)["id"] for line in open(REFS_FLAT, encoding="utf-8")]
    return [by_id[i] for i in order]


def _lsdscc_eos_text(eos=" </s> "):
    refs = json.load(open(LSDSCC, encoding="utf-8"))
    by_query = {json.loads(line)["query"]: json.loads(line)["hypotheses"] for line in open(HYPS_LSDSCC, encoding="utf-8")}
    return "".join(eos.join(by_query[q]) + "\n" for q in refs)


def test_plain_text_scores_as_its_json_lines(capsys, tmp_path):
    plain = tmp_path / "system.txt"
    plain.write_text("".join(h[0] + "\n" for h in _flat_hypotheses()), encoding="utf-8")
    metrics = ["-m", "bleu", "-m", "rouge_l", "-m", "distinct"]
    assert scores(capsys, "-r", REFS_FLAT, "-H", str(plain), *metrics) == scores(capsys, "-r", REFS_FLAT, "-H",
                                                                                  HYPS_FLAT, *metrics)


@pytest.mark.parametrize("eos", [" </s> ", "</s>", " </s>  "])
def test_lsdscc_eos_format_scores_exactly_as_json_lines(capsys, tmp_path, eos):
    plain = tmp_path / "lsdscc_hyps.txt"
    plain.write_text(_lsdscc_eos_text(eos), encoding="utf-8")
    expected = scores(capsys, "-r", LSDSCC, "-H", HYPS_LSDSCC)
    assert scores(capsys, "-r", LSDSCC, "-H", str(plain), "--eos", "</s>") == expected  # exactly, not approx
    # without --eos a line is one output: a different (worse-covering) system
    assert scores(capsys, "-r", LSDSCC, "-H", str(plain))["mds"] < expected["mds"]


def test_trailing_separator_and_crlf(capsys, tmp_path):
    plain = tmp_path / "crlf.txt"
    plain.write_bytes(_lsdscc_eos_text(" </s> ").replace("\n", " </s>\r\n").encode("utf-8"))
    assert scores(capsys, "-r", LSDSCC, "-H", str(plain), "--eos", "</s>") == scores(capsys, "-r", LSDSCC, "-H",
                                                                                      HYPS_LSDSCC)


@pytest.mark.parametrize("form", ["plain", "jsonl"])
def test_utf8_bom_is_accepted(capsys, tmp_path, form):
    path = tmp_path / f"bom.{'txt' if form == 'plain' else 'jsonl'}"
    body = ("".join(h[0] + "\n" for h in _flat_hypotheses()) if form == "plain"
            else open(HYPS_FLAT, encoding="utf-8").read())
    path.write_bytes(b"\xef\xbb\xbf" + body.encode("utf-8"))
    assert scores(capsys, "-r", REFS_FLAT, "-H", str(path)) == scores(capsys, "-r", REFS_FLAT, "-H", HYPS_FLAT)


def test_line_count_mismatch_is_one_error_line_with_both_counts(capsys, tmp_path):
    plain = tmp_path / "short.txt"
    plain.write_text("only one line\n", encoding="utf-8")
    code, out, err = run(capsys, "-r", REFS_FLAT, "-H", str(plain))
    assert code == 1 and out == "" and err.count("\n") == 1
    assert err.startswith("multiref: error: ") and "1 lines but 3 reference items" in err and str(plain) in err


def test_invalid_utf8_names_file_and_line(capsys, tmp_path):
    plain = tmp_path / "latin1.txt"
    plain.write_bytes(b"fine\nbad \xe9\nfine\n")
    code, _, err = run(capsys, "-r", REFS_FLAT, "-H", str(plain))
    assert code == 1 and err.count("\n") == 1 and f"{plain}:2: not valid UTF-8" in err


def _subprocess(args, stdin_text):
    env = dict(os.environ, PYTHONPATH=ROOT)
    return subprocess.run([sys.executable, "-m", "multiref_cli", "score", *args], input=stdin_text, capture_output=True,
                          text=True, timeout=120, env=env)


def test_standard_input_dash_and_nothing(capsys):
    expected = scores(capsys, "-r", LSDSCC, "-H", HYPS_LSDSCC)
    text = _lsdscc_eos_text()
    for args in (["-H", "-"], ["-i", "-"], []):
        proc = _subprocess(["-r", LSDSCC, *args, "--eos", "</s>", "--format", "json", "-q"], text)
        assert proc.returncode == 0, proc.stderr
        assert {k: v["score"] for k, v in json.loads(proc.stdout).items()} == expected
    proc = _subprocess(["-r", REFS_FLAT, "--format", "json", "-q"], open(HYPS_FLAT, encoding="utf-8").read())
    assert proc.returncode == 0 and json.loads(proc.stdout)["bleu"]["score"] == expected_bleu(capsys)
    proc = _subprocess(["-r", REFS_FLAT, "-H", "-", "-"], "")
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1 and "standard input ('-') can be given only once" \
        in proc.stderr
    proc = _subprocess(["-r", REFS_FLAT, "-H", "-"], "")
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1 and "standard input: no outputs" in proc.stderr
    proc = _subprocess(["-r", REFS_FLAT], "")  # no --hypotheses and nothing piped: a command-line mistake
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "--hypotheses not given" in proc.stderr


def expected_bleu(capsys):
    return scores(capsys, "-r", REFS_FLAT, "-H", HYPS_FLAT)["bleu"]


def _write_dataset(folder):
    import pyarrow as pa

    from multiref.output.hfdata import shard_path, write_parquet

    refs = json.load(open(LSDSCC, encoding="utf-8"))
    schema = pa.schema([("id", pa.string()), ("query", pa.string()), ("groups", pa.list_(pa.list_(pa.string()))),
                        ("group_ids", pa.list_(pa.string()))])
    rows = [{"id": f"t{i}", "query": q, "groups": list(g.values()), "group_ids": list(g)}
            for i, (q, g) in enumerate(refs.items())]
    write_parquet(shard_path(str(folder), "test_grouped", "test"), rows, schema)
    strings = pa.list_(pa.string())
    flat = [{"id": f"d{i}", "dialogue_id": "d", "context": ["hello there", q], "references": [r for g in groups.values()
                                                                                              for r in g]}
            for i, (q, groups) in enumerate(refs.items())]
    write_parquet(shard_path(str(folder), "multiref", "test"), flat,
                  pa.schema([("id", pa.string()), ("dialogue_id", pa.string()), ("context", strings),
                             ("references", strings)]))
    ddpp = [{"id": r["id"], "dialogue_id": "d", "context": r["context"], "positive_responses": r["references"]}
            for r in flat]
    write_parquet(shard_path(str(folder), "dailydialog_pp", "test"), ddpp,
                  pa.schema([("id", pa.string()), ("dialogue_id", pa.string()), ("context", strings),
                             ("positive_responses", strings)]))


def test_one_system_file_scores_against_every_reference_source(capsys, tmp_path):
    folder = tmp_path / "dataset"
    _write_dataset(folder)
    plain = tmp_path / "system.txt"
    plain.write_text(_lsdscc_eos_text(), encoding="utf-8")
    grouped = ["-m", "maxbleu", "-m", "mds", "-m", "pds", "--ties", "first"]
    public = scores(capsys, "-r", LSDSCC, "-H", HYPS_LSDSCC, *grouped)
    # by query (JSON lines) and by position (plain text) against the dataset folder's test_grouped
    assert scores(capsys, "-r", str(folder), "--config", "test_grouped", "-H", HYPS_LSDSCC, *grouped) == public
    assert scores(capsys, "-r", str(folder), "--config", "test_grouped", "-H", str(plain), "--eos", "</s>",
                  *grouped) == public
    # multi-reference DailyDialog and DailyDialog++ folders: the query is the context's last turn
    flat = ["-m", "bleu", "-m", "rouge_l"]
    multiref = scores(capsys, "-r", str(folder), "--config", "multiref", "-H", HYPS_LSDSCC, *flat)
    assert multiref == scores(capsys, "-r", LSDSCC, "-H", HYPS_LSDSCC, *flat)
    assert scores(capsys, "-r", str(folder), "--config", "dailydialog_pp", "-H", HYPS_LSDSCC, *flat) == multiref
    assert scores(capsys, "-r", str(folder), "--config", "dailydialog_pp", "-H", str(plain), "--eos", "</s>",
                  *flat) == multiref
    by_id = tmp_path / "by_id.jsonl"
    by_id.write_text("".join(json.dumps({"id": f"d{i}", "hypotheses": line.split(" </s> ")}) + "\n"
                             for i, line in enumerate(_lsdscc_eos_text().splitlines())), encoding="utf-8")
    assert scores(capsys, "-r", str(folder), "--config", "multiref", "-H", str(by_id), *flat) == multiref


def test_several_systems_first_is_baseline(capsys, tmp_path):
    plain = tmp_path / "system.txt"
    plain.write_text("".join(h[0] + "\n" for h in _flat_hypotheses()), encoding="utf-8")
    code, out, _ = run(capsys, "-r", REFS_FLAT, "-i", HYPS_FLAT, str(plain), "--format", "json", "-q")
    result = json.loads(out)
    assert code == 0 and [s["name"] for s in result["systems"]] == [HYPS_FLAT, str(plain)]
    assert result["systems"][0]["metrics"]["bleu"] == result["systems"][1]["metrics"]["bleu"]
    assert result["systems"][0]["metrics"]["bleu"]["ci"] is None and "bleu" in result["signature"]
    code, _, err = run(capsys, "-r", REFS_FLAT, "-i", HYPS_FLAT, HYPS_FLAT)
    assert code == 1 and "is given twice" in err


# -- honest numbers ---------------------------------------------------------------------------


def test_self_bleu_with_one_output_per_context_is_null_with_a_note(capsys):
    code, out, err = run(capsys, "-r", REFS_FLAT, "-H", HYPS_FLAT, "-m", "self_bleu", "--format", "json")
    assert code == 0 and json.loads(out)["self_bleu"]["score"] is None
    notes = [line for line in err.splitlines() if "self_bleu" in line]
    assert len(notes) == 1 and "2 or more outputs per context" in notes[0]
    code, out, _ = run(capsys, "-r", REFS_FLAT, "-H", HYPS_FLAT, "-m", "self_bleu", "-q")
    assert code == 0 and out.splitlines()[1].split()[1] == "null"
    code, out, _ = run(capsys, "-r", LSDSCC, "-H", HYPS_LSDSCC, "-m", "self_bleu", "--bleu-order", "2", "--format",
                       "json", "-q")
    assert 0 < json.loads(out)["self_bleu"]["score"] < 1  # query 1 has 8 outputs


def test_partial_coverage_goes_into_the_signature(capsys, tmp_path):
    part = tmp_path / "part.jsonl"
    part.write_text(open(HYPS_FLAT, encoding="utf-8").readline(), encoding="utf-8")
    code, out, _ = run(capsys, "-r", REFS_FLAT, "-H", str(part), "--partial", "--format", "json", "-q")
    assert code == 0 and json.loads(out)["bleu"]["signature"].endswith("|items:1/3")
    code, out, _ = run(capsys, "-r", REFS_FLAT, "-H", HYPS_FLAT, "--format", "json", "-q")
    assert "items:" not in json.loads(out)["bleu"]["signature"]


def test_tokenization_and_casing_mismatch_warn(capsys, tmp_path):
    refs = tmp_path / "refs.jsonl"
    hyps = tmp_path / "hyps.txt"
    lines = ["i do n't know .", "it 's fine , thanks .", "what do you mean ?", "i 'm not sure ."]
    refs.write_text("".join(json.dumps({"id": str(i), "references": [t]}) + "\n" for i, t in enumerate(lines)))
    hyps.write_text("I don't know.\nIt's fine, thanks.\nWhat do you mean?\nI'm not sure.\n")
    code, out, err = run(capsys, "-r", str(refs), "-H", str(hyps), "--format", "json", "-q")
    assert code == 0 and json.loads(out)["bleu"]["score"] == 0.0
    warnings = [line for line in err.splitlines() if line.startswith("multiref score: warning: ")]
    assert len(warnings) == 2
    assert "references look lowercased" in warnings[0] and "--lowercase" in warnings[0]
    assert "references look tokenized" in warnings[1]
    # the same outputs tokenized and lowercased as the references: no warning, a real score
    hyps.write_text("".join(t + "\n" for t in lines))
    code, out, err = run(capsys, "-r", str(refs), "-H", str(hyps), "--format", "json", "-q")
    assert code == 0 and json.loads(out)["bleu"]["score"] == 1.0 and "warning" not in err
    # distinct needs no references: no reference-style warning
    hyps.write_text("I don't know.\nIt's fine, thanks.\nWhat do you mean?\nI'm not sure.\n")
    code, _, err = run(capsys, "-r", str(refs), "-H", str(hyps), "-m", "distinct", "-q")
    assert code == 0 and "warning" not in err


def test_style_patterns_match_their_readable_forms():
    """The fast look-behind forms of the tokenization patterns find a match in exactly the texts the
    plain patterns do (random texts over the characters that matter, and real-looking lines)."""
    import random
    import re

    from multiref_cli.score.report import _ATTACHED, _DETACHED

    clitic = r"([.,!?;:]|n't|'s|'m|'re|'ll|'ve|'d)(\s|$)"
    detached, attached = re.compile(r"(^|\s)" + clitic), re.compile(r"\w" + clitic)
    rng = random.Random(4)
    pieces = list("ab .,!?;:n't'smrlvd\n\t\u00e9_1") + ["n't", "'s", "'re", " 're", "x.", "'ll", "'ve", " 'd"]
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 10))) for _ in range(20000)]
    texts += ["I don't know.", "i do n't know .", "it 's fine", "it's fine,thanks", "what ?", "'s", "n't", "."]
    for text in texts:
        assert bool(_DETACHED.search(text)) == bool(detached.search(text)), text
        assert bool(_ATTACHED.search(text)) == bool(attached.search(text)), text


def test_add_one_explanation_only_when_a_metric_of_the_run_uses_it(capsys, tmp_path):
    hyps = tmp_path / "short.txt"
    hyps.write_text("i am fine , thanks .\n\nit is lovely and sunny today .\n")
    code, _, err = run(capsys, "-r", REFS_FLAT, "-H", str(hyps))  # plain bleu: no add-one in the run
    assert code == 0 and "hypotheses are empty" not in err
    code, _, err = run(capsys, "-r", REFS_FLAT, "-H", str(hyps), "-q", "--bleu-smoothing", "add1", "--no-brevity-penalty")
    assert code == 0 and "hypotheses are empty" not in err  # -q: no warning
    code, _, err = run(capsys, "-r", REFS_FLAT, "-H", str(hyps), "--bleu-smoothing", "add1",
                       "--no-brevity-penalty")
    assert code == 0 and "empty hypothesis 1.0" in err and "here: bleu" in err


def test_verbose_adds_precisions_brevity_penalty_and_lengths(capsys):
    code, out, _ = run(capsys, "-r", REFS_FLAT, "-H", HYPS_FLAT, "--verbose", "--format", "json", "-q")
    details = json.loads(out)["bleu"]["details"]
    assert code == 0 and details["hyp_len"] == 17 and details["ref_len"] == 16 and details["bp"] == 1.0
    assert details["precisions"][0] == 1.0 and len(details["precisions"]) == 4
    code, out, _ = run(capsys, "-r", REFS_FLAT, "-H", HYPS_FLAT, "--verbose", "-q")
    assert "precisions 1.0000/" in out and "hyp_len 17 ref_len 16" in out


def test_per_item_with_several_systems_names_the_system(capsys, tmp_path):
    plain = tmp_path / "system.txt"
    plain.write_text("".join(h[0] + "\n" for h in _flat_hypotheses()), encoding="utf-8")
    out = tmp_path / "items.jsonl"
    code, _, _ = run(capsys, "-r", REFS_FLAT, "-i", HYPS_FLAT, str(plain), "--per-item", str(out), "-q")
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert code == 0 and [r["system"] for r in rows] == [HYPS_FLAT] * 3 + [str(plain)] * 3
    assert [r["bleu"] for r in rows[:3]] == [r["bleu"] for r in rows[3:]]
