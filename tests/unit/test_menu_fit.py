"""The `@` menu fitted to the screen cells it has (mentions/menu_fit.py)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sightline.mentions.completion import KIND_STYLES, CompletionItem, ItemKind
from sightline.mentions.menu_fit import cells, cut_end, cut_middle, fit

FUZZ = settings(
    max_examples=300, deadline=None, database=None, suppress_health_check=list(HealthCheck)
)
# Paths, descriptions and uris: ASCII, separators, wide (CJK) and combining characters.
TEXT = st.text(alphabet=st.sampled_from("ab/_.-: 例字\u0301é"), max_size=90)
ITEMS = st.lists(
    st.builds(
        CompletionItem,
        kind=st.sampled_from(list(KIND_STYLES)),
        word=TEXT.map(lambda t: "@" + t),
        abbr=TEXT,
        menu=TEXT,
        info=TEXT,
    ),
    min_size=1,
    max_size=12,
)


def neovim_width(items: list[CompletionItem]) -> int:
    """The cells Neovim's popup menu takes from its column (popupmenu.c): the abbr, a space
    and the kind, a space and the menu when any item has one, a trailing space, a scrollbar."""
    kind = max(cells(i.style.label) for i in items)
    menu = max(cells(i.menu) for i in items)
    abbr = max(cells(i.abbr) for i in items)
    return abbr + kind + 1 + (menu + 1 if menu else 0) + 1 + 1


@FUZZ
@given(ITEMS, st.integers(min_value=16, max_value=220))
def test_the_menu_fits_its_room_and_loses_nothing(items: list[CompletionItem], room: int) -> None:
    fitted = fit(items, room)
    assert neovim_width(fitted) <= room
    for before, after in zip(items, fitted, strict=True):
        assert (after.word, after.kind) == (before.word, before.kind)  # what it inserts
        if after.abbr != before.abbr:
            assert before.abbr in after.info.split("\n")  # shown whole beside the menu
        if after.menu != before.menu and before.menu:
            assert before.menu in after.info
    if neovim_width(items) <= room:
        assert fitted == items  # what fits is left alone


@FUZZ
@given(TEXT, st.integers(min_value=0, max_value=100))
def test_cuts_stay_within_their_width(text: str, width: int) -> None:
    for cut in (cut_end(text, width), cut_middle(text, width)):
        assert cells(cut) <= width
        assert cut == text or "…" in cut or width == 0
    if cells(text) <= width:
        assert cut_middle(text, width) == cut_end(text, width) == text


def test_a_path_keeps_its_file_name_and_whole_leading_folders() -> None:
    path = "src/very/long/folder/module_with_a_long_name.py"
    assert cut_middle(path, 40) == "src/very/…/module_with_a_long_name.py"
    assert cut_middle(path, 30) == "…/module_with_a_long_name.py"
    assert cut_middle(path, 12) == "…ong_name.py"
    assert cut_end("Browser helpers for tests", 12) == "Browser hel…"


def test_a_file_shows_its_kind_once_and_the_menu_column_goes_when_too_narrow() -> None:
    kind: ItemKind = "file"
    long = CompletionItem(kind, "@" + "d/" * 30 + "x.py", "d/" * 30 + "x.py", "", "")
    ext = CompletionItem("extension", "@ext:tools", "@ext:tools", "Helpers for everything", "")
    fitted = fit([long, ext], 26)
    assert fitted[1].menu == ""  # 26 cells: no room for a readable description
    assert fitted[1].info == "Helpers for everything"
    assert fitted[0].abbr.endswith("/x.py") and neovim_width(fitted) <= 26
