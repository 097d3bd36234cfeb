# Two commands on a fresh machine: `make demo` and `make test`.
# Each creates its own virtual environment on first use.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test test-slow lint docs docs-check bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/memtape demo

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

# On every core (pytest-xdist); tests marked with an xdist_group (the local Ray instance's)
# share one worker.
# Tests marked slow (the browser tests among them) and the full hypothesis profiles are
# `make test-slow`'s (CI runs both).
test: lint docs-check
	$(BIN)/pytest -n auto --dist loadgroup
	$(BIN)/pytest benchmarks --benchmark-disable

# The slow job: every test, the ones marked slow included, with every hypothesis example.
test-slow: $(STAMP)
	$(BIN)/pytest -n auto --dist loadgroup --memtape-slow

# The documentation site (mkdocs-material), into site/.
docs: $(STAMP)
	$(BIN)/mkdocs build --strict

# The same build, strict (a broken link, a missing page or a bad docstring fails it),
# into a throwaway directory.
docs-check: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet --site-dir .docs-check
	rm -rf .docs-check

bench: $(STAMP)
	$(BIN)/pytest benchmarks --benchmark-only --benchmark-columns=min,median,max,rounds

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .benchmarks site .docs-check
