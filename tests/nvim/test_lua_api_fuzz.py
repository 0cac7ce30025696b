"""Every public entry refuses bad input cleanly (issue 10 §6): each function of
`require('sightline')` and each `:Sightline` subcommand, given every value of a generated
table of bad values in every parameter, answers `nil, message` (reveal and go_to_position:
their error text) and never raises a Lua error or shows a traceback."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import capture_notify, status
from tests.lua_helper import lua_helper

PUBLIC = {
    "setup", "chat", "send", "stop", "reset", "status", "decide", "reveal", "change",
    "go_to_position", "extensions", "plan", "autoaccept", "history", "open_conversation",
    "restart", "compare",
}  # fmt: skip


def test_every_public_function_refuses_every_bad_value(nvim: Any) -> None:
    notes = capture_notify(nvim)
    before = nvim.api.buf_get_var(0, "changedtick")
    res = lua_helper(nvim, "fuzz.api")
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


def test_every_subcommand_refuses_bad_arguments_with_a_message(nvim: Any) -> None:
    capture_notify(nvim)
    before = nvim.api.buf_get_var(0, "changedtick")
    res = lua_helper(nvim, "fuzz.commands")
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
