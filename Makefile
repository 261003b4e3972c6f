# Two commands matter: `make demo` and `make test`. Both install whatever is missing first.
SHELL := /bin/bash
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
SYSTEM_PACKAGES := git patch valgrind bwrap strace hyperfine chromium
APT_PACKAGES := git patch valgrind bubblewrap strace libseccomp2 hyperfine chromium

.PHONY: setup system venv train-extra demo demo-patches test test-slow test-e2e lint typecheck unit bench clean

setup: system venv

# Debian packages: installed only when a command is missing, so a prepared machine pays nothing.
system:
	@missing=""; for c in $(SYSTEM_PACKAGES); do command -v $$c >/dev/null 2>&1 || missing="$$missing $$c"; done; \
	ldconfig -p 2>/dev/null | grep -q 'libseccomp\.so\.2' || missing="$$missing libseccomp2"; \
	if [ -n "$$missing" ]; then \
	  echo "installing system packages (missing:$$missing)"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $(APT_PACKAGES) >/dev/null; \
	fi

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

# The stamp follows pyproject.toml so a changed dependency list reinstalls. `all` brings every
# runtime extra but train (the model providers, the report's plots, function mode's seccomp, and
# ray: the tests start a real Ray cluster on 127.0.0.1); train has its own stamp below.
$(VENV)/.stamp-install: pyproject.toml setup.py | $(BIN)/python
	$(BIN)/pip install -q -e '.[dev,all]'
	@touch $@

# The training extra (LoRA SFT in function mode). torch is pinned to the CPU build that this kind
# of machine keeps on disk; an unpinned torch would fetch a multi-GB CUDA build.
$(VENV)/.stamp-train: $(VENV)/.stamp-install
	$(BIN)/pip install -q 'torch==2.13.0'
	$(BIN)/pip install -q -e '.[dev,train]'
	@touch $@

venv: $(VENV)/.stamp-install

train-extra: $(VENV)/.stamp-train

lint: setup
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks
	$(BIN)/lint-imports --no-cache

typecheck: setup
	$(BIN)/mypy

unit: setup train-extra
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/pytest -q --durations=15

test: lint typecheck unit

test-slow: setup train-extra
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/pytest -q -m slow

# Every end-to-end, cheat and attack test that `make test` leaves out for time, less the checks
# over the whole function-mode corpus: what CI runs after `make test`.
test-e2e: setup train-extra
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/pytest -q -m "slow and not corpus" --durations=20

demo: setup
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/python -m speedproof.demo

demo-patches: setup
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/python -m speedproof.demo --judge-patches

bench: setup
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/python benchmarks/judge_stages.py

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
