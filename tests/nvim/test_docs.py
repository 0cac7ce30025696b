"""The help file: :helptags raises no error, every |link| resolves, public names have tags."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

from tests import child
from tests.conftest import ROOT
from tests.docs_util import DOC, section
from tests.lua_helper import lua_helper
from tests.screen import Screen


def links_outside_examples(text: str) -> set[str]:
    links: set[str] = set()
    in_example = False
    for line in text.splitlines():
        if in_example:
            if line.startswith("<") or (line and not line[0].isspace()):
                in_example = False
            else:
                continue
        links.update(re.findall(r"\|([^|\s]+)\|", line))
        if line.rstrip().endswith(">") or re.search(r">\w+$", line.rstrip()):
            in_example = True
    return links


def defaults_block(text: str) -> str:
    start = text.index("Defaults: >lua\n") + len("Defaults: >lua\n")
    return text[start : text.index("\n<\n", start)]


def option_entries(text: str) -> dict[str, str]:
    """`*sightline-option-X*` → the text from that tag to the next option tag, the mappings
    or the end of its section, whichever comes first (options of later features are
    documented in their own sections)."""
    marks = list(re.finditer(r"\*sightline-option-([^*\s]+)\*", text))
    entries = {}
    for i, m in enumerate(marks):
        ends = [marks[i + 1].start()] if i + 1 < len(marks) else [len(text)]
        ends += [
            at
            for at in (text.find(stop, m.end()) for stop in ("*sightline-mappings*", "\n===="))
            if at >= 0
        ]
        entries[m.group(1)] = text[m.end() : min(ends)]
    return entries


def test_helptags_and_links(nvim: Any, tmp_path: Path) -> None:
    doc = tmp_path / "doc"
    doc.mkdir()
    shutil.copy(DOC, doc / "sightline.txt")
    err = nvim.exec_lua(
        "local ok, e = pcall(vim.cmd.helptags, ...) return ok and '' or tostring(e)", str(doc)
    )
    assert err == ""
    ours = {line.split("\t")[0] for line in (doc / "tags").read_text().splitlines()}
    runtime = Path(nvim.eval("$VIMRUNTIME")) / "doc" / "tags"
    builtin = {line.split("\t")[0] for line in runtime.read_text().splitlines()}
    missing = sorted(links_outside_examples(DOC.read_text()) - ours - builtin)
    assert missing == [], f"unresolved |links|: {missing}"


def test_options_match_the_schema(nvim: Any) -> None:
    text = DOC.read_text()
    got = lua_helper(nvim, "schema.leaves", defaults_block(text))
    assert got["defaults_match"], (
        f"the Defaults block differs from config.lua:\n{got['documented']}\n{got['defaults']}"
    )
    entries = option_entries(text)
    paths = {leaf["path"] for leaf in got["leaves"]}
    assert len(paths) > 20
    assert sum(len(leaf["choices"]) for leaf in got["leaves"]) >= 10
    for leaf in got["leaves"]:
        path = leaf["path"]
        parts = path.split(".")
        prefixes = [".".join(parts[:i]) for i in range(len(parts), 0, -1)]
        tag = next((p for p in prefixes if p in entries), None)
        assert tag is not None, f"option {path} has no *sightline-option-{path}* tag"
        entry = entries[tag]
        # The entry names the option itself; a table of keys may be named as the table.
        named = [path, parts[0] if len(parts) == 1 else ".".join(parts[:-1])]
        named = named if leaf["is_key"] else [path]
        assert any(re.search(rf"(?<![\w.]){re.escape(n)}(?![\w])", entry) for n in named), (
            f"*sightline-option-{tag}* does not name {path}"
        )
        for choice in leaf["choices"]:
            assert f"`{choice}`" in entry or f'"{choice}"' in entry, (
                f"*sightline-option-{tag}* does not name the choice {choice!r} of {path}"
            )
    stale = {tag for tag in entries if not any(p == tag or p.startswith(tag + ".") for p in paths)}
    assert stale == set(), f"help tags for options that do not exist: {stale}"


def test_every_highlight_group_is_documented(nvim: Any) -> None:
    text = DOC.read_text()
    groups: dict[str, str] = lua_helper(nvim, "schema.highlight_links")
    assert {"SightlineUser", "SightlineReveal", "SightlineRevealBar"} <= set(groups)
    listed = section(text, "sightline-highlights")
    for group, link in sorted(groups.items()):
        assert f"*{group}*" in text, f"highlight group {group} has no help tag"
        assert f"*{group}*" in listed or f"|{group}|" in listed, f"{group} missing from 8."
        if link:
            line = next(ln for ln in listed.splitlines() if f"*{group}*" in ln)
            assert f"`{link}`" in line or f"|hl-{link}|" in line, f"{group}: say it links to {link}"


def _clone(tmp: Path) -> Path:
    """The plugin as `git clone` leaves it: no doc/tags."""
    plugin = tmp / "sightline.nvim"
    for part in ("plugin", "lua", "doc"):
        shutil.copytree(ROOT / part, plugin / part, ignore=shutil.ignore_patterns("tags"))
    shutil.copy(ROOT / "Makefile", plugin / "Makefile")
    return plugin


def _user_nvim(plugin: Path, tmp: Path) -> Any:
    import pynvim

    text = f"vim.opt.runtimepath:prepend({child.lua_literal(str(plugin))})\n"
    text += "require('sightline').setup({ provider = { name = 'echo' } })\n"
    return pynvim.attach("child", argv=child.argv(child.write_init(text, tmp)))


def _help_opens(nv: Any, screen: Screen, topic: str) -> None:
    nv.input(f":help {topic}<CR>")
    screen.wait_for(lambda s: "sightline.txt" in s.text(), what="the help window")
    assert "E149" not in screen.text()
    assert nv.eval("&filetype") == "help"


def test_help_works_after_make_venv_without_any_nvim(
    isolated_env: Path, screen_factory: Any
) -> None:
    """Issue 19 item 16: the README's order, `make venv` before anything brings an `nvim`,
    leaves no doc/tags; the first Neovim that loads the plugin makes them."""
    plugin = _clone(isolated_env.parent)
    bare = {k: v for k, v in os.environ.items() if k != "PATH"}
    made = subprocess.run(
        ["make", "-C", str(plugin), "helptags"],
        env={**bare, "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    )
    assert "no nvim found" in made.stdout and not (plugin / "doc" / "tags").exists()
    nv = _user_nvim(plugin, isolated_env.parent)
    try:
        _help_opens(nv, screen_factory(nv, 100, 30), "sightline")
    finally:
        nv.close()


def test_stale_help_tags_are_remade(isolated_env: Path, screen_factory: Any) -> None:
    """Tags older than the help (an update that added a section) are made again."""
    plugin = _clone(isolated_env.parent)
    tags = plugin / "doc" / "tags"
    tags.write_text("sightline\tsightline.txt\t/*sightline*\n")
    os.utime(tags, (1, 1))
    nv = _user_nvim(plugin, isolated_env.parent)
    try:
        _help_opens(nv, screen_factory(nv, 100, 30), "sightline-chips")
        assert "*sightline-chips*" in nv.api.get_current_line()
    finally:
        nv.close()
