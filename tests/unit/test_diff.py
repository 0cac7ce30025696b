"""Pure diff logic of proposals: the changed span, anchored edits, counts, the compact diff."""

from __future__ import annotations

import itertools
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sightline.domain import diff


def apply_anchored(text: str, edit: diff.AnchoredEdit) -> str:
    """What port/apply.lua does, in bytes: find the anchor once, replace the span inside it."""
    data, anchor = text.encode(), edit.anchor.encode()
    assert data.count(anchor) >= 1
    at = data.find(anchor)
    out = data[: at + edit.rel_start] + edit.text.encode() + data[at + edit.rel_end :]
    return out.decode()


@pytest.mark.parametrize(
    ("before", "after", "span"),
    [
        ("abc\n", "abc\n", diff.Span(3, 3, "")),
        ("x = 1\ny = 2\n", "x = 1\ny = 3\n", diff.Span(10, 11, "3")),
        ("a\nb\n", "a\nb\nc\n", diff.Span(3, 3, "\nc")),
        ("aaa\n", "aa\n", diff.Span(2, 3, "")),  # prefix and suffix never overlap
        ("", "new\n", diff.Span(0, 0, "new\n")),
    ],
)
def test_changed_span_is_common_prefix_and_suffix(before: str, after: str, span: diff.Span) -> None:
    got = diff.changed_span(before, after)
    assert got == span
    assert before[: got.start] + got.text + before[got.end :] == after


def test_span_never_ends_past_the_final_newline() -> None:
    # Appending a line must not put the span at (line_count, 0): nvim_buf_set_text refuses it.
    before, after = "one\ntwo\n", "one\ntwo\nthree\n"
    span = diff.changed_span(before, after)
    assert span.end <= len(before) - 1


def test_anchored_edit_is_the_smallest_span_inside_old_string() -> None:
    before = "def f():\n    return 1\n\ndef g():\n    return 1\n"
    old, new = "def g():\n    return 1", "def g():\n    return 2"
    at = before.find(old)
    after = before[:at] + new + before[at + len(old) :]
    edit = diff.anchored_edit(before, after, at, at + len(old))
    assert edit.anchor == old
    assert (edit.rel_start, edit.rel_end, edit.text) == (len(old) - 1, len(old), "2")
    assert apply_anchored(before, edit) == after


def test_anchored_edit_offsets_are_utf8_bytes() -> None:
    before = "café = 'crème'\n"
    at = before.find("'crème'")
    after = before.replace("'crème'", "'brûlée'")
    edit = diff.anchored_edit(before, after, at, at + len("'crème'"))
    assert edit.rel_start == 1  # after the quote
    assert edit.rel_end == len("'crèm".encode())  # the common suffix "e'" stays
    assert apply_anchored(before, edit) == after


def test_anchored_edit_region_grows_for_a_change_outside_it() -> None:
    # The user edited the compare view's after side outside the model's old_string.
    before = "a = 1\nb = 2\nc = 3\n"
    at = before.find("b = 2")
    after = "a = 10\nb = 20\nc = 3\n"
    edit = diff.anchored_edit(before, after, at, at + len("b = 2"))
    assert "b = 2" in edit.anchor and edit.anchor != "b = 2"
    assert apply_anchored(before, edit) == after


def test_anchored_edit_keeps_old_string_as_anchor_when_a_neighbour_matches() -> None:
    # "axxb" with the first x removed: the whole-text span would pick the second x.
    before, after = "axxb\n", "axb\n"
    edit = diff.anchored_edit(before, after, 1, 2)
    assert edit.anchor == "x"
    assert apply_anchored(before, edit) == after


def test_count_occurrences_counts_overlapping() -> None:
    assert diff.count_occurrences("aaa", "aa") == 2
    assert diff.count_occurrences("x = 1\nx = 1\n", "x = 1") == 2
    assert diff.count_occurrences("abc", "d") == 0
    assert diff.count_occurrences("abc", "") == 0


def test_buffer_text_round_trip() -> None:
    assert diff.buffer_text(["a", "b"]) == "a\nb\n"
    assert diff.as_buffer_text("a\nb") == "a\nb\n"
    assert diff.as_buffer_text("a\n") == "a\n"


def test_compact_diff_groups_and_header_skipped() -> None:
    before = "-- lua comment\nkeep\nold\n"
    after = "keep\nnew\n"
    got = diff.compact_diff(before, after)
    assert got[0][1] == diff.HUNK_GROUP and got[0][0].startswith("@@")
    assert ("--- lua comment", diff.DELETE_GROUP) in got  # a deleted "-- …" line, not a header
    assert ("-old", diff.DELETE_GROUP) in got
    assert ("+new", diff.ADD_GROUP) in got
    assert (" keep", None) in got
    assert diff.stats(before, after) == (1, 2)


def test_compact_diff_is_bounded() -> None:
    before = "".join(f"{i}\n" for i in range(200))
    after = "".join(f"{i}!\n" for i in range(200))
    got = diff.compact_diff(before, after, max_lines=10)
    assert len(got) == 11
    assert got[-1][0].startswith("… ") and "more diff lines" in got[-1][0]


def test_compact_diff_of_a_large_file_numbers_hunks_for_the_whole_file() -> None:
    before = "".join(f"line {i}\n" for i in range(1, 100_001))
    after = before.replace("line 50000\n", "line 50000 changed\n")
    import difflib

    expected = [
        line
        for line in difflib.unified_diff(before.splitlines(), after.splitlines(), n=2, lineterm="")
    ][2:]
    assert [text for text, _ in diff.compact_diff(before, after)] == expected
    assert diff.stats(before, after) == (1, 1)


@pytest.mark.parametrize(
    ("before", "after"),
    [("", "a\nb\n"), ("a\nb\n", ""), ("a\n", "a\nb\n"), ("x\na\n", "a\n"), ("a\nb\nc\n", "a\nc\n")],
)
def test_compact_diff_headers_match_difflib(before: str, after: str) -> None:
    import difflib

    expected = list(
        difflib.unified_diff(before.splitlines(), after.splitlines(), n=2, lineterm="")
    )[2:]
    assert [text for text, _ in diff.compact_diff(before, after)] == expected


# Hunks ----------------------------------------------------------------------------------------

# Few distinct lines, so that texts share lines and difflib finds several hunks.
_LINE = st.sampled_from(["", "a", "b", "c", "é", "x = 1", "\t y", "a\r"])
_TEXT = st.lists(_LINE, max_size=12).map(lambda ls: "\n".join(ls) + "\n")
_ANY = st.lists(_LINE, max_size=12).map("\n".join)


def _one_by_one(before: str, hunks: list[diff.Hunk], chosen: set[int]) -> str:
    """The reference: apply the chosen hunks from the last to the first on a line list."""
    lines = before.split("\n")
    for index in sorted(chosen, reverse=True):
        h = hunks[index]
        lines[h.start : h.start + len(h.old)] = list(h.new)
    return "\n".join(lines)


@given(_TEXT, _TEXT, st.data())
def test_hunks_all_give_after_none_give_before_any_subset_is_defined(
    before: str, after: str, data: st.DataObject
) -> None:
    hunks = diff.hunks(before, after)
    assert diff.apply_hunks(before, hunks, set(range(len(hunks)))) == after
    assert diff.apply_hunks(before, hunks, set()) == before
    chosen = data.draw(st.sets(st.sampled_from(range(len(hunks)))) if hunks else st.just(set()))
    got = diff.apply_hunks(before, hunks, chosen)
    assert got == _one_by_one(before, hunks, chosen)
    # Taking the rest afterwards (their positions shifted by what came before) ends at after.
    rest = diff.hunks(got, after)
    assert diff.apply_hunks(got, rest, set(range(len(rest)))) == after


@given(_ANY, _ANY)
def test_hunks_of_any_texts_are_ordered_separated_and_never_empty(before: str, after: str) -> None:
    hunks = diff.hunks(before, after)
    assert (hunks == []) == (before == after)
    for h in hunks:
        assert h.old or h.new
        assert h.kind == ("add" if not h.old else "delete" if not h.new else "change")
    for first, second in itertools.pairwise(hunks):
        assert first.start + len(first.old) < second.start  # an unchanged line between
    assert diff.apply_hunks(before, hunks, set(range(len(hunks)))) == after


def test_an_insertion_at_the_end_lands_before_the_final_newline() -> None:
    (hunk,) = diff.hunks("a\n", "a\n\nx\n")
    assert (hunk.start, hunk.old, hunk.new) == (1, (), ("", "x"))
    assert hunk.as_data() == {"start": 1, "old": 0, "new": ["", "x"], "kind": "add"}


def test_hunks_of_a_proposal_with_three_changes() -> None:
    before = "one\ntwo\nthree\nfour\nfive\nsix\nseven\n"
    after = "one\nTWO\nthree\nfour\nsix\nseven\neight\n"
    hunks = diff.hunks(before, after)
    assert [(h.kind, h.start, h.old, h.new) for h in hunks] == [
        ("change", 1, ("two",), ("TWO",)),
        ("delete", 4, ("five",), ()),
        ("add", 7, (), ("eight",)),
    ]
    taken = diff.apply_hunks(before, hunks, {0, 2})
    assert taken == "one\nTWO\nthree\nfour\nfive\nsix\nseven\neight\n"


def test_apply_hunks_refuses_hunks_that_do_not_match() -> None:
    hunks = diff.hunks("a\nb\n", "a\nc\n")
    with pytest.raises(ValueError, match="hunk 1 does not match"):
        diff.apply_hunks("a\nz\n", hunks, {0})


# The pane's diff while hunks are decided -------------------------------------------------------

_HEADER = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@$")
_DECISION = st.sampled_from(["", "accept", "reject"])


def _side(beginning: str, length: str | None) -> tuple[int, int]:
    """A header side as (0-based start, length), read as difflib writes it."""
    n = 1 if length is None else int(length)
    return (int(beginning) if n == 0 else int(beginning) - 1), n


@given(_TEXT, _TEXT, st.data())
def test_review_diff_reads_back_to_both_texts_and_deciding_keeps_its_shape(
    before: str, after: str, data: st.DataObject
) -> None:
    hunks = diff.hunks(before, after)
    n = len(hunks)
    decisions = data.draw(st.lists(_DECISION, min_size=n, max_size=n))
    got = diff.review_diff(before, hunks, decisions, max_lines=10**6)
    undecided = diff.review_diff(before, hunks, max_lines=10**6)
    # Deciding rewrites lines, never adds or drops one: the pane rewrites the block in place.
    assert len(got) == len(undecided)
    a, b = before.split("\n"), after.split("\n")
    headers = [i for i, (text, _) in enumerate(got) if text.startswith("@@")]
    assert (headers[:1] == [0]) == bool(hunks)
    for at, end in itertools.pairwise([*headers, len(got)]):
        m = _HEADER.match(got[at][0])
        assert m, got[at]
        (a0, an), (b0, bn) = _side(m[1], m[2]), _side(m[3], m[4])
        body = [text for text, _ in got[at + 1 : end]]
        assert [t[1:] for t in body if t[:1] in "- "] == a[a0 : a0 + an]
        assert [t[1:] for t in body if t[:1] in "+ "] == b[b0 : b0 + bn]
    labels = [text for text, _ in got if text[:1] in "·✔✗"]
    assert labels == ([diff.hunk_label(i, n, d) for i, d in enumerate(decisions)] if n > 1 else [])
    # A rejected hunk's lines are muted; the others keep the colours of what they change.
    changed = [(t[:1], g) for t, g in got if t[:1] in "-+"]
    want = [
        (mark, diff.HUNK_GROUP if d == "reject" else group)
        for h, d in zip(hunks, decisions, strict=True)
        for mark, group, lines in (("-", diff.DELETE_GROUP, h.old), ("+", diff.ADD_GROUP, h.new))
        for _ in lines
    ]
    assert changed == want


def test_review_diff_undecided_reads_as_the_compact_diff_with_the_hunks_named() -> None:
    before = "".join(f"line {i}\n" for i in range(1, 13))
    one = before.replace("line 6\n", "")
    assert diff.review_diff(before, diff.hunks(before, one), first_line=40) == (
        diff.compact_diff(before, one, first_line=40)
    )
    after = one.replace("line 2\n", "line 2 CHANGED\n")
    got = diff.review_diff(before, diff.hunks(before, after), ["accept", "reject"])
    assert [text for text, _ in got] == [
        "@@ -1,8 +1,7 @@",
        " line 1",
        "-line 2",
        "+line 2 CHANGED",
        "✔ hunk 1/2 accepted",
        " line 3",
        " line 4",
        " line 5",
        "-line 6",
        "✗ hunk 2/2 rejected",
        " line 7",
        " line 8",
    ]
    assert got[8] == ("-line 6", diff.HUNK_GROUP) and got[2] == ("-line 2", diff.DELETE_GROUP)
    assert diff.review_diff(before, diff.hunks(before, after))[4][0] == "· hunk 1/2 waits"
