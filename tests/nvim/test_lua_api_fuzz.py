"""Every public entry refuses bad input cleanly (issue 10 §6): each function of
`require('sightline')` and each `:Sightline` subcommand, given every value of a generated
table of bad values in every parameter, answers `nil, message` (reveal and go_to_position:
their error text) and never raises a Lua error or shows a traceback."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import capture_notify, status
from tests.lua_values import BAD_VALUES, LEAKS

# The valid value for each parameter position, so a bad value can be put in one position at a
# time. A function missing here is still called with each bad value as its only argument.
FUZZ_API = (
    BAD_VALUES
    + LEAKS
    + r"""
local sl = require('sightline')
local VALID = {
  send = { 'hello', nil },
  decide = { 'accept', 'why' },
  change = { nil },
  reveal = { { file_path = 'x.txt', start_line = 1 } },
  go_to_position = { { file_path = 'x.txt', line = 1 } },
  plan = { 'on' },
  autoaccept = { 'on' },
  open_conversation = { 'x.jsonl' },
}
-- What a value may legitimately be in a position (then the call is not a refusal case).
local function acceptable(name, pos, value)
  if name == 'send' and pos == 1 then
    return type(value) == 'string' -- the core refuses an empty one (test_pane)
  elseif name == 'send' or name == 'change' then
    return value == nil or (type(value) == 'table' and next(value) == nil)
  elseif name == 'decide' and pos == 2 then
    return value == nil or type(value) == 'string'
  elseif name == 'plan' or name == 'autoaccept' then
    return value == nil or type(value) == 'boolean'
  elseif name == 'open_conversation' then
    return type(value) == 'string' and value ~= '' and not value:find('%z') and #value < 4096
  end
  return false
end
local names, out, calls = {}, {}, 0
for name, fn in pairs(sl) do
  if type(fn) == 'function' and name:sub(1, 1) ~= '_' and name ~= 'setup' then
    names[#names + 1] = name
  end
end
table.sort(names)
for _, name in ipairs(names) do
  local valid = VALID[name] or {}
  for pos = 1, math.max(1, #valid) do
    for _, v in ipairs(_G.sightline_bad) do
      if not acceptable(name, pos, v[2]) then
        local args = vim.deepcopy(valid)
        args[pos] = v[2]
        calls = calls + 1
        local res = vim.F.pack_len(pcall(sl[name], unpack(args, 1, math.max(pos, #valid))))
        local bad
        if not res[1] then
          bad = 'raised ' .. tostring(res[2]):sub(1, 200)
        elseif name == 'reveal' or name == 'go_to_position' then
          bad = type(res[2]) ~= 'string' and 'answered ' .. type(res[2])
            or vim.startswith(res[2], 'OK') and 'accepted'
            or _G.sightline_leak(res[2])
        elseif res[2] ~= nil then
          bad = 'accepted (' .. vim.inspect(res[2]) .. ')'
        else
          bad = _G.sightline_leak(res[3])
        end
        if bad then
          out[#out + 1] = ('%s arg %d = %s: %s'):format(name, pos, v[1], bad)
        end
      end
    end
  end
end
return { names = names, problems = out, calls = calls }
"""
)

PUBLIC = {
    "setup", "chat", "send", "stop", "reset", "status", "decide", "reveal", "change",
    "go_to_position", "extensions", "plan", "autoaccept", "history", "open_conversation",
    "restart", "compare",
}  # fmt: skip


def test_every_public_function_refuses_every_bad_value(nvim: Any) -> None:
    notes = capture_notify(nvim)
    before = nvim.api.buf_get_var(0, "changedtick")
    res = nvim.exec_lua(FUZZ_API)
    assert PUBLIC - {"setup"} <= set(res["names"])  # setup has its own (test_config_health)
    assert res["calls"] > 400
    assert res["problems"] == []
    # Nothing was started or changed by a refused call, and nothing was shown.
    assert status(nvim)["state"] == "stopped"
    assert nvim.api.buf_get_var(0, "changedtick") == before
    assert notes() == []


@pytest.mark.parametrize("value", ["vim.NIL", "true", "false", "42", "0/0", "function() end"])
def test_change_of_a_non_table_is_refused(nvim_factory: Any, value: str) -> None:
    """The fuzzer's instances: `change(x)` indexed its argument ("attempt to index local
    'opts'"); refused before the provider check, whatever the provider."""
    for provider in ({"name": "echo"}, {"name": "anthropic", "api_key_cmd": "true"}):
        nv = nvim_factory({"provider": provider})
        ok, err = nv.exec_lua(f"return {{require('sightline').change({value})}}")
        assert ok is None
        assert err.startswith("sightline.change: opts must be a flat range {buffer, start_row"), err
        assert nv.exec_lua("return #vim.api.nvim_list_wins()") == 1  # no dialog opened


def test_change_with_wrong_typed_fields_names_the_field(nvim: Any) -> None:
    ok, err = nvim.exec_lua("return {require('sightline').change({buffer = 'x'})}")
    assert ok is None and err == 'sightline.change: buffer must be an integer, got "x"'
    ok, err = nvim.exec_lua("return {require('sightline').send('hi', {bufer = 0})}")
    assert ok is None and err.startswith("sightline.send: unknown field bufer")


def test_functions_without_parameters_refuse_arguments(nvim: Any) -> None:
    ok, err = nvim.exec_lua("return {require('sightline').stop({})}")
    assert ok is None and err == "sightline.stop: takes no arguments, got table"
    assert status(nvim)["state"] == "stopped"


def test_reveal_keeps_the_seed_error_text(nvim: Any) -> None:
    assert nvim.exec_lua("return require('sightline').reveal(5)") == (
        "reveal expects a table of arguments"
    )
    long = nvim.exec_lua("return require('sightline').reveal({file_path = ('x'):rep(5000)})")
    assert long == "sightline.reveal: file_path is too long or holds a NUL byte"


# Each subcommand with bad arguments, typed as a user types them (`:Sightline …`).
FUZZ_COMMANDS = (
    LEAKS
    + r"""
local words = { 'x', 'maybe', '-1', '1e309', 'nan', '%', '#', '"', "'", '\\', '<CR>', '{}',
  '--member', '--duration abc', ('y'):rep(5000), 'a b c d e f g h' }
local names = require('sightline.commands').names()
table.insert(names, 'nonexistent')
local out, calls = {}, 0
for _, name in ipairs(names) do
  for _, w in ipairs(words) do
    _G.sightline_test_notes = {}
    calls = calls + 1
    local ok, err = pcall(vim.cmd, 'Sightline ' .. name .. ' ' .. w)
    local bad = not ok and ('raised ' .. tostring(err):sub(1, 200)) or nil
    for _, note in ipairs(_G.sightline_test_notes) do
      bad = bad or _G.sightline_leak(note.msg)
    end
    if bad then
      out[#out + 1] = (':Sightline %s %s: %s'):format(name, w:sub(1, 20), bad)
    end
  end
end
return { problems = out, calls = calls }
"""
)


def test_every_subcommand_refuses_bad_arguments_with_a_message(nvim: Any) -> None:
    capture_notify(nvim)
    before = nvim.api.buf_get_var(0, "changedtick")
    res = nvim.exec_lua(FUZZ_COMMANDS)
    assert res["calls"] > 200
    assert res["problems"] == []
    assert nvim.api.buf_get_var(0, "changedtick") == before


@pytest.mark.parametrize(
    ("command", "message"),
    [
        ("Sightline stop now", 'sightline: :Sightline stop takes no arguments, got "now"'),
        ("Sightline plan maybe", 'sightline.plan: expected on, off or toggle, got "maybe"'),
        (
            "Sightline plan on off",
            'sightline: :Sightline plan takes at most 1 argument, got "on off"',
        ),
        ("Sightline frobnicate", 'sightline: unknown subcommand "frobnicate"'),
    ],
)
def test_named_command_refusals(nvim: Any, command: str, message: str) -> None:
    notes = capture_notify(nvim)
    nvim.command(command)
    (note,) = notes()
    assert note["msg"].startswith(message), note["msg"]
