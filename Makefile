# Two commands set everything up from nothing: `make serve` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
SYSTEM_STAMP := $(VENV)/.system-packages
# Debian packages the sandbox needs: isolation and the toolchains of its languages
# (python3, gcc/g++, javac and node ship with the machine image; apt installs them if not).
APT_PACKAGES := bubblewrap util-linux python3 gcc g++ golang-go rustc
APT_IF_MISSING := default-jdk-headless:javac nodejs:node
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: serve test lint bench demo clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml $(SYSTEM_STAMP) | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@# PyPI's torchvision/torchaudio/torchcodec do not import beside the CPU torch (vLLM pulls them in).
	$(BIN)/python -m pip uninstall --quiet --yes torchvision torchaudio torchcodec
	touch $(STAMP)

$(SYSTEM_STAMP): Makefile | $(BIN)/python
	@missing="$$(for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done; \
	  for pair in $(APT_IF_MISSING); do command -v $${pair#*:} >/dev/null || echo $${pair%%:*}; done)"; \
	if [ -n "$$missing" ]; then \
	  echo "installing system packages: $$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi
	touch $(SYSTEM_STAMP)

serve: $(STAMP)
	$(BIN)/reward-api serve --host $(HOST) --port $(PORT)

test: $(STAMP)
	$(BIN)/ruff check reward_api sandbox trainer_client tests bench
	$(BIN)/python -m pytest -q

lint: $(STAMP)
	$(BIN)/ruff check reward_api sandbox trainer_client tests bench
	$(BIN)/ruff format --check reward_api sandbox trainer_client tests bench

bench: $(STAMP)
	$(BIN)/python bench/math_throughput.py
	$(BIN)/python bench/code_throughput.py --http

demo: $(STAMP)
	$(BIN)/trainer-client demo --output runs/demo

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
