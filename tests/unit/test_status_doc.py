"""`:help sightline.status()` lists exactly the fields `require('sightline').status()` returns."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def documented_fields() -> list[str]:
    help_text = (ROOT / "doc" / "sightline.txt").read_text(encoding="utf-8")
    block = help_text.split("*sightline.status()*", 1)[1].split("*sightline-workspace*", 1)[0]
    # A field starts a line at the list's column (26 spaces in), its words after it.
    return re.findall(r"^ {26}([a-z_]+)\s", block, flags=re.MULTILINE)


def returned_fields() -> list[str]:
    init = (ROOT / "lua" / "sightline" / "init.lua").read_text(encoding="utf-8")
    body = init.split("function M.status()", 1)[1].split("\nend\n", 1)[0]
    shown = body.split("local shown = {", 1)[1].split("}", 1)[0]
    return ["state", *re.findall(r"'([a-z_]+)'", shown)]


def test_the_help_lists_every_status_field_and_no_other() -> None:
    assert sorted(documented_fields()) == sorted(returned_fields())
