"""Long conversations: the older turns summarised into one message by the model.

The history keeps every original record and gains a compaction record

    {"type": "compaction", "summary": "<text>", "keep": N, "replaced": M}

which stands for every record before it except the last `keep` (those stay as they were);
`replaced` counts the messages it summarises, for the transcript note. The next request is
built by domain/wire.py from the summary, the kept records and what follows (see
`wire.effective`). A compaction happens on `:Sightline compact` (everything so far) or when
the last reply's input reached TRIGGER of the model's context window (everything before
the current prompt).

The summarising request is one user message holding the conversation as plain text, no
tools, no thinking: it is valid for any provider and any history.

Pure: no Neovim, no I/O.
"""

from __future__ import annotations

import json
from typing import Any

from sightline.domain.wire import clean_text, effective, is_compaction
from sightline.providers.base import Reply, Request

TRIGGER = 0.8  # of the context window, measured by the last reply's whole input
# Each tool result and call shown to the summariser at most this long: the summary needs
# what was learnt, not every byte read (and the request must fit the window).
MAX_BLOCK_CHARS = 4000

SYSTEM = (
    "You summarise a conversation between a user and a coding agent working in the user's "
    "editor, so that the agent can continue it without the full text. Write a concise but "
    "complete summary: the user's goals and requests, decisions made, files read or "
    "changed (with paths), important facts found (names, errors, commands and their "
    "outcome), and what is still open or was about to happen. Keep code only where the exact "
    "text matters. Write it as notes for the agent; do not address the user."
)
INSTRUCTION = (
    "Summarise the conversation above for the agent that continues it. "
    "Answer with the summary only."
)


def _short(text: str) -> str:
    if len(text) <= MAX_BLOCK_CHARS:
        return text
    return text[:MAX_BLOCK_CHARS] + f"\n[… {len(text) - MAX_BLOCK_CHARS} characters left out]"


def _block_text(role: str, block: Any) -> str | None:
    if not isinstance(block, dict):
        return None
    kind = block.get("type")
    if kind == "text" and isinstance(block.get("text"), str) and block["text"].strip():
        return _short(block["text"]) if role == "user" else block["text"]
    if kind == "tool_use":
        args = block.get("input")
        return _short(f"[called {block.get('name')} {json.dumps(args, ensure_ascii=False)}]")
    if kind == "tool_result":
        content = block.get("content")
        if isinstance(content, list):
            content = "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
        error = " (error)" if block.get("is_error") is True else ""
        return _short(f"[tool result{error}] {content}")
    return None  # thinking stays out: it is the model's scratch work


def conversation_text(records: list[Any]) -> str:
    """The conversation the records make (after any earlier compaction) as plain text."""
    out: list[str] = []
    for record in effective(records):
        if not isinstance(record, dict) or record.get("type") != "message":
            continue
        role = record.get("role")
        if role not in ("user", "assistant"):
            continue
        content = record.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        texts = [t for b in blocks or [] if (t := _block_text(str(role), b))]
        if texts:
            out.append(f"## {'User' if role == 'user' else 'Agent'}\n" + "\n".join(texts))
    return "\n\n".join(out)


def summarisable(records: list[Any]) -> int:
    """How many messages a compaction of `records` would replace (0: nothing to do; a
    conversation that is only an earlier summary is not summarised again)."""
    found = effective(records)
    messages = [r for r in found if isinstance(r, dict) and r.get("type") == "message"]
    if found is not records:
        return len(messages) - 1  # the earlier summary counts as none
    return len(messages)


def current_prompt(records: list[Any]) -> int | None:
    """The index of the last prompt the user typed (a user message with visible text)."""
    for i in range(len(records) - 1, -1, -1):
        record = records[i]
        if (
            isinstance(record, dict)
            and record.get("type") == "message"
            and record.get("role") == "user"
            and isinstance(record.get("visible"), str)
        ):
            return i
    return None


def request(records: list[Any]) -> Request:
    text = "<conversation>\n" + conversation_text(records) + "\n</conversation>\n\n" + INSTRUCTION
    return Request(
        system=SYSTEM,
        messages=[{"role": "user", "content": [{"type": "text", "text": clean_text(text)}]}],
        tools=[],
        thinking=False,
    )


def summary_of(reply: Reply) -> str:
    return "\n".join(
        str(b["text"]) for b in reply.content if b.get("type") == "text" and b.get("text")
    ).strip()


def record(summary: str, keep: int, replaced: int) -> dict[str, Any]:
    out = {"type": "compaction", "summary": summary, "keep": keep, "replaced": replaced}
    assert is_compaction(out)
    return out
