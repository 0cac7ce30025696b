"""A transcript line is shown in rows of at most ROW_BYTES bytes (a 10 MB line froze
Neovim): whatever the text and however it streams in, no row is longer, the rows joined
give back the redacted text, no row shows a piece of a key, and a conversation reopened
from history shows the same rows as the live pane."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from sightline.domain import secrets
from sightline.ui.rows import MARKDOWN_ROWS, ROW_BYTES, wrap
from sightline.ui.transcript import THINKING_HEADER, Transcript

# Keys from an alphabet the rest of the text never uses: an 8-character piece of one in a
# row can only come from the key itself.
KEY_CHARS = "abcdef0123456789"
keys = st.lists(
    st.text(alphabet=KEY_CHARS, min_size=8, max_size=60).map(lambda k: "sk-" + k),
    min_size=1,
    max_size=3,
    unique=True,
)
filler = st.text(alphabet="xyz XYZ\n\u00e9\u20ac\U0001f600[]", max_size=400)


@contextmanager
def registered(*found: str) -> Iterator[None]:
    """Secrets registered for one example only (the registry is the process's)."""
    saved = secrets._secrets
    try:
        for key in found:
            secrets.register(key)
        yield
    finally:
        secrets._secrets = saved
        secrets._version += 1  # what was redacted with them is redacted again


@st.composite
def streams(draw: Any) -> tuple[list[str], str, list[str]]:
    """Keys, a text holding them (some long runs with no newline), and the text cut into
    the chunks it streams in."""
    found = draw(keys)
    pieces: list[str] = []
    for _ in range(draw(st.integers(1, 8))):
        pieces.append(draw(filler))
        if draw(st.booleans()):  # a long run: one line of several rows
            unit = draw(st.sampled_from(["x", "\u00e9", "\U0001f600", "ab "]))
            # Often up to just before a row's end, so that a key after it straddles the cut.
            size = draw(st.one_of(st.integers(1, 3000), st.integers(ROW_BYTES - 70, ROW_BYTES)))
            pieces.append(unit * (size // len(unit.encode())))
        if draw(st.booleans()):
            pieces.append(draw(st.sampled_from(found)))
    text = "".join(pieces)
    cuts = sorted(set(draw(st.lists(st.integers(0, len(text)), max_size=30))))
    chunks = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    return found, text, [c for c in chunks if c] or [text]


class Pane:
    """What the Lua pane keeps of the deltas it applies: rows, cut spans, Markdown spans."""

    def __init__(self) -> None:
        self.rows: list[str] = []
        self.cuts: list[list[int]] = []
        self.md: list[list[int]] = []
        self.folds: list[list[int]] = []

    def apply(self, delta: dict[str, Any] | None, limit: int) -> None:
        if delta is None:
            return
        assert len(delta["lines"]) <= limit
        start = delta["start"]
        assert start <= len(self.rows)  # a delta never leaves a gap
        self.rows[start:] = delta["lines"]
        for name in ("cuts", "md", "folds"):
            kept = [s for s in getattr(self, name) if s[1] <= start]
            setattr(self, name, kept + delta[name])

    def drain(self, t: Transcript) -> None:
        """Pushes until the pane has all (push.py pushes again while rows are pending)."""
        self.apply(t.take_delta(), t.delta_rows)
        while t.pending():
            self.apply(t.take_delta(), t.delta_rows)

    def text(self, first: int, end: int) -> str:
        """Rows [first, end) as the lines they show: a cut line's rows joined again."""
        joined = {a: b for a, b in self.cuts}
        out, row = [], first
        while row < end:
            stop = joined.get(row, row + 1)
            out.append("".join(self.rows[row:stop]))
            row = stop
        return "\n".join(out)


def check_rows(rows: list[str], found: list[str]) -> None:
    for row in rows:
        assert len(row.encode("utf-8", "surrogatepass")) <= ROW_BYTES, len(row)
        for key in found:
            for at in range(len(key) - 7):
                assert key[at : at + 8] not in row, (key, row)


@settings(max_examples=150, deadline=None)
@given(streams(), st.lists(st.booleans(), max_size=30), st.booleans(), st.integers(1, 40))
def test_a_streamed_reply_shows_in_bounded_rows_that_join_to_its_redacted_text(
    stream: tuple[list[str], str, list[str]], flushes: list[bool], thinking: bool, limit: int
) -> None:
    found, text, chunks = stream
    with registered(*found):
        live, pane = Transcript(delta_rows=limit), Pane()
        live.add_user("go")
        append = live.append_thinking if thinking else live.append_text
        for i, chunk in enumerate(chunks):
            append(chunk)
            if i < len(flushes) and flushes[i]:  # the pushes fall anywhere in the stream
                pane.apply(live.take_delta(), limit)
                assert all(len(r.encode("utf-8", "surrogatepass")) <= ROW_BYTES for r in pane.rows)
        pane.drain(live)
        check_rows(pane.rows, found)
        full = live.full()
        assert pane.rows == full["lines"]
        assert (pane.cuts, pane.md, pane.folds) == (full["cuts"], full["md"], full["folds"])
        # The reply's rows read as the reply, redacted.
        first = pane.rows.index(THINKING_HEADER) + 1 if thinking else 4
        assert pane.text(first, len(pane.rows)) == secrets.redact(text)
        # History: the same text given whole (render_records) shows the same rows.
        replayed = Transcript()
        replayed.add_user("go")
        (replayed.append_thinking if thinking else replayed.append_text)(text)
        assert replayed.full() == full


@settings(max_examples=100, deadline=None)
@given(streams(), st.sampled_from(["user", "output", "note", "lines"]))
def test_every_kind_of_line_is_cut_after_redaction(
    stream: tuple[list[str], str, list[str]], kind: str
) -> None:
    found, text, _ = stream
    with registered(*found):
        t, pane = Transcript(), Pane()
        if kind == "user":
            t.add_user(text)
            row = 1
        elif kind == "output":
            t.add_output(text)
            row = 0
        elif kind == "note":
            row = t.add_note(text)
        else:
            row = t.add_lines([(text, "SightlineDiffAdd")])
            pane.drain(t)  # drawn, then rewritten in place (a diff's hunk decided)
            assert t.replace_lines(row, text.split("\n"), [(text.replace("x", "y"), None)])
        t.set_line(row, "• " + text.replace("\n", " "))  # a call's note gets its outcome
        t.add_note("after")
        pane.drain(t)
        check_rows(pane.rows, found)
        assert pane.rows == t.full()["lines"]
        assert pane.text(0, len(pane.rows)) == secrets.redact("\n".join(t.lines))


def test_a_key_across_the_row_cut_shows_neither_half() -> None:
    key = "sk-" + "0123456789abcdef" * 2
    before = "x" * (ROW_BYTES - 10)  # the key would straddle the first cut
    with registered(key):
        t = Transcript()
        t.append_text(before + key[:12])
        first = t.take_delta()
        t.append_text(key[12:] + " and on")
        second = t.take_delta()
        assert first is not None and second is not None
        assert second["start"] <= first["start"] + len(first["lines"]) - 1
        rows = t.full()["lines"]
        assert "".join(rows[-2:]) == before + secrets.REDACTED + " and on"
        assert all(key[:8] not in r and key[8:16] not in r for r in rows)


def test_a_long_line_is_markdown_over_its_first_rows_only() -> None:
    t = Transcript()
    t.append_text("**intro**\n" + "word " * (ROW_BYTES * 4) + "\nafter **bold**")
    d = t.full()
    (cut,) = d["cuts"]
    assert cut[1] - cut[0] > MARKDOWN_ROWS
    assert d["md"] == [[1, cut[0] + MARKDOWN_ROWS], [cut[1], len(d["lines"])]]
    assert d["lines"][cut[0]].endswith("word ")  # cut between words


def test_wrap_cuts_at_character_boundaries_and_streams_the_same() -> None:
    text = "\u20ac" * 1000
    rows = wrap(text)
    assert "".join(rows) == text and all(len(r.encode()) <= ROW_BYTES for r in rows)
    assert [len(r.encode()) for r in rows[:-1]] == [999] * (len(rows) - 1)
