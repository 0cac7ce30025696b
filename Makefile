# sightline — developer and user entry points.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
NVIM   := $(VENV)/bin/nvim
STAMP  := $(VENV)/.installed
JOBS   ?= auto

.PHONY: venv run test lint luacheck-installed bwrap-installed typecheck pytest bench doccheck helptags clean

# What a plugin manager's build step calls: the core's runtime dependencies only, and the
# help tags (:help sightline).
venv: $(VENV)/.runtime helptags

# doc/tags with the venv's nvim when there is one, else any nvim on PATH; without a Neovim
# the plugin makes them when Neovim first loads it (plugin/sightline.lua), so the build
# does not fail for it.
helptags:
	@nv=$$(test -x $(NVIM) && echo $(NVIM) || command -v nvim || true); \
	if [ -n "$$nv" ]; then "$$nv" --headless -u NONE -c 'helptags doc' -c q || true; \
	else echo 'no nvim found: the help tags are made when Neovim first loads sightline'; fi
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

# Lua tools, outside the venv. stylua from npm (the package carries the binary), into the
# git-ignored .tools/; the stamp names the version, so a bump reinstalls.
TOOLS          := .tools
STYLUA_VERSION := 2.5.2
STYLUA         := $(TOOLS)/node_modules/.bin/stylua
$(TOOLS)/.stylua-$(STYLUA_VERSION):
	npm install --prefix $(TOOLS) --no-save --no-audit --no-fund --loglevel=error \
	  @johnnymorganz/stylua-bin@$(STYLUA_VERSION)
	touch $@

# luacheck is Debian's lua-check, installed when missing and we are root. It lints (unused
# and shadowed names, globals); no Lua type checker is in PyPI, npm or Debian.
luacheck-installed:
	@command -v luacheck >/dev/null || { test "$$(id -u)" = 0 && apt-get update -q \
	  && apt-get install -y -q lua-check; } || { echo 'luacheck missing: install the lua-check package'; exit 1; }

# bubblewrap is Debian's bubblewrap: the sandbox commands run in (tests/nvim/test_sandbox.py,
# the bench's sandbox row), installed when missing and we are root.
bwrap-installed:
	@command -v bwrap >/dev/null || { test "$$(id -u)" = 0 && apt-get update -q \
	  && apt-get install -y -q bubblewrap; } || { echo 'bwrap missing: install the bubblewrap package'; exit 1; }

lint: $(STAMP) $(TOOLS)/.stylua-$(STYLUA_VERSION) luacheck-installed
	$(VENV)/bin/ruff check python tests rplugin
	$(VENV)/bin/ruff format --check python tests rplugin
	$(STYLUA) --check lua plugin tests/lua
	luacheck -q lua plugin tests/lua

typecheck: $(STAMP)
	$(VENV)/bin/mypy

# The published MCP server the MCP client is tested against, from npm, into the git-ignored
# tests/.npm (tests/mcp_servers/npm.py would install it on first use, inside a test's time).
EVERYTHING := @modelcontextprotocol/server-everything@2026.8.31
tests/.npm/node_modules/.bin/mcp-server-everything:
	npm install --prefix tests/.npm --no-save --no-audit --no-fund --loglevel=error $(EVERYTHING)

# The real ACP agent driven end to end (tests/gemini_cli.py, tests/nvim/test_acp_real_agent.py),
# pinned, in a prefix of its own so installing it never prunes the package above.
GEMINI_CLI := 0.61.0
GEMINI_BIN := tests/.npm/gemini-cli-$(GEMINI_CLI)/node_modules/.bin/gemini
$(GEMINI_BIN):
	npm install --prefix tests/.npm/gemini-cli-$(GEMINI_CLI) --no-save --no-audit --no-fund \
	  --loglevel=error @google/gemini-cli@$(GEMINI_CLI)

# The Claude and Codex adapters, driven end to end the same way (tests/acp_adapters.py): the
# newest releases that run on the machines' Node 20 (claude-agent-acp 0.23 declares no engine
# and bundles Claude Code 2.1, which runs on Node 18+; codex-acp ships a linux-x64 binary).
CLAUDE_ACP := 0.23.1
CLAUDE_ACP_BIN := tests/.npm/claude-agent-acp-$(CLAUDE_ACP)/node_modules/.bin/claude-agent-acp
$(CLAUDE_ACP_BIN):
	npm install --prefix tests/.npm/claude-agent-acp-$(CLAUDE_ACP) --no-save --no-audit --no-fund \
	  --loglevel=error @zed-industries/claude-agent-acp@$(CLAUDE_ACP)
CODEX_ACP := 0.16.0
CODEX_ACP_BIN := tests/.npm/codex-acp-$(CODEX_ACP)/node_modules/.bin/codex-acp
$(CODEX_ACP_BIN):
	npm install --prefix tests/.npm/codex-acp-$(CODEX_ACP) --no-save --no-audit --no-fund \
	  --loglevel=error @zed-industries/codex-acp@$(CODEX_ACP)

pytest: $(STAMP) tests/.npm/node_modules/.bin/mcp-server-everything $(GEMINI_BIN) $(CLAUDE_ACP_BIN) \
  $(CODEX_ACP_BIN) bwrap-installed
	$(PY) -m pytest -n $(JOBS) -q

test: lint typecheck pytest

# Neovim with the plugin, isolated config (NVIM_APPNAME), on the sample workspace.
run: $(STAMP) helptags
	cd examples/workspace && NVIM_APPNAME=sightline-demo \
	  XDG_CONFIG_HOME=$(CURDIR)/examples/config \
	  $(CURDIR)/$(NVIM) -c 'lua require("sightline").chat()' README.md

# The help lint the tests run: every tag defined once, every |link| resolves.
doccheck: $(STAMP)
	$(PY) -m pytest -n 0 -q tests/unit/test_docs.py tests/nvim/test_docs.py

bench: $(STAMP) bwrap-installed
	$(PY) -m tests.bench

clean:
	rm -rf $(VENV) $(TOOLS) .pytest_cache .mypy_cache .ruff_cache doc/tags
