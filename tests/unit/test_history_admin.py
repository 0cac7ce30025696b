"""history_admin: titles beside the files, deletes only of unheld store files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sightline.domain import history, history_admin
from sightline.domain.errors import Refused
from tests.history_files import write_conv

RECORDS: list[dict[str, Any]] = [
    {"type": "meta", "id": "c1", "workspace": "WS", "created": 1},
    {"type": "message", "role": "user", "content": "q1", "visible": "q1"},
    {"type": "message", "role": "assistant", "content": [{"type": "text", "text": "a1"}]},
    {"type": "message", "role": "user", "content": "q2", "visible": "q2"},
    {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "t", "name": "x"}],
    },
    {"type": "message", "role": "user", "content": [{"type": "tool_result", "tool_use_id": "t"}]},
    {"type": "message", "role": "assistant", "content": [{"type": "text", "text": "a2"}]},
]


def test_preview_is_the_last_prompt_and_its_reply(tmp_path: Path) -> None:
    path = write_conv(tmp_path, "c1", RECORDS, "/ws")
    assert history_admin.preview(tmp_path, str(path)) == ["You:", "  q2", "", "Agent:", "  a2"]


def test_a_held_conversation_is_not_deleted(tmp_path: Path) -> None:
    conv = history.Conversation.create(tmp_path, "/ws")
    conv.append({"type": "message", "role": "user", "content": "q", "visible": "q"})
    with pytest.raises(Refused, match="is open"):
        history_admin.delete(tmp_path, str(conv.path))
    assert conv.path.exists()
    conv.close()
    history_admin.delete(tmp_path, str(conv.path))
    assert not conv.path.exists()


def test_rename_and_delete_refuse_paths_outside_the_store(tmp_path: Path) -> None:
    store = tmp_path / "history"
    store.mkdir()
    outside = write_conv(tmp_path, "c1", RECORDS, "/ws")
    for call in (
        lambda: history_admin.delete(store, str(outside)),
        lambda: history_admin.rename(store, str(outside), "t"),
    ):
        with pytest.raises(Refused):
            call()
    assert outside.exists() and not (store / history_admin.TITLES).exists()


@given(title=st.text(max_size=300))
def test_any_title_leaves_every_history_file_as_it_was(
    tmp_path_factory: pytest.TempPathFactory, title: str
) -> None:
    store = tmp_path_factory.mktemp("store")
    path = write_conv(store, "c1", RECORDS, "/ws")
    before = path.read_bytes()
    try:
        shown = history_admin.rename(store, str(path), title)
    except Refused:
        assert not title.split()
        shown = None
    assert path.read_bytes() == before
    if shown is not None:
        assert json.loads((store / history_admin.TITLES).read_text())["c1"] == shown
        assert "\n" not in shown and 0 < len(shown) <= 80
