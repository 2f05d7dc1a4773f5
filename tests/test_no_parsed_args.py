"""Below the command line, no code reads a parsed command line (issue 33, part 1).

Each command's options are frozen configs (``multiref.util.options.option``); ``multiref_cli``
turns the parsed flags into them once and passes the config down. So in ``multiref/``,
``lsdscc/``, ``dailydialog_pp/`` and ``pipelines/`` no line reads an attribute of ``args``,
``values`` or ``namespace`` (a parameter is named for what it holds: ``config``, ``job``,
``corpus``), and nothing names argparse's ``Namespace``. The check reads the source text, so
comments and docstrings count too; it checks itself on synthetic lines.
"""

import re

import pytest

from tests.helpers import REPO_DIR

PACKAGES = ("multiref", "lsdscc", "dailydialog_pp", "pipelines")
ATTRIBUTE_READ = re.compile(r"\b(args|values|namespace)\.[a-z_]+")
NAMESPACE = re.compile(r"Namespace")


def offences(text: str) -> list:
    """``[(line number, line)]`` of ``text`` that read a parsed command line's attribute or name ``Namespace``."""
    return [(n, line.strip()) for n, line in enumerate(text.splitlines(), 1)
            if ATTRIBUTE_READ.search(line) or NAMESPACE.search(line)]


@pytest.mark.parametrize("line, bad", [
    ("    if args.top_k < 1:", True),
    ("    target = values.output", True),
    ("    return namespace.seed", True),
    ("def build(values: argparse.Namespace):", True),
    ("    job = SimpleNamespace(a=1)", True),
    ("    for name, value in texts.items():", False),
    ("    counts = {k: v for k, v in table.values()}", False),
    ("    return from_args(CorpusJob, parsed)", False),
    ("    config.output.output_dir", False),
])
def test_the_check_sees_what_it_should(line, bad):
    assert bool(offences(line)) is bad


def test_no_parsed_command_line_below_the_cli():
    found = []
    for package in PACKAGES:
        for path in sorted((REPO_DIR / package).rglob("*.py")):
            found += [f"{path.relative_to(REPO_DIR)}:{n}: {line}" for n, line in offences(path.read_text("utf-8"))]
    assert not found, "a parsed command line below multiref_cli/:\n" + "\n".join(found)


def test_the_scoring_library_is_checked_and_its_calls_take_a_config():
    import inspect

    from multiref.scoring import inputs, run

    scanned = [p.relative_to(REPO_DIR).as_posix() for package in PACKAGES for p in (REPO_DIR / package).rglob("*.py")]
    assert {"multiref/scoring/run.py", "multiref/scoring/config.py", "multiref/scoring/inputs.py"} <= set(scanned)
    for call in (run.score, inputs.references, inputs.systems):
        assert next(iter(inspect.signature(call).parameters)) == "config", call.__qualname__


def test_the_score_command_turns_the_parsed_flags_into_a_config_once():
    """In ``multiref_cli/score/command.py`` the parsed flags appear in one line: ``from_args`` in ``handle``."""
    text = (REPO_DIR / "multiref_cli" / "score" / "command.py").read_text("utf-8")
    uses = [line.strip() for line in text.splitlines() if re.search(r"\bargs\b", line) and "argparse" not in line]
    assert uses == ["def handle(args) -> int:", "return run(from_args(ScoreConfig, args))"]


def test_the_check_walks_the_subpackages():
    """The jobs' and the core's subpackages (``pipelines/lsdscc/``, ``multiref/beam/``, ...) are read too."""
    walked = {path.relative_to(REPO_DIR).as_posix() for package in PACKAGES for path in (REPO_DIR / package).rglob("*.py")}
    assert {"pipelines/lsdscc/corpus.py", "pipelines/lsdscc/publish.py", "pipelines/dailydialog/job.py",
            "pipelines/augment/options.py", "pipelines/beam/runner.py", "multiref/beam/writer.py"} <= walked
