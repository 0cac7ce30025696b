"""The help file and its numbered sections, for the tests that check the docs."""

from __future__ import annotations

from tests.conftest import ROOT

DOC = ROOT / "doc" / "sightline.txt"


def section(text: str, tag: str) -> str:
    """The text of a numbered section from its tag to the next ==== line."""
    start = text.index(f"*{tag}*")
    end = text.find("\n=====", start)
    return text[start : end if end >= 0 else len(text)]
