"""The one uniqueness search (lua/sightline/port/unique.lua), used by both accept paths: it counts
what the model is told (every occurrence, overlapping ones included, in the lines joined with
the file's final newline) and refuses an empty needle instead of looping."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sightline.domain import diff
from tests.lua_helper import lua_helper

texts = st.text(alphabet="ab\n", max_size=12)


def expected(lines: list[str], needle: str) -> tuple[int, int | None, int | None]:
    text = diff.buffer_text(lines)
    count = diff.count_occurrences(text, needle)
    if not count:
        return 0, None, None
    at = text.find(needle)
    row = text.count("\n", 0, at)
    return count, row, len(text[text.rfind("\n", 0, at) + 1 : at])


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(
        st.tuples(
            st.lists(st.text(alphabet="ab", max_size=4), min_size=1, max_size=4), texts.filter(bool)
        ),
        min_size=1,
        max_size=25,
    )
)
def test_counts_match_the_joined_text(nvim: Any, cases: list[tuple[list[str], str]]) -> None:
    got = lua_helper(nvim, "probes.unique_find", [[lines, needle] for lines, needle in cases])
    for (lines, needle), (count, row, col, err) in zip(cases, got, strict=True):
        assert err is None
        assert (count, row, col) == expected(lines, needle), (lines, needle)


def test_a_limit_stops_counting_and_an_empty_needle_is_refused(nvim: Any) -> None:
    got = lua_helper(
        nvim, "probes.unique_find", [[["aaaa"], "a", 2], [["x"], ""], [["ab", "ab"], "b\na", None]]
    )
    assert got == [[2, 0, 0, None], [None, None, None, "empty_needle"], [1, 0, 1, None]]
