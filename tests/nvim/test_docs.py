"""The help file: :helptags raises no error, every |link| resolves, public names have tags."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

from tests.docs_util import DOC, section
from tests.lua_helper import lua_helper


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
