"""One transcript line as the pane's rows: redacted whole, then cut into rows of at most
ROW_BYTES bytes (a 10 MB line with no newline froze Neovim; rows this long draw at once).

A row ends at a character boundary, after the last space of its second half when it has
one (a cut paragraph reads as wrapped), and the cut depends only on the text before it: a
line streamed in any chunks is cut into the same rows as the whole line.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sightline.domain import secrets

ROW_BYTES = 1000
# A line cut into more rows is rendered as Markdown over its first MARKDOWN_ROWS only: the
# renderer re-parses the block a reply streams into, and that block would be the whole line.
MARKDOWN_ROWS = 16
_WIDEST = 4  # bytes of one character in UTF-8 (a lone surrogate takes 3)


def wrap(text: str, limit: int = ROW_BYTES) -> list[str]:
    """`text` (no newline in it) cut into rows of at most `limit` bytes; at least one row."""
    if len(text) * _WIDEST <= limit:
        return [text]
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= limit:
        return [text]
    rows: list[str] = []
    at, size = 0, len(data)
    while size - at > limit:
        end = at + limit
        while data[end] & 0xC0 == 0x80:  # inside a character: cut before it
            end -= 1
        space = data.rfind(b" ", at + limit // 2, end)
        if space != -1:
            end = space + 1
        rows.append(data[at:end].decode("utf-8", "surrogatepass"))
        at = end
    rows.append(data[at:].decode("utf-8", "surrogatepass"))
    return rows


@dataclass
class Cut:
    """The rows of one line that only ever grows at its end (a streamed reply's last line),
    kept between deltas so that a delta costs what was appended, not the line's length.

    redact(line) == "".join(done) + carry + redact(line[at:]): the `done` rows are final,
    `carry` is the redacted start of the row after them.
    """

    done: list[str] = field(default_factory=list)
    carry: str = ""
    at: int = 0

    def rows(self, line: str, first: int = 0) -> tuple[list[str], int]:
        """The rows of `line` from row `first` on, and how many rows the line has."""
        # Where the line may be cut before it is redacted, whatever is appended to it later.
        settled = max(secrets.cut_point(line, len(line), more=True), self.at)
        if settled - self.at > ROW_BYTES:  # enough to finish rows: redacted once, kept
            finished = wrap(self.carry + secrets.redact(line[self.at : settled]))
            self.done.extend(finished[:-1])
            self.carry, self.at = finished[-1], settled
        tail = wrap(self.carry + secrets.redact(line[self.at :]))
        done = len(self.done)
        rows = self.done[first:] + tail if first <= done else tail[first - done :]
        return rows, done + len(tail)
