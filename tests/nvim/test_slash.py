"""`/` in the composer, typed as a user types it: the menu (built-in menu, nvim-cmp and
blink.cmp), built-in commands run as their `:Sightline` subcommand, prompt files of the
three formats expanded and sent, and the refusals."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from sightline.domain import paths
from tests.complete_util import (
    SETUP_BLINK,
    SETUP_CMP,
    bar_note,
    blink_menu,
    composer_text,
    line,
    menu,
    open_composer,
    pum,
    send_keys,
    type_each,
    words,
)
from tests.conftest import transcript, wait_for
from tests.lua_helper import lua_helper

BUILTINS = [
    "/compact",
    "/fork",
    "/history",
    "/model",
    "/plan",
    "/regenerate",
    "/reset",
    "/rewind",
]  # and /review, hidden by the fixture's own .claude/commands/review.md


def user_prompts(env: Path) -> Path:
    """stdpath('config')/sightline/prompts of the child (XDG_CONFIG_HOME/nvim)."""
    config = Path(os.environ["XDG_CONFIG_HOME"]) / "nvim" / "sightline" / "prompts"
    config.mkdir(parents=True, exist_ok=True)
    return config


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def prompts(isolated_env: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """One prompt file of each format, as users copy them from their tools (and a home of
    its own: the user's ~/.agents/skills would join the menu)."""
    monkeypatch.setenv("HOME", str(isolated_env.parent / "home"))
    ws = isolated_env
    write(
        ws / ".claude" / "commands" / "review.md",
        "---\ndescription: Review a file\nargument-hint: <file>\n---\n"
        "Review $1 carefully. Focus: $ARGUMENTS\n",
    )
    write(
        ws / ".github" / "prompts" / "explain.prompt.md",
        "---\ndescription: Explain the selection\nmode: ask\n---\n"
        "Explain this code from ${file} for ${input:audience:who reads it}:\n${selection}\n",
    )
    write(user_prompts(ws) / "standup.md", "Write my standup notes from @diagnostics.\n")
    write(ws / "src" / "app.py", "def main():\n    return 42\n")
    return ws


def idle(nv: Any) -> bool:
    return bool(nv.exec_lua("return require('sightline').status().state == 'idle'"))


def history_records(ws: Path) -> list[dict[str, Any]]:
    files = sorted(paths.history_dir().glob("*.jsonl"))
    assert files, "no conversation recorded"
    return [json.loads(x) for x in files[-1].read_text().splitlines() if x.strip()]


# --- the menu ------------------------------------------------------------------------------


def test_slash_lists_built_ins_and_prompt_files_of_every_format(nvim: Any, prompts: Path) -> None:
    nvim.command("set columns=220")  # room for the menu column beside the pane
    open_composer(nvim)
    nvim.input("/")
    wait_for(lambda: words(nvim) == [*BUILTINS, "/review", "/explain", "/standup"], 10, "/")
    items = {i["word"]: i for i in menu(nvim)["items"]}
    assert items["/review"]["kind"] == "prompt"
    assert items["/review"]["menu"] == "[.claude/commands, over built-in] Review a file"
    assert "(:Sightline review still runs it)" in items["/review"]["info"]
    assert items["/review"]["abbr"] == "/review <file>"
    assert items["/explain"]["menu"] == "[.github/prompts] Explain the selection"
    assert items["/standup"]["menu"].startswith("[user] Write my standup notes")
    assert items["/plan"]["kind"] == "built-in" and "plan mode" in items["/plan"]["menu"]
    assert "from .claude/commands" in items["/review"]["info"]
    type_each(nvim, "re")
    wait_for(lambda: words(nvim) == ["/regenerate", "/reset", "/rewind", "/review"], 10, "/re")
    nvim.input("<C-n><C-n><C-n><C-y>")
    wait_for(lambda: line(nvim) == "/review" and not pum(nvim), 10, "the accepted command")


def test_typing_the_first_items_whole_name_still_narrows(nvim: Any, prompts: Path) -> None:
    """The first item is preselected, not inserted: typing up to its whole name is typing
    (the menu narrows), not moving through the menu."""
    write(user_prompts(prompts) / "playbook.md", "Run the playbook.\n")
    open_composer(nvim)
    type_each(nvim, "/pla")
    wait_for(lambda: "/playbook" in words(nvim) and words(nvim)[0] == "/plan", 10, str(words(nvim)))
    type_each(nvim, "n")  # now the preselected item's whole word
    wait_for(lambda: words(nvim) == ["/plan", "/explain"], 10, "/plan: playbook is out")


def test_slash_completes_only_at_the_start_of_the_first_line(nvim: Any, prompts: Path) -> None:
    open_composer(nvim)
    type_each(nvim, "a /")
    assert not pum(nvim)
    nvim.input("<C-u>")
    type_each(nvim, "x")
    nvim.input("<S-CR>")  # a second line: a `/` there is text
    wait_for(lambda: len(composer_text(nvim)) == 2, 10, "a second line")
    type_each(nvim, "/re")
    assert not pum(nvim) and words(nvim) == []


def test_a_new_prompt_file_is_offered_on_the_next_slash(nvim: Any, prompts: Path) -> None:
    open_composer(nvim)
    nvim.input("/st")
    # the name's start first, then its letters in order (as `@` ranks)
    wait_for(lambda: words(nvim) == ["/standup", "/history", "/reset"], 10, "/st")
    nvim.input("<C-e><C-u>")
    write(user_prompts(prompts) / "stats.md", "---\ndescription: Count things\n---\nCount.\n")
    type_each(nvim, "/st")
    wait_for(
        lambda: words(nvim) == ["/standup", "/stats", "/history", "/reset"],
        10,
        "the new file, read now",
    )


def test_cmp_source_completes_commands(nvim: Any, prompts: Path) -> None:
    lua_helper(nvim, "engines.fake_cmp")
    nvim.exec_lua(SETUP_CMP)
    open_composer(nvim)
    got = wait_for(
        lambda: (r := lua_helper(nvim, "engines.cmp_complete", "/re"))["response"]["items"] and r,
        10,
        "cmp items",
    )
    items = got["response"]["items"]
    assert [i["textEdit"]["newText"] for i in items] == [
        "/regenerate",
        "/reset",
        "/rewind",
        "/review",
    ]
    assert items[3]["labelDetails"] == {
        "description": "[.claude/commands, over built-in] Review a file"
    }
    assert items[3]["textEdit"]["range"]["start"] == {"line": 0, "character": 0}
    assert lua_helper(nvim, "engines.cmp_keyword_at_end", "/rev") == "/rev"
    assert lua_helper(nvim, "engines.cmp_keyword_at_end", "a /rev") == ""


def test_blink_menu_lists_commands_as_typed(nvim: Any, prompts: Path) -> None:
    lua_helper(nvim, "engines.fake_blink")
    nvim.exec_lua(SETUP_BLINK)
    open_composer(nvim)
    type_each(nvim, "/")
    wait_for(
        lambda: blink_menu(nvim) == sorted([*BUILTINS, "/review", "/explain", "/standup"]),
        10,
        "blink's / menu",
    )
    type_each(nvim, "rev")
    wait_for(lambda: blink_menu(nvim) == ["/review"], 10, "/rev")


# --- built-ins -----------------------------------------------------------------------------


def test_slash_plan_runs_the_plan_subcommand(nvim: Any, prompts: Path) -> None:
    open_composer(nvim)
    send_keys(nvim, "/plan on")
    wait_for(lambda: nvim.exec_lua("return require('sightline').status().mode") == "plan", 10)
    assert composer_text(nvim) == [""]  # run: the composer is empty again
    assert not any("/plan" in row for row in transcript(nvim))  # nothing sent to the model
    send_keys(nvim, "/plan")  # no argument: toggles, as :Sightline plan does
    wait_for(lambda: nvim.exec_lua("return require('sightline').status().mode") == "normal", 10)


def test_slash_review_is_the_review_command_without_a_prompt_file_of_its_name(
    nvim: Any, prompts: Path
) -> None:
    (prompts / ".claude" / "commands" / "review.md").unlink()
    open_composer(nvim)
    type_each(nvim, "/rev")
    wait_for(lambda: words(nvim) == ["/review"], 10, "/rev")
    assert menu(nvim)["items"][0]["kind"] == "built-in"
    nvim.input("<C-e>")
    type_each(nvim, "iew")
    nvim.input("<C-s>")
    wait_for(lambda: composer_text(nvim) == [""], 10, "run: the composer emptied")
    messages = nvim.exec_lua("return vim.fn.execute('messages')")
    assert "no change of this conversation to review" in messages  # :Sightline review's
    assert not any("/review" in row for row in transcript(nvim))  # nothing sent


def test_a_broken_prompt_file_hides_no_built_in(nvim: Any, prompts: Path) -> None:
    write(prompts / ".claude" / "commands" / "review.md", "---\ndescription: [oops\n---\nx\n")
    open_composer(nvim)
    type_each(nvim, "/rev")
    wait_for(lambda: words(nvim) == ["/review"], 10, "/rev")
    assert menu(nvim)["items"][0]["kind"] == "built-in"


def test_a_refused_built_in_keeps_the_composer_text(nvim: Any, prompts: Path) -> None:
    open_composer(nvim)
    send_keys(nvim, "/compact")  # nothing to compact yet: :Sightline compact's refusal
    wait_for(lambda: "nothing to compact" in (bar_note(nvim) or ""), 10, "the refusal")
    assert composer_text(nvim) == ["/compact"]


# --- prompt files --------------------------------------------------------------------------


def test_a_claude_command_expands_its_arguments(nvim: Any, prompts: Path) -> None:
    open_composer(nvim)
    send_keys(nvim, "/review src/app.py naming")
    want = "Review src/app.py carefully. Focus: src/app.py naming"
    wait_for(lambda: f"echo: {want}" in transcript(nvim), 10, "the model got the expansion")
    rows = transcript(nvim)
    typed = rows.index("/review src/app.py naming")
    assert rows[typed + 1] == "▸ sent as" and rows[typed + 2] == want
    nvim.input("<Esc>")  # (the transcript's folds are drawn once Insert mode is left)
    tbuf = nvim.exec_lua("return require('sightline.ui.pane').buffers().transcript")
    win = nvim.exec_lua("return vim.fn.bufwinid(...)", tbuf)
    fold = (
        "local w, l = ... return vim.api.nvim_win_call(w, function()"
        " return {vim.fn.foldclosed(l), vim.fn.foldtextresult(l)} end)"
    )
    head = typed + 2  # (1-based)
    got = wait_for(lambda: (r := nvim.exec_lua(fold, win, head))[0] == head and r, 10, "fold")
    assert got[1] == "▸ sent as: 1 line (zo shows them)"  # folded from its header on
    user = next(r for r in history_records(prompts) if r.get("role") == "user")
    assert user["visible"] == "/review src/app.py naming" and user["expanded"] == want
    assert user["content"][0]["text"] == want  # what was sent


def test_a_command_in_a_subfolder_is_namespaced(nvim: Any, prompts: Path) -> None:
    write(
        prompts / ".claude" / "commands" / "frontend" / "component.md",
        "---\ndescription: Make a component\n---\nMake a React component named $1.\n",
    )
    nvim.command("set columns=220")  # room for the menu column beside the pane
    open_composer(nvim)
    type_each(nvim, "/fro")
    wait_for(lambda: words(nvim) == ["/frontend:component"], 10, "/fro")
    assert menu(nvim)["items"][0]["menu"] == "[.claude/commands] Make a component"
    nvim.input("<C-y>")
    send_keys(nvim, " Button")
    want = "Make a React component named Button."
    wait_for(lambda: f"echo: {want}" in transcript(nvim), 10, "the expansion")
    assert "/frontend:component Button" in transcript(nvim)


def test_a_copilot_prompt_takes_inputs_selection_and_file(nvim: Any, prompts: Path) -> None:
    nvim.command("edit src/app.py")
    nvim.input("Vj<Esc>")  # select both lines, as the user does before asking
    open_composer(nvim)
    send_keys(nvim, "/explain audience=juniors")
    wait_for(lambda: any(r.startswith("echo: Explain this code") for r in transcript(nvim)), 10)
    user = next(r for r in history_records(prompts) if r.get("role") == "user")
    assert user["expanded"] == (
        "Explain this code from src/app.py for juniors:\n"
        "src/app.py, lines 1–2:\n```python\ndef main():\n    return 42\n```"
    )


def test_a_copilot_prompt_is_typed_by_the_name_its_front_matter_gives(
    nvim: Any, prompts: Path
) -> None:
    write(
        prompts / ".github" / "prompts" / "generate-unit-tests.prompt.md",
        "---\nname: tests\ndescription: Write tests\n---\nWrite tests for ${file}.\n",
    )
    nvim.command("edit src/app.py")
    open_composer(nvim)
    type_each(nvim, "/tes")
    wait_for(lambda: words(nvim) == ["/tests"], 10, "/tes")
    nvim.input("<C-y>")
    send_keys(nvim, "")
    wait_for(lambda: "echo: Write tests for src/app.py." in transcript(nvim), 10, "the expansion")


def test_a_missing_input_is_asked_for(nvim: Any, prompts: Path) -> None:
    nvim.command("edit src/app.py")
    nvim.input("V<Esc>")
    open_composer(nvim)
    send_keys(nvim, "/explain")
    wait_for(lambda: nvim.api.get_mode()["mode"] == "c", 10, "the input prompt")
    nvim.input("students<CR>")
    wait_for(lambda: any(r.startswith("echo: Explain this code") for r in transcript(nvim)), 10)
    user = next(r for r in history_records(prompts) if r.get("role") == "user")
    assert "for students:" in user["expanded"]


def test_a_prompt_needing_a_selection_without_one_sends_nothing(nvim: Any, prompts: Path) -> None:
    nvim.command("edit src/app.py")  # a file, but nothing was ever selected in it
    open_composer(nvim)
    send_keys(nvim, "/explain audience=me")
    wait_for(lambda: "needs a selection" in (bar_note(nvim) or ""), 10, "the refusal")
    assert composer_text(nvim) == ["/explain audience=me"]
    assert idle(nvim) and not any(r.startswith("echo:") for r in transcript(nvim))


def test_mentions_in_a_prompt_file_resolve_as_if_typed(nvim: Any, prompts: Path) -> None:
    write(prompts / ".sightline" / "prompts" / "look.md", "Look at @src/app.py please.\n")
    open_composer(nvim)
    send_keys(nvim, "/look")
    wait_for(lambda: "echo: Look at @src/app.py please." in transcript(nvim), 10)
    user = next(r for r in history_records(prompts) if r.get("role") == "user")
    assert any("return 42" in part["text"] for part in user["content"][1:])


def test_an_unknown_command_is_sent_as_text_with_a_hint(nvim: Any, prompts: Path) -> None:
    open_composer(nvim)
    send_keys(nvim, "/usr/bin is where it lives")
    wait_for(lambda: "echo: /usr/bin is where it lives" in transcript(nvim), 10)
    assert bar_note(nvim) == "/usr/bin is not a command: sent as text"


def test_a_broken_front_matter_is_named_and_skipped(nvim: Any, prompts: Path) -> None:
    write(
        prompts / ".claude" / "commands" / "broken.md",
        "---\ndescription: ok\nmodel: [a\n---\nBody\n",
    )
    open_composer(nvim)
    nvim.input("/")
    wait_for(lambda: "/review" in words(nvim), 10, "/")
    assert "/broken" not in words(nvim)
    wait_for(
        lambda: (
            "✗ .claude/commands/broken.md:3: front matter: did not find expected ',' or ']';"
            " skipped" in transcript(nvim)
        ),
        10,
        "the note naming file and line",
    )


def test_send_with_the_menu_open_sends(nvim: Any, prompts: Path) -> None:
    open_composer(nvim)
    type_each(nvim, "/plan")
    wait_for(lambda: words(nvim)[:1] == ["/plan"] and pum(nvim), 10, "the menu on /plan")
    nvim.input("<C-s>")  # the menu is still open: the key sends all the same
    wait_for(lambda: nvim.exec_lua("return require('sightline').status().mode") == "plan", 10)
    assert composer_text(nvim) == [""] and not pum(nvim)
