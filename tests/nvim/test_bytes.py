"""Bytes that are not UTF-8: lossless for the buffer, safe on the wire.

pynvim hands such bytes over as surrogate escapes; JSON encoders and HTTP refuse those, so a
single one used to make every later send fail. The buffer keeps its bytes exactly (Change with
Agent replaces exactly the selected bytes), the request carries U+FFFD, the history the
originals, and the conversation goes on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sightline.domain import history
from tests.agent_util import TURN_TIMEOUT_S, claude, decide, idle, send, wait_pending
from tests.conftest import transcript, wait_for
from tests.fakeapi import FakeAnthropic, fake_api, text, tool_use, validation_error

__all__ = ["fake_api"]

ESC = "surrogateescape"
CONTENT = b"keep \xe9 head\nsel \xff start\nmid \xfe\nend \xfa tail\n"


def raw_lines(nv: Any, buf: int) -> list[bytes]:
    return [line.encode(errors=ESC) for line in nv.api.buf_get_lines(buf, 0, -1, False)]


def accepted_bodies(server: FakeAnthropic, n: int) -> list[Any]:
    reqs = server.wait_for_requests(n, TURN_TIMEOUT_S)
    for req in reqs:
        assert validation_error(req.body) is None
    return [r.body for r in reqs]


def test_change_with_agent_replaces_exactly_the_selected_bytes(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    nv = claude(nvim_factory, fake_api)
    path = isolated_env / "latin.txt"
    path.write_bytes(CONTENT)
    nv.command("set fileencodings=utf-8")
    nv.command(f"edit ++bad=keep {path}")
    buf = int(nv.api.get_current_buf().number)
    assert raw_lines(nv, buf) == CONTENT.splitlines()
    fake_api.script(tool_use("replace_selection", {"text": "NEW \u00e9"}), text("done"))
    # From after "sel " on row 1 to after "end \xfa" on row 3 (byte columns).
    rng = {"buffer": buf, "start_row": 1, "start_col": 4, "end_row": 3, "end_col": 5}
    assert nv.exec_lua("return {require('sightline').send(...)}", "fix", rng) == [True]
    wait_pending(nv)
    decide(nv, "accept")
    idle(nv)
    assert path.read_bytes() == b"keep \xe9 head\nsel NEW \xc3\xa9 tail\n"
    first, _ = accepted_bodies(fake_api, 2)
    block = first["messages"][0]["content"][1]["text"]
    assert "\ufffd start\nmid \ufffd\nend \ufffd" in block
    # The history keeps the original bytes (as escapes), the file stays UTF-8.
    conv = Path(nv.exec_lua("return require('sightline.host').status().conversation_path"))
    conv.read_text(encoding="utf-8")
    user = next(r for r in history.read_records(conv) if r.get("role") == "user")
    assert "\udcff start\nmid \udcfe\nend \udcfa" in user["content"][1]["text"]


def test_a_prompt_with_invalid_bytes_is_sent_and_the_next_one_too(
    nvim_factory: Any, fake_api: FakeAnthropic
) -> None:
    nv = claude(nvim_factory, fake_api)
    fake_api.script(text("one"), text("two"))
    assert nv.exec_lua("return {require('sightline').send(...)}", b"caf\xe9 \xff?") == [True]
    idle(nv)
    send(nv, "and then")
    idle(nv)
    wait_for(lambda: "two" in "\n".join(transcript(nv)))
    first, second = accepted_bodies(fake_api, 2)
    assert first["messages"][0]["content"][0]["text"] == "caf\ufffd \ufffd?"
    assert [m["role"] for m in second["messages"]] == ["user", "assistant", "user"]
    # What the user typed is shown as typed (the transcript holds the same bytes).
    assert any(line.encode(errors=ESC) == b"caf\xe9 \xff?" for line in transcript(nv))
