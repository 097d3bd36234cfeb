# Two commands on a fresh machine: `make demo` and `make test`.
# Each creates its own virtual environment on first use.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test lint bench clean

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

test: lint
	$(BIN)/pytest
	$(BIN)/pytest benchmarks --benchmark-disable

bench: $(STAMP)
	$(BIN)/pytest benchmarks --benchmark-only --benchmark-columns=min,median,max,rounds

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .benchmarks
