"""Configuration: merge order, validation errors naming the path, :checkhealth.

Configured as users do: an init.lua calling setup() (tests/child.py); `vim.g.sightline` only
in the tests about it (`g=`).
"""

from __future__ import annotations

import contextlib
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import child
from tests.conftest import ROOT, capture_notify, said, wait_for
from tests.lua_helper import lua_helper
from tests.screen import Screen


def test_setup_rejects_bad_type_naming_the_path(nvim: Any) -> None:
    notes = capture_notify(nvim)
    res = nvim.exec_lua("return {require('sightline').setup({reveal = {duration_ms = 'long'}})}")
    assert res[0] is None
    assert res[1].startswith("sightline.reveal.duration_ms:")
    assert "expected whole number in 100..60000" in res[1]
    assert said(nvim, notes()[0]["msg"]) == res[1]


@pytest.mark.parametrize(
    ("opts", "path"),
    [
        ("{provider = {name = 'gpt'}}", "sightline.provider.name"),
        ("{pane = {side = 'up'}}", "sightline.pane.side"),
        ("{pane = 3}", "sightline.pane"),
        ("{autoaccept = 'yes'}", "sightline.autoaccept"),
        ("{provider = {retries = -1}}", "sightline.provider.retries"),
    ],
)
def test_each_invalid_option_names_its_path(nvim: Any, opts: str, path: str) -> None:
    capture_notify(nvim)
    err = nvim.exec_lua(f"return select(2, require('sightline').setup({opts}))")
    assert err.startswith(path + ":"), err


def test_failed_setup_keeps_previous_config(nvim: Any) -> None:
    capture_notify(nvim)
    nvim.exec_lua("require('sightline').setup({pane = {width = 0.3}})")
    nvim.exec_lua("require('sightline').setup({pane = {width = 'wide'}})")
    assert nvim.exec_lua("return require('sightline.config').get().pane.width") == 0.3


def test_setup_starts_from_defaults_each_time(nvim: Any) -> None:
    nvim.exec_lua("require('sightline').setup({autoaccept = true})")
    nvim.exec_lua("require('sightline').setup({pane = {side = 'left'}})")
    cfg = nvim.exec_lua("return require('sightline.config').get()")
    assert cfg["autoaccept"] is False and cfg["pane"]["side"] == "left"


def test_vim_g_sightline_is_read(nvim_factory: Any) -> None:
    nv = nvim_factory({"provider": {"name": "echo"}, "pane": {"width": 50}})
    assert nv.exec_lua("return require('sightline.config').get().pane.width") == 50


def test_default_keys_set_only_when_free_and_opt_out(nvim_factory: Any) -> None:
    nv = nvim_factory({"provider": {"name": "echo"}})
    assert "<Plug>(sightline-chat)" in nv.call("maparg", "<Leader>ss", "n")
    assert "<Plug>(sightline-change)" in nv.call("maparg", "<Leader>sc", "x")
    off = nvim_factory({"provider": {"name": "echo"}, "mappings": False})
    assert off.call("maparg", "<Leader>ss", "n") == ""


def test_user_mapping_is_never_shadowed(nvim: Any) -> None:
    nvim.command("nnoremap <Leader>ss :echo 'mine'<CR>")
    nvim.exec_lua("require('sightline').setup({})")
    assert nvim.call("maparg", "<Leader>ss", "n") == ":echo 'mine'<CR>"


def test_checkhealth_reports_python_provider_core(nvim_factory: Any) -> None:
    nv = nvim_factory({"provider": {"name": "echo"}, "bogus": 1})
    nv.command("checkhealth sightline")
    text = "\n".join(nv.api.buf_get_lines(0, 0, -1, False))
    assert "Neovim 0.11" in text
    assert "pynvim" in text and "anthropic" in text and "platformdirs" in text
    assert "the core answers" in text
    assert "unknown option sightline.bogus" in text
    assert "provider: echo" in text


def test_checkhealth_never_shows_the_key(nvim_factory: Any) -> None:
    secret = "sk-ant-test-SECRET-123456"
    nv = nvim_factory({}, env={"ANTHROPIC_API_KEY": secret})
    nv.command("checkhealth sightline")
    text = "\n".join(nv.api.buf_get_lines(0, 0, -1, False))
    assert "provider: anthropic" in text and "ANTHROPIC_API_KEY" in text
    assert secret not in text


# -- setup() never throws ------------------------------------------------------------------


def test_setup_with_any_value_returns_true_or_nil_and_a_message(nvim: Any) -> None:
    capture_notify(nvim)
    assert lua_helper(nvim, "fuzz.setup_each_bad_value") == []


@pytest.mark.parametrize(
    ("lua", "shown"),
    [
        ("'oops'", 'got "oops"'),
        ("5", "got 5"),
        ("vim.NIL", "got vim.NIL"),
        ("true", "got true"),
        ("function() end", "got function"),
    ],
)
def test_setup_of_a_non_table_is_refused_not_thrown(nvim: Any, lua: str, shown: str) -> None:
    notes = capture_notify(nvim)
    ok, err = nvim.exec_lua(f"return {{require('sightline').setup({lua})}}")
    assert ok is None
    assert err == f"sightline: expected a table of options, {shown}"
    assert notes() == [{"msg": err, "level": 4}]  # shown once, as an error


def test_every_option_refuses_every_bad_value_naming_its_path(nvim: Any) -> None:
    capture_notify(nvim)
    count, problems = lua_helper(nvim, "fuzz.each_leaf")
    assert count >= 20
    assert problems == []


@pytest.mark.parametrize(
    ("opts", "message"),
    [
        (
            "{reveal = {duration_ms = 'long'}}",
            'sightline.reveal.duration_ms: expected whole number in 100..60000, got "long"',
        ),
        (
            "{pane = {side = 'top'}}",
            'sightline.pane.side: expected one of right, left, got "top"',
        ),
        ("{pane = {width = 0/0}}", "sightline.pane.width: expected fraction"),
        ("{provider = {max_tokens = 1e300}}", "sightline.provider.max_tokens: expected whole"),
        ("{provider = {api_key_cmd = {}}}", "sightline.provider.api_key_cmd: expected command"),
        ("{mappings = {chat = 5}}", "sightline.mappings.chat: expected key (string up to 50"),
    ],
)
def test_named_bad_values_are_refused_with_their_path(nvim: Any, opts: str, message: str) -> None:
    capture_notify(nvim)
    nvim.exec_lua("require('sightline').setup({pane = {width = 0.3}})")
    ok, err = nvim.exec_lua(f"return {{require('sightline').setup({opts})}}")
    assert ok is None and err.startswith(message), err
    assert nvim.exec_lua("return require('sightline.config').get().pane.width") == 0.3


# -- what a user sees at start-up ------------------------------------------------------------


@pytest.fixture
def ui_child(isolated_env: Path) -> Iterator[Any]:
    """Start a child that waits for its UI before sourcing init.lua, as a terminal does, so
    messages from setup() at start-up are drawn on the screen attached here."""
    import pynvim

    made: list[tuple[Any, Screen]] = []

    def start(setup: dict[str, Any] | None = None, **kw: Any) -> tuple[Any, Screen]:
        init = child.write_init(child.init_lua(setup, **kw), isolated_env.parent)
        sock = str(isolated_env.parent / f"ui-{len(made)}.sock")
        argv = [a for a in child.argv(init, "--listen", sock) if a != "--headless"]
        nv = pynvim.attach("child", argv=argv)
        screen = Screen.attach(nv, 90, 20)
        made.append((nv, screen))
        return nv, screen

    yield start
    for nv, screen in made:
        screen.close()
        with contextlib.suppress(Exception):  # already gone
            nv.close()


def test_unknown_option_is_warned_on_screen_at_start_up(ui_child: Any) -> None:
    nv, screen = ui_child({"provider": {"name": "echo"}, "pane": {"widht": 0.3}})
    row, _ = screen.wait_text("sightline.pane.widht: unknown option")
    assert row == screen.height - 1  # the message line, where a user looks
    # The valid part took effect; the misspelt key did not reach the config.
    cfg = nv.exec_lua("return require('sightline.config').get().pane")
    assert cfg["width"] == 0.4 and "widht" not in cfg


def test_bad_value_is_an_error_on_screen_at_start_up(ui_child: Any) -> None:
    nv, screen = ui_child({"provider": {"name": "echo"}, "pane": {"side": "top"}})
    screen.wait_text('sightline.pane.side: expected one of right, left, got "top"')
    screen.wait_text("Press ENTER")  # Neovim's own prompt for an error in init.lua
    nv.input("<CR>")
    assert nv.exec_lua("return require('sightline.config').get().pane.side") == "right"


# -- the three layers: defaults ⊕ vim.g.sightline ⊕ the last setup() -----------------------


def test_vim_g_sightline_alone_configures(nvim_factory: Any) -> None:
    nv = nvim_factory(g={"provider": {"name": "echo"}, "pane": {"side": "left"}}, call_setup=False)
    cfg = nv.exec_lua("return require('sightline.config').get()")
    assert cfg["pane"]["side"] == "left" and cfg["pane"]["width"] == 0.4
    assert cfg["provider"]["name"] == "echo"


def test_setup_overrides_vim_g_key_by_key_and_restarts_from_both(nvim_factory: Any) -> None:
    nv = nvim_factory(
        {"pane": {"width": 0.5}, "autoaccept": True},
        g={"provider": {"name": "echo"}, "pane": {"side": "left", "width": 0.2}},
    )
    cfg = nv.exec_lua("return require('sightline.config').get()")
    assert cfg["pane"] == {**cfg["pane"], "side": "left", "width": 0.5}
    assert cfg["autoaccept"] is True and cfg["provider"]["name"] == "echo"
    # A later setup() starts again from defaults ⊕ vim.g.sightline, not from the last one.
    nv.exec_lua("require('sightline').setup({pane = {side = 'right'}})")
    cfg = nv.exec_lua("return require('sightline.config').get()")
    assert cfg["pane"]["side"] == "right" and cfg["pane"]["width"] == 0.2
    assert cfg["autoaccept"] is False


def test_mappings_false_in_one_layer_and_a_table_in_a_later_one(nvim_factory: Any) -> None:
    nv = nvim_factory({"mappings": {"chat": "<Leader>aa"}}, g={"mappings": False})
    assert nv.exec_lua("return require('sightline.config').get().mappings") == {
        "chat": "<Leader>aa",
        "change": "<Leader>sc",
    }
    assert "<Plug>(sightline-chat)" in nv.call("maparg", "<Leader>aa", "n")
    off = nvim_factory({"pane": {"side": "left"}}, g={"mappings": False})
    assert off.exec_lua("return require('sightline.config').get().mappings") is False
    assert off.call("maparg", "<Leader>ss", "n") == ""


def test_bad_vim_g_sightline_is_named_as_such(nvim_factory: Any) -> None:
    nv = nvim_factory(g={"pane": {"side": "top"}}, call_setup=False)
    notes = capture_notify(nv)
    ok, err = nv.exec_lua("return {require('sightline').setup({})}")
    assert ok is None
    assert err == 'vim.g.sightline.pane.side: expected one of right, left, got "top"'
    assert notes() == [{"msg": err, "level": 4}]


def test_bad_vim_g_sightline_without_setup_is_said_once(nvim_factory: Any) -> None:
    nv = nvim_factory(g={"reveal": {"open": "tab"}}, call_setup=False)
    notes = capture_notify(nv)
    for _ in range(3):
        assert nv.exec_lua("return require('sightline.config').get().reveal.open") == "peek"
    (note,) = notes()
    whole = said(nv, note["msg"])
    assert whole.startswith("vim.g.sightline.reveal.open: expected one of peek, window")


def test_unknown_keys_of_both_layers_are_warned_with_their_path(nvim_factory: Any) -> None:
    nv = nvim_factory(g={"pane": {"sid": "left"}}, call_setup=False)
    notes = capture_notify(nv)
    assert nv.exec_lua("return require('sightline').setup({provider = {modle = 'x'}})")
    (note,) = notes()
    assert note["level"] == 3
    assert note["msg"] == "unknown options: vim.g.sightline.pane.sid, sightline.provider.modle"


# -- setup({}) is cheap, and the README's configuration is what you get -----------------------


def test_empty_setup_loads_neither_config_nor_host(nvim_factory: Any) -> None:
    nv = nvim_factory({}, call_setup=False, extra_init="require('sightline').setup({})")
    loaded = nv.exec_lua(
        "return {package.loaded['sightline.config'] ~= nil,"
        " package.loaded['sightline.host'] ~= nil}"
    )
    assert loaded == [False, False]
    assert "<Plug>(sightline-chat)" in nv.call("maparg", "<Leader>ss", "n")
    # Asked later, the config is the defaults, and checkhealth knows setup({}) ran.
    cfg = nv.exec_lua("return require('sightline.config').get()")
    # provider.model defaults to nil: the provider's preset picks its model.
    assert cfg["pane"]["side"] == "right" and cfg["provider"].get("model") is None
    assert nv.exec_lua("return vim.deep_equal(require('sightline.config').last_opts(), {})")


def _readme_block(section: str) -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    body = text.split(f"## {section}\n", 1)[1].split("\n## ", 1)[0]
    match = re.search(r"```lua\n(.*?)```", body, re.S)
    assert match, f"no lua block under ## {section}"
    return match.group(1)


def test_the_readme_configuration_is_the_configuration(nvim_factory: Any) -> None:
    block = _readme_block("Configure")
    assert "require('sightline').setup(" in block
    nv = nvim_factory(call_setup=False, extra_init=block)
    notes = capture_notify(nv)
    cfg = nv.exec_lua("return require('sightline.config').get()")
    assert cfg["provider"]["model"] == "claude-sonnet-5-5"
    assert cfg["pane"]["side"] == "right" and cfg["pane"]["width"] == 0.4
    assert cfg["mappings"] == {"chat": "<Leader>ss", "change": "<Leader>sc"}
    assert "<Plug>(sightline-chat)" in nv.call("maparg", "<Leader>ss", "n")
    assert "<Plug>(sightline-change)" in nv.call("maparg", "<Leader>sc", "x")
    assert notes() == []
    # The documented change of the block takes effect: the pane on the left, 60 columns.
    edited = block.replace("side = 'right'", "side = 'left'").replace("width = 0.4", "width = 60")
    nv2 = nvim_factory(call_setup=False, extra_init=edited)
    assert nv2.exec_lua("return require('sightline.config').get().pane") == {
        **cfg["pane"],
        "side": "left",
        "width": 60,
    }


def test_api_key_cmd_alone_selects_anthropic(nvim_factory: Any) -> None:
    nv = nvim_factory({"provider": {"api_key_cmd": "printf sk-ant-from-cmd"}})
    assert nv.exec_lua("return require('sightline').status().provider") == "anthropic"
    nv.command("checkhealth sightline")
    text = "\n".join(nv.api.buf_get_lines(0, 0, -1, False))
    assert "provider: anthropic" in text and "provider.api_key_cmd" in text
    assert "sk-ant-from-cmd" not in text


def test_checkhealth_follows_the_last_setup(nvim_factory: Any) -> None:
    nv = nvim_factory({"provider": {"name": "echo"}, "pane": {"widht": 1}})
    capture_notify(nv)

    def health() -> str:
        nv.command("checkhealth sightline")
        text = "\n".join(nv.api.buf_get_lines(0, 0, -1, False))
        nv.command("bwipeout!")
        return text

    first = health()
    assert "unknown option sightline.pane.widht" in first and "provider: echo" in first
    nv.exec_lua("require('sightline').setup({provider = {api_key_cmd = 'true'}})")
    second = health()
    assert "widht" not in second and "provider: anthropic" in second
    nv.exec_lua("require('sightline').setup({pane = {side = 'top'}})")
    third = health()
    assert "the last setup() was refused" in third and "sightline.pane.side" in third
    assert "provider: anthropic" in third  # the setup before it still applies


# -- issue 19 item 10: what :checkhealth says agrees with itself and shows what is in effect ----


def typed_health(nv: Any) -> list[str]:
    """`:checkhealth sightline` typed, the report's lines as the user reads them."""
    nv.input(":checkhealth sightline<CR>")
    wait_for(
        lambda: (
            nv.eval("&filetype") == "checkhealth"
            and any("configuration in effect" in line for line in nv.api.buf_get_lines(0, 0, -1, 0))
        ),
        what="the health report",
    )
    return list(nv.api.buf_get_lines(0, 0, -1, False))


def test_checkhealth_refused_setup_does_not_also_say_valid(nvim_factory: Any) -> None:
    nv = nvim_factory({"provider": {"name": "echo"}, "pane": {"width": 60}})
    nv.exec_lua("require('sightline').setup({pane = {side = 'top'}})")
    lines = typed_health(nv)
    assert any("ERROR the last setup() was refused" in line for line in lines)
    assert not any("OK" in line and "configuration" in line for line in lines)
    # What is in effect is said, and shown: the options of the setup() before it.
    assert any("in effect: the defaults ⊕ the setup() before the refused one" in x for x in lines)
    assert any(x.endswith("pane.width = 60  (setup())") for x in lines)
    assert any(x.endswith('provider.name = "echo"  (setup())') for x in lines)


def test_checkhealth_shows_the_configuration_in_effect_secrets_hidden(nvim_factory: Any) -> None:
    token, key = "Bearer tok-SECRET-9", "sk-from-cmd-SECRET"
    servers = {"gh": {"url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": token}}}
    agent = {"cmd": ["my-agent"], "env": {"MY_KEY": "agent-SECRET"}}
    nv = nvim_factory(
        {
            "provider": {"name": "echo", "api_key_cmd": f"echo {key}", "agent": agent},
            "mcp": {"servers": servers},
        },
        g={"reveal": {"duration_ms": 500}},
    )
    lines = typed_health(nv)
    text = "\n".join(lines)
    assert "SECRET" not in text
    assert "reveal.duration_ms = 500  (vim.g.sightline)" in text
    assert 'mcp.servers.gh.url = "http://127.0.0.1:9/mcp"  (setup())' in text
    assert "mcp.servers.gh.headers = (set; not shown)" in text
    assert "provider.api_key_cmd = (set; not shown)" in text
    assert "pane.width" not in text  # a default is not listed
    assert "in effect: the defaults ⊕ vim.g.sightline ⊕ setup()" in text


def test_checkhealth_checks_every_package_and_the_providers_key(
    nvim_factory: Any, isolated_env: Path
) -> None:
    nv = nvim_factory({"provider": {"name": "openrouter"}}, env={"OPENROUTER_API_KEY": "sk-or-X"})
    text = "\n".join(typed_health(nv))
    for dist in ("pynvim", "anthropic", "platformdirs", "openai", "mcp", "agent-client-protocol"):
        assert re.search(rf"OK {dist} \d", text), dist
    assert "OK an API key is set in $OPENROUTER_API_KEY" in text
    assert "sk-or-X" not in text
    assert "echo provider" not in text


@pytest.mark.parametrize(("provider", "level"), [("openai", "ERROR"), ("echo", "WARNING")])
def test_checkhealth_a_broken_package_is_an_error_only_where_needed(
    nvim_factory: Any, isolated_env: Path, provider: str, level: str
) -> None:
    """A package the interpreter lacks is an error for the provider that needs it, a warning
    otherwise (the install is incomplete, but nothing configured needs it now)."""
    hide = isolated_env.parent / "hide"
    hide.mkdir()
    (hide / "sitecustomize.py").write_text("import sys\nsys.modules['openai'] = None\n")
    shim = isolated_env.parent / "python"
    shim.write_text(f'#!/bin/sh\nPYTHONPATH="{hide}:$PYTHONPATH" exec "{sys.executable}" "$@"\n')
    shim.chmod(0o755)
    nv = nvim_factory({"python": str(shim), "provider": {"name": provider}})
    text = "\n".join(typed_health(nv))
    needed = "needed by the openai, azure and OpenAI-compatible providers"
    if level == "ERROR":
        found = rf"ERROR openai is not importable there \(ModuleNotFoundError.*\): {needed}"
        assert re.search(found, text)
    else:
        assert f"WARNING openai is not importable there (not installed): {needed}" in text
        assert "ERROR" not in text
    assert "OK anthropic" in text


def test_checkhealth_help_links_are_whole(nvim: Any) -> None:
    """Every |tag| the report shows is a real help tag: no `|` left over."""
    lines = typed_health(nvim)
    doc = (ROOT / "doc" / "sightline.txt").read_text(encoding="utf-8")
    for line in lines:
        assert line.count("|") % 2 == 0, line
        for tag in re.findall(r"\|([^|]+)\|", line):
            assert f"*{tag}*" in doc or tag == "sightline", line
    assert any("no MCP servers configured; see :help |sightline-mcp-client|" in x for x in lines)


SECRET = st.from_regex(r"zq[A-Za-z0-9_\-]{6,30}", fullmatch=True)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    header=SECRET,
    env=SECRET,
    agent_env=SECRET,
    key_cmd=SECRET,
    url_password=SECRET,
    name=st.from_regex(r"[a-z][a-z0-9_]{0,10}", fullmatch=True),
)
def test_the_configuration_shown_never_holds_a_secret(
    nvim: Any, header: str, env: str, agent_env: str, key_cmd: str, url_password: str, name: str
) -> None:
    """Whatever the tokens in headers, env (servers' and the agent's), the key command or a
    URL's password, the configuration :checkhealth shows never holds one."""
    opts = {
        "provider": {
            "api_key_cmd": ["printf", key_cmd],
            "base_url": f"https://me:{url_password}@example.invalid/v1",
            "agent": {"cmd": ["a"], "env": {"K": agent_env}},
        },
        "mcp": {
            "servers": {
                name: {"url": "http://127.0.0.1:9", "headers": {"Authorization": header}},
                f"{name}2": {"command": "srv", "env": {"TOKEN": env}},
            }
        },
    }
    lines = nvim.exec_lua(
        "local cfg = assert(require('sightline.config').build(...))"
        " return require('sightline.config_view').lines(cfg, ...)",
        opts,
    )
    shown = "\n".join(lines)
    assert f"mcp.servers.{name}.url" in shown and "provider.agent" in shown
    for secret in (header, env, agent_env, key_cmd, url_password):
        assert secret not in shown
