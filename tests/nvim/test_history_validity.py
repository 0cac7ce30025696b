"""The rule: the request built from any history the core can write is a valid Messages API
conversation (the loopback server's validator, which rejects what the real API rejects), and
a history file of any shape is read without breaking the listing, the reopen or the request.

Property tests over random record sequences (malformed records, duplicate ids, non-object
inputs, surrogate escapes, a crash at every point), then the named instances."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests import fakeapi as fa
from tests.agent_util import accepted, claude, idle, only_result, send
from tests.conftest import transcript
from tests.fakeapi import FakeAnthropic, fake_api

__all__ = ["fake_api"]


@pytest.mark.parametrize("bad", [[1, 2], "hello", 5, None, True])
def test_non_object_input_is_answered_with_an_error_and_the_next_turn_works(
    nvim_factory: Any, fake_api: FakeAnthropic, bad: Any
) -> None:
    fake_api.script(
        fa.reply(fa.tool_use("read_file", bad, id="toolu_bad")),
        fa.text("sorry"),
        fa.text("fine"),
    )
    nv = claude(nvim_factory, fake_api)
    send(nv, "read it")
    idle(nv)
    result = only_result(fake_api, 1)
    assert result["tool_use_id"] == "toolu_bad" and result["is_error"] is True
    assert "must be a JSON object" in result["content"]
    assert "refused tool read_file" in "\n".join(transcript(nv))
    send(nv, "again")
    idle(nv)
    assert "fine" in "\n".join(transcript(nv))
    accepted(fake_api, 3)


def test_duplicate_ids_run_once_and_the_conversation_stays_valid(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    (isolated_env / "a.txt").write_text("alpha\n")
    fake_api.script(
        fa.reply(
            fa.tool_use("read_file", {"path": "a.txt"}, id="toolu_dup"),
            fa.tool_use("read_file", {"path": "a.txt"}, id="toolu_dup"),
        ),
        fa.text("read"),
        fa.text("next"),
    )
    nv = claude(nvim_factory, fake_api)
    send(nv, "read twice")
    idle(nv)
    send(nv, "and now")
    idle(nv)
    bodies = accepted(fake_api, 3)
    calls = [b for b in bodies[2]["messages"][1]["content"] if b["type"] == "tool_use"]
    assert len({c["id"] for c in calls}) == 2
    results = bodies[1]["messages"][-1]["content"]
    assert "alpha" in str(results[0]["content"]) and not results[0].get("is_error")
    assert results[1]["is_error"] is True and "same id" in results[1]["content"]
