"""What the compare view is given for a proposal decided hunk by hunk (pure Python)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from sightline.domain import diff
from sightline.gate.proposals import Proposal

_LINE = st.sampled_from(["", "a", "b", "c", "x = 1", "\t y"])
_TEXT = st.lists(_LINE, max_size=12).map(lambda ls: "".join(line + "\n" for line in ls))
_DECISION = st.sampled_from(["", "accept", "reject"])


@given(_TEXT, _TEXT, st.data())
def test_the_after_side_leaves_out_the_rejected_hunks_and_labels_each_decided_one(
    before: str, after: str, data: st.DataObject
) -> None:
    p = Proposal("edit", "f.txt", "/ws/f.txt", before, after)
    n = len(p.hunks)
    decisions = data.draw(st.lists(_DECISION, min_size=n, max_size=n))
    view = p.view(decisions)
    kept = {i for i, d in enumerate(decisions) if d != "reject"}
    assert view["after"] == diff.apply_hunks(before, p.hunks, kept)
    assert view["before"] == before
    shown = view["after"].split("\n")[:-1]
    decided = [(i, d) for i, d in enumerate(decisions) if d]
    assert [m["text"] for m in view["marks"]] == [diff.hunk_label(i, n, d) for i, d in decided]
    for (i, d), mark in zip(decided, view["marks"], strict=True):
        # On the hunk's first line as the after side holds it: its new text, or the old kept.
        first = p.hunks[i].new if d == "accept" else p.hunks[i].old
        if first and shown:
            assert shown[mark["row"]] == first[0]
        assert 0 <= mark["row"] < max(1, len(shown))


def test_undecided_the_after_side_is_the_proposal() -> None:
    p = Proposal("edit", "f.txt", "/ws/f.txt", "a\nb\nc\n", "a\nB\nc\nd\n")
    assert p.view() == {
        "id": p.id,
        "path": "f.txt",
        "before": "a\nb\nc\n",
        "after": "a\nB\nc\nd\n",
        "marks": [],
    }
