# Two commands for a newcomer:  `make demo` (set up + run the main job)  and  `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: setup demo test bench lint clean

$(BIN)/context: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(BIN)/context

setup: $(BIN)/context

demo: setup
	PATH="$(CURDIR)/$(BIN):$$PATH" bash scripts/demo.sh

test: setup
	$(BIN)/python -m pytest

bench: setup
	$(BIN)/python bench/retrieval.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache

lint: setup
	$(BIN)/ruff check .
	$(BIN)/mypy
