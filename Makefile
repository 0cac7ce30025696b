# sightline — developer and user entry points.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
NVIM   := $(VENV)/bin/nvim
STAMP  := $(VENV)/.installed
JOBS   ?= auto

.PHONY: venv run test lint typecheck pytest bench doccheck clean

# What a plugin manager's build step calls: the core's runtime dependencies only.
venv: $(VENV)/.runtime
$(VENV)/.runtime: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e .
	touch $@

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	touch $(VENV)/.runtime $@

lint: $(STAMP)
	$(VENV)/bin/ruff check python tests rplugin
	$(VENV)/bin/ruff format --check python tests rplugin

typecheck: $(STAMP)
	$(VENV)/bin/mypy

pytest: $(STAMP)
	$(PY) -m pytest -n $(JOBS) -q

test: lint typecheck pytest

# Neovim with the plugin, isolated config (NVIM_APPNAME), on the sample workspace.
run: $(STAMP)
	cd examples/workspace && NVIM_APPNAME=sightline-demo \
	  XDG_CONFIG_HOME=$(CURDIR)/examples/config \
	  $(CURDIR)/$(NVIM) -c 'lua require("sightline").chat()' README.md

bench: $(STAMP)
	$(PY) -m tests.bench

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache doc/tags
