# Two commands set everything up from nothing: `make serve` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: serve test lint bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

serve: $(STAMP)
	$(BIN)/reward-api serve --host $(HOST) --port $(PORT)

test: $(STAMP)
	$(BIN)/ruff check reward_api tests bench
	$(BIN)/python -m pytest -q

lint: $(STAMP)
	$(BIN)/ruff check reward_api tests bench
	$(BIN)/ruff format --check reward_api tests bench

bench: $(STAMP)
	$(BIN)/python bench/math_throughput.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
