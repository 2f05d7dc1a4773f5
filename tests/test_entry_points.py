"""One default per option: the library (``get_metric``, and ``multiref.scoring.score`` with a
``ScoreConfig``), ``multiref score`` and the Hugging Face evaluate modules, each with its
defaults, give the same numbers and the same signatures on the same data: the public LSDSCC
file (its format; a small fixture here, the real one with ``MULTIREF_DATA``) and a
multi-reference DailyDialog file."""

from __future__ import annotations

import json
import os

import pytest

os.environ["HF_EVALUATE_OFFLINE"] = "1"

from multiref.metrics import Item, evaluate_module_path, get_metric  # noqa: E402
from multiref.scoring import BleuOptions, MetricOptions, ScoreConfig, score  # noqa: E402
from multiref_cli import main  # noqa: E402

D = os.path.join(os.path.dirname(__file__), "data")
LSDSCC_SMALL = os.path.join(D, "score", "lsdscc_small.json")
HYPS_SMALL = os.path.join(D, "score", "hyps_lsdscc.jsonl")
DAILYDIALOG_SMALL = os.path.join(D, "dailydialog", "multiref.jsonl")


def _real(*parts):
    root = os.environ.get("MULTIREF_DATA")
    path = os.path.join(root, *parts) if root else None
    if not path or not os.path.exists(path):
        pytest.skip("real data: set MULTIREF_DATA to the shared data folder")
    return path


def _cli(capsys, *args) -> dict:
    assert main(["score", *args, "--format", "json", "-q"]) == 0
    return json.loads(capsys.readouterr().out)


def _scored(references, hypotheses, **metrics) -> dict:
    """``{metric: {"score", "signature", ...}}`` of the one-call library (``multiref.scoring.score``)."""
    outcome = score(ScoreConfig(references=str(references), hypotheses=(str(hypotheses),),
                                metrics=MetricOptions(**metrics), quiet=True))
    return outcome.systems[0].metrics


def _lsdscc_cases(real: bool):
    """``(references path, hypotheses path, {query: outputs})`` of the public LSDSCC format."""
    if not real:
        with open(HYPS_SMALL, encoding="utf-8") as fh:
            outputs = {r["query"]: r["hypotheses"] for r in map(json.loads, fh)}
        return LSDSCC_SMALL, HYPS_SMALL, outputs
    refs = _real("lsdscc", "test.group.json")
    with open(refs, encoding="utf-8") as fh:
        document = json.load(fh)
    # a system full of ties: every reference of the query as its outputs (the public scorer's group order decides)
    return refs, None, {q: [r for g in groups.values() for r in g][:6] for q, groups in document.items()}


@pytest.mark.parametrize("real", [False, True], ids=["fixture", "real"])
def test_lsdscc_file_same_numbers_and_signatures_in_every_entry_point(real, capsys, tmp_path):
    import evaluate

    refs, hyps, outputs = _lsdscc_cases(real)
    if hyps is None:
        hyps = tmp_path / "hyps.jsonl"
        hyps.write_text("".join(json.dumps({"query": q, "hypotheses": h}) + "\n" for q, h in outputs.items()))
    cli = _cli(capsys, "-r", refs, "-H", str(hyps))
    with open(refs, encoding="utf-8") as fh:
        document = json.load(fh)
    items = [Item(q, outputs[q], groups=[list(g) for g in groups.values()], group_ids=list(groups))
             for q, groups in document.items()]
    module = evaluate.load(evaluate_module_path("lsdscc_metrics"))
    hub = module.compute(predictions=[i.hypotheses for i in items], references=[i.groups for i in items],
                         group_ids=[i.group_ids for i in items])
    assert set(cli) == {"maxbleu", "mds", "pds"} == set(call := _scored(refs, hyps))
    for name in ("maxbleu", "mds", "pds"):
        library = get_metric(name).score_items(items)
        assert cli[name]["score"] == library.score == hub[name] == call[name]["score"], name
        assert cli[name]["signature"] == library.signature == hub["signatures"][name] == call[name]["signature"], name
        assert "|ties:lsdscc|" in library.signature  # the one default: the public scorer's rule with its BLEU
    # a non-default option travels the same way through all three
    cli = _cli(capsys, "-r", refs, "-H", str(hyps), "--bleu-smoothing", "nltk1", "--brevity-penalty")
    hub = module.compute(predictions=[i.hypotheses for i in items], references=[i.groups for i in items],
                         group_ids=[i.group_ids for i in items], smoothing="nltk1", brevity_penalty=True)
    library = get_metric("mds", smoothing="nltk1", brevity_penalty=True).score_items(items)
    call = _scored(refs, hyps, bleu=BleuOptions(smoothing="nltk1", brevity_penalty=True))["mds"]
    assert cli["mds"]["score"] == library.score == hub["mds"] == call["score"]
    assert call["signature"] == library.signature
    assert cli["mds"]["signature"] == library.signature == hub["signatures"]["mds"] and "|ties:first|" in library.signature


def _dailydialog(path: str, hypotheses: list | None) -> tuple:
    """``(reference records, outputs)`` of a multi-reference DailyDialog file: one item per turn with
    responses; outputs: ``hypotheses`` in order, or each turn's second response."""
    records, outputs = [], []
    with open(path, encoding="utf-8") as fh:
        for d, line in enumerate(fh):
            if not line.startswith("{"):  # the fixture's deliberately broken last line
                continue
            for t, turn in enumerate(json.loads(line)["dialogue"]):
                if turn.get("responses"):
                    records.append({"id": f"{d}_{t}", "references": turn["responses"]})
                    outputs.append(turn["responses"][1] if hypotheses is None else hypotheses[len(outputs)])
    return records, outputs


@pytest.mark.parametrize("real", [False, True], ids=["fixture", "real"])
def test_dailydialog_file_same_numbers_and_signatures_in_every_entry_point(real, capsys, tmp_path):
    import evaluate

    if real:
        with open(_real("multiref-dailydialog", "hredf.txt"), encoding="utf-8") as fh:
            hred = fh.read().splitlines()
        records, outputs = _dailydialog(_real("multiref-dailydialog", "multireftest.json"), hred)
    else:
        records, outputs = _dailydialog(DAILYDIALOG_SMALL, None)
    refs, hyps = tmp_path / "refs.jsonl", tmp_path / "hyps.txt"
    refs.write_text("".join(json.dumps(r) + "\n" for r in records))
    hyps.write_text("".join(h.replace("\n", " ") + "\n" for h in outputs))
    references = [r["references"] for r in records]
    module = evaluate.load(evaluate_module_path("multiref_metrics"))
    for name in ("bleu", "rouge_l", "distinct"):
        cli = _cli(capsys, "-r", str(refs), "-H", str(hyps), "-m", name)[name]
        library = get_metric(name).corpus_score(outputs, references)
        hub = module.compute(predictions=outputs, references=references, metric=name)
        call = _scored(refs, hyps, names=(name,))[name]
        assert cli["score"] == library.score == hub[name] == call["score"], name
        assert cli["signature"] == library.signature == hub["signature"] == call["signature"], name
