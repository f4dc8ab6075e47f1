# Two commands for a newcomer:  `make demo` (set up + run the main job)  and  `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
# Test processes: most of the suite waits on subprocesses, servers and deadlines, so three
# processes finish sooner than two even on two cores.
TEST_WORKERS ?= 3

.PHONY: setup demo test bench lint clean check-wheel

$(BIN)/context: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(BIN)/context

setup: $(BIN)/context

demo: setup
	PATH="$(CURDIR)/$(BIN):$$PATH" bash scripts/demo.sh

test: setup
	$(BIN)/python -m pytest -rs -n $(TEST_WORKERS)

bench: setup
	$(BIN)/python bench/run_all.py

check-wheel:  # sdist + wheel carry the model; the installed wheel adds and searches (needs the index)
	bash scripts/check_wheel.sh

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache

lint: setup
	$(BIN)/ruff check .
	$(BIN)/mypy
