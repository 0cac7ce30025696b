"""History: JSONL per conversation, exact records, torn lines tolerated, listing by workspace."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from tests.conftest import status, transcript, wait_for, wait_idle
from tests.history_files import CORRUPT, write_conv


def store(isolated_env: Path) -> Path:
    d = isolated_env.parent / "xdg" / "data" / "sightline" / "history"
    d.mkdir(parents=True, exist_ok=True)
    return d


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
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert records[-2]["content"][0]["text"] == "echo: and continue"
    assert records[-1]["type"] == "event" and records[-1]["event"] == "done"  # its footer


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


def test_only_files_of_the_store_are_opened_and_nothing_is_written(
    nvim: Any, isolated_env: Path
) -> None:
    source = isolated_env / "app.py"
    source.write_bytes(b"print('hi')")  # no final newline: opening would append one
    elsewhere = isolated_env / "conv.jsonl"
    elsewhere.write_bytes(b'{"type": "meta", "id": "x", "workspace": "/", "created": 1}')
    link = store(isolated_env) / "link.jsonl"
    link.symlink_to(source)
    fifo = store(isolated_env) / "fifo.jsonl"
    os.mkfifo(fifo)
    for path in (source, elsewhere, link, fifo, store(isolated_env), "", "../app.py"):
        res = nvim.exec_lua("return {require('sightline').open_conversation(...)}", str(path))
        assert res[0] is None and res[1].startswith("sightline"), res
        res = nvim.exec_lua(
            "return {require('sightline.host').request('history.open', {path = ...})}", str(path)
        )
        # Refused by the store rule, or (the empty path) by the request's param check.
        assert res[0] is None and ("sightline:" in res[1] or "history.open: path:" in res[1]), res
    assert source.read_bytes() == b"print('hi')"
    assert elsewhere.read_bytes().endswith(b"1}")
    for bad in (5, None, {"a": 1}):
        res = nvim.exec_lua("return {require('sightline').open_conversation(...)}", bad)
        assert res[0] is None and "path" in res[1] and "string" in res[1], res


def test_corrupt_files_never_break_the_list_the_reopen_or_the_next_turn(
    nvim: Any, isolated_env: Path
) -> None:
    nvim.exec_lua("assert(require('sightline').send('a good one'))")
    wait_idle(nvim)
    nvim.command("Sightline reset")
    d = store(isolated_env)
    paths = {
        k: write_conv(d, f"2025010{i}-000000-bad", v, str(isolated_env))
        for i, (k, v) in enumerate(CORRUPT.items())
    }
    listed = nvim.exec_lua("return require('sightline.host').request('history.list').conversations")
    by_path = {c["path"]: c for c in listed}
    assert "a good one" in [c["title"] for c in listed]
    unreadable = by_path[str(paths["created is not a number"])]
    assert unreadable["title"].startswith("(unreadable:") and unreadable["unreadable"]
    assert by_path[str(paths["blank first prompt"])]["title"] == "(untitled)"
    # :Sightline history lists them all (format_item must not fail on any).
    nvim.exec_lua(
        "vim.ui.select = function(items, opts, cb)"
        " _G.shown = vim.tbl_map(opts.format_item, items) end"
    )
    nvim.command("Sightline history")
    assert len(nvim.exec_lua("return _G.shown")) == len(listed)
    # The unreadable one is refused with a clear message, nothing written.
    before = paths["created is not a number"].read_bytes()
    res = nvim.exec_lua(
        "return {require('sightline').open_conversation(...)}",
        str(paths["created is not a number"]),
    )
    assert res[0] is None and "unreadable" in res[1]
    assert paths["created is not a number"].read_bytes() == before
    # The one with bad records opens, says once what was skipped, and continues.
    assert nvim.exec_lua(
        "return require('sightline').open_conversation(...)", str(paths["bad blocks"])
    )
    wait_for(lambda: "fine" in transcript(nvim))
    notes = [line for line in transcript(nvim) if "damaged record" in line]
    assert len(notes) == 1 and notes[0].startswith("⚠ 5 damaged records")
    nvim.exec_lua("assert(require('sightline').send('continue'))")
    wait_idle(nvim)
    assert "echo: continue" in transcript(nvim)
    assert nvim.exec_lua(
        "return require('sightline').open_conversation(...)", str(paths["blank first prompt"])
    )
    wait_for(lambda: "string reply" in transcript(nvim))
