"""History: JSONL per conversation, exact records, torn lines tolerated, listing by workspace."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sightline import history
from sightline.agent.session import render_records, wire_messages
from sightline.transcript import Transcript
from tests.conftest import status, transcript, wait_for, wait_idle


def test_records_round_trip_and_torn_last_line_is_skipped(tmp_path: Path) -> None:
    conv = history.Conversation.create(tmp_path, "/ws", provider="echo")
    user = {"type": "message", "role": "user", "content": [{"type": "text", "text": "hi"}]}
    conv.append({**user, "visible": "hi"})
    conv.close()
    with conv.path.open("a") as fh:
        fh.write('{"type": "message", "role": "assis')  # crash mid-write
    again = history.Conversation.load(conv.path)
    assert [r["type"] for r in again.records] == ["meta", "message"]
    again.append({"type": "event", "event": "stopped"})
    again.close()
    reread = list(history.read_records(conv.path))
    assert reread[-1] == {"type": "event", "event": "stopped"}
    assert len(reread) == 3


def test_list_only_this_workspace_newest_first(tmp_path: Path) -> None:
    for ws, text in [("/a", "first"), ("/b", "other"), ("/a", "second")]:
        conv = history.Conversation.create(tmp_path, ws)
        conv.append({"type": "message", "role": "user", "content": text, "visible": text})
        conv.close()
    titles = [s.title for s in history.list_conversations(tmp_path, "/a")]
    assert sorted(titles) == ["first", "second"]
    assert history.list_conversations(tmp_path, "/nowhere") == []


def test_second_owner_opens_read_only(tmp_path: Path) -> None:
    conv = history.Conversation.create(tmp_path, "/ws")
    other = history.Conversation.load(conv.path)
    assert other.read_only and not conv.read_only
    other.append({"type": "event", "event": "x"})  # must not reach the file
    assert all(r.get("event") != "x" for r in history.read_records(conv.path))


def test_wire_messages_merge_a_reply_less_user_message() -> None:
    records: list[dict[str, Any]] = [
        {"type": "meta"},
        {"type": "message", "role": "user", "content": [{"type": "text", "text": "a"}]},
        {"type": "event", "event": "error"},
        {"type": "message", "role": "user", "content": [{"type": "text", "text": "b"}]},
    ]
    assert wire_messages(records) == [
        {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}
    ]


def test_render_records_rebuilds_the_transcript() -> None:
    t = Transcript()
    render_records(
        t,
        [
            {"type": "message", "role": "user", "content": "q", "visible": "q"},
            {"type": "message", "role": "assistant", "content": [{"type": "text", "text": "a\nb"}]},
        ],
    )
    assert t.lines == ["▍You", "q", "", "▍Agent", "a", "b"]


def test_conversation_written_listed_and_reopened(nvim: Any, isolated_env: Path) -> None:
    nvim.exec_lua("assert(require('sightline').send('persist this'))")
    wait_idle(nvim)
    path = Path(nvim.exec_lua("return require('sightline.host').status().conversation_path"))
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert records[0]["type"] == "meta" and records[0]["workspace"] == str(isolated_env)
    assert records[1]["visible"] == "persist this"
    assert records[1]["content"] == [{"type": "text", "text": "persist this"}]
    assert records[2]["role"] == "assistant"
    assert records[2]["content"] == [{"type": "text", "text": "echo: persist this"}]

    nvim.command("Sightline reset")
    listed = nvim.exec_lua("return require('sightline.host').request('history.list').conversations")
    assert [c["title"] for c in listed] == ["persist this"]
    assert nvim.exec_lua("return require('sightline').open_conversation(...)", str(path))
    wait_for(lambda: "echo: persist this" in transcript(nvim))
    nvim.exec_lua("assert(require('sightline').send('and continue'))")
    wait_idle(nvim)
    assert status(nvim)["state"] == "idle"
    lines = path.read_text().splitlines()
    assert json.loads(lines[-1])["content"][0]["text"] == "echo: and continue"


def test_history_command_picks_with_vim_ui_select(nvim: Any) -> None:
    nvim.exec_lua("assert(require('sightline').send('pick me'))")
    wait_idle(nvim)
    nvim.command("Sightline reset")
    nvim.exec_lua(
        "vim.ui.select = function(items, opts, cb)"
        " _G.picked = opts.format_item(items[1]); cb(items[1]) end"
    )
    nvim.command("Sightline history")
    assert "pick me" in nvim.exec_lua("return _G.picked")
    wait_for(lambda: "echo: pick me" in transcript(nvim))
