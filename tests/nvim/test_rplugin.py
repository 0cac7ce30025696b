"""The classic route: rplugin/python3 registered by :UpdateRemotePlugins, same dispatcher."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from tests.conftest import transcript, wait_for


def test_update_remote_plugins_then_requests_reach_the_dispatcher(
    nvim_factory: Any, tmp_path: Path
) -> None:
    manifest = tmp_path / "rplugin.vim"
    env = {"NVIM_RPLUGIN_MANIFEST": str(manifest)}
    first = nvim_factory({"provider": {"name": "echo"}}, env=env)
    first.command(f"let g:python3_host_prog = '{sys.executable}'")
    first.command("UpdateRemotePlugins")
    text = manifest.read_text()
    assert "sightline_rplugin.py" in text and "SightlineRequest" in text

    nv = nvim_factory({"provider": {"name": "echo"}}, env=env)
    nv.command(f"let g:python3_host_prog = '{sys.executable}'")
    pong = nv.call("SightlineRequest", "core.ping", {})
    assert pong["ok"] is True and pong["pid"] > 0
    bad = nv.call("SightlineRequest", "no.such.method", {})
    assert bad == {"ok": False, "error": "unknown request 'no.such.method'"}
    sent = nv.call("SightlineRequest", "agent.send", {"text": "classic route"})
    assert sent["ok"] is True
    wait_for(lambda: "echo: classic route" in transcript(nv), what="the reply via the rplugin host")
