"""The acp provider's prompt parts, history and resume, and its config."""

from __future__ import annotations

import pytest

from sightline.domain.config import ConfigError
from tests.effective_config import core_config


def test_config_agent_presets_and_commands() -> None:
    cfg = core_config(provider={"name": "acp", "agent": "codex"})
    assert cfg.provider.agent is not None and cfg.provider.agent.preset == "codex"
    cfg = core_config(provider={"name": "acp", "agent": {"cmd": ["a", "b"], "env": {"K": "v"}}})
    agent = cfg.provider.agent
    assert agent is not None and agent.cmd == ("a", "b") and agent.env == (("K", "v"),)
    bads: tuple[object, ...] = (
        "vim",
        {"cmd": []},
        {"cmd": "a b"},
        {"cmd": ["a"], "env": {"K": 1}},
        3,
    )
    for bad in bads:
        with pytest.raises(ConfigError, match=r"provider\.agent"):
            core_config(provider={"name": "acp", "agent": bad})
