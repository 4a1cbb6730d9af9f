# Waypoint: two commands on a fresh machine.
#   make run    install everything and serve Waypoint on the embedded defaults
#   make test   install everything and run the whole test suite (lint, types, tests)
# Opt-in: make run-native  build llama-server for this CPU (AVX-512 where it has it; ~5 min once) and serve on it
PYTHON ?= python3.11
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip

.PHONY: run run-native llama-native llama-native-ci test install install-dev system-deps lint typecheck pytest clean

$(VENV)/.created:
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "need $(PYTHON) on PATH"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	# torch first, pinned to the CPU build, so nothing pulls a multi-GB CUDA build
	$(PIP) install --quiet torch==2.13.0
	touch $@

$(VENV)/.installed-run: $(VENV)/.created pyproject.toml
	$(PIP) install --quiet -e ".[model-1-5b]"
	touch $@

$(VENV)/.installed-dev: $(VENV)/.created pyproject.toml
	$(PIP) install --quiet -e ".[dev,model-0-5b,model-1-5b]"
	touch $@

install: $(VENV)/.installed-run
install-dev: $(VENV)/.installed-dev

# llama.cpp's server built for this CPU from a pinned, hash-checked source (docs/bench/llm_native_agent.md):
# `make run` serves on it once `make llama-native` (or `make run-native`) has built it, else on the wheel.
LLAMA_NATIVE := .waypoint/llama-native/bin/llama-server

# exec: the server replaces the recipe's shell, so a signal to it (SIGTERM from a supervisor) reaches the server
run: $(VENV)/.installed-run
	@if [ -z "$$WAYPOINT_LOCAL_SERVER_BIN" ] && [ -z "$$WAYPOINT_LLM_BASE_URL" ] && [ -x $(LLAMA_NATIVE) ]; then \
	  echo "serving on the native llama-server ($(LLAMA_NATIVE))"; \
	  WAYPOINT_LOCAL_SERVER_BIN=$(abspath $(LLAMA_NATIVE)) exec $(VENV)/bin/waypoint serve; \
	else exec $(VENV)/bin/waypoint serve; fi

$(LLAMA_NATIVE): scripts/build_llama_native.sh | $(VENV)/.created
	bash scripts/build_llama_native.sh .waypoint/llama-native $(PY)
llama-native: $(LLAMA_NATIVE)

run-native: llama-native run

lint: $(VENV)/.installed-dev
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

typecheck: $(VENV)/.installed-dev
	$(VENV)/bin/mypy

# Debian's Chromium for the trace viewer's browser test (Playwright drives it; no browser download).
system-deps:
	@if [ ! -x /usr/bin/chromium ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else echo "note: /usr/bin/chromium missing and not root: browser tests will be skipped"; fi; \
	fi

# In CI (CI set) the native llama-server is built too, so its real test runs (~4.5 min on 2 cores); elsewhere that
# test runs once `make llama-native` has built it, and is skipped with the reason until then.
llama-native-ci:
	@if command -v cmake >/dev/null 2>&1 && command -v c++ >/dev/null 2>&1; then $(MAKE) --no-print-directory llama-native; \
	else echo "note: no cmake or c++: the native llama-server test will be skipped"; fi

pytest: $(VENV)/.installed-dev system-deps $(if $(CI),llama-native-ci)
	$(VENV)/bin/pytest

test: lint typecheck pytest

clean:
	rm -rf $(VENV) .waypoint .pytest_cache .mypy_cache .ruff_cache
