"""The core's side of composer completion: where the mention starts, what it offers, and
the file list kept warm per workspace (no Neovim)."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sightline.domain import extensions
from sightline.domain.mentions import mention_at_end
from sightline.mentions.composer import ComposerCompletion
from tests.child import ROOT


def make_ws(root: Path, files: list[str]) -> Path:
    for rel in files:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("")
    return root


def dirs(tmp_path: Path) -> extensions.ExtensionDirs:
    return extensions.ExtensionDirs(tmp_path / "exts", tmp_path / "state.json")


def add_extension(d: extensions.ExtensionDirs, name: str, description: str) -> None:
    folder = d.user_extensions / name
    folder.mkdir(parents=True)
    manifest = {"name": name, "version": "1", "description": description}
    (folder / "sightline-extension.json").write_text(json.dumps(manifest))


def words(result: dict[str, object]) -> list[str]:
    items = result["items"]
    assert isinstance(items, dict)
    return list(items["word"])


def test_start_is_a_byte_column_and_items_rank(tmp_path: Path) -> None:
    ws = make_ws(tmp_path / "ws", ["src/browser.py", "README.md"])
    d = dirs(tmp_path)
    add_extension(d, "browser-tools", "Browser helpers")
    comp = ComposerCompletion(d)
    comp.warm(str(ws))
    assert comp.wait_idle(10)
    result = comp.candidates(str(ws), before="é → @bro")
    assert result["start"] == len("é → ".encode())
    assert words(result) == ["@ext:browser-tools", "@src/browser.py"]
    assert words(comp.candidates(str(ws), token="ext:")) == ["@ext:browser-tools"]
    none = comp.candidates(str(ws), before="a@bro")
    assert none["start"] == -1 and words(none) == []


def test_items_travel_as_columns(tmp_path: Path) -> None:
    ws = make_ws(tmp_path / "ws", ["my notes.md"])
    d = dirs(tmp_path)
    add_extension(d, "notes", "Note\x1b[31m taking")
    comp = ComposerCompletion(d)
    comp.warm(str(ws))
    assert comp.wait_idle(10)
    assert comp.candidates(str(ws), token="no")["items"] == {
        "word": ["@ext:notes", "@my\\ notes.md"],
        "abbr": ["@ext:notes", "my notes.md"],
        "menu": ["Note taking", ""],  # (the kind column says `file` already)
        "info": ["Note taking", ""],
        "kind": ["extension", "file"],
        "label": ["ext", "file"],  # what the kind column shows: one rule, here
        "lsp": [9, 17],  # LSP CompletionItemKind Module, File (for nvim-cmp and blink.cmp)
    }


def test_the_menu_is_fitted_from_the_at_and_a_pending_item_asks_for_a_refresh(
    tmp_path: Path,
) -> None:
    from sightline.mentions.completion import CompletionItem
    from sightline.mentions.menu_fit import cells

    deep = "a/" * 40 + "deep.txt"
    ws = make_ws(tmp_path / "ws", [deep])
    starting = CompletionItem("mcp_starting", "@de", "starting…", "demo", "")
    comp = ComposerCompletion(dirs(tmp_path), extra=lambda _ws, _t, items: [*items, starting])
    comp.warm(str(ws))
    assert comp.wait_idle(10)
    # 30 cells from the cursor; the menu starts at the `@`, 3 cells to its left
    got = comp.candidates(str(ws), before="see @de", room=30)
    cols = got["items"]
    assert cols["abbr"][0].endswith("/…/deep.txt") and cols["menu"] == ["", "demo"]
    # Neovim's menu: abbr, space, kind, space, menu, space, scrollbar
    width = [max(map(cells, cols[c])) for c in ("abbr", "label", "menu")]
    assert sum(width) + 4 <= 33
    assert got["items"]["word"][0] == "@" + deep  # inserted whole
    assert got["refresh_ms"] > 0  # `starting…`: the composer asks again
    assert "refresh_ms" not in ComposerCompletion(dirs(tmp_path)).candidates(str(ws), token="x")
    assert comp.candidates(str(ws), before="see @de")["items"]["abbr"][0] == deep  # no room


def test_extensions_are_read_again_at_each_new_mention(tmp_path: Path) -> None:
    ws = make_ws(tmp_path / "ws", ["a.txt"])
    d = dirs(tmp_path)
    comp = ComposerCompletion(d)
    comp.warm(str(ws))
    assert comp.wait_idle(10)
    assert words(comp.candidates(str(ws), before="@")) == ["@buffer", "@diagnostics", "@a.txt"]
    add_extension(d, "late", "installed while the composer was open")
    assert words(comp.candidates(str(ws), before="@a")) == ["@a.txt"]  # same mention
    assert words(comp.candidates(str(ws), before="@a @"))[2:] == ["@ext:late", "@a.txt"]


def test_a_new_workspace_gets_its_own_list(tmp_path: Path) -> None:
    one = make_ws(tmp_path / "one", ["only-in-one.txt"])
    two = make_ws(tmp_path / "two", ["only-in-two.txt"])
    comp = ComposerCompletion(dirs(tmp_path))
    for ws in (one, two):
        comp.warm(str(ws))
        assert comp.wait_idle(10)
        assert words(comp.candidates(str(ws), before="@only")) == [f"@only-in-{ws.name}.txt"]


# --- long lines: every keystroke's work is linear and bounded ---------------------------

_TAIL = re.compile(r"(?:\\.|[^\s\\])*\\?", re.DOTALL)


def slow_mention_at_end(before: str) -> tuple[int, str] | None:
    """The rule as first written (quadratic in the `@`s of a token): from the last `@`
    back, the first that may start a mention and has no unescaped whitespace after it."""
    at = len(before)
    while (at := before.rfind("@", 0, at)) >= 0:
        if _TAIL.fullmatch(before, at + 1) is None:
            return None
        if at == 0 or before[at - 1] in "([{\"'`" or before[at - 1].isspace():
            return at, before[at + 1 :]
    return None


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet="@\\ \n\ta(x\u3000\x1c\x85[`é", max_size=40))
def test_the_mention_under_the_cursor_is_found_as_the_rule_says(before: str) -> None:
    assert mention_at_end(before) == slow_mention_at_end(before)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    unit=st.text(alphabet="a@/\\ .é:", min_size=1, max_size=12),
    size=st.integers(0, 200_000),
    head=st.sampled_from(["", "see ", "(", "a@b "]),
)
def test_completion_on_a_long_line_takes_bounded_time(unit: str, size: int, head: str) -> None:
    # A long paste after `@` (or anywhere on the line): the core's answer for each
    # keystroke stays far below what a quadratic rule costs (seconds at 20 kB).
    line = head + "@" + (unit * (size // len(unit) + 1))[:size]
    for before in (line, line + "a", line + "/"):
        started = time.thread_time()
        result = COMP.candidates(str(COMP_WS), before=before)
        cpu = time.thread_time() - started
        assert cpu < 0.5, f"{cpu:.2f} s of CPU for a {len(before)}-character line"
        found = mention_at_end(before)
        if found is None:
            assert result["start"] == -1
        else:
            assert result["start"] == len(before[: found[0]].encode())


COMP_WS = ROOT  # the repository: a real git listing
COMP = ComposerCompletion(extensions.ExtensionDirs(Path("/nonexistent/e"), Path("/nonexistent/s")))
