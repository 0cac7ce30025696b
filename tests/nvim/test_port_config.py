"""One config schema: config.lua holds the defaults and sends the whole effective config;
Python keeps none (a missing key is refused, named)."""

from __future__ import annotations

from typing import Any

from sightline.domain.config import CoreConfig
from tests.effective_config import EFFECTIVE, core_config


def test_what_neovim_sends_is_the_effective_config(nvim: Any) -> None:
    sent = nvim.exec_lua("return require('sightline.host')._config_for_core()")
    for key, value in EFFECTIVE.items():
        if isinstance(value, dict):
            assert {k: sent[key][k] for k in value} == value, key
        else:
            assert sent[key] == value, key
    assert CoreConfig.from_dict(sent) == core_config()


def test_the_tool_schema_mirrors_the_config_schema(nvim: Any) -> None:
    """Syntax-scope kinds and reveal's duration bounds: one home (config.lua), which the
    static tool definitions and pyresolve's kinds are checked against."""
    from sightline.domain import pyresolve
    from sightline.tools import view

    lua = nvim.exec_lua(
        "local c = require('sightline.config') return {c.SYNTAX_SCOPE_KINDS, c.REVEAL_DURATION_MS,"
        " require('sightline.resolve').KINDS, c.get().reveal.duration_ms}"
    )
    kinds, duration, resolve_kinds, default = lua
    assert view.KINDS == kinds == resolve_kinds
    assert sorted(pyresolve.KINDS) == sorted(kinds)
    assert duration == view.DURATION_MS
    assert default == duration["default"]
    described = view.REVEAL_DEF["inputSchema"]["properties"]["duration_ms"]["description"]
    assert f"{duration['min']}..{duration['max']}; default {duration['default']}" in described
