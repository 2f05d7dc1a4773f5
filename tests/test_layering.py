"""The folders are the layers (issue 18 item 1), checked on the source's syntax trees.

Layers, top to bottom: ``multiref_cli`` (the command line) > ``pipelines`` (the Beam jobs) >
``lsdscc`` and ``dailydialog_pp`` (the dataset packages) > ``multiref`` (the shared core).
No module imports a layer above its own; no two modules import each other through a cycle;
inside every folder, the imports between its subfolders and modules form no cycle either
(``lsdscc/corpus`` <-> ``lsdscc/testset``, ``multiref/metrics`` <-> ``multiref/output``, ...);
and no project module is named like a standard-library module. Both module-level and
function-level imports count (a lazy import is still a dependency). The checker checks
itself on synthetic edges, so it fails when an upward import is added.

Folders say what file-name prefixes said (issue 33 item 4): a dataset's jobs and commands are
subpackages (``pipelines/lsdscc/``, ``multiref_cli/score/``, ...), so no top-level module of
``pipelines/`` or ``multiref_cli/`` starts with a dataset prefix; a subcommand module imports no
helper back from a package ``__init__`` above it; and the core's Beam plumbing
(``multiref/beam``) sits above its pure parts (metrics, analysis, util, output).
"""

import ast
import os
import sys

import pytest

from tests.helpers import REPO_DIR

LAYERS = (("multiref_cli",), ("pipelines",), ("lsdscc", "dailydialog_pp"), ("multiref",))
RANK = {package: rank for rank, packages in enumerate(LAYERS) for package in packages}  # 0: top


def _modules() -> dict:
    """``{dotted module name: path}`` of every module of the project's packages."""
    out = {}
    for package in RANK:
        for root, dirs, files in os.walk(REPO_DIR / package):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in files:
                if not name.endswith(".py"):
                    continue
                rel = os.path.relpath(os.path.join(root, name), REPO_DIR)[:-3].split(os.sep)
                if rel[-1] == "__init__":
                    rel = rel[:-1]
                out[".".join(rel)] = os.path.join(root, name)
    return out


MODULES = _modules()


def _imports(module: str, source: str, is_package: bool, known) -> set:
    """The modules of ``known`` that ``module`` (its ``source``) imports anywhere in its body."""
    package = module if is_package else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(source)):
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
            while name and name not in known:  # `from pkg import name`: a module, or a name in pkg
                name = name.rpartition(".")[0]
            if name and name != module:
                found.add(name)
    return found


def _graph() -> dict:
    out = {}
    for module, path in MODULES.items():
        with open(path, encoding="utf-8") as fh:
            out[module] = _imports(module, fh.read(), path.endswith("__init__.py"), MODULES)
    return out


GRAPH = _graph()


def _upward(graph: dict) -> list:
    """``(importer, imported)`` pairs where the imported module sits in a higher layer."""
    return sorted((a, b) for a, bs in graph.items() for b in bs
                  if RANK[b.split(".")[0]] < RANK[a.split(".")[0]])


def _cycles(graph: dict) -> list:
    """Strongly connected components with more than one node (Tarjan), sorted."""
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


def _folder_graphs(graph: dict) -> dict:
    """``{folder: {child: children it imports}}``: each module edge seen inside the innermost
    folder holding both ends, between the two children of that folder (subfolder or module)
    they sit in. An edge to or from the folder's own ``__init__`` is not between siblings."""
    out = {}
    for a, bs in graph.items():
        for b in bs:
            pa, pb = a.split("."), b.split(".")
            k = 0
            while k < min(len(pa), len(pb)) and pa[k] == pb[k]:
                k += 1
            if k == len(pa) or k == len(pb):
                continue  # one is the package holding the other
            folder = ".".join(pa[:k])
            out.setdefault(folder, {}).setdefault(pa[k], set()).add(pb[k])
    return out


def _folder_cycles(graph: dict) -> list:
    return sorted([f"{folder}:{'/'.join(c)}" for folder, g in _folder_graphs(graph).items() for c in _cycles(g)])


def test_the_walk_sees_the_project():
    assert {"pipelines.lsdscc.corpus", "multiref_cli.lsdscc.build", "lsdscc.corpus.threads",
            "multiref.beam.writer", "dailydialog_pp.contexts"} <= set(GRAPH)
    assert "multiref.beam.writer" in GRAPH["pipelines.lsdscc.corpus"]  # a function-level import counts
    assert "pipelines.lsdscc.options" in GRAPH["multiref_cli.lsdscc.build"]
    assert "multiref.beam.writer" in GRAPH["lsdscc.corpus.outputs"]  # a dataset package writes through the core's Beam writer
    assert {"pipelines.beam.runner", "pipelines.dailydialog.transforms"} <= GRAPH["pipelines.dailydialog.job"]
    assert {"multiref_cli.score.report", "multiref.scoring.config"} <= GRAPH["multiref_cli.score.command"]
    assert set(RANK) == {name for name in os.listdir(REPO_DIR) if os.path.isfile(REPO_DIR / name / "__init__.py")} - {"tests"}


def test_the_checker_sees_an_upward_import():
    source = "import os\n\ndef f():\n    from multiref_cli import main\n    from lsdscc.corpus import cleaning\n"
    edges = {"multiref.metrics.fake": _imports("multiref.metrics.fake", source, False, MODULES)}
    assert edges["multiref.metrics.fake"] == {"multiref_cli", "lsdscc.corpus", "lsdscc.corpus.cleaning"}
    assert [b for _, b in _upward(edges)] == ["lsdscc.corpus", "lsdscc.corpus.cleaning", "multiref_cli"]
    assert _upward({"pipelines.x": {"lsdscc.corpus.cleaning", "multiref.util.errors", "pipelines.y"}}) == []
    assert _upward({"lsdscc.x": {"dailydialog_pp.y"}}) == []  # one layer


def test_the_checker_sees_a_folder_cycle():
    graph = {"lsdscc.corpus.a": {"lsdscc.testset.retrieval"}, "lsdscc.testset.retrieval": {"lsdscc.corpus.c"},
             "multiref.metrics": {"multiref.metrics.evaluate_modules.x"}, "multiref.metrics.evaluate_modules.x": {"multiref.metrics"}}
    assert _folder_cycles(graph) == ["lsdscc:corpus/testset"]
    assert _folder_cycles({"a.b.c": {"a.d.e"}, "a.d.f": {"a.b"}}) == ["a:b/d"]  # through a package's __init__
    assert _folder_cycles({"a.b.c": {"a.d.e"}}) == []


def test_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_import_runs_up_a_layer(module):
    assert _upward({module: GRAPH[module]}) == []


def test_no_import_cycles():
    assert _cycles(GRAPH) == []


def test_no_cycle_between_folders_at_any_level():
    assert _folder_cycles(GRAPH) == []


def test_no_module_named_like_the_standard_library():
    clashes = sorted(m for m in MODULES if set(m.split(".")) & set(sys.stdlib_module_names))
    assert clashes == []


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.split(".")[0] == "pipelines"))
def test_pipeline_modules_stay_small(module):
    with open(MODULES[module], encoding="utf-8") as fh:
        assert len(fh.readlines()) <= 420, module


def test_every_layer_is_a_package_setup_installs():
    """setup.py installs every layer's packages: a layer missing from its ``include`` list
    imports from a checkout but not from an install (``python -m multiref_cli`` elsewhere)."""
    import ast as _ast

    source = (REPO_DIR / "setup.py").read_text(encoding="utf-8")
    calls = [n for n in _ast.walk(_ast.parse(source)) if isinstance(n, _ast.Call)
             and getattr(n.func, "id", "") == "find_namespace_packages"]
    include = {v for c in calls for kw in c.keywords if kw.arg == "include" for v in _ast.literal_eval(kw.value)}
    for package in (p for layer in LAYERS for p in layer):
        assert {package, f"{package}.*"} <= include, package


def _imports_benchmarks(source: str, package: str = "benchmarks") -> list:
    """Line numbers where ``source`` imports ``package`` (or a module in it), also inside
    string constants that parse as Python (code a test runs with ``python -c``)."""
    def found(tree, offset=0):
        out = []
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""] if not node.level else []
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "import" in node.value:
                try:
                    out += found(ast.parse(node.value), node.lineno - 1)
                except SyntaxError:
                    pass
                continue
            else:
                continue
            out += [node.lineno + offset for name in names if name.split(".")[0] == package]
        return out

    return sorted(set(found(ast.parse(source))))


def test_the_benchmark_import_checker_sees_imports_and_snippets():
    # on a made-up package name, so that these lines do not count against this file
    assert _imports_benchmarks("import os\nfrom benchfake import bench_corpus\n", "benchfake") == [2]
    assert _imports_benchmarks("def f():\n    import benchfake.corpus_build as c\n", "benchfake") == [2]
    assert _imports_benchmarks('X = """\nimport json\nfrom benchfake.x import y\n"""\n', "benchfake") == [3]
    assert _imports_benchmarks("from lsdscc.synthetic import text\nB = 'benchfake/bench_corpus.py'\n", "benchfake") == []


def test_no_test_imports_benchmarks():
    """Tests and benchmarks share their data generators through the packages
    (:mod:`lsdscc.synthetic`, :mod:`multiref.util.measure`, ...); no test imports a benchmark."""
    found = {path.name: lines for path in sorted((REPO_DIR / "tests").rglob("*.py"))
             if (lines := _imports_benchmarks(path.read_text(encoding="utf-8")))}
    assert found == {}


def _names_from_package_init(package: str, module: str, source: str, submodules) -> list:
    """Names ``module`` (inside ``package``, at any depth) imports from ``package``'s ``__init__``:
    ``from package import x`` (or the relative spelling, ``from . import x``, ``from .. import x``)
    where ``x`` is not a submodule."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.ImportFrom):
            continue
        base = node.module or ""
        if node.level:
            parts = module.split(".")[:-node.level]
            base = ".".join(parts + ([base] if base else []))
        if base == package:
            out += [alias.name for alias in node.names if f"{package}.{alias.name}" not in submodules]
    return out


def test_the_init_import_checker_sees_a_helper_import():
    known = {"multiref_cli.flags", "multiref_cli.common", "multiref_cli.lsdscc.annotate"}
    source = "from multiref_cli import group, flags\nfrom . import run\nfrom multiref_cli.common import group\n"
    assert _names_from_package_init("multiref_cli", "multiref_cli.x", source, known) == ["group", "run"]
    source = "from multiref_cli.lsdscc import annotate, _PARTS\nfrom . import register\nfrom .. import main\n"
    assert _names_from_package_init("multiref_cli.lsdscc", "multiref_cli.lsdscc.build", source, known) == ["_PARTS", "register"]
    assert _names_from_package_init("multiref_cli", "multiref_cli.lsdscc.build", source, known) == ["main"]


def _packages_above(module: str) -> list:
    """The packages holding ``module``, innermost last: ``multiref_cli.lsdscc.build`` ->
    ``["multiref_cli", "multiref_cli.lsdscc"]``."""
    parts = module.split(".")
    return [".".join(parts[:k]) for k in range(1, len(parts))]


def test_subcommand_modules_import_no_helper_back_from_the_package_init():
    """A subcommand module gets shared helpers from a module below (``multiref_cli.common``,
    ``multiref_cli.commands``); no package ``__init__`` above it (``multiref_cli``,
    ``multiref_cli.lsdscc``, ``multiref_cli.score``) is imported back for a helper; ``__init__``
    only re-exports them for callers outside."""
    found = {}
    for module, path in MODULES.items():
        if module.startswith("multiref_cli.") and not path.endswith("__init__.py") and module != "multiref_cli.__main__":
            with open(path, encoding="utf-8") as fh:  # (the entry point, __main__, runs the package)
                source = fh.read()
            names = [f"{package}.{name}" for package in _packages_above(module)
                     for name in _names_from_package_init(package, module, source, MODULES)]
            if names:
                found[module] = names
    assert found == {}


#: Dataset and command prefixes that folders replace (issue 33 item 4): ``pipelines/lsdscc/``,
#: ``pipelines/dailydialog/``, ``multiref_cli/score/``, ... hold what ``lsdscc_*.py`` files did.
FOLDER_PREFIXES = ("lsdscc_", "dailydialog_", "score_", "augment_", "testset_")


def prefixed_modules(names) -> list:
    """The module file names among ``names`` that start with a prefix a folder should say."""
    return sorted(n for n in names if n.endswith(".py") and n.startswith(FOLDER_PREFIXES))


def test_the_prefix_check_sees_a_prefixed_module():
    assert prefixed_modules(["lsdscc_corpus.py", "score_report.py", "dailydialog_options.py", "common.py",
                             "lsdscc", "augment.py", "dailydialog.py"]) == \
        ["dailydialog_options.py", "lsdscc_corpus.py", "score_report.py"]


@pytest.mark.parametrize("folder, subpackages", [("pipelines", {"lsdscc", "dailydialog", "augment", "beam"}),
                                                  ("multiref_cli", {"lsdscc", "score"})])
def test_no_dataset_prefix_at_the_top_of_the_jobs_and_the_command_line(folder, subpackages):
    """The jobs and the commands of one dataset are a subpackage, not file-name prefixes."""
    assert prefixed_modules(os.listdir(REPO_DIR / folder)) == []
    assert {p for p in subpackages if os.path.isfile(REPO_DIR / folder / p / "__init__.py")} == subpackages


def test_the_beam_plumbing_sits_above_the_pure_core():
    """``multiref/beam`` (the parquet writer and spill files the jobs and ``lsdscc`` use) may import
    the rest of the core; the metric library, the analysis, the utilities and the non-Beam output
    import neither it nor Beam's pipeline API (``apache_beam.io.filesystems``, a file API, is allowed)."""
    pure = [m for m in MODULES if m.split(".")[:2] in (["multiref", "metrics"], ["multiref", "analysis"],
                                                         ["multiref", "util"], ["multiref", "output"])]
    assert len(pure) > 30
    assert sorted((m, b) for m in pure for b in GRAPH[m] if b.startswith("multiref.beam")) == []
    beam_api = []
    for module in pure:
        with open(MODULES[module], encoding="utf-8") as fh:
            for node in ast.walk(ast.parse(fh.read())):
                names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                         else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
                beam_api += [(module, n) for n in names
                             if n.split(".")[0] == "apache_beam" and not n.startswith("apache_beam.io.filesystem")]
    assert beam_api == []
