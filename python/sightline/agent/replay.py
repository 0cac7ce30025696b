"""A conversation reopened from history, shown again: the transcript rebuilt from its
records as it read live (the words come from domain/narrator.py, as they did then)."""

from __future__ import annotations

from typing import Any

from sightline.agent.accounting import footer_of
from sightline.domain import images, narrator
from sightline.domain.wire import ABANDONED, is_compaction
from sightline.tools.registry import call_label
from sightline.ui.transcript import Transcript


def render_records(transcript: Transcript, records: list[dict[str, Any]]) -> None:
    """Rebuild the transcript of a conversation reopened from history. Tolerates any record
    (they come from a file): what it cannot show it leaves out. A call's note is marked with
    its outcome once its result is read, as it was live."""
    waiting: list[Any] = []  # ids of the last reply's calls with no answer yet
    calls: dict[Any, tuple[int, str, str]] = {}  # tool_use id -> (note row, name, label)

    def abandon() -> None:
        for _ in waiting:
            transcript.add_note(*narrator.abandoned())
        waiting.clear()

    acp_rows: dict[str, int] = {}  # an ACP tool call's id -> its status line's row

    for i, record in enumerate(records):
        if not isinstance(record, dict):
            continue
        kind = record.get("type")
        if kind == "message" and record.get("role") == "user":
            results = [b for b in _blocks(record.get("content")) if b.get("type") == "tool_result"]
            for block in results:
                if block.get("tool_use_id") in waiting:
                    waiting.remove(block["tool_use_id"])
                    call = calls.pop(block["tool_use_id"], None)
                    content = block.get("content")
                    if content == ABANDONED:
                        transcript.add_note(*narrator.abandoned())
                    elif call is not None:
                        text = content if isinstance(content, str) else ""
                        said = block.get("shown")
                        said = said if isinstance(said, str) else None
                        show_outcome(transcript, *call, text, bool(block.get("is_error")), said)
            abandon()  # the next user message answers them, or the request does
            if isinstance(record.get("visible"), str):
                note, chip = record.get("note"), record.get("chip")
                expanded = record.get("expanded")
                transcript.add_user(
                    record["visible"],
                    note if isinstance(note, str) else None,
                    chip if isinstance(chip, dict) else None,
                    key=record,
                    expanded=expanded if isinstance(expanded, str) else None,
                )
                show_images(transcript, _blocks(record.get("content")))
        elif kind == "message" and record.get("role") == "assistant":
            for block in _blocks(record.get("content")):
                if block.get("type") == "text" and isinstance(block.get("text"), str):
                    transcript.append_text(block["text"])
                elif block.get("type") == "thinking" and isinstance(block.get("thinking"), str):
                    transcript.append_thinking(block["thinking"])
                elif block.get("type") == "redacted_thinking":
                    transcript.append_thinking(narrator.REDACTED_THINKING)
                elif block.get("type") == "tool_use":
                    args = block.get("input")
                    name = str(block.get("name"))
                    label = call_label(name, args if isinstance(args, dict) else {})
                    row = transcript.add_note(*narrator.tool_call(label))
                    waiting.append(block.get("id"))
                    if isinstance(block.get("id"), str):
                        calls[block["id"]] = (row, name, label)
            if not _acp_event(records[i + 1 : i + 2], "thought"):
                transcript.end_reply()  # an ACP thought after the text stays in this reply
        elif kind == "acp" and record.get("event") == "thought":
            if isinstance(record.get("text"), str):
                transcript.append_thinking(record["text"])
        elif kind == "acp" and record.get("event") == "tool_status":
            line, at = record.get("line"), acp_rows.get(str(record.get("id")))
            if isinstance(line, list) and len(line) == 2 and isinstance(line[0], str):
                group = line[1] if isinstance(line[1], str) else None
                if at is None:
                    transcript.add_lines([(line[0], group)])
                else:
                    transcript.set_line(at, line[0], group)
        elif kind in ("branch", "branched") and (kind == "branched" or "parent" in record):
            why = record.get("why")
            transcript.end_reply()
            transcript.add_note(*narrator.branched(why if isinstance(why, str) else None))
        elif kind == "forked":
            title = record.get("title")
            transcript.add_note(*narrator.forked(title if isinstance(title, str) else "?"))
        elif kind == "event" and record.get("event") == "error":
            transcript.add_note(*narrator.error(str(record.get("text", ""))))
        elif is_compaction(record):
            replaced = record.get("replaced")
            count = replaced if isinstance(replaced, int) and not isinstance(replaced, bool) else 0
            transcript.add_note(*narrator.compacted(max(0, count)))
        elif kind == "event" and record.get("event") == "stopped":
            transcript.add_note(*narrator.stopped())
        elif kind == "event" and record.get("event") == "interrupted":
            abandon()  # its calls were not completed either
            transcript.end_reply()
            transcript.add_note(*narrator.interrupted())
        elif kind == "event" and record.get("event") == "limit":
            rounds = record.get("rounds")
            if isinstance(rounds, int) and not isinstance(rounds, bool):
                transcript.add_note(*narrator.iteration_limit(rounds))
        elif kind == "event" and record.get("event") == "done":
            if (footer := footer_of(record)) is not None:
                transcript.add_note(*footer)
        elif kind == "plan" and isinstance(record.get("steps"), list):
            steps = [s for s in record["steps"] if isinstance(s, dict)]
            transcript.add_lines(narrator.checklist(steps))
        elif kind in ("proposal", "acp") and isinstance(record.get("lines"), list):
            lines = record["lines"]
            shown = [
                (str(ln[0]), ln[1] if isinstance(ln[1], str) else None)
                for ln in lines
                if isinstance(ln, list) and len(ln) == 2
            ]
            first = transcript.add_lines(shown)
            whole = len(shown) == len(lines) > 0  # row `first` is then lines[0]
            if whole and record.get("status_row") == 0 and isinstance(record.get("id"), str):
                acp_rows[record["id"]] = first
    abandon()


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _acp_event(records: list[Any], event: str) -> bool:
    return any(
        isinstance(r, dict) and r.get("type") == "acp" and r.get("event") == event for r in records
    )


def show_outcome(
    transcript: Transcript,
    row: int,
    name: str,
    label: str,
    content: str,
    is_error: bool,
    said: str | None = None,
    show_output: bool = True,
) -> None:
    """A tool call's note, once its result is known: a failure is marked with its reason
    (what the user is told, else what the model was), and run_command's output is shown,
    long output folded (live, the command shows it itself: `show_output=False`)."""
    if is_error:
        transcript.set_line(row, *narrator.tool_failed(label, content if said is None else said))
    if name == "run_command" and show_output:
        _status, _, output = content.partition("\n")
        if output and output != "(no output)":
            transcript.add_output(output)


def show_images(transcript: Transcript, blocks: list[Any]) -> None:
    """The chips of the images a user message carries (as sent and when reopened)."""
    for block in blocks:
        image = images.Image.from_block(block)
        if image is not None:
            note = narrator.image_attached(
                image.name, image.width, image.height, image.size, block.get("scaled_from")
            )
            transcript.add_note(*note)
