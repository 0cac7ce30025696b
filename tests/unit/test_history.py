"""History: JSONL per conversation, exact records, torn lines tolerated, listing by workspace."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sightline.agent.replay import render_records
from sightline.domain import history
from sightline.domain.wire import NO_REPLY, wire_messages
from sightline.ui.transcript import Transcript
from tests.history_files import CORRUPT, write_conv


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


def test_a_conversation_holding_only_an_unsent_message_is_listed_and_an_empty_one_is_not(
    tmp_path: Path,
) -> None:
    kept = history.Conversation.create(tmp_path, "/a")
    kept.queue("the question typed before Neovim quit")
    kept.close()
    history.Conversation.create(tmp_path, "/a").close()  # opened, nothing typed
    titles = [s.title for s in history.list_conversations(tmp_path, "/a")]
    assert titles == ["(not sent) the question typed before Neovim quit"]


def test_second_owner_opens_read_only(tmp_path: Path) -> None:
    conv = history.Conversation.create(tmp_path, "/ws")
    other = history.Conversation.load(conv.path)
    assert other.read_only and not conv.read_only
    other.append({"type": "event", "event": "x"})  # must not reach the file
    assert all(r.get("event") != "x" for r in history.read_records(conv.path))


def test_a_prompt_after_a_reply_less_prompt_is_a_turn_of_its_own() -> None:
    records: list[dict[str, Any]] = [
        {"type": "meta"},
        {"type": "message", "role": "user", "content": [{"type": "text", "text": "a"}]},
        {"type": "event", "event": "error"},
        {"type": "message", "role": "user", "content": [{"type": "text", "text": "b"}]},
    ]
    assert wire_messages(records) == [
        {"role": "user", "content": [{"type": "text", "text": "a"}]},
        {"role": "assistant", "content": [{"type": "text", "text": NO_REPLY["error"]}]},
        {"role": "user", "content": [{"type": "text", "text": "b"}]},
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


# -- history files are data (issue 10 §2) -------------------------------------------------------


def test_scan_names_each_bad_record_and_keeps_the_good(tmp_path: Path) -> None:
    path = write_conv(tmp_path, "x", CORRUPT["bad blocks"], "/ws")
    got = history.scan(path)
    assert len(got.skipped) == 5 and got.skipped[0].startswith("line 3:")
    assert [r.get("role") for r in got.records if r["type"] == "message"] == ["user", "assistant"]
