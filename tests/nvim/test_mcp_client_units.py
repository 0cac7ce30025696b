"""The MCP client's pure parts: config (setup() and .mcp.json), tool names, kinds, schemas,
results, `@mcp:` mentions; and setup()'s validation in a child Neovim."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from tests.conftest import capture_notify


@pytest.mark.parametrize(
    ("opts", "message"),
    [
        ("{mcp = {servers = {fs = {command = 3}}}}", "sightline.mcp.servers.fs.command:"),
        ("{mcp = {servers = {fs = {}}}}", "sightline.mcp.servers.fs: expected either command"),
        ("{mcp = {servers = {'x'}}}", "sightline.mcp.servers: expected a table of named"),
        ("{mcp = {servers = {fs = {url = 'http://h', kind = 'rw'}}}}", "servers.fs.kind:"),
        ("{mcp = {servers = {fs = {command = 'x', headers = {A = 1}}}}}", "fs.headers:"),
    ],
)
def test_setup_names_a_bad_server_by_its_path(nvim: Any, opts: str, message: str) -> None:
    capture_notify(nvim)
    err = nvim.exec_lua(f"return select(2, require('sightline').setup({opts}))")
    assert err.startswith(message) or message in err, err


def test_setup_never_shows_a_header_value(nvim: Any) -> None:
    capture_notify(nvim)
    opts = "{mcp = {servers = {fs = {url = 'http://h', headers = {A = 'Bearer shh', B = 2}}}}}"
    err = nvim.exec_lua(f"return select(2, require('sightline').setup({opts}))")
    assert "fs.headers" in err and "shh" not in err


def test_a_good_server_config_reaches_the_core(nvim_factory: Any) -> None:
    server = {"command": sys.executable, "args": ["x.py"], "tools": {"t": "read"}}
    nv = nvim_factory({"provider": {"name": "echo"}, "mcp": {"servers": {"demo": server}}})
    (listed,) = nv.exec_lua("return require('sightline.mcp_client').list()")
    assert listed["name"] == "demo" and listed["state"] == "stopped"
