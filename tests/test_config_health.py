"""Configuration: merge order, validation errors naming the path, :checkhealth."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import capture_notify


def test_setup_rejects_bad_type_naming_the_path(nvim: Any) -> None:
    notes = capture_notify(nvim)
    res = nvim.exec_lua("return {require('sightline').setup({reveal = {duration_ms = 'long'}})}")
    assert res[0] is None
    assert res[1].startswith("sightline.reveal.duration_ms:")
    assert "expected number in 100..60000" in res[1]
    assert notes()[0]["msg"] == res[1]


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
