"""Layering of the code base (issue 10 item 7), checked on the source's syntax trees.

The ``multiref`` CLI (``multiref_cli``) is the one layer that parses a command line and
sits on top: nothing under ``pipelines/``, ``lsdscc/`` or ``dailydialog_pp/`` imports it,
and the project's modules import each other without cycles. Both module-level and
function-level imports count (a lazy import is still a dependency).
"""

import ast
import os

import pytest

from tests.helpers import REPO_DIR

PACKAGES = ("multiref", "lsdscc", "dailydialog_pp", "pipelines")
BELOW_THE_CLI = ("pipelines", "lsdscc", "dailydialog_pp")


def _modules() -> dict:
    """``{dotted module name: path}`` of every module of the project's packages."""
    out = {}
    for package in PACKAGES:
        for root, _, files in os.walk(REPO_DIR / package):
            for name in files:
                if not name.endswith(".py"):
                    continue
                rel = os.path.relpath(os.path.join(root, name), REPO_DIR)[:-3].split(os.sep)
                if rel[-1] == "__init__":
                    rel = rel[:-1]
                out[".".join(rel)] = os.path.join(root, name)
    return out


MODULES = _modules()


def _imports(module: str, path: str) -> set:
    """The project modules that ``module`` imports anywhere in its body."""
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    package = module if path.endswith("__init__.py") else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            names = [f"{base}.{alias.name}" for alias in node.names] + [base]
        else:
            continue
        for name in names:
            while name and name not in MODULES:  # `from pkg import name`: a module, or a name in pkg
                name = name.rpartition(".")[0]
            if name and name != module:
                found.add(name)
    return found


GRAPH = {m: _imports(m, p) for m, p in MODULES.items()}


def test_the_walk_sees_the_project():
    assert {"pipelines.lsdscc_corpus", "multiref_cli.lsdscc_build", "lsdscc.corpus.threads", "multiref.output.beam_writer"} <= set(GRAPH)
    assert "multiref.output.beam_writer" in GRAPH["pipelines.lsdscc_corpus"]  # a function-level import counts
    assert "pipelines.lsdscc_options" in GRAPH["multiref_cli.lsdscc_build"]


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.split(".")[0] in BELOW_THE_CLI))
def test_nothing_below_the_cli_imports_it(module):
    cli = sorted(m for m in GRAPH[module] if m == "multiref_cli" or m.startswith("multiref_cli."))
    assert not cli, f"{module} imports {cli}"


def _cycles(graph: dict) -> list:
    """Strongly connected components with more than one module (Tarjan), sorted."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def test_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles():
    assert _cycles(GRAPH) == []


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.split(".")[0] == "pipelines"))
def test_pipeline_modules_stay_small(module):
    with open(MODULES[module], encoding="utf-8") as fh:
        assert len(fh.readlines()) <= 420, module
