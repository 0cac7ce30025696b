"""The transcript's model: Markdown spans only over what people wrote, folds over output,
a tool call's note rewritten with its outcome (pure Python, no Neovim)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from sightline.agent.replay import render_records, show_outcome
from sightline.ui.transcript import OUTPUT_PREFIX, Transcript

words = st.text(alphabet="ab *_`#\n", max_size=20)
ops = st.lists(
    st.one_of(
        st.tuples(st.just("user"), words),
        st.tuples(st.just("text"), words),
        st.tuples(st.just("note"), words),
        st.tuples(st.just("lines"), words),
        st.tuples(st.just("output"), words),
        st.tuples(st.just("set"), st.integers(0, 40)),
    ),
    max_size=25,
)


def run(t: Transcript, op: tuple[str, Any]) -> None:
    kind, arg = op
    if kind == "user":
        t.add_user(arg or "x")
    elif kind == "text":
        t.append_text(arg)
    elif kind == "note":
        t.add_note(arg or "note")
    elif kind == "lines":
        t.add_lines([(arg or "line", "SightlineDiffAdd")])
    elif kind == "output":
        t.add_output(arg or "out")
    else:
        t.set_line(arg, "✗ rewritten", "SightlineError")


@settings(max_examples=200, deadline=None)
@given(ops)
def test_markdown_spans_cover_only_user_and_model_text(seq: list[tuple[str, Any]]) -> None:
    t = Transcript()
    for op in seq:
        run(t, op)
    whole_line = {h[0]: h[3] for h in t.hls if h[2] == -1}
    last = 0
    for first, end in t.md:
        assert last <= first <= end <= len(t.lines)  # ordered, disjoint, in range
        last = end
        for row in range(first, end):
            # Headers, notes, diffs and output carry a whole-line group; prose never does,
            # unless set_line rewrote a row (only ever a note's).
            assert row not in whole_line or whole_line[row] == "SightlineError"
    for first, end in t.folds:
        assert 0 <= first < end <= len(t.lines)
        assert all(t.lines[r].startswith(OUTPUT_PREFIX) for r in range(first, end))


@settings(max_examples=100, deadline=None)
@given(ops)
def test_deltas_applied_in_order_give_the_full_transcript(seq: list[tuple[str, Any]]) -> None:
    t = Transcript()
    mirror: list[str] = []
    md: list[list[int]] = []
    for op in seq:
        run(t, op)
        delta = t.take_delta()
        if delta is not None:
            mirror[delta["start"] :] = delta["lines"]
            md = [s for s in md if s[1] <= delta["start"]] + delta["md"]
    full = t.full()
    assert mirror == full["lines"]
    assert md == full["md"]


def test_a_failed_call_gets_a_mark_and_its_reason() -> None:
    t = Transcript()
    row = t.add_note("• propose_edit ../../etc/passwd")
    reason = "../../etc/passwd: outside the workspace (/ws); only files in it are allowed"
    show_outcome(t, row, "propose_edit", "propose_edit ../../etc/passwd", reason, True)
    assert t.lines[row] == f"✗ propose_edit ../../etc/passwd — {reason}"
    assert (row, 0, -1, "SightlineError") in t.hls
    assert (row, 0, -1, "SightlineNote") not in t.hls


def test_a_successful_call_keeps_its_note() -> None:
    t = Transcript()
    row = t.add_note("• read_file a.py")
    show_outcome(t, row, "read_file", "read_file a.py", "1\tx = 1", False)
    assert t.lines[row] == "• read_file a.py"


def test_command_output_is_shown_and_long_output_folded_but_its_tail() -> None:
    t = Transcript()
    row = t.add_note("• run_command seq 1 30")
    output = "\n".join(str(i) for i in range(1, 31))
    show_outcome(t, row, "run_command", "run_command seq 1 30", "exit code 0\n" + output, False)
    assert t.lines[-30:] == [OUTPUT_PREFIX + str(i) for i in range(1, 31)]
    ((first, end),) = t.folds
    assert t.lines[first] == OUTPUT_PREFIX + "1" and end == len(t.lines) - 6


def test_short_output_is_not_folded_and_no_output_adds_nothing() -> None:
    t = Transcript()
    show_outcome(t, t.add_note("• run_command true"), "run_command", "x", "exit code 0\nok", False)
    assert t.lines[-1] == OUTPUT_PREFIX + "ok" and t.folds == []
    n = len(t.lines)
    show_outcome(t, t.add_note("• run_command true"), "run_command", "x", "exit code 0", False)
    assert len(t.lines) == n + 2 and t.folds == []  # a blank and the note, no output


def test_a_reopened_conversation_shows_failed_calls_and_output() -> None:
    t = Transcript()
    records: list[dict[str, Any]] = [
        {"type": "message", "role": "user", "content": "go", "visible": "go"},
        {
            "type": "message",
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "t1", "name": "read_file", "input": {"path": "../x"}},
                {"type": "tool_use", "id": "t2", "name": "run_command", "input": {"command": "ls"}},
            ],
        },
        {
            "type": "message",
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "t1",
                    "content": "outside",
                    "is_error": True,
                },
                {"type": "tool_result", "tool_use_id": "t2", "content": "exit code 0\na\nb"},
            ],
        },
    ]
    render_records(t, records)
    assert "✗ read_file ../x — outside" in t.lines
    assert "• run_command ls" in t.lines
    assert t.lines[-2:] == [OUTPUT_PREFIX + "a", OUTPUT_PREFIX + "b"]


_block = st.lists(st.text(alphabet="ab +-", min_size=1, max_size=8), min_size=1, max_size=6)


@settings(max_examples=200, deadline=None)
@given(ops, ops, _block, st.data())
def test_a_block_rewritten_in_place_reads_as_if_written_so(
    before: list[tuple[str, Any]], after: list[tuple[str, Any]], old: list[str], data: Any
) -> None:
    new = data.draw(
        st.lists(st.text(alphabet="xy +-", min_size=1), min_size=len(old), max_size=len(old))
    )
    t, ref = Transcript(), Transcript()
    for op in before:
        run(t, op)
        run(ref, op)
    row = t.add_lines([(line, "SightlineDiffAdd") for line in old])
    ref.add_lines([(line, "SightlineNote") for line in new])
    for op in after:
        run(t, op)
        run(ref, op)
    if any(op[0] == "set" and row <= op[1] < row + len(old) for op in after):
        return  # a row of the block rewritten since: it no longer holds `old`
    t.take_delta()
    # Refused, nothing changed: another text, or another number of lines.
    assert not t.replace_lines(row, [*old[:-1], "zz"], [("q", None)] * len(old))
    assert not t.replace_lines(row, old, [("q", None)] * (len(old) + 1))
    assert t.take_delta() is None
    assert t.replace_lines(row, old, [(line, "SightlineNote") for line in new])
    assert (t.lines, t.hls, t.md, t.folds) == (ref.lines, ref.hls, ref.md, ref.folds)
    delta = t.take_delta()
    assert delta is not None and delta["start"] == row
