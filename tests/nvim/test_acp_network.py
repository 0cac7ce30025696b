"""An ACP agent's own fetch asks through the same rule as fetch_url (the network kind of the
one policy): in a normal turn it is asked, in plan mode refused unless hosts are allowed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.acp_util import acp_nvim
from tests.agent_util import decide, idle, send, wait_pending
from tests.conftest import transcript

FETCH = {"permission": {"id": "f1", "title": "Fetch https://docs.example.org/", "kind": "fetch"}}


def chosen(log: Any) -> list[str]:
    return [r["chosen"] for r in log.entries("permission_result")]


def test_a_fetch_is_asked_in_a_normal_turn(nvim_factory: Any, tmp_path: Path) -> None:
    nv, log = acp_nvim(nvim_factory, tmp_path, [[FETCH, {"say": "done"}]])
    send(nv, "read the docs")
    assert wait_pending(nv)["pending"] == "allow Fetch https://docs.example.org/"
    decide(nv, "accept")
    idle(nv)
    assert chosen(log) == ["yes"]


@pytest.mark.parametrize(("hosts", "answer"), [([], "no"), (["docs.example.org"], "yes")])
def test_plan_mode_refuses_a_fetch_unless_hosts_are_allowed(
    nvim_factory: Any, tmp_path: Path, hosts: list[str], answer: str
) -> None:
    nv, log = acp_nvim(
        nvim_factory,
        tmp_path,
        [[FETCH, {"say": "done"}]],
        caps={"modes": ["default", "plan"]},
        tools={"network": {"allow_hosts": hosts}},
    )
    assert nv.exec_lua("return {require('sightline').plan('on')}") == [True]
    send(nv, "plan it")
    if answer == "yes":
        wait_pending(nv)
        decide(nv, "accept")
    idle(nv)
    assert chosen(log) == [answer]
    refused = any("reaches the network only with tools.network" in line for line in transcript(nv))
    assert refused == (answer == "no")
