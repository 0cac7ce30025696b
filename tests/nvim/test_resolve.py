"""member_key / syntax_scope re-resolution in a real Neovim: C and Lua through tree-sitter,
Python through the core's ast (Neovim ships no Python parser), LSP document symbols first.
Every case runs after an edit above the code moved it away from the lines the agent saw."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from sightline.editor import port as editor
from sightline.tools import view
from tests.conftest import ROOT, wait_for
from tests.lua_helper import lua_helper


def reveal(nvim: Any, args: dict[str, Any]) -> Any:
    """The callers' path (the agent's tool and the MCP server's): a Python member resolved
    with pyresolve here, then the port's reveal."""
    return view.call(editor.NvimEditor.direct(nvim), "reveal", args)


LAST = "local l = require('sightline.reveal').last return {l.start_line, l.end_line}"

C_SRC = """\
#include <stdio.h>

struct point {
  int x;
  int y;
};

static int helper(int x) {
  return x * 2;
}

int process(int *items, int n) {
  int total = 0;
  for (int i = 0; i < n; i++) {
    total += items[i];
  }
  for (int j = 0; j < n; j++) {
    if (items[j] > 10) {
      total -= helper(items[j]);
    } else if (items[j] < 0) {
      total = 0;
    }
  }
  { int unused = 0; (void)unused; }
  return total;
}
"""

LUA_SRC = """\
local M = {}

function M.outer(items)
  local function inner(x)
    for i = 1, x do
      print(i)
    end
    for _, v in ipairs(items) do
      if v > x then
        return v
      end
    end
  end
  return inner
end

function M.other()
  local function inner()
    return 1
  end
  return inner
end

M.handlers = {
  on_exit = function(code)
    while code > 0 do
      code = code - 1
    end
  end,
}

return M
"""

PY_SRC = """\
import sys


class Parser:
    def parse_args(self, argv):
        def inner(items):
            for a in items:
                print(a)
            for b in items:
                if b:
                    return b
            return None

        return inner(argv)


class Other:
    @staticmethod
    def parse_args(argv):
        return argv
"""

SCOPE_FOR1_IF0 = [{"kind": "for", "index_in_parent": 1}, {"kind": "if", "index_in_parent": 0}]

# (file, member_key, syntax_scope, start_line the agent saw, expected lines before the edit)
CASES = [
    ("a.c", "process", None, 12, (12, 26)),
    ("a.c", "helper", None, 8, (8, 10)),
    ("a.c", "point.x", None, 4, (4, 4)),
    ("a.c", "process", [{"kind": "for", "index_in_parent": 0}], 14, (14, 16)),
    ("a.c", "process", [{"kind": "for", "index_in_parent": 1}], 17, (17, 23)),
    ("a.c", "process", SCOPE_FOR1_IF0, 18, (18, 22)),
    ("a.c", "process", [{"kind": "block", "index_in_parent": 0}], 24, (24, 24)),
    ("a.lua", "M.outer", None, 3, (3, 15)),
    ("a.lua", "outer.inner", None, 4, (4, 13)),
    ("a.lua", "inner", None, 19, (18, 20)),  # two `inner`s: the nearest
    ("a.lua", "inner", None, 3, (4, 13)),
    ("a.lua", "M:outer", [{"kind": "function", "index_in_parent": 0}], 4, (4, 13)),
    ("a.lua", "outer.inner", SCOPE_FOR1_IF0, 9, (9, 11)),
    ("a.lua", "inner", [{"kind": "for", "index_in_parent": 0}], 18, (5, 7)),  # only one has it
    ("a.lua", "handlers.on_exit", [{"kind": "while", "index_in_parent": 0}], 26, (26, 28)),
    ("a.py", "Parser.parse_args", None, 5, (5, 14)),
    ("a.py", "parse_args", None, 19, (18, 20)),  # decorators belong to the def
    ("a.py", "parse_args.inner", SCOPE_FOR1_IF0, 10, (10, 11)),
    (
        "a.py",
        "Parser.parse_args",
        [{"kind": "function", "index_in_parent": 0}, {"kind": "for", "index_in_parent": 0}],
        7,
        (7, 8),
    ),
]


@pytest.fixture
def files(nvim: Any, isolated_env: Path) -> Any:
    (isolated_env / "a.c").write_text(C_SRC)
    (isolated_env / "a.lua").write_text(LUA_SRC)
    (isolated_env / "a.py").write_text(PY_SRC)
    nvim.command("filetype on")
    lua_helper(nvim, "lsp.stub_host")
    return nvim


def moved_by(nvim: Any, name: str, n: int) -> None:
    """Open name and insert n lines at its top: the code moves, the file on disk does not."""
    nvim.command(f"edit {name}")
    nvim.api.buf_set_lines(0, 0, 0, True, [""] * n)


@pytest.mark.parametrize(("name", "key", "scope", "seen", "expected"), CASES)
def test_resolves_after_code_moved(
    files: Any,
    name: str,
    key: str,
    scope: list[dict[str, Any]] | None,
    seen: int,
    expected: tuple[int, int],
) -> None:
    nvim = files
    moved_by(nvim, name, 5)
    args: dict[str, Any] = {"file_path": name, "member_key": key, "start_line": seen + 5}
    if scope:
        args["syntax_scope"] = scope
    assert reveal(nvim, args) == "OK"
    assert nvim.exec_lua(LAST) == [expected[0] + 5, expected[1] + 5]


def test_python_resolves_without_any_parser(files: Any) -> None:
    nvim = files
    nvim.command("edit a.py")
    assert nvim.exec_lua("return (pcall(vim.treesitter.get_parser, 0, 'python'))") is False
    args = {"file_path": "a.py", "member_key": "Other.parse_args"}
    assert reveal(nvim, args) == "OK"
    assert nvim.exec_lua(LAST) == [18, 20]


def test_member_key_alone_needs_no_lines(files: Any) -> None:
    nvim = files
    assert reveal(nvim, {"file_path": "a.c", "member_key": "helper"}) == "OK"
    assert nvim.exec_lua(LAST) == [8, 10]
    # no member: the first step counts the file's top-level statements
    scope = [{"kind": "function", "index_in_parent": 1}]
    assert reveal(nvim, {"file_path": "a.lua", "syntax_scope": scope}) == "OK"
    assert nvim.exec_lua(LAST) == [17, 22]
    scope = [{"kind": "for", "index_in_parent": 0}]
    res = reveal(nvim, {"file_path": "a.lua", "syntax_scope": scope})
    assert res == "syntax_scope step 1 (for #0) not found in a.lua: it has 0 such statement(s)"


def test_syntax_scope_as_json_text(files: Any) -> None:
    nvim = files
    scope = '[{"kind": "for", "index_in_parent": 1}]'
    args = {"file_path": "a.c", "member_key": "process", "syntax_scope": scope}
    assert reveal(nvim, args) == "OK"
    assert nvim.exec_lua(LAST) == [17, 23]


@pytest.mark.parametrize("name", ["a.c", "a.lua", "a.py"])
def test_unresolved_member_with_valid_lines_reveals_the_lines(files: Any, name: str) -> None:
    nvim = files
    res = reveal(nvim, {"file_path": name, "member_key": "nope", "start_line": 3, "end_line": 4})
    assert res == f"OK (member_key 'nope' not found in {name}; showed lines 3–4)"
    assert nvim.exec_lua(LAST) == [3, 4]


@pytest.mark.parametrize("name", ["a.c", "a.lua", "a.py"])
def test_unresolved_member_without_lines_is_an_error(files: Any, name: str) -> None:
    nvim = files
    before = nvim.exec_lua("return #vim.api.nvim_list_bufs()")
    res = reveal(nvim, {"file_path": name, "member_key": "nope"})
    assert res == f"member_key 'nope' not found in {name}"
    assert nvim.exec_lua("return #vim.api.nvim_list_bufs()") == before


@pytest.mark.parametrize(("name", "key"), [("a.c", "process"), ("a.py", "Parser.parse_args")])
def test_unresolved_scope_falls_back_to_lines_then_member(files: Any, name: str, key: str) -> None:
    nvim = files
    scope = [{"kind": "while", "index_in_parent": 3}]
    args = {"file_path": name, "member_key": key, "syntax_scope": scope, "start_line": 2}
    res = reveal(nvim, args)
    assert res.startswith("OK (syntax_scope step 1 (while #3) not found in ")
    assert res.endswith("; showed lines 2–2)")
    del args["start_line"]
    res = reveal(nvim, args)
    assert res.startswith("OK (syntax_scope step 1 (while #3) not found")
    assert nvim.exec_lua(LAST) == ([12, 26] if name == "a.c" else [5, 14])


def test_unsupported_filetype_says_why(files: Any, isolated_env: Path) -> None:
    nvim = files
    (isolated_env / "notes.txt").write_text("one\ntwo\n")
    res = reveal(nvim, {"file_path": "notes.txt", "member_key": "x", "start_line": 1})
    assert res.startswith("OK (cannot resolve member_key 'x' in notes.txt: no LSP symbols")
    res = reveal(nvim, {"file_path": "notes.txt", "member_key": "x"})
    assert res.startswith("cannot resolve member_key 'x' in notes.txt")


def rng(a: int, b: int) -> dict[str, Any]:
    return {"start": {"line": a, "character": 0}, "end": {"line": b, "character": 1}}


def test_lsp_document_symbols_come_first(files: Any) -> None:
    nvim = files
    nvim.command("edit a.c")
    symbols = [
        {
            "name": "Outer",
            "kind": 5,
            "range": rng(0, 9),
            "selectionRange": rng(0, 0),
            "children": [
                {
                    "name": "process(int*, int)",
                    "kind": 12,
                    "range": rng(1, 2),
                    "selectionRange": rng(1, 1),
                },
                {"name": "process", "kind": 12, "range": rng(6, 7), "selectionRange": rng(6, 6)},
            ],
        }
    ]
    assert (
        lua_helper(nvim, "lsp.fake_in_process", nvim.api.get_current_buf().handle, symbols) is True
    )
    assert (
        reveal(nvim, {"file_path": "a.c", "member_key": "Outer.process", "start_line": 6}) == "OK"
    )
    assert nvim.exec_lua(LAST) == [7, 8]  # LSP's (nearest of two), not tree-sitter's 12–26
    assert reveal(nvim, {"file_path": "a.c", "member_key": "process", "start_line": 1}) == "OK"
    assert nvim.exec_lua(LAST) == [2, 3]
    # with a syntax_scope, statements come from tree-sitter
    args = {"file_path": "a.c", "member_key": "process", "syntax_scope": SCOPE_FOR1_IF0}
    assert reveal(nvim, args) == "OK"
    assert nvim.exec_lua(LAST) == [18, 22]


def test_lsp_symbol_information_with_container(files: Any) -> None:
    nvim = files
    nvim.command("edit a.c")
    uri = nvim.exec_lua("return vim.uri_from_bufnr(0)")
    symbols = [
        {
            "name": "run",
            "kind": 6,
            "containerName": "Job",
            "location": {"uri": uri, "range": rng(2, 4)},
        },
        {
            "name": "run",
            "kind": 6,
            "containerName": "Task",
            "location": {"uri": uri, "range": rng(8, 9)},
        },
    ]
    assert (
        lua_helper(nvim, "lsp.fake_in_process", nvim.api.get_current_buf().handle, symbols) is True
    )
    assert reveal(nvim, {"file_path": "a.c", "member_key": "Task.run"}) == "OK"
    assert nvim.exec_lua(LAST) == [9, 10]


def test_slow_language_server_never_blocks_a_reveal(files: Any, tmp_path: Path) -> None:
    """Issue 9 item 17: the reveal falls back to tree-sitter at once instead of waiting for
    the server, Neovim answers RPC meanwhile, and the late answer serves the next reveal."""
    nvim = files
    nvim.command("edit a.c")
    symbols = [{"name": "process", "kind": 12, "range": rng(6, 7), "selectionRange": rng(6, 6)}]
    sym_file = tmp_path / "symbols.json"
    sym_file.write_text(json.dumps(symbols))
    script = str(ROOT / "tests" / "fake_lsp.py")
    buf = nvim.api.get_current_buf().handle
    assert lua_helper(nvim, "lsp.slow", buf, sys.executable, script, str(sym_file), "2") is True
    t0 = time.monotonic()
    assert reveal(nvim, {"file_path": "a.c", "member_key": "process"}) == "OK"
    assert time.monotonic() - t0 < 0.2  # was 0.5 s: request_sync's timeout
    assert nvim.exec_lua(LAST) == [12, 26]  # tree-sitter's, the fallback
    # Responsive while the server still thinks: a round trip answers at once.
    t0 = time.monotonic()
    assert nvim.eval("1 + 1") == 2
    assert time.monotonic() - t0 < 0.1
    # Once the server has answered, the next reveal of the unchanged buffer uses it.
    wait_for(
        lambda: (
            reveal(nvim, {"file_path": "a.c", "member_key": "process"}) == "OK"
            and nvim.exec_lua(LAST) == [7, 8]
        ),
        timeout=10,
        what="the server's symbols",
    )


MD_SRC = """\
# Guide

## Install

```sh
make
```

```sh
make test
```

## Usage
"""

MD_QUERY = """\
(section (atx_heading heading_content: (inline) @member.name)) @member
(fenced_code_block) @scope.block
"""


def user_query(nvim: Any, tmp_path: Path, lang: str, text: str) -> None:
    """A directory with queries/<lang>/sightline.scm, added to the runtimepath as a plugin
    manager adds a plugin (Neovim only searches directories that were there at start-up or
    were added to 'runtimepath' since)."""
    query = tmp_path / "rt" / "queries" / lang / "sightline.scm"
    query.parent.mkdir(parents=True)
    query.write_text(text)
    nvim.exec_lua("vim.opt.runtimepath:prepend(...)", str(tmp_path / "rt"))


def test_a_query_file_teaches_a_language(files: Any, isolated_env: Path, tmp_path: Path) -> None:
    nvim = files
    (isolated_env / "a.md").write_text(MD_SRC)
    scope = [{"kind": "block", "index_in_parent": 1}]
    args = {"file_path": "a.md", "member_key": "Guide.Install", "syntax_scope": scope}
    # The wheel's markdown parser is there; what a section or a code block means is not.
    res = reveal(nvim, args)
    assert res.startswith(
        "cannot resolve member_key 'Guide.Install' in a.md: no queries/markdown/sightline.scm"
    ), res
    user_query(nvim, tmp_path, "markdown", MD_QUERY)
    moved_by(nvim, "a.md", 3)
    assert reveal(nvim, {**args, "start_line": 4}) == "OK"
    assert nvim.exec_lua(LAST) == [12, 14]
    assert reveal(nvim, {"file_path": "a.md", "member_key": "Usage"}) == "OK"
    assert nvim.exec_lua(LAST) == [16, 16]


def test_a_broken_query_file_is_named_and_changes_nothing(files: Any, tmp_path: Path) -> None:
    nvim = files
    # Earlier on the runtimepath than the plugin's own file, which it replaces.
    user_query(nvim, tmp_path, "c", "(no_such_node) @member\n")
    nvim.command("edit a.c")
    tick = nvim.current.buffer.api.get_var("changedtick")
    res = reveal(nvim, {"file_path": "a.c", "member_key": "helper"})
    assert res.startswith("queries/c/sightline.scm does not parse: "), res
    assert "no_such_node" in res and "\n" not in res and "stack traceback" not in res
    assert nvim.current.buffer.api.get_var("changedtick") == tick
    # With valid lines, those are shown, as for any lookup that failed.
    res = reveal(nvim, {"file_path": "a.c", "member_key": "helper", "start_line": 8})
    assert res.startswith("OK (queries/c/sightline.scm does not parse: "), res
    assert res.endswith("; showed lines 8–8)")
    assert nvim.exec_lua(LAST) == [8, 8]
