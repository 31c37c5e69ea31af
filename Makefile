# The README's two commands: `make run` and `make test`. Both build .venv from nothing.
VENV    := .venv
PY      := $(VENV)/bin/python
STAMP   := $(VENV)/.stamp
# datasketch's own tests, run against neardup.compat.datasketch (not committed; see the script)
DS_SUITE := tests/compat/datasketch_suite/upstream/VERSION
PIP     := $(PY) -m pip install -q -c constraints.txt
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export SPARK_LOCAL_IP := 127.0.0.1
# the kernel cache lives in the venv: a new venv (new packages, new sources) compiles afresh
export NEARDUP_CACHE_DIR := $(abspath $(VENV))/neardup-cache
# make compiles kernels in the foreground (`neardup warmup` after install), never in a detached
# process that could outlive a target or race a test (docs/engine.md, "First use")
export NEARDUP_BACKGROUND_COMPILE := 0
export PYSPARK_PYTHON := $(abspath $(PY))
export PYSPARK_DRIVER_PYTHON := $(abspath $(PY))

.PHONY: run test test-thorough lint check bench fuzz clean

$(STAMP): pyproject.toml constraints.txt
	@command -v java >/dev/null || (apt-get update -qq && apt-get install -y -qq --no-install-recommends openjdk-17-jre-headless >/dev/null)
	@command -v chromium >/dev/null || (apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium >/dev/null) || echo "chromium not installed: the browser check of the report will be skipped"
	rm -rf $(VENV)
	python3 -m venv $(VENV)
	$(PY) -m pip install -q pip==26.3
	$(PIP) torch==2.13.0
	$(PIP) -e '.[all]' --group dev
	$(VENV)/bin/neardup warmup
	touch $@

run: $(STAMP)
	$(VENV)/bin/neardup dedup examples/text --threshold 0.5 --canonicalize secure --format text --report report.html
	$(VENV)/bin/neardup dedup examples/images --method phash --format text
	@echo "report: $(abspath report.html)"

$(DS_SUITE): scripts/datasketch_suite | $(STAMP)
	scripts/datasketch_suite $(PY)

# PYTHONDONTWRITEBYTECODE (set on these machines) would make every xdist worker and every CLI
# subprocess compile neardup and re-rewrite the test modules: ~11 CPU-s per collecting worker
test: $(STAMP) $(DS_SUITE)
	env -u PYTHONDONTWRITEBYTECODE $(PY) -m pytest -q -n 2 --dist loadgroup --cov --cov-report=term

# Three times the hypothesis examples written in the tests (tests/conftest.py: EXAMPLE_SCALE).
test-thorough: $(STAMP) $(DS_SUITE)
	env -u PYTHONDONTWRITEBYTECODE $(PY) -m pytest -q -n 2 --dist loadgroup --hypothesis-profile=thorough

lint: $(STAMP)
	$(VENV)/bin/ruff format --check src tests benchmarks examples fuzz
	$(VENV)/bin/ruff check src tests benchmarks examples fuzz
	$(VENV)/bin/mypy

check: $(STAMP) $(DS_SUITE)
	PATH=$(abspath $(VENV))/bin:$$PATH scripts/check

bench: $(STAMP)
	$(PY) benchmarks/run_all.py

fuzz: $(STAMP)
	$(PY) fuzz/run_all.py --seconds 60

clean:
	rm -rf $(VENV) .coverage build src/*.egg-info
