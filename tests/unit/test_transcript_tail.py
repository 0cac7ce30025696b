"""A delta's extras (hls, chips, Markdown spans, folds) are found from the transcript's end:
the search must give what a bisection over the whole list gives, for every list and start."""

from __future__ import annotations

from bisect import bisect_left, bisect_right

from hypothesis import given
from hypothesis import strategies as st

from sightline.ui.transcript import Transcript, _tail

sorted_ints = st.lists(st.integers(min_value=0, max_value=60)).map(sorted)


@given(sorted_ints, st.integers(min_value=-2, max_value=65))
def test_tail_is_the_bisection(keys: list[int], start: int) -> None:
    items = [(k, "x") for k in keys]

    def key(item: tuple[int, str]) -> int:
        return item[0]

    assert _tail(items, key, start, after=False) == bisect_left(keys, start)
    assert _tail(items, key, start, after=True) == bisect_right(keys, start)


def _filled(turns: int) -> Transcript:
    t = Transcript()
    for i in range(turns):
        t.add_user(f"q{i} **bold**", note=f"about f{i}.py", chip={"path": f"f{i}.py"})
        t.append_thinking(f"think {i}\nmore")
        t.append_text(f"answer {i}\n\n```py\nx = {i}\n```\n")
        t.add_output("\n".join(f"out {k}" for k in range(9)))
        t.add_note(f"note {i}")
    return t


@given(st.integers(min_value=0, max_value=12), st.integers(min_value=0, max_value=400))
def test_a_delta_from_any_row_carries_what_starts_or_reaches_there(turns: int, row: int) -> None:
    t = _filled(turns)
    start = min(row, len(t.lines))
    delta = t._delta_from(start)
    assert delta["hls"] == [list(h) for h in t.hls if h[0] >= start]
    assert delta["chips"] == [c for c in t.fixed_chips if c["row"] >= start]
    assert delta["md"] == [list(s) for s in t.md if s[1] > start]
    assert delta["folds"] == [list(s) for s in t.folds if s[1] > start]


path_text = st.text(alphabet="ab.-_/:0123456789 @x\u00e9", max_size=40)


@given(path_text)
def test_the_chip_prefilter_never_skips_a_reference(line: str) -> None:
    """Every line a code reference is found in passes the cheap check lines are skipped by."""
    from sightline.ui.chips import _REFERENCE_HINT, REFERENCE

    if REFERENCE.search(line):
        assert _REFERENCE_HINT.search(line)
