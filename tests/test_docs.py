"""The help file: :helptags raises no error, every |link| resolves, public names have tags."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

from tests.conftest import ROOT

DOC = ROOT / "doc" / "sightline.txt"


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


def test_every_public_name_has_a_tag() -> None:
    text = DOC.read_text()
    tags = set(re.findall(r"\*([^*\s]+)\*", text))
    subcommands = ["chat", "stop", "reset", "restart", "history", "plan", "autoaccept"]
    subcommands += ["accept", "reject", "extensions", "extension"]
    functions = ["setup", "chat", "send", "stop", "reset", "decide", "status", "plan"]
    functions += ["extensions"]
    expected = {f":Sightline-{s}" for s in subcommands} | {f"sightline.{f}()" for f in functions}
    expected |= {"SightlineTurnStart", "SightlineTurnEnd", "<Plug>(sightline-chat)"}
    expected |= {"<Plug>(sightline-change)", "SightlineUser", "SightlineError", "g:sightline"}
    expected |= {"sightline-mentions", "sightline-extensions", "sightline-completion"}
    expected |= {"sightline-cli"}
    assert expected - tags == set()
