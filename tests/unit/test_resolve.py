"""member_key / syntax_scope re-resolution in a real Neovim: C and Lua through tree-sitter,
Python through the core's ast (Neovim ships no Python parser), LSP document symbols first.
Every case runs after an edit above the code moved it away from the lines the agent saw."""

from __future__ import annotations

import re

from tests.conftest import ROOT


def test_every_step_kind_in_the_queries_is_one_the_core_offers() -> None:
    """The core tells the model which kinds exist (the tool schema); a query that marks
    another kind would mark steps no request can name."""
    from sightline.tools.view import KINDS

    files = sorted((ROOT / "queries").glob("*/sightline.scm"))
    assert len(files) >= 4
    used: set[str] = set()
    for f in files:
        used |= set(re.findall(r"@scope\.(\w+)", f.read_text()))
    assert used - {"none"} == set(KINDS)
